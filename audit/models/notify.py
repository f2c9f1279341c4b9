from django.conf import settings
from django.db import models


class NotificationSettings(models.Model):
    """Per person: email notifications on or off (on unless turned off)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, models.CASCADE, related_name="notification_settings")
    email_enabled = models.BooleanField(default=True)


class NotificationSent(models.Model):
    """One row per notification that must go out once (a stall): its key makes a repeat a no-op."""

    key = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)


class WebhookDelivery(models.Model):
    """One event POSTed to an audit's webhook URL: retried with backoff until delivered or given up."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed (gave up)"

    audit = models.ForeignKey("audit.Audit", models.CASCADE, related_name="webhook_deliveries")
    url = models.URLField(max_length=500)
    event = models.CharField(max_length=50)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["audit", "status"], name="webhookdelivery_audit_status")]
