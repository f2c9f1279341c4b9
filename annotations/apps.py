from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    """The human side; its signal receivers (annotations/receivers.py) are connected at start-up by the
    project package, which imports every app's receivers module."""

    name = "annotations"
    default_auto_field = "django.db.models.BigAutoField"
