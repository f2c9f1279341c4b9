from django.apps import AppConfig


class ClaimAuditConfig(AppConfig):
    """The project package: settings, urls, the home and auth pages, the demo loader."""

    name = "claimaudit"
    default_auto_field = "django.db.models.BigAutoField"
