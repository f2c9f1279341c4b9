"""Closing an audit stops the judge runs over it: a run still decomposing a sampled answer without claims (no gold
to miss, so the close succeeds) must not write claims into the closed audit. The fake Messages API holds the
decompose call until the close has happened: no timing, only events."""

import threading

import pytest
from django.db import connection

from annotations.adjudication.services import AdjudicationError, audit_close
from audit.judge import runner, store
from audit.judge.services import judge_run_create, judge_run_execute
from audit.models import Claim, JudgeRun
from tests.factories import make_assignments, make_audit, make_user
from tests.fake_anthropic import Gate
from tests.judge_helpers import fake_server, make_judged_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(store, "FLUSH_SECONDS", 0)
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 0.01)  # the hook sees the run while the call is held
    with fake_server() as server:
        yield server


@pytest.fixture
def audit():
    """One sampled answer without claims, submitted by both annotators: gold is complete, the close may go."""
    answer = make_judged_answer()
    audit = make_audit([answer], status="adjudication")
    make_assignments(audit, make_user("a", "annotator"), make_user("b", "annotator"), status="submitted")
    return audit


def test_it_stops_a_run_decomposing_an_answer_of_an_audit_that_closes(fake, audit, client):
    lead = make_user("lead", "lead")
    run = judge_run_create(backend="anthropic", audit=audit)
    fake.gate, closed = Gate(after=0), {}

    def close_while_held(r):
        if fake.gate.held and not closed:  # the decompose call went out and waits for its reply
            closed["result"] = audit_close(audit, lead)
            fake.gate.release()  # its reply comes back after the close

    old = judge_run_execute(run.pk, progress=close_while_held)
    assert not Claim.objects.exists()  # the reply landed after the close: nothing written into the closed audit
    assert closed["result"][1] == [run.pk]
    assert old.message.startswith("Stopped: ") and "audit closed" in old.message
    row = JudgeRun.objects.get()
    assert row.status == "cancelled" and row.lease == ""
    assert row.message.startswith(f"Cancelled: audit {audit.name} was closed by lead")
    audit.refresh_from_db()
    assert audit.is_closed


def test_it_says_on_the_close_which_runs_it_stopped(fake, audit, client):
    run = judge_run_create(backend="anthropic", audit=audit)  # queued, not started
    client.force_login(make_user("lead", "lead"))
    page = client.post(f"/adjudicate/{audit.pk}/close/", follow=True).content.decode()
    assert f"Judge run {run.pk} over it was still active and stopped (cancelled)" in page
    assert judge_run_execute(run.pk).status == "cancelled" and not Claim.objects.exists()  # the worker never starts


def test_it_leaves_the_runs_alone_when_the_close_is_refused(fake, audit):
    answer = audit.items.get().answer
    Claim.objects.create(answer=answer, position=0, text="A claim without gold.")
    run = judge_run_create(backend="anthropic", audit=audit)
    with pytest.raises(AdjudicationError, match="no gold label"):
        audit_close(audit, make_user("lead", "lead"))
    assert JudgeRun.objects.get().status == "queued"
    assert judge_run_execute(run.pk).status == "done"


def test_it_never_writes_into_an_audit_closed_after_its_execution_checked_it(fake, audit, monkeypatch):
    """A resume that read the audit open, then lost the race to the close before it took its lease."""
    run = judge_run_create(backend="anthropic", audit=audit)
    JudgeRun.objects.filter(pk=run.pk).update(status="failed")  # finished: the close leaves it as it is
    real = store.Recorder.take_lease

    def close_first(rec):
        audit_close(audit, make_user("lead", "lead"))
        return real(rec)

    monkeypatch.setattr(store.Recorder, "take_lease", close_first)
    old = judge_run_execute(run.pk)
    assert "audit closed" in old.message and not Claim.objects.exists() and not fake.requests


def test_it_never_decomposes_an_answer_of_a_closed_audit_in_a_dataset_run(audit):
    frozen = audit.items.get().answer
    free = make_judged_answer(frozen.dataset)  # in no audit
    audit_close(audit, make_user("lead", "lead"))
    run = judge_run_execute(judge_run_create(backend="offline", dataset=frozen.dataset).pk)
    assert run.status == "done" and free.claims.exists() and not frozen.claims.exists()


def test_it_drops_a_decomposition_whose_answer_closed_in_another_audit_while_the_call_was_out(fake, audit):
    """A dataset run keeps its lease through the close of an audit it is not over: its store checks the answer."""
    run = judge_run_create(backend="anthropic", dataset=audit.dataset)
    fake.gate, closed = Gate(after=0), {}

    def close_while_held(r):
        if fake.gate.held and not closed:
            closed["result"] = audit_close(audit, make_user("lead", "lead"))
            fake.gate.release()

    run = judge_run_execute(run.pk, progress=close_while_held)
    assert closed["result"][1] == [] and run.status == "done" and not Claim.objects.exists()


def _close_elsewhere(audit, user, out):
    """audit_close on this thread's own database connection (another session), its outcome in out."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            out["pid"] = cursor.fetchone()[0]
        out["started"].set()
        out["result"] = audit_close(audit, user)
    except AdjudicationError as exc:
        out["refused"] = str(exc)
    finally:
        connection.close()
        out["started"].set()
        out["done"].set()


def _blocked_or_done(out):
    """Wait until the close has finished or waits for a lock held by this connection's open transaction (the store
    checked and inserted, not yet committed). Decided by the database's state, never by how long it takes."""
    out["started"].wait()
    with connection.cursor() as cursor:
        while not out["done"].wait(0.005):
            cursor.execute("SELECT cardinality(pg_blocking_pids(%s))", [out["pid"]])
            if cursor.fetchone()[0]:
                return "blocked"
    return "done"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="two sessions at once: PostgreSQL's row locks")
@pytest.mark.django_db(transaction=True)
def test_it_keeps_claims_out_of_an_audit_closed_between_the_stores_check_and_its_commit(fake, audit, monkeypatch):
    """A dataset run stores the decomposition of an answer the audit sampled; another session closes the audit right
    after the store's closed check, before the store's transaction commits. The close must wait for the store and
    then count its claims (they have no gold: refused); it closed the audit with the claims arriving after."""
    lead, out = make_user("lead", "lead"), {"started": threading.Event(), "done": threading.Event()}
    real = store.Recorder.store_claims

    def store_then_close(rec, st, texts):
        stored = real(rec, st, texts)  # checked the audit, inserted the claims: not committed yet
        threading.Thread(target=_close_elsewhere, args=(audit, lead, out)).start()
        out["close"] = _blocked_or_done(out)
        return stored

    monkeypatch.setattr(store.Recorder, "store_claims", store_then_close)
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=audit.dataset).pk)
    out["done"].wait()
    audit.refresh_from_db()
    assert run.status == "done" and Claim.objects.count() == 3
    assert not audit.is_closed and out["close"] == "blocked" and "3 claims still have no gold label" in out["refused"]
