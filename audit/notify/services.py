"""Writes of notification settings: a person's email switch, an audit's webhook."""

import secrets

from audit import history
from audit.models import NotificationSettings


def email_settings_save(user, *, email_enabled):
    NotificationSettings.objects.update_or_create(user=user, defaults={"email_enabled": email_enabled})


def audit_webhook_save(audit, *, url, new_secret=False, user=None):
    old = audit.webhook_url
    audit.webhook_url = url
    if url and (new_secret or not audit.webhook_secret):
        audit.webhook_secret = secrets.token_hex(32)
    audit.save(update_fields=["webhook_url", "webhook_secret"])
    history.record(audit, kind="audit", action="webhook", user=user, old={"url": old}, new={"url": url})
    return audit
