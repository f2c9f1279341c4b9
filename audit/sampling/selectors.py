"""Reads for the audit pages: a fixed number of queries whatever the audit's size."""

from django.db.models import Count, Exists, OuterRef

from audit.models import Audit, Claim


def audit_detail(audit_id):
    """The audit with its dataset and creator and its sample size."""
    return Audit.objects.select_related("dataset", "created_by").annotate(n_items=Count("items")).get(pk=audit_id)


def items_without_claims(audit):
    """How many sampled answers have no claims yet (annotation cannot start until this is 0)."""
    return audit.items.filter(~Exists(Claim.objects.filter(answer=OuterRef("answer_id")))).count()


def latest_judge_runs(audit, limit=5):
    return list(audit.judge_runs.select_related("judge_version").order_by("-created_at", "-id")[:limit])
