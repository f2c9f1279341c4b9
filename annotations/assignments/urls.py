from django.urls import path

from annotations.assignments import views

urlpatterns = [
    path("", views.audits, name="audits"),
    path("<int:audit_id>/", views.audit_detail, name="audit_detail"),
    path("<int:audit_id>/assign/", views.audit_assign, name="audit_assign"),
    path("<int:audit_id>/add-annotator/", views.audit_add_annotator, name="audit_add_annotator"),
    path("<int:audit_id>/assignments/", views.audit_assignments, name="audit_assignments"),
    path("assignments/<int:assignment_id>/reassign/", views.assignment_reassign, name="assignment_reassign"),
    path("assignments/<int:assignment_id>/restart/", views.assignment_restart, name="assignment_restart"),
]
