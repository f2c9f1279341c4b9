"""The anthropic backend with the real SDK against the fake Messages API server (tests/fake_anthropic.py)."""

import json

import pytest

from audit.judge import prompts, runner
from audit.judge.services import judge_failures_retry, judge_run_create, judge_run_execute
from audit.models import Claim, JudgeFailure, JudgeRun, JudgeVerdict
from tests.fake_anthropic import FakeError, answer_of, claim_of, default_handler, kind_of
from tests.judge_helpers import (
    PASSAGES,
    answer_held_calls,
    fake_server,
    kill_after,
    make_judged_answer,
    numbered_answers,
    stored_results,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 0.01)  # a kill hook sees the run often while calls are held
    with fake_server() as server:
        yield server


def run_over(dataset, **kwargs):
    run = judge_run_create(backend="anthropic", dataset=dataset, **kwargs)
    return judge_run_execute(run.pk)


def test_it_runs_decompose_then_verify_and_stores_verdicts(fake):
    answer = make_judged_answer()
    run = run_over(answer.dataset)
    assert run.status == JudgeRun.Status.DONE, run.message
    claims = list(Claim.objects.filter(answer=answer).order_by("position"))
    assert [c.text for c in claims] == [
        "Paris is the capital of France.",
        "The Eiffel Tower was completed in 1889.",
        "It has 300 floors.",
    ]
    assert answer.text[claims[1].span_start : claims[1].span_end] == claims[1].text
    assert all(c.origin == "judge" and c.judge_version_id == run.judge_version_id for c in claims)
    verdicts = {v.claim.position: v for v in JudgeVerdict.objects.select_related("claim")}
    first = verdicts[0]
    assert (first.verdict, first.guard_passed, first.passage_external_id) == ("supported", True, "doc-1")
    assert (verdicts[2].verdict, verdicts[2].guard_passed) == ("unsupported", None)
    assert all(v.run_id == run.pk and v.judge_version_id == run.judge_version_id for v in verdicts.values())
    assert (run.answers_done, run.claims_done, run.items_failed) == (1, 3, 0)
    # Two short passages: under the model's minimum cacheable length, so nothing is cached, and the run says so.
    assert (run.cache_write_tokens, run.cache_read_tokens, run.uncached_answers) == (0, 0, 1)
    assert run.input_tokens > 0 and run.output_tokens > 0
    p = {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}  # claude-sonnet-5-5 in settings
    expected = (
        run.input_tokens * p["input"]
        + run.output_tokens * p["output"]
        + run.cache_write_tokens * p["cache_write"]
        + run.cache_read_tokens * p["cache_read"]
    ) / 1e6
    assert run.cost_usd == pytest.approx(expected)


def test_it_sends_the_decomposer_the_answer_only_and_each_claim_the_same_cached_passages(fake):
    make_judged_answer()
    run_over(make_judged_answer().dataset)
    decomposes, verifies = fake.message_calls("decompose"), fake.message_calls("verify")
    assert len(decomposes) == 2 and len(verifies) == 6
    for body in decomposes:
        sent = json.dumps(body)
        assert all(text not in sent and pid not in sent for pid, text in PASSAGES)
        assert body["output_config"]["format"] == {"type": "json_schema", "schema": prompts.DECOMPOSE_SCHEMA}
        assert "temperature" not in body
    systems = {json.dumps(b["system"]) for b in verifies}
    assert len(systems) == 1  # both answers have the same passages: one byte-identical prefix
    system = verifies[0]["system"]
    assert system[-1]["cache_control"] == {"type": "ephemeral"} and PASSAGES[0][1] in system[-1]["text"]
    raw_systems = {
        r["raw"][r["raw"].index(b'"system"') :].split(b'"messages"')[0]
        for r in fake.requests
        if r["body"] and r["body"].get("system") == system
    }
    assert len(raw_systems) == 1  # byte-identical on the wire too
    for body in verifies:
        assert body["messages"] == [{"role": "user", "content": f"<claim>{claim_of(body)}</claim>"}]
        assert body["output_config"]["format"]["schema"] == prompts.VERIFY_SCHEMA
        assert body["output_config"]["effort"] == "low"


def test_it_scores_evidence_not_found_in_the_passage_as_unsupported(fake):
    def handler(kind, body):
        if kind == "verify":
            return {"verdict": "supported", "evidence": "Paris has 300 floors", "passage_id": "doc-1", "reason": "x"}
        return default_handler(kind, body)

    fake.handler = handler
    run = run_over(make_judged_answer().dataset)
    assert run.status == "done"
    for v in JudgeVerdict.objects.all():
        assert (v.raw_verdict, v.verdict, v.guard_passed) == ("supported", "unsupported", False)
        assert v.evidence == "Paris has 300 floors"


def test_it_records_malformed_output_as_a_failure_and_retries_it(fake):
    answer = make_judged_answer()
    fake.script.append('{"claims": ["unterminated')
    run = run_over(answer.dataset)
    assert run.status == "done" and run.items_failed == 1 and "1 failed item" in run.message
    failure = JudgeFailure.objects.get()
    assert (failure.stage, failure.answer_id, failure.resolved) == ("decompose", answer.pk, False)
    assert failure.raw == '{"claims": ["unterminated' and "not valid JSON" in failure.error
    assert not Claim.objects.exists()
    assert judge_run_execute(run.pk).items_failed == 1  # a plain resume leaves failed items alone
    assert len(fake.message_calls("decompose")) == 1
    run = judge_failures_retry(run)
    assert run.items_failed == 0 and JudgeFailure.objects.get().resolved
    assert Claim.objects.count() == 3 and JudgeVerdict.objects.count() == 3


def test_it_records_output_that_breaks_the_schema(fake):
    fake.handler = lambda kind, body: (
        {"verdict": "probably", "evidence": "", "passage_id": "", "reason": ""}
        if kind == "verify"
        else default_handler(kind, body)
    )
    run = run_over(make_judged_answer().dataset)
    assert run.items_failed == 3 and not JudgeVerdict.objects.exists()
    assert all("not one of" in f.error and f.stage == "verify" and f.claim_id for f in JudgeFailure.objects.all())


def test_it_retries_a_rate_limit_and_succeeds(fake):
    fake.script.append(FakeError(429))
    run = run_over(make_judged_answer().dataset)
    assert run.status == "done" and run.items_failed == 0 and run.claims_done == 3
    assert len(fake.message_calls("decompose")) == 2  # the 429, then the SDK's retry


def test_it_records_persistent_overload_as_a_failed_item(fake):
    fake.handler = lambda kind, body: (
        FakeError(529) if kind == "verify" and "300 floors" in claim_of(body) else default_handler(kind, body)
    )
    run = run_over(make_judged_answer().dataset)
    assert run.status == "done" and run.claims_done == 2 and run.items_failed == 1
    failure = JudgeFailure.objects.get()
    assert "OverloadedError" in failure.error and failure.claim.text == "It has 300 floors."
    assert len([b for b in fake.message_calls("verify") if "300 floors" in claim_of(b)]) == 3  # 1 + 2 retries


def test_it_records_a_request_the_api_refuses_once_as_a_failed_item_it_did_not_bill(fake):
    fake.handler = lambda kind, body: (  # as the API answers a prompt over the model's context window
        FakeError(400) if kind == "verify" and "300 floors" in claim_of(body) else default_handler(kind, body)
    )
    run = run_over(make_judged_answer().dataset)
    assert run.status == "done" and run.claims_done == 2 and run.items_failed == 1
    failure = JudgeFailure.objects.get()
    assert failure.error.startswith("BadRequestError (HTTP 400)") and "may have billed" not in failure.error
    assert len([b for b in fake.message_calls("verify") if "300 floors" in claim_of(b)]) == 1  # not retried


def test_it_gives_a_long_expert_answer_room_for_its_claims_up_to_what_one_call_may_ask(fake):
    """The decomposer restates the answer: max_tokens is half a token per character of it, at least 2,048 and
    at most 21,000 (the project's ceiling: at the slowest rate the SDK plans for, a longer reply could run past
    10 minutes). The fake stops a reply at max_tokens (4 characters a token), as the model does."""
    sentences = [f"Valve V-{i:03d} must be torqued to {40 + i % 30} Nm before the pressure test." for i in range(160)]
    long = make_judged_answer(text=" ".join(sentences), external_id="long")  # about 10,000 characters
    run = run_over(long.dataset)
    [sent] = fake.message_calls("decompose")
    assert sent["max_tokens"] == len(long.text) // 2 > 2048
    assert run.status == "done" and run.items_failed == 0 and Claim.objects.filter(answer=long).count() == 160
    huge = make_judged_answer(text=" ".join(sentences * 8), external_id="huge")  # about 81,000 characters
    run = run_over(huge.dataset)
    assert fake.message_calls("decompose")[-1]["max_tokens"] == 21_000
    failure = JudgeFailure.objects.get(answer=huge)
    assert failure.error == (
        "model stopped: max_tokens (the answer's claims did not fit in one call: import the answer with its claims)"
    )


def test_it_stops_the_run_on_a_rejected_key(fake):
    fake.handler = lambda kind, body: FakeError(401)
    run = run_over(make_judged_answer().dataset)
    assert run.status == "failed" and "AuthenticationError" in run.message
    assert not JudgeFailure.objects.exists()


def test_it_resumes_a_killed_run_without_calling_again_for_stored_work(fake):
    answers = numbered_answers(6)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset)
    with pytest.raises(KeyboardInterrupt):  # killed once 10 results are stored and 4 calls are in flight
        judge_run_execute(run.pk, progress=kill_after(fake, 10, KeyboardInterrupt("killed"), in_flight=4))
    assert answer_held_calls(fake) == 4
    run.refresh_from_db()
    assert run.status == "failed" and "resume" in run.message, (run.status, run.message, run.claims_done)
    assert stored_results() == 10
    decomposed = set(Claim.objects.values_list("answer_id", flat=True))
    judged = set(JudgeVerdict.objects.values_list("claim__text", flat=True))
    assert 0 < len(judged) < 18
    before = len(fake.requests)

    run = judge_run_execute(run.pk)
    assert run.status == "done" and (run.answers_done, run.claims_done) == (6, 18)
    later = [r["body"] for r in fake.requests[before:]]
    assert not [b for b in later if kind_of(b) == "verify" and claim_of(b) in judged]
    texts = {a.pk: a.text for a in answers}
    assert not [b for b in later if kind_of(b) == "decompose" and answer_of(b) in {texts[i] for i in decomposed}]
    assert Claim.objects.count() == 18 and JudgeVerdict.objects.count() == 18
    assert len(set(Claim.objects.values_list("answer_id", "position"))) == 18


def test_it_stops_at_the_budget_and_finishes_when_resumed_with_more(fake):
    answers = numbered_answers(4)
    run = run_over(answers[0].dataset, budget_tokens=6000)
    assert run.status == "budget" and "budget" in run.message
    used = run.input_tokens + run.output_tokens + run.cache_write_tokens + run.cache_read_tokens
    assert 0 < used <= 6000
    calls = len(fake.message_calls())
    assert calls < 16  # 4 decompose + 12 verify would be the whole run
    run.budget_tokens = None
    run.save()
    run = judge_run_execute(run.pk)
    assert run.status == "done" and run.claims_done == 12
    assert len(fake.message_calls()) == 16  # nothing asked twice


def test_it_refuses_a_dollar_budget_below_the_first_call(fake):
    run = run_over(make_judged_answer().dataset, budget_usd=0.0001)
    assert run.status == "budget" and not fake.message_calls() and run.cost_usd == 0


def test_it_runs_through_the_batches_api(fake):
    fake.batch_polls = 3
    answers = numbered_answers(3)
    run = run_over(answers[0].dataset, use_batch=True)
    assert run.status == "done", run.message
    assert (run.answers_done, run.claims_done) == (3, 9)
    assert not fake.message_calls()  # nothing through the direct endpoint
    submits = [r["body"] for r in fake.requests if r["method"] == "POST"]
    assert [len(b["requests"]) for b in submits] == [3, 9]
    first = submits[0]["requests"][0]
    assert first["custom_id"].startswith("d-") and first["params"]["output_config"]["format"]["schema"]
    assert [e["stage"] for e in run.batch_ids] == ["decompose", "verify"] and all(e["collected"] for e in run.batch_ids)
    polls = [r for r in fake.requests if r["method"] == "GET" and not r["path"].endswith("/results")]
    assert len(polls) >= 6
    assert JudgeVerdict.objects.filter(verdict="supported", guard_passed=True).count() == 9
    assert run.cost_usd > 0


def test_it_resumes_a_batch_run_by_polling_the_batch_it_already_submitted(fake):
    fake.batch_polls = 2
    answers = numbered_answers(2)
    run = judge_run_create(backend="anthropic", dataset=answers[0].dataset, use_batch=True)

    def kill(r):
        if r.status == "batch" and r.batch_ids[-1]["stage"] == "verify":
            raise KeyboardInterrupt("worker stopped")

    with pytest.raises(KeyboardInterrupt):
        judge_run_execute(run.pk, progress=kill)
    assert not JudgeVerdict.objects.exists() and Claim.objects.count() == 6
    run = judge_run_execute(run.pk)
    assert run.status == "done" and run.claims_done == 6
    assert len([r for r in fake.requests if r["method"] == "POST"]) == 2  # no second verify batch
    assert len(run.batch_ids) == 2


def test_it_mints_a_new_version_when_the_prompt_changes(fake, monkeypatch):
    v1 = prompts.anthropic_version()
    assert prompts.anthropic_version() == v1
    monkeypatch.setattr(prompts, "VERIFY_SYSTEM", prompts.VERIFY_SYSTEM + " Be brief.")
    v2 = prompts.anthropic_version()
    assert v2 != v1 and v2.spec["verify_system"].endswith("Be brief.")
    assert prompts.anthropic_version(effort="high").effort == "high"
