"""A closed audit is not judged again, however its run comes back: resumed from the page, retried, or a run
queued before the audit closed reaching the worker. It ends failed with the reason, and nothing is written."""

import pytest
from django_tasks_db.models import DBTaskResult

from audit.judge.services import judge_run_create, judge_run_execute
from audit.judge.tasks import judge_run_enqueue, judge_run_task
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
    JudgeRun.objects.filter(pk=run.pk).update(status="cancelled")  # stopped while the audit was open
    client.force_login(make_user("lead", "lead"))
    page = client.post(f"/judge/runs/{run.pk}/resume/", {"retry_failed": "1"}, follow=True).content.decode()
    run.refresh_from_db()
    assert (run.status, run.message) == ("failed", REASON)
    assert REASON in page and 'id="run-audit-closed"' in page and 'id="resume_form"' not in page
    assert not DBTaskResult.objects.exists() and nothing_written()


def test_it_queues_nothing_when_a_closed_audits_run_is_enqueued(run):
    assert judge_run_enqueue(run) is None
    run.refresh_from_db()
    assert (run.status, run.message, run.lease) == ("failed", REASON, "") and not DBTaskResult.objects.exists()
