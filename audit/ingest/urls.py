from django.urls import path

from audit.ingest import views

urlpatterns = [
    path("", views.import_page, name="import"),
]
