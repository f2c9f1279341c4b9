"""HTTP API endpoints of the audit domain: answers in and out, datasets, judge runs, audits (create/preview).

Mounted under /api/v1/ by the project's API (claimaudit/api.py, which authenticates the token). Every
endpoint here is for audit leads; errors are `Error` bodies: a message and, for bad input, field errors.
"""

import tempfile
from datetime import date, datetime
from typing import Literal

from django.core.exceptions import ValidationError
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import HttpError
from ninja.pagination import LimitOffsetPagination, paginate

from audit import roles
from audit.ingest.export import dataset_jsonl
from audit.ingest.formats import FORMATS, MappingError, parse_mapping
from audit.ingest.services import answers_import
from audit.ingest.spool import max_upload_bytes
from audit.ingest.write import BUSY
from audit.judge import selectors as judge_selectors
from audit.judge.estimate import estimate
from audit.judge.services import JudgeRunError, judge_run_create, scope_of
from audit.judge.tasks import judge_run_enqueue
from audit.models import Audit, Dataset, JudgeRun
from audit.sampling import services as sampling
from audit.sampling.forms import AuditForm, refusal_fields
from audit.selectors import dataset_counts
from audit.validation import json_problem

router = Router(tags=["audit"])
SPOOL_MEMORY = 8 * 1024 * 1024  # a request body above this is spooled to a temporary file


class FieldError(Schema):
    field: str
    message: str
    line: int | None = None


class Error(Schema):
    message: str
    errors: list[FieldError] = []


ERRORS = {400: Error, 401: Error, 403: Error, 404: Error}
BODY_ERRORS = {**ERRORS, 413: Error}  # a JSON body over DATA_UPLOAD_MAX_MEMORY_SIZE


class BadRequest(Exception):
    """A 400 (or another 4xx) with field errors: rendered by the project's API as an Error body."""

    def __init__(self, message, errors=(), status=400):
        super().__init__(message)
        self.message, self.errors, self.status = message, list(errors), status


def need(request, role=roles.LEAD):
    if not roles.has_role(request.auth, role):
        raise HttpError(403, f"This endpoint is for {role}.")


def storable(**values):
    """400 naming the field when a path value or a JSON body holds text the database cannot store (NUL, a
    lone surrogate): the middleware checks query and form fields, not these."""
    for name, value in values.items():
        problem = json_problem(value.dict() if isinstance(value, Schema) else value, name)
        if problem:
            raise BadRequest("invalid request", [{"field": problem[0], "message": problem[1]}])


def form_errors(form):
    return [{"field": f, "message": " ".join(m)} for f, m in form.errors.items()]


class DatasetOut(Schema):
    name: str
    answers: int = Field(alias="n_answers")
    claims: int = Field(alias="n_claims")
    claims_not_located: int = Field(alias="n_unlocated")


class Pages(LimitOffsetPagination):
    """Ninja's limit and offset, bounded: a value past them is a 400 naming it (an offset over 64 bits reached
    the database and failed there)."""

    class Input(Schema):
        limit: int = Field(100, ge=1, le=1000)
        offset: int = Field(0, ge=0, le=2**31)


@router.get("/datasets", response={200: list[DatasetOut], **ERRORS}, summary="Datasets with their counts")
@paginate(Pages)
def datasets(request):
    need(request)
    return dataset_counts()


class ImportOut(Schema):
    status: str
    created: int
    updated: int
    unchanged: int
    records: int
    import_id: int | None
    notes: list[str] = []  # what the counts alone do not say (e.g. answers kept as stored, and why)


PARQUET = "application/vnd.apache.parquet"
BODY_DOC = {
    "requestBody": {
        "required": True,
        "description": "A JSON array of records, JSON lines, or a Parquet file, in any import format (see `format`); "
        "JSON may be gzipped (told from its first bytes, whatever Content-Encoding says).",
        "content": {
            "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
            "application/x-ndjson": {"schema": {"type": "string"}},
            PARQUET: {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


@router.post(
    "/datasets/{name}/answers",
    response={200: ImportOut, 400: Error, 401: Error, 403: Error, 409: Error, 413: Error, 415: Error},
    openapi_extra=BODY_DOC,
    summary="Import answers (all or nothing, idempotent by id)",
)
def answers_push(
    request,
    name: str,
    format: Literal[FORMATS] = "auto",
    update: bool = False,
    judge_name: str = "external",
    map: list[str] = Query([]),  # noqa: B008 (ninja declares query lists this way)
):
    need(request)
    if request.content_type == "multipart/form-data":  # its boundary lines would be read as bad records
        raise HttpError(415, "Send the file itself as the body (JSON, JSON lines or Parquet), not a multipart form.")
    size = int(request.META.get("CONTENT_LENGTH") or 0)
    if size > max_upload_bytes():
        raise HttpError(413, f"The body is {size:,} bytes; the limit is {max_upload_bytes():,}.")
    try:
        mapping = parse_mapping(map)
    except MappingError as e:
        raise BadRequest("bad field mapping", [{"field": "map", "message": str(e)}]) from None
    with tempfile.SpooledTemporaryFile(SPOOL_MEMORY) as body:
        while chunk := request.read(1 << 20):  # never request.body: that would hold it whole, twice
            body.write(chunk)
        body.seek(0)
        batch = answers_import(
            body,
            dataset_name=name,
            file_name="body.parquet" if request.content_type == PARQUET else "body.json",
            user=request.auth,
            update=update,
            judge_name=judge_name,
            fmt=format,
            mapping=mapping,
        )
    if batch.status == batch.Status.FAILED:
        busy = bool(batch.errors) and all(
            e["message"].endswith(BUSY) for e in batch.errors
        )  # a concurrent import of these ids: retry
        message = f"import failed with {len(batch.errors)} error(s); nothing was written"
        raise BadRequest(message, batch.errors, status=409 if busy else 400)
    return {
        "status": batch.status,
        "created": batch.created,
        "updated": batch.updated,
        "unchanged": batch.unchanged,
        "records": batch.records_done,
        "import_id": batch.pk,
        "notes": batch.notes,
    }


@router.get(
    "/datasets/{name}/answers",
    response={200: None, **ERRORS},
    openapi_extra={"responses": {200: {"description": "JSON lines", "content": {"application/x-ndjson": {}}}}},
    summary="Export a dataset's answers in the native import shape",
)
def answers_export(request, name: str):
    need(request)
    storable(name=name)
    dataset = get_object_or_404(Dataset, name=name)
    return StreamingHttpResponse(dataset_jsonl(dataset), content_type="application/x-ndjson; charset=utf-8")


class RunIn(Schema):
    """Exactly one of dataset (its name) and audit (its id). A field this endpoint does not know is refused."""

    model_config = {"extra": "forbid"}
    dataset: str | None = None
    audit: int | None = None
    backend: Literal["anthropic", "offline"] = "anthropic"
    use_batch: bool = False
    budget_usd: float | None = Field(None, gt=0)
    budget_tokens: int | None = Field(None, gt=0, le=2**63 - 1)  # the column's 64 bits


class RunOut(Schema):
    id: int
    status: str
    backend: str
    judge_version: str
    dataset: str | None
    audit: int | None
    answers_total: int
    answers_done: int
    claims_done: int
    items_failed: int
    cost_usd: float
    message: str

    @staticmethod
    def resolve_judge_version(run):
        return run.judge_version.label

    @staticmethod
    def resolve_dataset(run):
        return run.dataset.name if run.dataset_id else None

    @staticmethod
    def resolve_audit(run):
        return run.audit_id


def _scope_audit(payload):
    """The run's audit, or None for a dataset; 400 unless exactly one of the two is given (the service also
    takes explicit answers, which this API does not)."""
    if (payload.dataset is None) == (payload.audit is None):
        raise BadRequest("give exactly one of dataset or audit", [{"field": "dataset", "message": "or audit"}])
    return get_object_or_404(Audit, pk=payload.audit) if payload.audit is not None else None


@router.post("/judge-runs", response={202: RunOut, **BODY_ERRORS}, summary="Start a judge run (queued for the worker)")
def judge_run_start(request, payload: RunIn):
    need(request)
    storable(payload=payload)
    audit = _scope_audit(payload)
    try:
        run = judge_run_create(user=request.auth, audit=audit, **payload.dict(exclude={"audit"}))
    except JudgeRunError as e:
        raise BadRequest(str(e), [{"field": e.field, "message": str(e)}] if e.field else []) from None
    judge_run_enqueue(run)
    return Status(202, judge_selectors.judge_run(run.pk))


class EstimateOut(Schema):
    """The bill before the run (audit.judge.estimate): counts, tokens, dollars, seconds, and the arithmetic."""

    answers: int
    answers_to_decompose: int
    claims_known: int
    claims_expected: float
    calls: int
    input_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int
    uncacheable_answers: int
    usd_uncached: float
    usd_cached: float
    wall_seconds: float
    lines: list[str]


@router.post("/judge-runs/estimate", response={200: EstimateOut, **BODY_ERRORS}, summary="The bill before a judge run")
def judge_run_estimate(request, payload: RunIn):
    """The same body as starting a run; nothing is created and no call is made."""
    need(request)
    audit = _scope_audit(payload)
    try:
        answers = scope_of(dataset=payload.dataset, audit=audit)
    except JudgeRunError as e:
        raise BadRequest(str(e), [{"field": "dataset", "message": str(e)}]) from None
    return estimate(answers, backend=payload.backend, use_batch=payload.use_batch)


@router.get("/judge-runs/{run_id}", response={200: RunOut, **ERRORS}, summary="A judge run's progress")
def judge_run_progress(request, run_id: int):
    need(request)
    try:
        return judge_selectors.judge_run(run_id)
    except JudgeRun.DoesNotExist:
        raise HttpError(404, "No such judge run.") from None


class AuditIn(Schema):
    """The design fields of the web form; `preview` returns the strata table and saves nothing."""

    dataset: str
    name: str = ""
    preview: bool = False
    size: int = 150
    strata: list[str] = []
    allocation: Literal["proportional", "equal", "neyman"] = "proportional"
    created_from: date | None = None
    created_to: date | None = None
    meta_filters: dict[str, str] = {}
    exclude_audited: bool = False
    judge_version: int | None = None
    default_fail_rate: float = 0.1
    fail_rates: dict[str, float] = {}
    min_per_stratum: int = 0
    seed: int | None = None


class StratumOut(Schema):
    stratum: str
    population: int
    sample: int
    inclusion_probability: float
    weight: float | None
    expected_fail_rate: float | None = None


class DesignOut(Schema):
    """notes: what the design does that the inputs did not say (a size above the population, a minimum per
    stratum that cannot be met, strata left without a sample), each naming its field."""

    population_size: int
    sample_size: int
    design: list[StratumOut]
    notes: list[FieldError] = []


class AuditOut(Schema):
    id: int
    name: str
    dataset: str
    status: str
    size: int
    seed: int
    created_at: datetime
    design: list[StratumOut]
    notes: list[FieldError] = Field([], alias="design_notes")

    @staticmethod
    def resolve_dataset(audit):
        return audit.dataset.name


def _form(payload):
    p = payload.dict()
    dataset = Dataset.objects.filter(name=p["dataset"]).values_list("pk", flat=True).first()
    data = {k: v for k, v in p.items() if v is not None and k not in ("preview", "exclude_audited")}
    data |= {
        "dataset": dataset if dataset is not None else "",
        "strata": ", ".join(p["strata"]),
        "meta_filters": "\n".join(f"{k} = {v}" for k, v in p["meta_filters"].items()),
        "fail_rates": "\n".join(f"{k} = {v}" for k, v in p["fail_rates"].items()),
    }
    if p["exclude_audited"]:
        data["exclude_audited"] = "on"
    form = AuditForm(data)
    if not form.is_valid():
        errors = form_errors(form)
        if dataset is None and p["dataset"]:  # the form only knows that no dataset was chosen
            missing = f"no dataset named {p['dataset']!r} exists"
            errors = [e if e["field"] != "dataset" else {"field": "dataset", "message": missing} for e in errors]
        raise BadRequest("the audit design is not valid", errors)
    return form


@router.post(
    "/audits",
    response={200: DesignOut, 201: AuditOut, **BODY_ERRORS},
    summary="Create an audit (or, with preview, only its strata table)",
)
def audit_start(request, payload: AuditIn):
    need(request)
    storable(payload=payload)
    form = _form(payload)
    try:
        if payload.preview:
            return Status(200, sampling.audit_preview(**form.service_kwargs()))
        if not form.cleaned_data["name"]:
            raise BadRequest("a name is required", [{"field": "name", "message": "required unless preview"}])
        audit = sampling.audit_create(
            name=form.cleaned_data["name"], seed=form.cleaned_data["seed"], user=request.auth, **form.service_kwargs()
        )
    except (ValueError, ValidationError) as e:
        errors = [{"field": f, "message": m} for f, m in refusal_fields(e) if f]
        raise BadRequest(" ".join(getattr(e, "messages", [str(e)])), errors) from None
    return Status(201, audit)
