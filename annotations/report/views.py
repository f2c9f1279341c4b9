"""The audit report: page (and its judge fragment for htmx), JSON download, and the claims or answers
behind each linked number (drill-down lists).
Leads only: the report shows judge verdicts, which annotators must never see."""

from django.core.paginator import Paginator
from django.http import HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, render

from annotations.report import charts, drill, filters, selectors
from annotations.report.build import build_report
from annotations.report.links import add_links
from audit.models import Audit
from audit.roles import lead_required


def _charts(r):
    f = r["faithfulness"]
    rows = [
        {"label": "all answers (sampled)", **f["fail_rate"]},
        {"label": "population-weighted", **f["weighted"]["fail_rate"]},
    ]
    rows += [{"label": f"stratum {s['stratum']}", **s["fail_rate"]} for s in f["strata"]]
    return {
        "strata": charts.forest_chart(rows, "Fail rate by stratum, 95% CIs"),
        "trend": charts.trend_chart(r["trend"]["points"]),
    }


@lead_required
def report(request, audit_id):
    audit = get_object_or_404(Audit.objects.select_related("dataset"), pk=audit_id)
    r = add_links(build_report(audit, request.GET.get("version")), audit.id)
    ctx = {"audit": audit, "r": r, "charts": _charts(r) if not request.htmx else {}}
    return render(request, "report/report.html#judge" if request.htmx else "report/report.html", ctx)


@lead_required
def report_json(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    response = JsonResponse(
        add_links(build_report(audit, request.GET.get("version")), audit.id), json_dumps_params={"allow_nan": False}
    )
    response["Content-Disposition"] = f'attachment; filename="report-{audit.id}.json"'
    return response


PAGE_SIZE = 100


def _page(request, d, texts, key):
    """One page of a drill-down list: Paginator over row numbers, texts fetched for that page only."""
    page = Paginator(range(len(d["rows"])), PAGE_SIZE).get_page(request.GET.get("page"))
    rows = d["rows"].iloc[page.start_index() - 1 : page.end_index()] if len(d["rows"]) else d["rows"]
    return {
        "page": page,
        "rows": drill.page_records(rows, texts(rows[key].tolist()), key),
        "total": len(d["rows"]),
        "version": d["version"],
        "described": filters.describe(d["filters"]),
    }


@lead_required
def report_claims(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    try:
        d = drill.claims_behind(audit, request.GET)
    except filters.BadFilter as e:
        return HttpResponseBadRequest(str(e), content_type="text/plain")
    ctx = {"audit": audit, **_page(request, d, selectors.claim_texts, "claim_id")}
    return render(request, "report/claims.html", ctx)


@lead_required
def report_answers(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    try:
        d = drill.answers_behind(audit, request.GET)
    except filters.BadFilter as e:
        return HttpResponseBadRequest(str(e), content_type="text/plain")
    ctx = {"audit": audit, **_page(request, d, selectors.answer_texts, "answer_id")}
    return render(request, "report/answers.html", ctx)
