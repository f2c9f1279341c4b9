from django import template

from annotations.adjudication.selectors import audit_gold_progress

register = template.Library()


@register.simple_tag
def gold_progress(audit):
    """{claims, gold, missing} for templates/adjudication/_audit_actions.html (two queries)."""
    return audit_gold_progress(audit)


@register.simple_tag
def audit_item_links(audit):
    """[(item id, answer external id)] in queue order, for the per-answer history links (one query)."""
    return list(audit.items.order_by("position").values_list("id", "answer__external_id"))
