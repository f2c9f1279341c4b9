from django.urls import path

from audit.lazy import lazy_view

# The views load the statistics stack: imported on their first request (audit.lazy).
urlpatterns = [
    path("", lazy_view("annotations.lab.views.lab"), name="judge_lab"),
    path("run/", lazy_view("annotations.lab.views.lab_run"), name="judge_lab_run"),
    path("guardrail/", lazy_view("annotations.lab.views.guardrail"), name="guardrail"),
    path("guardrail.json", lazy_view("annotations.lab.views.guardrail_json"), name="guardrail_json"),
]
