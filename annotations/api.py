"""HTTP API endpoints of the human side: an audit's progress, its report, its gold export.

Leads see every audit. An annotator may read the progress of an audit they hold assignments in, and
only their own row of it (never another's work, never a judge verdict); any other audit is a 404 to them.
"""

from typing import Literal

from django.http import HttpResponse, JsonResponse
from ninja import Router, Schema
from ninja.errors import HttpError

from annotations.adjudication import export
from annotations.assignments.selectors import audit_progress
from audit import roles
from audit.api import ERRORS, BadRequest, need
from audit.judge.definitions import version_lookup
from audit.lazy import lazy_module
from audit.models import Audit

# The report needs the scientific stack: loaded by the first report request, not with the URLconf.
report_build = lazy_module("annotations.report.build")
guardrail = lazy_module("annotations.lab.guardrail")  # scipy: loaded by a guardrail call only

router = Router(tags=["annotations"])  # for leads
progress_router = Router(tags=["annotations"])  # for leads and annotators (their own row)


class PersonOut(Schema):
    user_id: int
    username: str
    assigned: int
    started: int
    submitted: int
    median_minutes: float | None


class OverallOut(Schema):
    assigned: int
    started: int
    submitted: int
    percent: int
    median_minutes: float | None


class ProgressOut(Schema):
    id: int
    name: str
    dataset: str
    status: str
    answers: int
    overall: OverallOut
    annotators: list[PersonOut]


def _audit(audit_id):
    audit = Audit.objects.select_related("dataset").filter(pk=audit_id).first()
    if audit is None:
        raise HttpError(404, "No such audit.")
    return audit


@progress_router.get(
    "/audits/{audit_id}", response={200: ProgressOut, **ERRORS}, summary="An audit's labelling progress"
)
def audit_progress_get(request, audit_id: int):
    user = request.auth
    if not roles.has_role(user, roles.LEAD):
        need(request, roles.ANNOTATOR)
    audit = _audit(audit_id)
    progress = audit_progress(audit)
    if not roles.has_role(user, roles.LEAD):
        mine = [p for p in progress["annotators"] if p["user_id"] == user.pk]
        if not mine:  # not theirs to see
            raise HttpError(404, "No such audit.")
        progress = {"annotators": mine, "overall": {**mine[0], "percent": _percent(mine[0])}}
    return {
        "id": audit.id,
        "name": audit.name,
        "dataset": audit.dataset.name,
        "status": audit.status,
        "answers": audit.size,
        **progress,
    }


def _percent(p):
    return round(100 * p["submitted"] / p["assigned"]) if p["assigned"] else 0


JSON_DOC = {"responses": {200: {"description": "The report", "content": {"application/json": {}}}}}


@router.get(
    "/audits/{audit_id}/report",
    response={200: None, **ERRORS},
    openapi_extra=JSON_DOC,
    summary="The audit's report (the JSON of the report page's download)",
)
def audit_report(request, audit_id: int, version: int | None = None):
    """version: a judge version id with verdicts on the audit (a 400 otherwise); without it, the latest."""
    need(request)
    audit = _audit(audit_id)
    report = report_build.build_report(audit, version)
    if version is not None and (report["judge"]["version"] or {}).get("id") != version:  # the page falls back
        raise BadRequest("no verdicts of this judge version on the audit", [{"field": "version", "message": "unknown"}])
    return JsonResponse(report, json_dumps_params={"allow_nan": False})


GOLD_DOC = {
    "responses": {
        200: {
            "description": "Gold labels",
            "content": {"text/csv": {}, "application/x-ndjson": {}, "application/vnd.apache.parquet": {}},
        }
    }
}


@router.get("/audits/{audit_id}/gold", response={200: None, **ERRORS}, openapi_extra=GOLD_DOC, summary="Gold export")
def audit_gold(
    request,
    audit_id: int,
    level: Literal[export.LEVELS] = "claim",
    format: Literal[export.FORMATS] = "csv",
    names: bool = False,
):
    need(request)
    audit = _audit(audit_id)
    response = HttpResponse(
        export.export_bytes(audit, level=level, fmt=format, names=names), content_type=export.CONTENT_TYPES[format]
    )
    response["Content-Disposition"] = f'attachment; filename="{export.file_name(audit, level, format)}"'
    return response


@router.get(
    "/guardrail",
    response={200: None, **ERRORS},
    openapi_extra=JSON_DOC,
    summary="Guardrail: does a candidate's answer-level fail rate regress against a baseline? (blocks: true/false)",
)
def guardrail_get(
    request, baseline: str, candidate: str, judge_version: str, policy: Literal["strict", "lenient"] = "strict"
):
    """baseline / candidate: a dataset name, or DATASET:meta.FIELD=VALUE; judge_version: an id, NAME@HASH as the
    gold export writes it (a hash prefix of 6 or more characters), a definition name (its current version) or a
    content-hash prefix. The same check as `manage.py guardrail`."""
    need(request)
    version = version_lookup(judge_version)
    if version is None:
        raise BadRequest("unknown judge version", [{"field": "judge_version", "message": "no such judge version"}])
    try:
        result = guardrail.guardrail_check(baseline, candidate, version, policy=policy)
    except guardrail.GuardrailError as exc:
        raise BadRequest(str(exc), [{"field": exc.field, "message": str(exc)}]) from None
    return JsonResponse(result, json_dumps_params={"allow_nan": False})
