import hashlib
import secrets

from django.conf import settings
from django.db import models

TOKEN_PREFIX = "ca_"  # noqa: S105 (a marker that tells a token apart, not a secret)


def token_hash(raw):
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A personal API token: only its sha256 is stored; the token itself is shown once, at creation.
    It acts as its user, with the user's roles, while the user is active and the token not revoked."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=12)  # the first characters, to tell tokens apart in the list
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.name} ({self.hint}…)"

    @classmethod
    def mint(cls, user, name):
        """(token row, raw token): the raw token exists only in the caller's hands from here on."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        return cls.objects.create(user=user, name=name, key_hash=token_hash(raw), hint=raw[:10]), raw
