from rest_framework import routers

from . import views
from .permissions import IsResearcher


class APIRootView(routers.APIRootView):
    """The list of the API's endpoints, for the researchers who use them (the site's
    default, admins only, would turn a researcher away at the front door)."""

    permission_classes = [IsResearcher]


class Router(routers.DefaultRouter):
    APIRootView = APIRootView


router = Router()
router.register("sources", views.SourceViewSet)
router.register("characters", views.CharacterViewSet)
router.register("scenarios", views.ScenarioViewSet)
router.register("answers", views.AnswerViewSet)
router.register("studies", views.StudyViewSet)
router.register("items", views.ItemViewSet)
router.register("judgments", views.JudgmentViewSet)
router.register("ratings", views.RatingViewSet)

urlpatterns = router.urls
