"""A closed audit is not judged again, however its run comes back: resumed from the page, retried, or a run
queued before the audit closed reaching the worker. It ends failed with the reason, and nothing is written."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from audit.judge.services import judge_run_create, judge_run_execute
from audit.judge.tasks import judge_run_task, judge_runs_recover
from audit.models import Audit, Claim, JudgeFailure, JudgeRun, JudgeVerdict
from tests.factories import make_answer, make_audit, make_dataset, make_user
from tests.test_notify import run_tasks

REASON = "Not run: audit w48 is closed: it is not judged again (score a version in the judge lab)."


@pytest.fixture
def run(db):
    """A run queued on an open audit of two answers without claims, then the audit closes."""
    ds = make_dataset()
    answers = [make_answer(ds, text=f"Paris is in France. It has {i} towers.", n_claims=0) for i in range(2)]
    audit = make_audit(answers, name="w48")
    run = judge_run_create(backend="offline", audit=audit)
    Audit.objects.filter(pk=audit.pk).update(status="closed")
    return run


def nothing_written():
    return not (Claim.objects.exists() or JudgeVerdict.objects.exists() or JudgeFailure.objects.exists())


def test_it_ends_a_run_reaching_the_worker_for_a_closed_audit_with_the_reason(run):
    JudgeRun.objects.filter(pk=run.pk).update(status="queued")  # queued while the audit was open
    judge_run_task.enqueue(run.pk, False)
    run_tasks()
    run.refresh_from_db()
    assert (run.status, run.message, run.answers_done, run.started_at) == ("failed", REASON, 0, None)
    assert run.finished_at is not None and nothing_written()


@pytest.mark.parametrize("retry_failed", [False, True])
def test_it_ends_a_closed_audits_run_executed_from_the_command_without_judging(run, retry_failed):
    run = judge_run_execute(run.pk, retry_failed=retry_failed)
    assert (run.status, run.message) == ("failed", REASON) and nothing_written()


def test_it_refuses_to_resume_a_closed_audits_run_from_the_page_and_queues_nothing(run, client):
    """A run that had ended (cancelled, here) keeps its status and summary; the page says why it is not resumed."""
    JudgeRun.objects.filter(pk=run.pk).update(status="cancelled", message="Cancelled by lead.")
    client.force_login(make_user("lead", "lead"))
    page = client.post(f"/judge/runs/{run.pk}/resume/", {"retry_failed": "1"}, follow=True).content.decode()
    run.refresh_from_db()
    assert (run.status, run.message) == ("cancelled", "Cancelled by lead.")
    assert REASON in page and 'id="run-audit-closed"' in page and 'id="resume_form"' not in page
    assert not DBTaskResult.objects.exists() and nothing_written()


def test_it_ends_a_closed_audits_stalled_run_instead_of_queueing_it_again(run):
    """The worker's recovery hands a stalled run back through judge_run_enqueue: it ends there, saying why."""
    JudgeRun.objects.filter(pk=run.pk).update(status="running", heartbeat_at=timezone.now() - timedelta(hours=1))
    assert judge_runs_recover() == [run.pk]
    run.refresh_from_db()
    assert (run.status, run.message, run.lease) == ("failed", REASON, "") and not DBTaskResult.objects.exists()


def test_it_leaves_a_finished_run_of_a_closed_audit_as_it_was_when_executed_again(run):
    judge_run_execute(run.pk)  # the refusal
    JudgeRun.objects.filter(pk=run.pk).update(status="done", message="6 of 6 answers done.")
    again = judge_run_execute(run.pk)
    assert again.message == REASON
    run.refresh_from_db()
    assert (run.status, run.message) == ("done", "6 of 6 answers done.") and nothing_written()


@pytest.mark.parametrize("status", ["cancelled", "done"])
def test_it_refuses_to_resume_a_closed_audits_run_from_the_command(run, status):
    JudgeRun.objects.filter(pk=run.pk).update(status=status, message="as it was")
    with pytest.raises(CommandError, match=f"judge run {run.pk} not resumed: audit w48 is closed"):
        call_command("judge", "--resume", str(run.pk), "--no-progress")
    run.refresh_from_db()
    assert (run.status, run.message) == (status, "as it was") and nothing_written()
