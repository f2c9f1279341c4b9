from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    name = "annotations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from annotations.weekly import receivers  # noqa: F401 - connects the judge-run-ended receiver
