from django.urls import path

from annotations.assignments import views

urlpatterns = [
    path("", views.audits, name="audits"),
    path("<id:audit_id>/", views.audit_detail, name="audit_detail"),
    path("<id:audit_id>/assign/", views.audit_assign, name="audit_assign"),
    path("<id:audit_id>/add-annotator/", views.audit_add_annotator, name="audit_add_annotator"),
    path("<id:audit_id>/assignments/", views.audit_assignments, name="audit_assignments"),
    path("assignments/<id:assignment_id>/reassign/", views.assignment_reassign, name="assignment_reassign"),
    path("assignments/<id:assignment_id>/restart/", views.assignment_restart, name="assignment_restart"),
]
