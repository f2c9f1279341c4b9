"""Job control of judge runs: cancel, and the stop of an audit's runs when it closes. (Retry is the run page's
Resume, which a cancelled run offers too.)

A cancel takes the run's lease away: a running execution stops at its next heartbeat (at most a second
or so of work, or one slow call, later), and one still queued never starts (store.Recorder.take_lease).
Everything stored until then (claims, verdicts, failures, usage) is kept."""

from django.utils import timezone

from audit.models import JudgeRun

ACTIVE = [JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING, JudgeRun.Status.BATCH_SUBMITTED]


def judge_run_cancel(run, user):
    who = user.get_username() if user else "command"
    run.refresh_from_db()
    message = (
        f"Cancelled by {who} at {timezone.now():%Y-%m-%d %H:%M:%S} UTC. What was stored is kept: "
        f"{run.answers_done} of {run.answers_total} answers done, {run.claims_done} claims judged. "
        "Resume to finish it; stored work is not asked for again."
    )
    if run.use_batch and run.status == JudgeRun.Status.BATCH_SUBMITTED:
        message += " Batches already submitted may still be billed."
    done = JudgeRun.objects.filter(pk=run.pk, status__in=ACTIVE).update(
        status=JudgeRun.Status.CANCELLED, lease="", message=message, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return message if done else f"Run {run.pk} is {run.get_status_display().lower()}: nothing to cancel."


def judge_run_reopen(run):
    """A cancelled run resumed from the command line (`manage.py judge --resume ID`) may start again; the
    web's Resume does the same through judge_run_enqueue."""
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.CANCELLED).update(status=JudgeRun.Status.QUEUED)
    run.refresh_from_db()
    return run


def judge_runs_stop_for_close(audit, user):
    """Called inside the close of `audit` (annotations' audit_close), before it checks gold: every run over the
    audit loses its lease (its row locked until the close commits, so a store the runner has in flight either
    commits first, and the close sees its claims, or fails its lease check and rolls back), and an active one ends
    cancelled saying why. A closed audit's labels and gold are frozen: a run writing claims into it would leave
    claims without gold in a closed audit. Returns the ids of the runs stopped."""
    who = user.get_username() if user else "command"
    runs = JudgeRun.objects.filter(audit_id=audit.pk)
    stopped = list(runs.filter(status__in=ACTIVE).order_by("pk").values_list("pk", flat=True))
    message = (
        f"Cancelled: audit {audit.name} was closed by {who} at {timezone.now():%Y-%m-%d %H:%M:%S} UTC. "
        "What was stored is kept; a closed audit is not judged again (score a version in the judge lab)."
    )
    runs.filter(pk__in=stopped).update(
        status=JudgeRun.Status.CANCELLED, lease="", message=message, finished_at=timezone.now()
    )
    runs.exclude(lease="").update(lease="")  # an execution of a finished run somehow alive stops too
    return stopped
