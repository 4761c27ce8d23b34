from django.urls import path

from . import views

app_name = "collection"

urlpatterns = [
    path("", views.run_list, name="runs"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/control/", views.run_control, name="run-control"),
    path("answers/<int:answer_id>/review/", views.answer_review, name="answer-review"),
]
