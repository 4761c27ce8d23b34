"""Addresses the panels call (mounted at /panels/): no page a person opens."""

from django.urls import path

from . import return_views

urlpatterns = [
    path("prolific/webhook/", return_views.prolific_webhook, name="panel-prolific-webhook"),
]
