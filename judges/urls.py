from django.urls import path

from . import views

urlpatterns = [
    path("", views.judge_runs, name="judge-runs"),
    path("<int:run_id>/control/", views.judge_run_control, name="judge-run-control"),
]
