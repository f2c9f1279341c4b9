from django.urls import path

from audit.judge import definition_views, views

urlpatterns = [
    path("runs/", views.runs, name="judge_runs"),
    path("runs/<int:run_id>/", views.run_detail, name="judge_run"),
    path("runs/<int:run_id>/resume/", views.run_resume, name="judge_run_resume"),
    path("definitions/", definition_views.definition_list, name="judge_definitions"),
    path("definitions/<int:definition_id>/", definition_views.definition_detail, name="judge_definition"),
    path("versions/<int:version_id>/", definition_views.version_detail, name="judge_version"),
]
