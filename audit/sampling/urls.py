from django.urls import path

from audit.sampling import views

urlpatterns = [
    path("", views.audits, name="audits"),
    path("new/", views.audit_new, name="audit_new"),
    path("<int:audit_id>/", views.audit_detail, name="audit_detail"),
    path("<int:audit_id>/assign/", views.audit_assign, name="audit_assign"),
    path("<int:audit_id>/add-annotator/", views.audit_add_annotator, name="audit_add_annotator"),
    path("<int:audit_id>/judge/", views.audit_judge, name="audit_judge"),
    path("<int:audit_id>/assignments/", views.audit_assignments, name="audit_assignments"),
    path("assignments/<int:assignment_id>/reassign/", views.assignment_reassign, name="assignment_reassign"),
]
