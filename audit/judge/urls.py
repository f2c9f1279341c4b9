from django.urls import path

from audit.views.placeholder import placeholder

urlpatterns = [
    path("runs/", placeholder, name="judge_runs"),
    path("runs/<int:run_id>/", placeholder, name="judge_run"),
]
