"""A judge run's time: the executions' active time (each from taking the lease to its last heartbeat), with the
time it stood stalled or stopped before a resume shown apart; a run from before active time was recorded keeps its
start-to-finish time, labelled. The test's clock moves only when the test moves it."""

import datetime as dt

import pytest
from django.utils import timezone

from audit.judge import runner, store
from audit.judge.services import judge_run_create, judge_run_execute
from audit.models import JudgeRun
from tests.factories import make_dataset, make_user
from tests.judge_helpers import fake_server, make_judged_answer

pytestmark = pytest.mark.django_db


class Killed(BaseException):
    """The worker process dies: nothing after this point runs."""


class Clock:
    def __init__(self):
        self.now = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += dt.timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch):
    monkeypatch.setattr(store, "FLUSH_SECONDS", 0)  # every loop beats
    clock = Clock()
    monkeypatch.setattr(timezone, "now", clock)
    return clock


def progress_advancing(clock, seconds, then=None):
    """A progress hook: the first call moves the clock on by `seconds` (work taking that long); a later one raises
    `then` (the worker dies) when given."""
    calls = []

    def progress(run):
        calls.append(run)
        if len(calls) == 1:
            clock.advance(seconds)
        elif then is not None:
            raise then

    return progress


def test_it_counts_active_time_without_the_stall_before_a_resume(clock, client, monkeypatch):
    ds = make_dataset("d")
    make_judged_answer(ds)
    run = judge_run_create(backend="offline", dataset=ds)
    # Execution 1 decomposes (10 s), beats, verifies, and dies: 10 s active.
    with monkeypatch.context() as m:
        m.setattr(runner, "finish", lambda *args: None)  # a killed process marks nothing failed
        with pytest.raises(Killed):
            judge_run_execute(run.pk, progress=progress_advancing(clock, 10, then=Killed()))
    assert JudgeRun.objects.get().active_seconds == 10
    clock.advance(990)  # stalled, then resumed with a new answer to judge: 5 s of work to the end
    make_judged_answer(ds, external_id="later")
    run = judge_run_execute(run.pk, progress=progress_advancing(clock, 5))
    run.refresh_from_db()
    assert run.status == "done" and run.wall_seconds() == 1005
    assert run.active_seconds == 15 and run.stalled_seconds == 990
    client.force_login(make_user("lead", "lead"))
    page = client.get(f"/judge/runs/{run.pk}/").content.decode()
    time = "Active 15 s; not counted: 990 s stalled or stopped before a resume (started to finished 1005 s)."
    assert time in page and "any stall included" not in page


def test_it_labels_the_start_to_finish_time_of_a_run_from_before_active_time_was_recorded(clock, client):
    ds = make_dataset("d")
    make_judged_answer(ds)
    run = judge_run_execute(judge_run_create(backend="offline", dataset=ds).pk)
    start = clock.now - dt.timedelta(seconds=700)
    JudgeRun.objects.filter(pk=run.pk).update(active_seconds=None, started_at=start)  # as migrated: not recorded
    client.force_login(make_user("lead", "lead"))
    page = client.get(f"/judge/runs/{run.pk}/").content.decode()
    time = "Started to finished 700 s, any stall included (a run from before active time was recorded)."
    assert time in page and "Active " not in page and "not counted" not in page


def test_it_shows_an_llm_runs_active_time_beside_the_estimated_one(clock, client):
    with fake_server():
        ds = make_dataset("d")
        make_judged_answer(ds)
        run = judge_run_execute(
            judge_run_create(backend="anthropic", dataset=ds).pk, progress=progress_advancing(clock, 7)
        )
    client.force_login(make_user("lead", "lead"))
    page = client.get(f"/judge/runs/{run.pk}/").content.decode()
    assert "<tr><th>Active time</th>" in page and '<td class="num">7 s</td></tr>' in page and "Wall time" not in page
