from django.urls import path

from .views.staff import annotators, audit, members, screening, studies

app_name = "staff"

urlpatterns = [
    path("", studies.study_list, name="studies"),
    path("screening/", screening.screening_queue, name="screening"),
    path("screening/review/", screening.screening_review, name="screening-review"),
    path("applicants/<int:profile_id>/", screening.applicant, name="applicant"),
    path("annotators/", annotators.annotator_directory, name="annotators"),
    path("annotators/<int:profile_id>/", annotators.annotator_detail, name="annotator"),
    path(
        "annotators/<int:profile_id>/<str:action>/",
        annotators.annotator_suspension,
        name="annotator-suspension",
    ),
    path("flags/<int:flag_id>/resolve/", annotators.flag_resolve, name="flag-resolve"),
    path("studies/<slug:slug>/", studies.study_dashboard, name="study"),
    path("studies/<slug:slug>/caps/", studies.study_caps, name="study-caps"),
    path("studies/<slug:slug>/status/", studies.study_status, name="study-status"),
    path(
        "studies/<slug:slug>/judgments/<int:judgment_id>/decide/",
        studies.judgment_decide,
        name="judgment-decide",
    ),
    # The study's members page; its URL names keep the page's former name.
    path("studies/<slug:slug>/assignment/", members.study_members, name="assignment"),
    path("studies/<slug:slug>/assignment/add/", members.membership_add, name="membership-add"),
    path(
        "studies/<slug:slug>/assignment/<int:membership_id>/",
        members.membership_change,
        name="membership-change",
    ),
    path("audit/", audit.audit_log, name="audit"),
]
