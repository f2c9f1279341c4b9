from django.urls import path

from audit.sampling import views

urlpatterns = [
    path("new/", views.audit_new, name="audit_new"),
    path("<int:audit_id>/judge/", views.audit_judge, name="audit_judge"),
]
