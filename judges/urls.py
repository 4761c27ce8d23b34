from django.urls import path

from . import views

urlpatterns = [
    path("", views.judge_runs, name="judge-runs"),
]
