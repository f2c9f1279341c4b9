"""Writes of the judge: create a run, execute it (resumable), retry its failures (tasks.py queues it)."""

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.jobs.events import judge_run_ended_send
from audit.judge import runner
from audit.judge.batch import BATCH_DISCOUNT, run_batches
from audit.judge.estimate import estimate
from audit.judge.offline import offline_version
from audit.judge.prompts import anthropic_version
from audit.judge.rubric_batch import run_rubric_batches
from audit.judge.rubric_run import run_rubric
from audit.judge.store import scope
from audit.models import Audit, Dataset, JudgeRun, JudgeVersion
from audit.sampling.judgements import judgements_sync

BACKENDS = ("anthropic", "offline")


class JudgeRunError(ValueError):
    """A run cannot be created as asked; the message says why, `field` which input it is about."""

    def __init__(self, message, field=None):
        super().__init__(message)
        self.field = field


def judge_run_create(
    *,
    backend="anthropic",
    dataset=None,
    audit=None,
    answers=None,
    user=None,
    use_batch=False,
    budget_usd=None,
    budget_tokens=None,
    version=None,
):
    """A queued run over a dataset, an audit's sample, or explicit answers (exactly one of them).
    dataset and audit may be given as objects or by name; answers as objects or ids."""
    if backend not in BACKENDS:
        raise JudgeRunError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}", "backend")
    if sum(x is not None for x in (dataset, audit, answers)) != 1:
        raise JudgeRunError("give exactly one of dataset, audit or answers", "dataset")
    for name, value in (("budget_usd", budget_usd), ("budget_tokens", budget_tokens)):
        if value is not None and value <= 0:
            raise JudgeRunError(f"{name} must be positive, got {value}", name)
    if isinstance(dataset, str):
        dataset = _by_name(Dataset, dataset)
    if isinstance(audit, str):
        audit = _by_name(Audit, audit)
    if reason := closed_refusal(audit):
        raise JudgeRunError(reason, "audit")
    if version is not None:  # a chosen judge version (audit.judge.definitions) decides the backend
        backend = "offline" if version.kind == JudgeVersion.Kind.OFFLINE else "anthropic"
    if backend == "anthropic" and not settings.ANTHROPIC_API_KEY:
        raise JudgeRunError("ANTHROPIC_API_KEY is not set: set it, or use the offline backend", "backend")
    version = version or (anthropic_version() if backend == "anthropic" else offline_version())
    answer_ids = [getattr(a, "pk", a) for a in answers] if answers is not None else []
    run = JudgeRun(
        judge_version=version,
        backend=backend,
        dataset=dataset or (audit.dataset if audit else None),
        audit=audit,
        answer_ids=answer_ids,
        use_batch=use_batch and backend == "anthropic",
        created_by=user,
        budget_usd=budget_usd,
        budget_tokens=budget_tokens,
        answers_total=len(answer_ids) if answers is not None else _count(dataset, audit),
    )
    run.estimate = estimate(scope(run), backend=backend, version=version, use_batch=run.use_batch).as_dict()
    run.save()
    return run


def closed_refusal(audit):
    """Why a run over this audit must not judge, or None. A closed audit's report and gold are frozen (the judge
        lab scores versions on its answers). Asked when a run is created, queued (judge_run_enqueue) and executed; the
    close itself stops a run already going (audit.jobs.judge.judge_runs_stop_for_close, store.Recorder's lease)."""
    if audit is not None and audit.is_closed:
        return f"audit {audit.name} is closed: it is not judged again (score a version in the judge lab)"
    return None


def _by_name(model, name):
    try:
        return model.objects.get(name=name)
    except model.DoesNotExist:
        raise JudgeRunError(f"no {model._meta.verbose_name} named {name!r}", model._meta.model_name) from None


def scope_of(*, dataset=None, audit=None):
    """The answers a new run over this dataset or audit (objects or names) would judge, for the estimate."""
    if isinstance(dataset, str):
        dataset = _by_name(Dataset, dataset)
    if isinstance(audit, str):
        audit = _by_name(Audit, audit)
    return scope(JudgeRun(dataset=dataset, audit=audit))


def _count(dataset, audit):
    return audit.items.count() if audit else dataset.answers.count()


# (answer level?, Message Batches?) -> the runner that drives the run
RUNNERS = {
    (False, False): runner.run_sync,
    (False, True): run_batches,
    (True, False): run_rubric,
    (True, True): run_rubric_batches,
}


def judge_run_execute(run_id, progress=None, *, retry_failed=False):
    """Run (or resume) a run to the end, the budget, or a fatal error. Safe to call again at any point:
    stored claims and verdicts are never asked for twice. progress(run) is called as work lands."""
    run = JudgeRun.objects.select_related("judge_version", "audit").get(pk=run_id)
    if reason := closed_refusal(run.audit):  # queued before its audit closed
        return judge_run_refuse(run, reason)
    batch = run.use_batch and run.backend == "anthropic"
    runs = RUNNERS[(run.judge_version.level == "answer", batch)]
    run = runner.execute(
        run, runs, discount=BATCH_DISCOUNT if batch else 1.0, progress=progress, retry_failed=retry_failed
    )
    # Keep the per-answer judge outcomes (the `judge` stratum) current here, in the worker, so the
    # first audit preview after a large run does not pay for deriving them inside a web request.
    with transaction.atomic():
        judgements_sync(run.judge_version_id)
    judge_run_ended_send(run)  # signal and notifications (audit/jobs/events.py)
    return run


def judge_run_refuse(run, reason):
    """The run is not to judge (closed_refusal): one still queued or running ends failed saying why, before any
    other write, and its end is announced (an execution somehow alive loses its lease); a finished one keeps its
    status and summary. Either way the returned run's message says why."""
    message = f"Not run: {reason}."
    ended = JudgeRun.objects.filter(pk=run.pk, status__in=JudgeRun.ACTIVE).update(
        status=JudgeRun.Status.FAILED, message=message, finished_at=timezone.now(), lease=""
    )
    run.refresh_from_db()
    if ended:
        judge_run_ended_send(run)
    run.message = message
    return run


def judge_failures_retry(run, progress=None):
    """Call again for every failed item of the run (and finish anything left undone)."""
    return judge_run_execute(run.pk, progress, retry_failed=True)


def judge_run_update_budget(run, *, budget_usd=None, budget_tokens=None):
    run.budget_usd, run.budget_tokens = budget_usd, budget_tokens
    run.save(update_fields=["budget_usd", "budget_tokens"])
