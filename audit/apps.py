from django.apps import AppConfig
from django.urls import register_converter

from audit.validation import RowIdConverter


class AuditConfig(AppConfig):
    name = "audit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        register_converter(RowIdConverter, "id")
