from django.urls import path

from audit.guidelines import views

urlpatterns = [
    path("<id:audit_id>/guidelines/", views.guidelines_edit, name="guidelines_edit"),
    path("<id:audit_id>/guidelines/restore/", views.guidelines_restore, name="guidelines_restore"),
]
