from django.urls import path

from audit.sampling import calibration_views, views

urlpatterns = [
    path("new/", views.audit_new, name="audit_new"),
    path("new/calibration/", calibration_views.calibration_new, name="calibration_new"),
    path("<id:audit_id>/judge/", views.audit_judge, name="audit_judge"),
]
