from django.urls import path

from . import views

urlpatterns = [
    path("", views.run_list, name="collection-runs"),
    path("runs/<int:run_id>/", views.run_detail, name="collection-run"),
    path("runs/<int:run_id>/control/", views.run_control, name="collection-run-control"),
    path("answers/<int:answer_id>/review/", views.answer_review, name="collection-answer-review"),
]
