from django.urls import path

from . import return_views, views

urlpatterns = [
    path("<slug:slug>/", views.join, name="panel-join"),
    path("<slug:slug>/start/", views.start, name="panel-start"),
    path("<slug:slug>/done/", views.done, name="panel-done"),
    path("<slug:slug>/check/", views.check, name="panel-check"),
    path("<slug:slug>/leave/", return_views.leave, name="panel-leave"),
]
