"""The judge bill adds up: the fake bills every reply it produced, and the run records the same, except the
calls in flight when a worker is killed (at most JUDGE_CONCURRENCY per kill) and a reply that came after
its call gave up (never retried, so never paid twice)."""

import pytest

from audit.judge import llm, runner
from audit.judge.services import judge_failures_retry, judge_run_create, judge_run_execute
from audit.models import JudgeFailure, JudgeVerdict
from tests.fake_anthropic import FakeError, Gate, claim_of, default_handler
from tests.judge_helpers import (
    answer_held_calls,
    fake_server,
    kill_after,
    make_judged_answer,
    numbered_answers,
    prices,
    recorded,
)

pytestmark = pytest.mark.django_db


class Killed(BaseException):
    """The worker process dies: nothing after this point runs."""


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 0.01)  # kill hooks see the run while calls are held
    with fake_server() as server:
        yield server


def assert_recorded_equals(run, tokens, usd):
    assert recorded(run) == tokens
    assert run.cost_usd == pytest.approx(usd, rel=1e-9)


def test_it_records_every_billed_reply_through_faults(fake):
    seen = set()

    def handler(kind, body):
        claim = claim_of(body) if kind == "verify" else ""
        if "Fact 0-1" in claim:
            return FakeError(529)  # overloaded on every attempt: never billed
        if "Fact 1-0" in claim and claim not in seen:
            seen.add(claim)
            return FakeError(500)  # once, then answered
        if "Fact 1-1" in claim:
            return '{"verdict": "supported", "evid'  # malformed: billed, recorded as a failure
        if "Fact 1-2" in claim:
            return {"verdict": "supported", "evidence": "", "passage_id": "", "reason": "x" * 10_000}  # truncated
        return default_handler(kind, body)

    fake.handler = handler
    fake.script.append(FakeError(429))
    answers = numbered_answers(3)
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=answers[0].dataset).pk)
    assert run.status == "done" and run.items_failed == 3 and run.claims_done == 6, run.message
    errors = sorted(f.error.split(":")[0] for f in JudgeFailure.objects.all())
    assert errors == ["OverloadedError (HTTP 529)", "model stopped", "unusable output"]
    tokens, usd = fake.bill(prices())
    assert_recorded_equals(run, tokens, usd)
    assert len(fake.billed) == 3 + 9 - 1  # every call but the overloaded one produced a reply
    print(
        f"\njudge bill through faults: billed ${usd:.6f} ({sum(tokens.values())} tokens), recorded ${run.cost_usd:.6f}"
    )


def test_it_repeats_only_the_calls_in_flight_after_two_kills(fake, monkeypatch):
    monkeypatch.setattr(runner, "finish", lambda *args: None)  # a killed process marks nothing failed
    answers = numbered_answers(8)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset)
    lost = []  # billed[start:end] of each kill: the replies of the calls in flight, paid and lost
    for n in (9, 11):
        start = len(fake.billed) + n
        with pytest.raises(Killed):
            judge_run_execute(run.pk, progress=kill_after(fake, n, Killed(), in_flight=4))
        held = answer_held_calls(fake)
        assert 1 <= held <= 4  # JUDGE_CONCURRENCY, or fewer when fewer calls could be made at the kill
        lost.append((start, len(fake.billed)))
    monkeypatch.undo()
    run = judge_run_execute(run.pk)
    assert run.status == "done" and run.claims_done == 24 and JudgeVerdict.objects.count() == 24
    about = [entry["about"] for entry in fake.billed]
    duplicates = len(about) - len(set(about))
    assert duplicates == sum(end - start for start, end in lost) <= 8
    tokens, usd = fake.bill(prices())
    lost_bills = [fake.bill(prices(), start, end) for start, end in lost]
    lost_tokens = {k: sum(t[k] for t, _ in lost_bills) for k in tokens}
    lost_usd = sum(u for _, u in lost_bills)
    assert_recorded_equals(run, {k: tokens[k] - lost_tokens[k] for k in tokens}, usd - lost_usd)
    print(
        f"\njudge bill with two kills (JUDGE_CONCURRENCY=4): {len(about)} paid calls for {len(set(about))} results, "
        f"{duplicates} duplicate paid calls; billed ${usd:.6f}, recorded ${run.cost_usd:.6f}, "
        f"difference ${usd - run.cost_usd:.6f} = the {duplicates} calls in flight at the kills"
    )


def test_it_does_not_retry_a_call_that_timed_out_and_records_it_once_asked_again(fake, monkeypatch):
    assert fake.gate is None
    answer = make_judged_answer()
    fake.gate = Gate(after=0)  # the decompose reply comes only after the client gave up

    def late(run):
        if run.items_failed:
            fake.gate.release()

    with monkeypatch.context() as m:
        m.setattr(llm, "SLOWEST_TOKENS_PER_SECOND", 1e9)
        m.setattr("django.conf.settings.JUDGE_TIMEOUT", 0.5)
        run = judge_run_execute(judge_run_create(backend="anthropic", dataset=answer.dataset).pk, progress=late)
    assert fake.wait_idle()
    failure = JudgeFailure.objects.get()
    assert "APITimeoutError" in failure.error and "not retried" in failure.error
    assert len(fake.message_calls()) == len(fake.billed) == 1  # asked once, billed once, recorded not
    assert recorded(run) == dict.fromkeys(recorded(run), 0)
    late_tokens, late_usd = fake.bill(prices())
    fake.gate = None

    run = judge_failures_retry(run)
    assert run.status == "done" and run.items_failed == 0 and run.claims_done == 3
    tokens, usd = fake.bill(prices())
    assert_recorded_equals(run, {k: tokens[k] - late_tokens[k] for k in tokens}, usd - late_usd)
    timeouts = {r["headers"]["x-stainless-timeout"] for r in fake.requests[1:] if r["path"] == "/v1/messages"}
    # JUDGE_TIMEOUT plus max_tokens at the slowest rate the SDK plans for
    assert timeouts == {str(120.0 + 2048 * 3600 / 128_000), str(120.0 + 1024 * 3600 / 128_000)}


def test_it_never_spends_past_the_budget_with_calls_in_flight(fake):
    def handler(kind, body):  # the first verify reply is short, every later one long
        if kind == "verify" and "Fact 0-0" not in claim_of(body):
            return {"verdict": "unsupported", "evidence": "", "passage_id": "", "reason": "y" * 3000}
        return default_handler(kind, body)

    def side_by_side(run):  # the first calls are let through only once two of them are in flight
        if fake.gate.held >= 2:
            fake.gate.release()

    fake.handler, fake.gate = handler, Gate(after=0)
    answers = numbered_answers(6)
    budget = 0.12  # under the cost of the whole run (about $0.21)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset, budget_usd=budget)
    run = judge_run_execute(run.pk, progress=side_by_side)
    assert run.status == "budget" and "budget" in run.message, (run.message, run.cost_usd, len(fake.billed))
    tokens, usd = fake.bill(prices())
    assert_recorded_equals(run, tokens, usd)
    assert usd <= budget and len(fake.billed) > 4
