from django.urls import path

from audit.judge import views

urlpatterns = [
    path("runs/", views.runs, name="judge_runs"),
    path("runs/<int:run_id>/", views.run_detail, name="judge_run"),
    path("runs/<int:run_id>/resume/", views.run_resume, name="judge_run_resume"),
]
