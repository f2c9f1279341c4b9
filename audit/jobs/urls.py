from django.urls import path

from audit.jobs import views

urlpatterns = [
    path("imports/<id:batch_id>/cancel/", views.import_cancel_view, name="import_cancel"),
    path("imports/<id:batch_id>/retry/", views.import_retry_view, name="import_retry"),
    path("judge-runs/<id:run_id>/cancel/", views.judge_run_cancel_view, name="judge_run_cancel"),
]
