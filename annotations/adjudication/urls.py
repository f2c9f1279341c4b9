from django.urls import path

from annotations.adjudication import views

urlpatterns = [
    path("", views.queue, name="adjudication_queue"),
    path("export/<id:audit_id>/", views.export_gold, name="export_gold"),
    path("<id:audit_id>/answers/<id:item_id>/", views.adjudicate, name="adjudicate"),
    path("<id:audit_id>/answers/<id:item_id>/claims/<id:claim_id>/", views.gold_save, name="gold_save"),
    path("<id:audit_id>/answers/<id:item_id>/take-all/", views.take_all, name="gold_take_all"),
    path("<id:audit_id>/answers/<id:item_id>/history/", views.history, name="adjudication_history"),
    path("<id:audit_id>/close/", views.close, name="audit_close"),
    path("<id:audit_id>/reopen/", views.reopen, name="audit_reopen"),
]
