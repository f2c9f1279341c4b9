from django.urls import path

from annotations.workspace import views

urlpatterns = [
    path("<id:assignment_id>/", views.workspace, name="workspace"),
    path("<id:assignment_id>/claim/<id:claim_id>/", views.label_save, name="workspace_label"),
    path("<id:assignment_id>/undo/", views.undo, name="workspace_undo"),
    path("<id:assignment_id>/answer/", views.answer_fields, name="workspace_answer"),
    path("<id:assignment_id>/submit/", views.submit, name="workspace_submit"),
    path("<id:assignment_id>/time/", views.time_add, name="workspace_time"),
    path("<id:assignment_id>/reopen/", views.reopen, name="workspace_reopen"),
    path("queue/<id:audit_id>/", views.queue, name="queue"),
    path("shortcuts/", views.shortcuts, name="workspace_shortcuts"),
]
