from django.urls import path

from annotations.report import views

urlpatterns = [
    path("<int:audit_id>/", views.report, name="report"),
    path("<int:audit_id>/report.json", views.report_json, name="report_json"),
    path("<int:audit_id>/claims/", views.report_claims, name="report_claims"),
    path("<int:audit_id>/answers/", views.report_answers, name="report_answers"),
    path("<int:audit_id>/mine/", views.report_mine, name="report_mine"),
]
