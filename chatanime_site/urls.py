from allauth.account.decorators import secure_admin_login
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation.api.urls import router as api
from judges.api import JudgeRunViewSet

from . import views

# The researchers' API: the judges' runs join annotation's endpoints here, so that
# `annotation` never imports `judges` and the API's front page lists them all.
api.register("judge-runs", JudgeRunViewSet)

# The admin has no log-in form of its own: staff sign in on the site's form (by email,
# throttled by ACCOUNT_RATE_LIMITS per address and per account, email verified) and come
# back to the admin page they asked for. One form to protect instead of two.
admin.site.login = secure_admin_login(admin.site.login)

urlpatterns = [
    path("", views.home, name="home"),
    path("health/", views.health, name="health"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("", include("annotation.urls")),
    path("staff/collection/", include("collection.urls")),
    path("staff/panels/", include("panels.staff_urls")),
    path("staff/judges/", include("judges.urls")),
    path("staff/", include("annotation.staff_urls")),
    path("write/", include("writing.urls")),
    path("join/", include("panels.urls")),
    path("panels/", include("panels.hook_urls")),
    path("accounts/", include("allauth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api.urls)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file, so the page needs no inline script.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="api/swagger_ui.html"
        ),
        name="api-docs",
    ),
]
