from django.urls import path

from audit.lazy import lazy_view

# The views load the statistics stack: imported on their first request (audit.lazy).
urlpatterns = [
    path("<int:audit_id>/", lazy_view("annotations.report.views.report"), name="report"),
    path("<int:audit_id>/report.json", lazy_view("annotations.report.views.report_json"), name="report_json"),
    path("<int:audit_id>/claims/", lazy_view("annotations.report.views.report_claims"), name="report_claims"),
    path("<int:audit_id>/answers/", lazy_view("annotations.report.views.report_answers"), name="report_answers"),
    path("<int:audit_id>/mine/", lazy_view("annotations.report.views.report_mine"), name="report_mine"),
]
