"""Writes of the judge: create a run, execute it (resumable), retry its failures, queue it for the worker."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.judge import runner
from audit.judge.estimate import estimate
from audit.judge.offline import offline_version
from audit.judge.prompts import anthropic_version
from audit.judge.store import scope
from audit.models import Audit, Dataset, JudgeRun, JudgeVersion

BACKENDS = ("anthropic", "offline")


RUN_TASK = "audit.judge.tasks.judge_run_task"
RECOVER_TASK = "audit.judge.tasks.judge_recover_task"
ACTIVE = (JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING, JudgeRun.Status.BATCH_SUBMITTED)


class WorkerLost(Exception):
    """The worker executing a judge run stopped (killed, restarted): its task row is closed with this."""


class JudgeRunError(ValueError):
    """A run cannot be created as asked; the message says why."""


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
        raise JudgeRunError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if sum(x is not None for x in (dataset, audit, answers)) != 1:
        raise JudgeRunError("give exactly one of dataset, audit or answers")
    for name, value in (("budget_usd", budget_usd), ("budget_tokens", budget_tokens)):
        if value is not None and value <= 0:
            raise JudgeRunError(f"{name} must be positive, got {value}")
    if isinstance(dataset, str):
        dataset = _by_name(Dataset, dataset)
    if isinstance(audit, str):
        audit = _by_name(Audit, audit)
    if version is not None:  # a chosen judge version (audit.judge.definitions) decides the backend
        backend = "offline" if version.kind == JudgeVersion.Kind.OFFLINE else "anthropic"
    if backend == "anthropic" and not settings.ANTHROPIC_API_KEY:
        raise JudgeRunError("ANTHROPIC_API_KEY is not set: set it, or use the offline backend")
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


def _by_name(model, name):
    try:
        return model.objects.get(name=name)
    except model.DoesNotExist:
        raise JudgeRunError(f"no {model._meta.verbose_name} named {name!r}") from None


def scope_of(*, dataset=None, audit=None):
    """The answers a new run over this dataset or audit (objects or names) would judge, for the estimate."""
    if isinstance(dataset, str):
        dataset = _by_name(Dataset, dataset)
    if isinstance(audit, str):
        audit = _by_name(Audit, audit)
    return scope(JudgeRun(dataset=dataset, audit=audit))


def _count(dataset, audit):
    return audit.items.count() if audit else dataset.answers.count()


def judge_run_execute(run_id, progress=None, *, retry_failed=False):
    """Run (or resume) a run to the end, the budget, or a fatal error. Safe to call again at any point:
    stored claims and verdicts are never asked for twice. progress(run) is called as work lands."""
    from audit.jobs.events import judge_run_ended_send
    from audit.sampling.judgements import judgements_sync

    run = JudgeRun.objects.select_related("judge_version").get(pk=run_id)
    run = runner.execute(run, progress=progress, retry_failed=retry_failed)
    # Keep the per-answer judge outcomes (the `judge` stratum) current here, in the worker, so the
    # first audit preview after a large run does not pay for deriving them inside a web request.
    with transaction.atomic():
        judgements_sync(run.judge_version_id)
    judge_run_ended_send(run)  # signal and notifications (audit/jobs/events.py)
    return run


def judge_failures_retry(run, progress=None):
    """Call again for every failed item of the run (and finish anything left undone)."""
    return judge_run_execute(run.pk, progress, retry_failed=True)


def judge_run_update_budget(run, *, budget_usd=None, budget_tokens=None):
    run.budget_usd, run.budget_tokens = budget_usd, budget_tokens
    run.save(update_fields=["budget_usd", "budget_tokens"])


def judge_run_enqueue(run, *, retry_failed=False):
    """Hand the run to the database task worker (`manage.py db_worker`). A stalled run is resumed this way:
    the execution the worker starts takes the run's lease, so an old one still alive stops (runner.py)."""
    from audit.judge.tasks import judge_run_task

    run.status = JudgeRun.Status.QUEUED
    run.message = f"Waiting for the task worker ({settings.WORKER_COMMAND})."
    run.heartbeat_at = timezone.now()  # stalled again only if no worker picks it up in time
    run.save(update_fields=["status", "message", "heartbeat_at"])
    return judge_run_task.enqueue(run.pk, retry_failed)


def judge_runs_recover():
    """Run at worker start-up, then as a task while runs are active: every active run whose heartbeat
    stopped goes back to the worker (its lease stops an old execution that is somehow still alive), and
    the task rows of its dead executions, RUNNING forever otherwise, are marked failed. A run not stalled
    yet is checked again when it would be. Returns the ids of the runs resumed."""
    from django_tasks_db.models import DBTaskResult

    from audit.judge.tasks import judge_recover_task

    resumed, due = [], []
    for run in JudgeRun.objects.filter(status__in=ACTIVE).order_by("pk"):
        rows = DBTaskResult.objects.filter(task_path=RUN_TASK, args_kwargs__args__0=run.pk)
        if rows.filter(status="READY").exists():
            continue  # a worker will run it
        if not run.is_stalled:
            last = run.heartbeat_at or run.started_at or run.created_at
            due.append(last + timedelta(seconds=settings.JUDGE_STALL_SECONDS + 1))
            continue
        for row in rows.filter(status="RUNNING"):
            row.set_failed(
                WorkerLost(f"the worker stopped: judge run {run.pk} had no heartbeat since {run.heartbeat_at}")
            )
        judge_run_enqueue(run)
        resumed.append(run.pk)
    if due and not DBTaskResult.objects.filter(task_path=RECOVER_TASK, status="READY").exists():
        judge_recover_task.using(run_after=min(due)).enqueue()
    return resumed
