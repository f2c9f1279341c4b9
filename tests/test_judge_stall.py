"""A run whose worker died: the heartbeat shows it stalled, Resume hands it to the worker again, and the
lease makes sure an old execution that is still alive stops instead of working alongside the new one."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from audit.judge import runner, store
from audit.judge.services import judge_run_create, judge_run_execute
from audit.judge.tasks import RECOVER_TASK, RUN_TASK, judge_run_enqueue
from audit.models import Claim, JudgeRun, JudgeVerdict
from tests.factories import make_user, worker_run
from tests.fake_anthropic import Gate, answer_of, claim_of, kind_of
from tests.judge_helpers import (
    answer_held_calls,
    fake_server,
    kill_after,
    make_judged_answer,
    numbered_answers,
    stored_results,
)

pytestmark = pytest.mark.django_db


class Killed(BaseException):
    """The worker process dies: nothing after this point runs."""


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(store, "FLUSH_SECONDS", 0)  # every loop beats, so the tests see each heartbeat
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 0.01)  # and the hooks see the run while calls are held
    with fake_server() as server:
        yield server


@pytest.fixture
def lead(client):
    client.force_login(make_user("lead", "lead"))
    return client


def kill_midway(run, fake, monkeypatch):
    """Killed once 10 results are stored, with 4 calls in flight (answered by the fake afterwards)."""
    with monkeypatch.context() as m:
        m.setattr(runner, "finish", lambda *args: None)  # a killed process marks nothing failed
        with pytest.raises(Killed):
            judge_run_execute(run.pk, progress=kill_after(fake, 10, Killed(), in_flight=4))
    assert answer_held_calls(fake) == 4


def run_queued_task():
    worker_run(DBTaskResult.objects.get(), "stall-test", claim=False)


def test_it_shows_a_killed_run_stalled_and_resumes_it_without_repeating_work(
    fake, lead, monkeypatch, django_assert_num_queries
):
    answers = numbered_answers(6)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset)
    kill_midway(run, fake, monkeypatch)
    run.refresh_from_db()
    assert run.status == "running" and run.heartbeat_at is not None
    page = lead.get(f"/judge/runs/{run.pk}/").content.decode()
    assert "Last heartbeat" in page and "Stalled" not in page and "Resume</button>" not in page
    assert "wait for it to stop" in lead.post(f"/judge/runs/{run.pk}/resume/", follow=True).content.decode()
    assert not DBTaskResult.objects.exists()

    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=10))
    with django_assert_num_queries(4):  # session, user with roles, run, failures: as for any run
        page = lead.get(f"/judge/runs/{run.pk}/").content.decode()
    assert "Stalled (no progress for 10 minutes; the worker may have stopped)" in page
    assert "Resume</button>" in page and 'hx-trigger="every 10s"' in page  # slower, not stopped
    assert lead.get(f"/judge/runs/{run.pk}/", headers={"HX-Request": "true"}).status_code == 200
    assert "stalled (no progress for 10 minutes" in lead.get("/judge/runs/").content.decode()

    judged = set(JudgeVerdict.objects.values_list("claim__text", flat=True))
    decomposed = {a.text for a in answers if a.claims.exists()}
    assert 0 < len(judged) < 18
    before = len(fake.requests)
    response = lead.post(f"/judge/runs/{run.pk}/resume/", {"retry_failed": ""})
    assert response.status_code == 302 and JudgeRun.objects.get().status == "queued"
    assert "Stalled" not in lead.get(f"/judge/runs/{run.pk}/").content.decode()  # the queue time starts anew
    run_queued_task()
    run.refresh_from_db()
    assert run.status == "done" and (run.answers_done, run.claims_done) == (6, 18), run.message
    later = [r["body"] for r in fake.requests[before:]]
    assert not [b for b in later if kind_of(b) == "verify" and claim_of(b) in judged]
    assert not [b for b in later if kind_of(b) == "decompose" and answer_of(b) in decomposed]
    assert Claim.objects.count() == 18 and JudgeVerdict.objects.count() == 18


def test_it_stops_an_old_execution_when_a_resume_takes_its_lease(fake):
    answers = numbered_answers(6)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset)
    fake.gate, at_takeover = Gate(after=10), {}

    def take_over(r):
        if stored_results() == 10 and fake.gate.held >= 1 and not at_takeover:
            # what a resumed execution writes when it starts; the held calls may now come back
            JudgeRun.objects.filter(pk=r.pk).update(lease="resumed", message="the resumed execution's")
            at_takeover["stored"] = stored_results()
            fake.gate.release()
        elif at_takeover:
            at_takeover["progress after"] = True

    old = judge_run_execute(run.pk, progress=take_over)
    assert "taken over by another execution" in old.message
    answer_held_calls(fake)
    assert stored_results() == at_takeover["stored"] == 10  # it stored nothing more
    assert "progress after" not in at_takeover  # it stopped at its first heartbeat after the takeover
    row = JudgeRun.objects.get()
    assert (row.status, row.lease, row.message) == ("running", "resumed", "the resumed execution's")

    new = judge_run_execute(run.pk)
    assert new.status == "done" and (new.answers_done, new.claims_done) == (6, 18)
    assert Claim.objects.count() == 18 and JudgeVerdict.objects.count() == 18


def test_it_beats_while_calls_are_slow(fake, monkeypatch):
    fake.gate, beats = Gate(after=0), []
    real_flush = store.Recorder.flush

    def flush(rec, force=False):
        beats.append(fake.gate.held)
        if len([held for held in beats if held]) >= 10:  # ten beats while a call was held: let calls through
            fake.gate.release()
        return real_flush(rec, force)

    monkeypatch.setattr(store.Recorder, "flush", flush)
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=make_judged_answer().dataset).pk)
    assert run.status == "done" and run.heartbeat_at is not None and run.claims_done == 3
    assert len([held for held in beats if held]) >= 10


def test_it_stops_a_batch_run_whose_lease_was_taken_while_it_polls(fake):
    fake.batch_polls = 50
    run = judge_run_create(backend="anthropic", dataset=make_judged_answer().dataset, use_batch=True)

    def take_over(r):
        JudgeRun.objects.filter(pk=r.pk).update(lease="resumed")

    old = judge_run_execute(run.pk, progress=take_over)
    assert "taken over" in old.message and not Claim.objects.exists()
    polls = [r for r in fake.requests if r["method"] == "GET" and not r["path"].endswith("/results")]
    assert len(polls) == 2  # taken over after the first poll; the beat after the second one stopped it


@pytest.mark.django_db(transaction=True)  # the worker's own transactions
@override_settings(JUDGE_STALL_SECONDS=3600)  # fresh means fresh, however busy the machine
def test_it_resumes_a_run_whose_worker_died_by_itself_and_fails_the_orphaned_task_row(fake, monkeypatch):
    answers = numbered_answers(6)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset)
    judge_run_enqueue(run)
    orphan = DBTaskResult.objects.get()
    orphan.claim("worker-that-dies")  # what the worker does before it runs the task
    kill_midway(run, fake, monkeypatch)
    judged = set(JudgeVerdict.objects.values_list("claim__text", flat=True))

    def worker():  # a worker (re)starting, running what is due, then exiting
        call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0", verbosity=0)

    worker()  # restarted at once: the heartbeat is fresh, so the run is left alone and checked again later
    check = DBTaskResult.objects.get(task_path=RECOVER_TASK)
    run.refresh_from_db()
    assert (check.status, run.status) == ("READY", "running")
    assert check.run_after == run.heartbeat_at + timedelta(seconds=settings.JUDGE_STALL_SECONDS + 1)
    orphan.refresh_from_db()
    assert orphan.status == "RUNNING"

    # Time passes without a heartbeat: the scheduled check falls due, and a worker resumes the run by itself.
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=2))
    DBTaskResult.objects.filter(pk=check.pk).update(run_after=timezone.now())
    before = len(fake.requests)
    worker()
    run.refresh_from_db()
    assert run.status == "done" and (run.answers_done, run.claims_done) == (6, 18), run.message
    orphan.refresh_from_db()
    assert orphan.status == "FAILED" and orphan.exception_class_path.endswith("WorkerLost")
    assert "worker stopped" in orphan.traceback
    tasks = dict(DBTaskResult.objects.exclude(pk=orphan.pk).values_list("task_path", "status"))
    assert tasks == {RECOVER_TASK: "SUCCESSFUL", RUN_TASK: "SUCCESSFUL"}
    later = [r["body"] for r in fake.requests[before:]]
    assert not [b for b in later if kind_of(b) == "verify" and claim_of(b) in judged]
    assert JudgeVerdict.objects.count() == 18


def test_it_counts_each_answer_too_short_to_cache_once_across_a_kill_and_a_resume(fake, monkeypatch):
    """Six answers, every prefix too short to cache: a killed execution counted the answers it had a reply
    for, and the resume counted them again (9 of 6 answers)."""
    answers = numbered_answers(6)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset)
    kill_midway(run, fake, monkeypatch)
    run = judge_run_execute(run.pk)
    assert run.status == "done" and run.claims_done == 18
    assert run.uncached_answers == 6


def test_it_shows_the_claims_the_estimate_expected_rounded_not_cut(lead):
    """The estimate expects fractional claims (characters / characters per claim): 6 stored + 6.67 expected is
    13, where the template's add filter turned the float into an int (12)."""
    answers = numbered_answers(1)
    run = judge_run_create(backend="offline", dataset=answers[0].dataset)
    JudgeRun.objects.filter(pk=run.pk).update(
        estimate={**run.estimate, "calls": 13, "claims_known": 6, "claims_expected": 6.67}
    )
    page = lead.get(f"/judge/runs/{run.pk}/").content.decode()
    assert '<tr><th>Claims</th><td class="num">13</td>' in page
