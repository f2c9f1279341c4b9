from django.urls import path

from audit.views.placeholder import placeholder

urlpatterns = [
    path("", placeholder, name="adjudication_queue"),
    path("export/<int:audit_id>/", placeholder, name="export_gold"),
]
