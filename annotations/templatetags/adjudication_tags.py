from django import template

from annotations.adjudication.selectors import audit_gold_progress

register = template.Library()


@register.simple_tag
def gold_progress(audit):
    """{claims, gold, missing} for templates/adjudication/_audit_actions.html (two queries)."""
    return audit_gold_progress(audit)
