from rest_framework.routers import DefaultRouter

from . import views

router = DefaultRouter()
router.register("sources", views.SourceViewSet)
router.register("characters", views.CharacterViewSet)
router.register("scenarios", views.ScenarioViewSet)
router.register("answers", views.AnswerViewSet)
router.register("studies", views.StudyViewSet)
router.register("items", views.ItemViewSet)
router.register("judgments", views.JudgmentViewSet)
router.register("ratings", views.RatingViewSet)

urlpatterns = router.urls
