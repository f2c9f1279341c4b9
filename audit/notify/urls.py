from django.urls import path

from audit.notify import views

urlpatterns = [
    path("email/", views.email_settings, name="email_settings"),
    path("audits/<id:audit_id>/webhook/", views.audit_webhook, name="audit_webhook"),
]
