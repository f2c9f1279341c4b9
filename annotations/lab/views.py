"""Pages of the judge lab (score any judge version against the adjudicated gold of closed audits, compare
two versions, run one on the gold items) and the guardrail check."""

from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotations.lab import scoring, selectors, services
from annotations.lab.guardrail import GuardrailError, guardrail_check
from audit.models import JudgeVersion
from audit.roles import lead_required
from audit.validation import row_id

PAIRS = [f"{j}:{g}" for j in scoring.VERDICTS for g in scoring.VERDICTS if j != g]
DISAGREEMENTS_SHOWN = 200


class LabError(ValueError):
    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


def _int(q, name, required=False):
    value = q.get(name, "")
    if not value:
        if required:
            raise LabError(name, "is required")
        return None
    if row_id(value) is None:
        raise LabError(name, "must be an id (a whole number)")
    return row_id(value)


def _choice(q, name, choices, default=None):
    value = q.get(name) or default
    if value is not None and value not in choices:
        raise LabError(name, f"must be one of {', '.join(choices)}")
    return value


def _params(q):
    """The lab's validated GET parameters: dataset, audits, version, compare, policy, pair, numeric."""
    audit_ids = q.getlist("audits")
    if not all(row_id(a) for a in audit_ids):
        raise LabError("audits", "must be audit ids")
    versions = {v.pk: v for v in JudgeVersion.objects.all()}
    picked = {}
    for name in ("version", "compare"):
        vid = _int(q, name)
        if vid is not None and vid not in versions:
            raise LabError(name, f"no judge version {vid}")
        picked[name] = versions.get(vid)
    return {
        "dataset": _int(q, "dataset"),
        "audit_ids": [int(a) for a in audit_ids],
        "versions": sorted(versions.values(), key=lambda v: v.created_at, reverse=True),
        **picked,
        "policy": _choice(q, "policy", ("strict", "lenient"), "strict"),
        "pair": _choice(q, "pair", PAIRS),
        "numeric": _choice(q, "numeric", ("flagged", "unflagged")),
    }


def _score(version, audits, items, counts, labels, p, claimless):
    verdicts = selectors.claim_verdicts(version, audits)
    fails = scoring.judged_answers(selectors.answer_verdicts(version, audits, p["policy"]), version.level, claimless)
    gold = scoring.gold_answers(items, counts, p["policy"], claimless)
    out = {
        "version": version,
        "answers": scoring.answer_level(gold, fails),
        "cost_per_answer": selectors.cost_per_answer(version),
        "estimate": services.run_estimate(version, audits),
        "verdicts": verdicts,
        "fails": fails,
    }
    if version.level == "claim":
        out["claims"] = scoring.claim_level(items, verdicts, p["numeric"], claimless)
        out["noise"] = scoring.noise_floor(items, labels, verdicts)
    return out


def lab_context(q):
    p = _params(q)
    audits = selectors.closed_audits(p["dataset"], p["audit_ids"])
    ctx = {"p": p, "datasets": selectors.datasets(), "audits": list(audits), "pairs": PAIRS}
    if p["version"] is None:
        return ctx
    if not ctx["audits"]:
        chosen = p["dataset"] or p["audit_ids"]
        ctx["no_gold"] = "no closed audit among those chosen" if chosen else "choose a dataset with a closed audit"
        return ctx
    items = selectors.gold_items(audits)
    counts, labels = selectors.claim_counts(audits), selectors.annotator_labels(audits)
    claimless = selectors.claimless_answers(audits)
    a = _score(p["version"], audits, items, counts, labels, p, claimless)
    ctx.update(items=len(items), a=a)
    ctx["disagreements"] = scoring.disagreements(items, a["verdicts"], pair=p["pair"], numeric=p["numeric"])
    if p["compare"] is not None:
        b = _score(p["compare"], audits, items, counts, labels, p, claimless)
        gold = scoring.gold_answers(items, counts, p["policy"], claimless)
        ctx["b"] = b
        ctx["paired_answers"] = scoring.compare_answers(gold, a["fails"], b["fails"])
        if p["version"].level == p["compare"].level == "claim":
            ctx["paired_claims"] = scoring.compare(items, a["verdicts"], b["verdicts"])
    return ctx


@lead_required
def lab(request):
    try:
        ctx, status = lab_context(request.GET), 200
    except LabError as exc:
        ctx, status = {"error": f"{exc.field}: {exc}", "datasets": selectors.datasets()}, 400
    ctx["shown"] = DISAGREEMENTS_SHOWN
    return render(request, "lab/lab.html", ctx, status=status)


@lead_required
@require_POST
def lab_run(request):
    try:
        p = _params(request.POST)
        if p["version"] is None:
            raise LabError("version", "is required")
    except LabError as exc:
        ctx = {"error": f"{exc.field}: {exc}", "datasets": selectors.datasets()}
        return render(request, "lab/lab.html", ctx, status=400)
    audits = selectors.closed_audits(p["dataset"], p["audit_ids"])
    run = services.lab_run_start(p["version"], audits, request.user)
    if run is None:
        return redirect(f"/lab/?{request.POST.urlencode()}")
    return redirect("judge_run", run_id=run.pk)


def _guardrail(request):
    """(context, status): the check for the GET parameters, or the form with the field named in error."""
    q = request.GET
    ctx = {"q": q, "versions": JudgeVersion.objects.order_by("-created_at")}
    if not q.get("baseline") and not q.get("candidate"):
        return ctx, 200
    version_id = q.get("version", "")
    version = JudgeVersion.objects.filter(pk=row_id(version_id)).first() if row_id(version_id) else None
    policy = q.get("policy") or "strict"
    try:
        if version is None:
            raise GuardrailError("version", "choose a judge version")
        if policy not in ("strict", "lenient"):
            raise GuardrailError("policy", "must be strict or lenient")
        ctx["result"] = guardrail_check(q.get("baseline"), q.get("candidate"), version, policy=policy)
    except GuardrailError as exc:
        ctx["error"] = f"{exc.field}: {exc}"
        return ctx, 400
    return ctx, 200


@lead_required
def guardrail(request):
    ctx, status = _guardrail(request)
    return render(request, "lab/guardrail.html", ctx, status=status)


@lead_required
def guardrail_json(request):
    ctx, status = _guardrail(request)
    return JsonResponse(ctx.get("result") or {"error": ctx.get("error", "give baseline, candidate and version")},
                        status=status if "result" in ctx else 400)  # fmt: skip
