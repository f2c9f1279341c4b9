from django.apps import AppConfig


class ClaimAuditConfig(AppConfig):
    """The project package: settings, urls, the home and auth pages, the demo loader."""

    name = "claimaudit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.contrib.auth.signals import user_logged_in

        from claimaudit.middleware import stamp_login

        user_logged_in.connect(stamp_login, dispatch_uid="claimaudit-stamp-login")
