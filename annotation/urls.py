from django.urls import path

from .views import annotate, exports, results, screening

urlpatterns = [
    path("annotate/", annotate.annotate, name="annotate"),
    path("annotate/<str:token>/", annotate.item, name="annotate-item"),
    path("annotate/<str:token>/skip/", annotate.skip, name="annotate-skip"),
    path("annotate/<str:token>/keep/", annotate.keep, name="annotate-keep"),
    path("screening/", screening.hub, name="screening"),
    path("screening/consent/", screening.consent, name="screening-consent"),
    path("screening/characters/", screening.characters, name="screening-characters"),
    path("screening/quiz/<int:character_id>/", screening.quiz, name="screening-quiz"),
    path("results/", results.study_list, name="results"),
    path("results/<slug:slug>/", results.study_results, name="results-study"),
    path("results/<slug:slug>/methods/", results.study_methods, name="results-methods"),
    path("results/<slug:slug>/refresh/", results.refresh, name="results-refresh"),
    path("results/<slug:slug>/exports/", exports.export_jobs, name="results-exports"),
    path("exports/<int:pk>/download/", exports.export_download, name="export-download"),
    path("exports/<int:pk>/manifest/", exports.export_manifest, name="export-manifest"),
]
