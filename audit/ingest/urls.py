from django.urls import path

from audit.ingest import views

urlpatterns = [
    path("", views.import_page, name="import"),
    path("<id:batch_id>/", views.import_batch, name="import_batch"),
    path("formats/", views.import_formats, name="import_formats"),
]
