"""The audit report: page (and its judge fragment for htmx), JSON download, and the claims or answers
behind each linked number (drill-down lists).
Leads only: the report shows judge verdicts, which annotators must never see."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, render

from annotations.models import Assignment
from annotations.report import drill, filters, selectors
from annotations.report.build import build_judge, build_mine, build_report
from audit.models import Audit
from audit.roles import lead_required


@lead_required
def report(request, audit_id):
    audit = get_object_or_404(Audit.objects.select_related("dataset"), pk=audit_id)
    if request.htmx:
        ctx = {"audit": audit, "r": build_judge(audit, request.GET.get("version"))}
        return render(request, "report/report.html#judge", ctx)
    return render(request, "report/report.html", {"audit": audit, "r": build_report(audit, request.GET.get("version"))})


@lead_required
def report_json(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    response = JsonResponse(build_report(audit, request.GET.get("version")), json_dumps_params={"allow_nan": False})
    response["Content-Disposition"] = f'attachment; filename="report-{audit.id}.json"'
    return response


@login_required
def report_mine(request, audit_id):
    """An annotator's own figures on an audit they labelled; nobody else's, no judge data."""
    audit = get_object_or_404(Audit, pk=audit_id)
    if not Assignment.objects.filter(audit_answer__audit=audit, annotator=request.user).exists():
        raise Http404("You have no assignment on this audit.")
    return render(request, "report/mine.html", {"audit": audit, "r": build_mine(audit, request.user.id)})


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


def _drill(request, audit_id, behind, texts, key, template):
    """A drill-down list: the claims or answers behind one count of the report."""
    audit = get_object_or_404(Audit, pk=audit_id)
    try:
        d = behind(audit, request.GET)
    except filters.BadFilter as e:
        return HttpResponseBadRequest(str(e), content_type="text/plain")
    return render(request, template, {"audit": audit, **_page(request, d, texts, key)})


@lead_required
def report_claims(request, audit_id):
    return _drill(request, audit_id, drill.claims_behind, selectors.claim_texts, "claim_id", "report/claims.html")


@lead_required
def report_answers(request, audit_id):
    return _drill(request, audit_id, drill.answers_behind, selectors.answer_texts, "answer_id", "report/answers.html")
