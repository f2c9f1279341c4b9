"""{% audit_webhook audit %}: the audit page's webhook section (settings and failed deliveries, one query)."""

from django import template

from audit.models import WebhookDelivery

register = template.Library()


@register.inclusion_tag("notify/_audit_webhook.html", takes_context=True)
def audit_webhook(context, audit):
    failed = list(WebhookDelivery.objects.filter(audit=audit).exclude(status=WebhookDelivery.Status.DELIVERED)[:10])
    return {"audit": audit, "deliveries": failed, "csrf_token": context.get("csrf_token")}
