from django.urls import path

from . import staff

urlpatterns = [
    path("<slug:slug>/", staff.panel_dashboard, name="staff-panel"),
    path("<slug:slug>/payments.csv", staff.panel_payments, name="staff-panel-payments"),
]
