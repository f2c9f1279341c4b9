from django.urls import path

from audit.jobs import views

urlpatterns = [
    path("imports/<int:batch_id>/cancel/", views.import_cancel_view, name="import_cancel"),
    path("imports/<int:batch_id>/retry/", views.import_retry_view, name="import_retry"),
    path("judge-runs/<int:run_id>/cancel/", views.judge_run_cancel_view, name="judge_run_cancel"),
]
