from django.urls import path

from audit.lazy import lazy_view

# The views load the statistics stack: imported on their first request (audit.lazy).
urlpatterns = [
    path("<id:audit_id>/", lazy_view("annotations.report.views.report"), name="report"),
    path("<id:audit_id>/report.json", lazy_view("annotations.report.views.report_json"), name="report_json"),
    path("<id:audit_id>/claims/", lazy_view("annotations.report.views.report_claims"), name="report_claims"),
    path("<id:audit_id>/answers/", lazy_view("annotations.report.views.report_answers"), name="report_answers"),
    path("<id:audit_id>/mine/", lazy_view("annotations.report.views.report_mine"), name="report_mine"),
]
