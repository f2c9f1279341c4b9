"""Pages of the judge lab and the guardrail check."""

from django.http import JsonResponse
from django.shortcuts import render

from annotations.lab.guardrail import GuardrailError, guardrail_check
from audit.models import JudgeVersion
from audit.roles import lead_required


@lead_required
def lab(request):
    return render(request, "lab/lab.html", {})


def _guardrail(request):
    """(context, status): the check for the GET parameters, or the form with the field named in error."""
    q = request.GET
    ctx = {"q": q, "versions": JudgeVersion.objects.order_by("-created_at")}
    if not q.get("baseline") and not q.get("candidate"):
        return ctx, 200
    version_id = q.get("version", "")
    version = JudgeVersion.objects.filter(pk=int(version_id)).first() if version_id.isdigit() else None
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
