"""Reads for the audit pages: a fixed number of queries whatever the audit's size."""

from django.db.models import Count, Exists, OuterRef, Q

from audit.models import Audit, AuditAnswer, Claim
from audit.sampling import population as pop
from audit.sampling.allocation import drawn_notes
from audit.sampling.draw import draw


def audit_detail(audit_id):
    """The audit with its dataset and creator and its sample size; design_notes, and for a calibration sample
    n_claims, the claims sampled (the sum of its design's samples)."""
    audit = (
        Audit.objects.select_related("dataset", "created_by", "calibration_judge")
        .annotate(n_items=Count("items"))
        .get(pk=audit_id)
    )
    audit.design_notes = [] if audit.is_calibration else drawn_notes(audit.design)
    audit.n_claims = sum(row["sample"] for row in audit.design) if audit.is_calibration else None
    return audit


def items_without_claims(audit):
    """How many sampled answers have no claims yet (annotation cannot start until this is 0)."""
    return audit.items.filter(~Exists(Claim.objects.filter(answer=OuterRef("answer_id")))).count()


def latest_judge_runs(audit, limit=5):
    return list(audit.judge_runs.select_related("judge_version").order_by("-created_at", "-id")[:limit])


def drawn_overlap(dataset, preview, seed, source):
    """{sampled, in_source, in_any}: of the answers the preview's design draws with this seed (what creating it
    with the same seed saves), how many are already in the source audit and in any audit. Two queries."""
    picked = draw(
        pop.population(dataset, preview["filter"]), preview["keys"], preview["strata"], preview["sizes"], seed,
        preview["judge_version_id"],
    )  # fmt: skip
    ids = [pk for items in picked.values() for _, pk in items]
    counts = AuditAnswer.objects.filter(answer_id__in=ids).aggregate(
        in_any=Count("answer_id", distinct=True), in_source=Count("answer_id", distinct=True, filter=Q(audit=source))
    )
    return {"sampled": len(ids), **counts}


def population_audited(dataset, population_filter):
    """How many answers of the population are already in an audit (0 when the filter excludes them). One query."""
    if population_filter.get("exclude_audited"):
        return 0
    qs = pop.population(dataset, population_filter)
    return qs.filter(Exists(AuditAnswer.objects.filter(answer=OuterRef("pk")))).count()
