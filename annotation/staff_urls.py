from django.urls import path

from .views import staff

app_name = "staff"

urlpatterns = [
    path("", staff.study_list, name="studies"),
    path("screening/", staff.screening_queue, name="screening"),
    path("screening/review/", staff.screening_review, name="screening-review"),
    path("applicants/<int:profile_id>/", staff.applicant, name="applicant"),
    path("annotators/", staff.annotator_directory, name="annotators"),
    path("annotators/<int:profile_id>/", staff.annotator_detail, name="annotator"),
    path(
        "annotators/<int:profile_id>/<str:action>/",
        staff.annotator_suspension,
        name="annotator-suspension",
    ),
    path("flags/<int:flag_id>/resolve/", staff.flag_resolve, name="flag-resolve"),
    path("studies/<slug:slug>/", staff.study_dashboard, name="study"),
    path("studies/<slug:slug>/caps/", staff.study_caps, name="study-caps"),
    path("studies/<slug:slug>/status/", staff.study_status, name="study-status"),
    path(
        "studies/<slug:slug>/judgments/<int:judgment_id>/decide/",
        staff.judgment_decide,
        name="judgment-decide",
    ),
    path("studies/<slug:slug>/assignment/", staff.study_assignment, name="assignment"),
    path("studies/<slug:slug>/assignment/add/", staff.membership_add, name="membership-add"),
    path(
        "studies/<slug:slug>/assignment/<int:membership_id>/",
        staff.membership_change,
        name="membership-change",
    ),
    path("audit/", staff.audit_log, name="audit"),
]
