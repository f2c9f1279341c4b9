from django.urls import path

from annotations.workspace import views

urlpatterns = [
    path("<int:assignment_id>/", views.workspace, name="workspace"),
    path("<int:assignment_id>/claim/<int:claim_id>/", views.label_save, name="workspace_label"),
    path("<int:assignment_id>/undo/", views.undo, name="workspace_undo"),
    path("<int:assignment_id>/answer/", views.answer_fields, name="workspace_answer"),
    path("<int:assignment_id>/submit/", views.submit, name="workspace_submit"),
    path("<int:assignment_id>/time/", views.time_add, name="workspace_time"),
    path("<int:assignment_id>/reopen/", views.reopen, name="workspace_reopen"),
    path("queue/<int:audit_id>/", views.queue, name="queue"),
    path("shortcuts/", views.shortcuts, name="workspace_shortcuts"),
]
