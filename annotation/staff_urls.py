from django.urls import path

from .views.staff import annotators, audit, members, screening, studies

urlpatterns = [
    path("", studies.study_list, name="staff-studies"),
    path("screening/", screening.screening_queue, name="staff-screening"),
    path("screening/review/", screening.screening_review, name="staff-screening-review"),
    path("applicants/<int:profile_id>/", screening.applicant, name="staff-applicant"),
    path("annotators/", annotators.annotator_directory, name="staff-annotators"),
    path("annotators/<int:profile_id>/", annotators.annotator_detail, name="staff-annotator"),
    path(
        "annotators/<int:profile_id>/<str:action>/",
        annotators.annotator_suspension,
        name="staff-annotator-suspension",
    ),
    path("flags/<int:flag_id>/resolve/", annotators.flag_resolve, name="staff-flag-resolve"),
    path("studies/<slug:slug>/", studies.study_dashboard, name="staff-study"),
    path("studies/<slug:slug>/caps/", studies.study_caps, name="staff-study-caps"),
    path("studies/<slug:slug>/status/", studies.study_status, name="staff-study-status"),
    path("studies/<slug:slug>/flags/decide/", studies.flagged_decide, name="staff-flags-decide"),
    path(
        "studies/<slug:slug>/judgments/<int:judgment_id>/decide/",
        studies.judgment_decide,
        name="staff-judgment-decide",
    ),
    # The study's members page; its URL names keep the page's former name (assignment).
    path("studies/<slug:slug>/assignment/", members.study_members, name="staff-assignment"),
    path(
        "studies/<slug:slug>/assignment/add/", members.membership_add, name="staff-membership-add"
    ),
    path(
        "studies/<slug:slug>/assignment/<int:membership_id>/",
        members.membership_change,
        name="staff-membership-change",
    ),
    path("audit/", audit.audit_log, name="staff-audit"),
]
