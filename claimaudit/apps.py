from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in
from django.utils.module_loading import autodiscover_modules

from claimaudit.middleware import stamp_login


class ClaimAuditConfig(AppConfig):
    """The project package: settings, urls, the home and auth pages, the demo loader."""

    name = "claimaudit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        user_logged_in.connect(stamp_login, dispatch_uid="claimaudit-stamp-login")
        autodiscover_modules("receivers")  # each app's receivers.py connects its signal receivers
