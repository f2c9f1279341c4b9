"""Reads of the judge lab: the adjudicated gold of closed audits, the annotators' labels on it, a judge
version's verdicts on it, and what the version's runs cost. A fixed number of queries whatever the size."""

from django.db.models import Count, F, Sum

from annotations.models import Assignment, GoldLabel, Label
from audit.judge.verdicts import answer_fails
from audit.models import Answer, Audit, AuditAnswer, AuditClaim, AuditStatus, Claim, Dataset, JudgeRun, JudgeVerdict


def closed_audits(dataset_id=None, audit_ids=None):
    qs = Audit.objects.filter(status=AuditStatus.CLOSED).select_related("dataset").order_by("created_at", "id")
    if audit_ids:
        return qs.filter(id__in=audit_ids)
    return qs.filter(dataset_id=dataset_id) if dataset_id else qs.none()


def datasets():
    return Dataset.objects.filter(audits__status=AuditStatus.CLOSED).distinct().order_by("name")


def gold_items(audits):
    """One dict per gold claim of the audits: claim, answer, audit, gold verdict, the claim text and the answer's
    external id (for the disagreement links), and the sampling design behind the weights (scoring.domain_weights):
    unit, stratum and population N_h of the claim (its answer's; a calibration sample's claim is its own unit,
    in its own stratum), answer_stratum and answer_population of its answer."""
    rows = GoldLabel.objects.filter(audit__in=audits).values(
        "claim_id",
        "audit_id",
        "verdict",
        answer_id=F("claim__answer_id"),
        text=F("claim__text"),
        external_id=F("claim__answer__external_id"),
        position=F("claim__position"),
    )
    rows = list(rows.order_by("audit_id", "claim__answer_id", "claim__position"))
    items = {
        (a, answer): (item_id, stratum, population)
        for a, answer, item_id, stratum, population in AuditAnswer.objects.filter(audit__in=audits).values_list(
            "audit_id", "answer_id", "id", "stratum", "stratum_population"
        )
    }
    claims = {
        (a, c): (stratum, population)
        for a, c, stratum, population in AuditClaim.objects.filter(audit__in=audits).values_list(
            "audit_id", "claim_id", "stratum", "stratum_population"
        )
    }
    for r in rows:
        r["item_id"], r["answer_stratum"], r["answer_population"] = items.get(
            (r["audit_id"], r["answer_id"]), (None, "", 1)
        )
        own = claims.get((r["audit_id"], r["claim_id"]))
        r["unit"] = ("claim", r["claim_id"]) if own else ("answer", r["answer_id"])
        r["stratum"], r["population"] = own or (r["answer_stratum"], r["answer_population"])
    return rows


def claimless_answers(audits):
    """The sampled answers without a claim, as design rows (scoring.domain_weights): audit_id, answer_id, unit,
    stratum, population. In a closed audit both annotators submitted them: every claim they have (none) is in, so they
    are answers with data, and they pass (no scored claim), as in the report."""
    rows = (
        AuditAnswer.objects.filter(audit__in=audits, answer__claims__isnull=True)
        .exclude(audit__kind="claims")
        .values_list("audit_id", "answer_id", "stratum", "stratum_population")
        .order_by("audit_id", "answer_id")
    )
    return [
        {"audit_id": a, "answer_id": i, "unit": ("answer", i), "stratum": h, "population": n} for a, i, h, n in rows
    ]


def claim_counts(audits):
    """{(audit_id, answer_id): number of claims}: an answer counts at answer level only with complete gold."""
    qs = (
        Claim.objects.filter(answer__audit_items__audit__in=audits)
        .values_list("answer__audit_items__audit_id", "answer_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {(a, i): n for a, i, n in qs}


def annotator_labels(audits):
    """{(audit_id, claim_id): {"A": verdict, "B": verdict}} of submitted labels."""
    out = {}
    for audit_id, claim_id, slot, verdict in (
        Label.objects.filter(assignment__audit_answer__audit__in=audits, assignment__status=Assignment.Status.SUBMITTED)
        .exclude(verdict="")
        .values_list("assignment__audit_answer__audit_id", "claim_id", "assignment__slot", "verdict")
    ):
        out.setdefault((audit_id, claim_id), {})[slot] = verdict
    return out


def claim_verdicts(version, audits):
    """{claim_id: (verdict, numeric_passed)} of a claim-level version on the audits' claims."""
    if version.level != "claim":
        return {}
    rows = JudgeVerdict.objects.filter(judge_version=version, claim__answer__audit_items__audit__in=audits)
    return {c: (v, n) for c, v, n in rows.values_list("claim_id", "verdict", "numeric_passed").distinct()}


def answer_verdicts(version, audits, policy):
    return answer_fails(version, Answer.objects.filter(audit_items__audit__in=audits), policy)


def cost_per_answer(version):
    """Dollars per answer judged across the version's runs (None before any answer was judged)."""
    agg = JudgeRun.objects.filter(judge_version=version).aggregate(cost=Sum("cost_usd"), n=Sum("answers_done"))
    return agg["cost"] / agg["n"] if agg["n"] else None
