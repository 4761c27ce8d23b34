from django.urls import path

from . import staff

urlpatterns = [
    path("<slug:slug>/", staff.panel_dashboard, name="staff-panel"),
    path("<slug:slug>/payments.csv", staff.panel_payments, name="staff-panel-payments"),
    path("<slug:slug>/approve/", staff.panel_approve, name="staff-panel-approve"),
    path("<slug:slug>/decide/", staff.panel_decide, name="staff-panel-decide"),
    path("<slug:slug>/openness/", staff.panel_openness, name="staff-panel-openness"),
    path("<slug:slug>/places/", staff.panel_places, name="staff-panel-places"),
    path("<slug:slug>/checks/void/", staff.panel_check_void, name="staff-panel-check-void"),
]
