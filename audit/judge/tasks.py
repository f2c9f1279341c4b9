"""The judge run as a Django task on the database backend (`manage.py db_worker` executes it): the tasks,
queueing a run for the worker, and handing back runs whose worker stopped."""

from datetime import timedelta

from django.conf import settings
from django.tasks import task
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from audit.judge.services import closed_refusal, judge_run_execute, judge_run_refuse
from audit.models import Audit, JudgeRun

RUN_TASK = "audit.judge.tasks.judge_run_task"
RECOVER_TASK = "audit.judge.tasks.judge_recover_task"


class WorkerLost(Exception):
    """The worker executing a judge run stopped (killed, restarted): its task row is closed with this."""


@task()
def judge_run_task(run_id, retry_failed=False):
    run = judge_run_execute(run_id, retry_failed=retry_failed)
    return {"run": run.pk, "status": run.status, "message": run.message}


@task()
def judge_recover_task():
    """The stalled check, scheduled by judge_runs_recover while runs are active."""
    return {"resumed": judge_runs_recover()}


def judge_run_enqueue(run, *, retry_failed=False):
    """Hand the run to the database task worker (`manage.py db_worker`). A stalled run is resumed this way:
    the execution the worker starts takes the run's lease, so an old one still alive stops (runner.py).
    A run whose audit has closed is not queued (services.judge_run_refuse): None is returned."""
    # The audit as it is now: it may have closed since the run was read.
    audit = Audit.objects.filter(pk=run.audit_id).first() if run.audit_id else None
    if reason := closed_refusal(audit):
        judge_run_refuse(run, reason)
        return None
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
    resumed, due = [], []
    for run in JudgeRun.objects.filter(status__in=JudgeRun.ACTIVE).order_by("pk"):
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
