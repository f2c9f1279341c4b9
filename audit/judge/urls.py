from django.urls import path

from audit.judge import definition_views, views

urlpatterns = [
    path("runs/", views.runs, name="judge_runs"),
    path("runs/<id:run_id>/", views.run_detail, name="judge_run"),
    path("runs/<id:run_id>/resume/", views.run_resume, name="judge_run_resume"),
    path("definitions/", definition_views.definition_list, name="judge_definitions"),
    path("definitions/<id:definition_id>/", definition_views.definition_detail, name="judge_definition"),
    path("versions/<id:version_id>/", definition_views.version_detail, name="judge_version"),
]
