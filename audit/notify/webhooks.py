"""Webhook deliveries: a JSON POST signed with HMAC-SHA256, retried with exponential backoff as a task.

Headers: X-ClaimAudit-Event (e.g. "audit.assigned"), X-ClaimAudit-Delivery (the delivery id, the same for
every attempt) and X-ClaimAudit-Signature: "sha256=" + hex HMAC-SHA256 of the raw body under the audit's
webhook secret. A receiver recomputes it over the bytes it got and compares in constant time."""

import hashlib
import hmac
import json
import urllib.error
import urllib.request
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.tasks import task
from django.utils import timezone

from audit.models import WebhookDelivery


def sign(secret, body):
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def backoff(attempts):
    """Seconds before attempt attempts + 1: WEBHOOK_BACKOFF_SECONDS, doubled per failed attempt."""
    return settings.WEBHOOK_BACKOFF_SECONDS * 2 ** (attempts - 1)


def webhook_queue(audit, event, payload):
    """Record the delivery and hand it to the task worker once the surrounding transaction commits."""
    if not audit.webhook_url:
        return None
    d = WebhookDelivery.objects.create(audit=audit, url=audit.webhook_url, event=event, payload=payload)
    transaction.on_commit(lambda: webhook_deliver_task.enqueue(d.pk))
    return d


def webhook_attempt(delivery):
    """One POST. Returns None when delivered (a 2xx), else the error text."""
    body = json.dumps(delivery.payload, sort_keys=True, separators=(",", ":")).encode()
    request = urllib.request.Request(  # noqa: S310 - the URL is validated as http(s) when the lead sets it
        delivery.url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "claim-audit-webhook",
            "X-ClaimAudit-Event": delivery.event,
            "X-ClaimAudit-Delivery": str(delivery.pk),
            "X-ClaimAudit-Signature": sign(delivery.audit.webhook_secret, body),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=settings.WEBHOOK_TIMEOUT) as response:  # noqa: S310
            return None if 200 <= response.status < 300 else f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"


@task()
def webhook_deliver_task(delivery_id):
    d = WebhookDelivery.objects.select_related("audit").filter(pk=delivery_id).first()
    if d is None or d.status != WebhookDelivery.Status.PENDING:
        return {"delivery": delivery_id, "status": d.status if d else "gone"}
    error = webhook_attempt(d)
    d.attempts += 1
    d.last_attempt_at = timezone.now()
    if error is None:
        d.status, d.delivered_at, d.last_error = WebhookDelivery.Status.DELIVERED, timezone.now(), ""
    else:
        d.last_error = error[:2000]
        if d.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
            d.status = WebhookDelivery.Status.FAILED
        else:
            when = timezone.now() + timedelta(seconds=backoff(d.attempts))
            webhook_deliver_task.using(run_after=when).enqueue(d.pk)
    d.save(update_fields=["status", "attempts", "last_attempt_at", "delivered_at", "last_error"])
    return {"delivery": d.pk, "status": d.status, "attempts": d.attempts}
