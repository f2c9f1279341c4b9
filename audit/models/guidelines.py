from django.conf import settings
from django.db import models


class GuidelinesVersion(models.Model):
    """One version of an audit's annotation guidelines (Markdown). Every edit adds a version; none is changed."""

    audit = models.ForeignKey("audit.Audit", models.CASCADE, related_name="guidelines_versions")
    version = models.PositiveIntegerField()
    text = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Where it came from when copied into a new audit (the previous audit's version), else null.
    copied_from = models.ForeignKey("self", models.SET_NULL, null=True, blank=True)

    class Meta:
        ordering = ["audit_id", "-version"]
        constraints = [models.UniqueConstraint(fields=["audit", "version"], name="guidelines_version_unique")]
