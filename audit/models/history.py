from django.conf import settings
from django.db import models


class HistoryEvent(models.Model):
    """Append-only audit trail: every change to a label, a gold label or an audit's state, and every change
    to the team (kind "person": no audit; person is the user changed, user the lead who changed them)."""

    class Kind(models.TextChoices):
        LABEL = "label", "Label"
        GOLD = "gold", "Gold label"
        ASSIGNMENT = "assignment", "Assignment"
        AUDIT = "audit", "Audit"
        PERSON = "person", "Person"

    audit = models.ForeignKey("Audit", models.PROTECT, related_name="history", null=True, blank=True)
    answer = models.ForeignKey("Answer", models.PROTECT, null=True, blank=True)
    claim = models.ForeignKey("Claim", models.PROTECT, null=True, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True)
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="person_events"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices)
    action = models.CharField(max_length=50)
    old = models.JSONField(null=True, blank=True)
    new = models.JSONField(null=True, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["audit", "answer"], name="history_audit_answer"),
            models.Index(fields=["person", "created_at"], name="history_person"),
        ]
