"""A run whose worker died: the heartbeat shows it stalled, Resume hands it to the worker again, and the
lease makes sure an old execution that is still alive stops instead of working alongside the new one."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from audit.judge import runner, store
from audit.judge.services import judge_run_create, judge_run_execute
from audit.models import Claim, JudgeRun, JudgeVerdict
from tests.factories import make_user
from tests.fake_anthropic import answer_of, claim_of, kind_of
from tests.judge_helpers import fake_server, make_judged_answer, numbered_answers

pytestmark = pytest.mark.django_db


class Killed(BaseException):
    """The worker process dies: nothing after this point runs."""


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(store, "FLUSH_SECONDS", 0)  # every loop beats, so the tests see each heartbeat
    with fake_server() as server:
        yield server


@pytest.fixture
def lead(client):
    client.force_login(make_user("lead", "lead"))
    return client


def kill_midway(run, monkeypatch):
    def kill(r):
        if r.claims_done >= 4:
            raise Killed

    with monkeypatch.context() as m:
        m.setattr(runner, "finish", lambda *args: None)  # a killed process marks nothing failed
        with pytest.raises(Killed):
            judge_run_execute(run.pk, progress=kill)


def run_queued_task():
    task = DBTaskResult.objects.get()
    Worker(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=1,
        worker_id="stall-test",
        excluded_queue_names=[],
    ).run_task(task)


def test_it_shows_a_killed_run_stalled_and_resumes_it_without_repeating_work(
    fake, lead, monkeypatch, django_assert_num_queries
):
    answers = numbered_answers(6)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset)
    kill_midway(run, monkeypatch)
    run.refresh_from_db()
    assert run.status == "running" and run.heartbeat_at is not None
    page = lead.get(f"/judge/runs/{run.pk}/").content.decode()
    assert "Last heartbeat" in page and "Stalled" not in page and "Resume</button>" not in page
    assert "wait for it to stop" in lead.post(f"/judge/runs/{run.pk}/resume/", follow=True).content.decode()
    assert not DBTaskResult.objects.exists()

    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=10))
    with django_assert_num_queries(5):  # session, user, groups, run, failures: as for any run
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
    at_takeover = {}

    def take_over(r):
        if r.claims_done >= 4 and not at_takeover:  # what a resumed execution writes when it starts
            JudgeRun.objects.filter(pk=r.pk).update(lease="resumed", message="the resumed execution's")
            at_takeover["verdicts"] = JudgeVerdict.objects.count()
        elif at_takeover:
            at_takeover["progress after"] = True

    old = judge_run_execute(run.pk, progress=take_over)
    assert "taken over by another execution" in old.message
    assert JudgeVerdict.objects.count() == at_takeover["verdicts"] < 18  # it stored nothing more
    assert "progress after" not in at_takeover  # it stopped at its first heartbeat after the takeover
    row = JudgeRun.objects.get()
    assert (row.status, row.lease, row.message) == ("running", "resumed", "the resumed execution's")

    new = judge_run_execute(run.pk)
    assert new.status == "done" and (new.answers_done, new.claims_done) == (6, 18)
    assert Claim.objects.count() == 18 and JudgeVerdict.objects.count() == 18


def test_it_beats_while_calls_are_slow(fake, monkeypatch):
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 0.05)
    beats = []
    real_flush = store.Recorder.flush
    monkeypatch.setattr(store.Recorder, "flush", lambda rec, force=False: (beats.append(1), real_flush(rec, force)))
    fake.delay = 0.5
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=make_judged_answer().dataset).pk)
    assert run.status == "done" and run.heartbeat_at is not None
    assert len(beats) >= 10  # two rounds of 0.5 s calls (decompose, then verify), a beat every 0.05 s


def test_it_stops_a_batch_run_whose_lease_was_taken_while_it_polls(fake):
    fake.batch_polls = 50
    run = judge_run_create(backend="anthropic", dataset=make_judged_answer().dataset, use_batch=True)

    def take_over(r):
        JudgeRun.objects.filter(pk=r.pk).update(lease="resumed")

    old = judge_run_execute(run.pk, progress=take_over)
    assert "taken over" in old.message and not Claim.objects.exists()
    polls = [r for r in fake.requests if r["method"] == "GET" and not r["path"].endswith("/results")]
    assert len(polls) == 2  # taken over after the first poll; the beat after the second one stopped it
