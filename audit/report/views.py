"""The audit report: page (and its judge fragment for htmx), JSON download, claims behind a matrix cell.
Leads only: the report shows judge verdicts, which annotators must never see."""

from django.http import HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, render

from audit.models import Audit
from audit.report import charts, selectors
from audit.report.build import JUDGE_ROWS, build_report, pick_version
from audit.report.stats_common import VERDICTS
from audit.roles import lead_required


def _charts(r):
    f = r["faithfulness"]
    rows = [{"label": "all answers (sampled)", **f["fail_rate"]},
            {"label": "population-weighted", **f["weighted"]["fail_rate"]}]
    rows += [{"label": f"stratum {s['stratum']}", **s["fail_rate"]} for s in f["strata"]]
    return {"strata": charts.forest_chart(rows, "Fail rate by stratum, 95% CIs"),
            "trend": charts.trend_chart(r["trend"]["points"])}


@lead_required
def report(request, audit_id):
    audit = get_object_or_404(Audit.objects.select_related("dataset"), pk=audit_id)
    r = build_report(audit, request.GET.get("version"))
    ctx = {"audit": audit, "r": r, "charts": _charts(r) if not request.htmx else {}}
    return render(request, "report/report.html#judge" if request.htmx else "report/report.html", ctx)


@lead_required
def report_json(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    response = JsonResponse(build_report(audit, request.GET.get("version")), json_dumps_params={"allow_nan": False})
    response["Content-Disposition"] = f'attachment; filename="report-{audit.id}.json"'
    return response


@lead_required
def report_claims(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    judge, gold = request.GET.get("judge", ""), request.GET.get("gold", "")
    if judge not in JUDGE_ROWS or gold not in VERDICTS:
        return HttpResponseBadRequest(f"judge must be one of {', '.join(JUDGE_ROWS)} and gold one of "
                                      f"{', '.join(VERDICTS)}.", content_type="text/plain")
    version = pick_version(selectors.judge_versions(audit), request.GET.get("version"))
    if version is None:
        return HttpResponseBadRequest("This audit has no judge verdicts.", content_type="text/plain")
    claims = selectors.cell_claims(audit, version["id"], judge, gold)
    ctx = {"audit": audit, "version": version, "judge": judge, "gold": gold, "claims": claims}
    return render(request, "report/claims.html", ctx)
