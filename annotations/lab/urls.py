from django.urls import path

from annotations.lab import views

urlpatterns = [
    path("", views.lab, name="judge_lab"),
    path("run/", views.lab_run, name="judge_lab_run"),
    path("guardrail/", views.guardrail, name="guardrail"),
    path("guardrail.json", views.guardrail_json, name="guardrail_json"),
]
