from django.urls import path

from audit.views.placeholder import placeholder

urlpatterns = [
    path("runs/", placeholder, name="judge_runs"),
]
