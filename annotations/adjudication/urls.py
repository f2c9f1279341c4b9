from django.urls import path

from annotations.adjudication import views

urlpatterns = [
    path("", views.queue, name="adjudication_queue"),
    path("export/<int:audit_id>/", views.export_gold, name="export_gold"),
    path("<int:audit_id>/answers/<int:item_id>/", views.adjudicate, name="adjudicate"),
    path("<int:audit_id>/answers/<int:item_id>/claims/<int:claim_id>/", views.gold_save, name="gold_save"),
    path("<int:audit_id>/answers/<int:item_id>/take-all/", views.take_all, name="gold_take_all"),
    path("<int:audit_id>/answers/<int:item_id>/history/", views.history, name="adjudication_history"),
    path("<int:audit_id>/close/", views.close, name="audit_close"),
    path("<int:audit_id>/reopen/", views.reopen, name="audit_reopen"),
]
