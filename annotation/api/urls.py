from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from rest_framework import routers

from . import views
from .permissions import IsResearcher


class APIRootView(routers.APIRootView):
    # Open to researchers, who use the API: DRF's default root is for admins only and
    # would turn a researcher away at the front door. The browsable API shows the view's
    # description to its readers, so it is said to them, in their language.
    permission_classes = [IsResearcher]

    def get_view_description(self, html: bool = False) -> str:
        text = gettext(
            "The study data, read-only, for researchers: each link below lists one kind "
            "of record. The interactive reference:"
        )
        docs = reverse("api-docs")
        if html:
            return format_html('<p>{} <a href="{}">{}</a></p>', text, docs, docs)
        return f"{text} {docs}"


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
