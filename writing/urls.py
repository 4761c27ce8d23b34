from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="write"),
    path("apply/", views.apply, name="write-apply"),
    path("next/", views.next_task, name="write-next"),
    path("task/<str:token>/", views.task, name="write-task"),
    path("task/<str:token>/retry/", views.followup_retry, name="write-followup-retry"),
    path("user/", views.user_role, name="write-user"),
    path("user/<str:followup_token>/", views.user_role_submit, name="write-user-submit"),
    path("staff/", views.staff_runs, name="write-staff"),
    path(
        "staff/applications/<int:application_id>/",
        views.staff_application_review,
        name="write-staff-application",
    ),
    path("staff/runs/new/", views.staff_run_create, name="write-staff-run-create"),
    path("staff/runs/<int:run_id>/", views.staff_run, name="write-staff-run"),
    path("staff/tasks/<int:task_id>/", views.staff_task, name="write-staff-task"),
]
