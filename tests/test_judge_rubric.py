"""The answer-level rubric judge with the real SDK against the fake Messages API (tests/fake_anthropic.py),
its offline counterpart, and versions minted by editing a definition."""

import json

import pytest

from audit.jobs.judge import judge_run_cancel
from audit.judge import llm, rubric
from audit.judge.definitions import current_version, definition_save, definitions_seed, version_diff
from audit.judge.services import judge_failures_retry, judge_run_create, judge_run_execute
from audit.models import AnswerVerdict, JudgeFailure, JudgeRun, JudgeVersion
from tests.factories import make_dataset
from tests.fake_anthropic import rubric_answer_of
from tests.judge_helpers import PASSAGES, fake_server, make_judged_answer

pytestmark = pytest.mark.django_db
GOOD = "Paris is the capital of France. The Eiffel Tower was completed in 1889."
BAD = "Paris is the capital of France. It has 300 floors."


@pytest.fixture
def fake():
    with fake_server() as server:
        yield server


@pytest.fixture
def faithfulness():
    return current_version(definitions_seed()[1])


def answers(n=2, texts=(GOOD, BAD)):
    first = make_judged_answer(text=texts[0], external_id="r0")
    return [first] + [
        make_judged_answer(first.dataset, text=texts[i % len(texts)], external_id=f"r{i}") for i in range(1, n)
    ]


def run_version(version, dataset, **kwargs):
    return judge_run_execute(judge_run_create(version=version, dataset=dataset, **kwargs).pk)


def test_it_sends_one_call_per_answer_with_passages_cached_and_the_schema(fake, faithfulness):
    a = answers()
    run = run_version(faithfulness, a[0].dataset)
    assert run.status == "done", run.message
    calls = fake.message_calls("rubric")
    assert len(calls) == 2 and len(fake.message_calls()) == 2  # no decompose, no verify
    for body in calls:
        system = body["system"]
        assert system[0] == {"type": "text", "text": rubric.RUBRIC_SYSTEM}
        assert system[-1]["cache_control"] == {"type": "ephemeral"}
        assert all(f'<passage id="{pid}">\n{text}\n</passage>' in system[-1]["text"] for pid, text in PASSAGES)
        user = body["messages"][0]["content"]
        assert user.startswith("<question>\nWhat is the capital of France?\n</question>\n<answer>\n")
        assert rubric_answer_of(body) in (GOOD, BAD) and PASSAGES[0][1] not in user
        assert body["output_config"] == {
            "format": {"type": "json_schema", "schema": rubric.RUBRIC_SCHEMA},
            "effort": "low",
        }
        assert rubric.RUBRIC_SCHEMA["required"] == ["score", "reason"]
        assert rubric.RUBRIC_SCHEMA["additionalProperties"] is False
    assert len({json.dumps(b["system"]) for b in calls}) == 1  # same passages: one cached prefix
    scores = dict(AnswerVerdict.objects.values_list("answer__text", "score"))
    assert scores == {GOOD: 1, BAD: 0}
    assert set(AnswerVerdict.objects.values_list("judge_version_id", "run_id")) == {(faithfulness.pk, run.pk)}
    assert (run.answers_done, run.claims_done) == (2, 0) and run.cost_usd > 0
    billed, _ = fake.bill(dict.fromkeys(("input", "output", "cache_write", "cache_read"), 0))
    recorded = (run.input_tokens, run.output_tokens, run.cache_write_tokens, run.cache_read_tokens)
    assert recorded == (billed["input"], billed["output"], billed["cache_write"], billed["cache_read"])


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ('{"score": 1, "reason": "unterminated', "not valid JSON"),
        ({"score": 2, "reason": "x"}, "is not 0 or 1"),
        ({"score": True, "reason": "x"}, "is not 0 or 1"),
        ({"score": 1}, "expected keys"),
        ({"score": 1, "reason": "x", "extra": 1}, "expected keys"),
    ],
)
def test_it_records_unusable_rubric_output_as_a_failure_and_retries_it(fake, faithfulness, reply, error):
    a = make_judged_answer(text=GOOD)
    fake.script.append(reply)
    run = run_version(faithfulness, a.dataset)
    assert run.status == "done" and run.items_failed == 1 and not AnswerVerdict.objects.exists()
    failure = JudgeFailure.objects.get()
    assert (failure.stage, failure.answer_id, failure.claim_id) == ("rubric", a.pk, None) and error in failure.error
    assert judge_run_execute(run.pk).items_failed == 1 and len(fake.message_calls()) == 1  # resume skips it
    run = judge_failures_retry(run)
    assert run.items_failed == 0 and JudgeFailure.objects.get().resolved
    assert AnswerVerdict.objects.get().score == 1 and len(fake.message_calls()) == 2


def test_it_stops_at_the_budget_and_resumes_only_what_is_left(fake, faithfulness):
    # The runner's worst case per call: one token per byte of the request plus the API's framing (64),
    # plus max_tokens of output, reserved before the call is sent.
    p = rubric.rubric_params(faithfulness.spec, "What is the capital of France?", PASSAGES, GOOD)
    est = len(json.dumps(p).encode()) + 64 + p["max_tokens"]
    probe = run_version(faithfulness, make_judged_answer(make_dataset("probe"), text=GOOD, external_id="probe").dataset)
    u = sum(fake.billed[0]["usage"].values())  # what one such call bills (the prefix is too short to cache)
    assert probe.status == "done" and 0 < u < est
    a = answers(5, texts=(GOOD,))  # five identical requests: each bills u
    # A call waits while those in flight could take the run past the budget; the k-th goes out only if the
    # k - 1 settled calls plus its worst case fit: (k - 1) * u + est <= budget. Room for exactly 3.
    budget = est + 2 * u + u // 2
    run = run_version(faithfulness, a[0].dataset, budget_tokens=budget)
    used = run.input_tokens + run.output_tokens + run.cache_write_tokens + run.cache_read_tokens
    assert run.status == "budget" and used == 3 * u <= budget
    assert AnswerVerdict.objects.filter(answer__in=a).count() == 3 and len(fake.message_calls()) == 1 + 3
    run.budget_tokens = None
    run.save()
    run = judge_run_execute(run.pk)
    assert run.status == "done" and run.answers_done == 5 and AnswerVerdict.objects.filter(answer__in=a).count() == 5
    assert len(fake.message_calls()) == 1 + 5  # the answers judged before the stop were not asked again


def test_it_has_an_offline_answer_level_baseline():
    a = answers(2, texts=(GOOD, "Paris is the capital of France. The tower has 300 floors and a golden roof."))
    run = run_version(rubric.offline_rubric_version(), a[0].dataset)
    assert run.status == "done" and run.backend == "offline" and run.cost_usd == 0
    assert dict(AnswerVerdict.objects.values_list("answer_id", "score")) == {a[0].pk: 1, a[1].pk: 0}


def test_it_mints_a_version_on_edit_and_old_verdicts_keep_their_wording(fake, faithfulness, django_user_model):
    lead = django_user_model.objects.create_user("lead")
    a = make_judged_answer(text=GOOD)
    run_version(faithfulness, a.dataset)
    definition = faithfulness.definition
    edited = faithfulness.spec["rubric_system"].replace("the answer.", "the answer of our support bot.", 1)
    data = {"rubric_system": edited, "model": "claude-haiku-5-5", "effort": "medium"}
    v2, warnings, minted = definition_save(definition, data, lead)
    assert minted and warnings == [] and v2.previous == faithfulness and current_version(definition) == v2
    assert v2.content_hash != faithfulness.content_hash and (v2.model, v2.effort) == ("claude-haiku-5-5", "medium")
    assert v2.edit.user == lead and v2.level == "answer"
    assert definition_save(definition, data, lead) == (v2, [], False)  # same content, same version
    diff = dict(version_diff(v2))
    assert (
        "+You are given the user question, the retrieved context (the passages below) and the answer of our "
        "support bot." in diff["rubric_system"]
    )
    assert set(diff) == {"rubric_system", "model", "effort"}
    run_version(v2, a.dataset)
    bodies = fake.message_calls("rubric")
    assert bodies[0]["system"][0]["text"] == rubric.RUBRIC_SYSTEM and bodies[1]["system"][0]["text"] == edited
    assert bodies[1]["model"] == "claude-haiku-5-5"
    old = AnswerVerdict.objects.get(judge_version=faithfulness)
    assert old.judge_version.spec["rubric_system"] == rubric.RUBRIC_SYSTEM  # the old verdict's exact wording
    faithfulness.refresh_from_db()
    assert faithfulness.spec == rubric.build_spec() and JudgeVersion.objects.filter(definition=definition).count() == 2


def test_it_warns_before_saving_wording_without_the_scale_or_the_exclusions(faithfulness):
    definition = faithfulness.definition
    text = faithfulness.spec["rubric_system"].replace("- paraphrase\n", "").replace("Score 0", "Otherwise 0")
    data = {"rubric_system": text, "model": "claude-haiku-5-5", "effort": "low"}
    version, warnings, preview = definition_save(definition, data, None)
    assert version is None and definition.versions.count() == 1
    assert "-- paraphrase" in dict(preview)["rubric_system"]
    assert warnings == [
        "rubric_system: removed the scale: the definition of score 0",
        "rubric_system: removed the exclusions: paraphrase",
    ]
    version, _, minted = definition_save(definition, data, None, confirm=True)
    assert minted and version.edit.warnings == warnings


def test_it_seeds_the_code_prompts_as_the_first_claim_level_definition():
    claim, answer = definitions_seed()
    assert definitions_seed() == (claim, answer)
    first = current_version(claim)
    assert first.spec["verify_system"].startswith("You check one claim") and first.level == "claim"
    assert current_version(answer).spec["rubric_system"] == rubric.RUBRIC_SYSTEM


def test_it_runs_an_edited_claim_level_definition_with_its_own_wording(fake, django_user_model):
    claim_def = definitions_seed()[0]
    first = current_version(claim_def)
    text = first.spec["verify_system"] + "\nTreat product names as exact strings."
    data = {"decompose_system": first.spec["decompose_system"], "verify_system": text, "model": first.model,
            "effort": "low"}  # fmt: skip
    v2, warnings, minted = definition_save(claim_def, data, None)
    assert minted and warnings == [] and v2.level == "claim"
    run = run_version(v2, make_judged_answer().dataset)
    assert run.status == "done" and run.claims_done == 3
    assert {b["system"][0]["text"] for b in fake.message_calls("verify")} == {text}
    dropped = dict(data, verify_system=text.replace('"contradicted"', "contradicted"))
    assert definition_save(claim_def, dropped, None)[1] == [
        "verify_system: removed the scale: the verdict contradicted"
    ]


def test_it_runs_the_rubric_through_the_batches_api_and_resumes_the_submitted_batch(fake, faithfulness):
    fake.batch_polls = 2
    a = answers(3)
    run = judge_run_create(version=faithfulness, dataset=a[0].dataset, use_batch=True)

    def kill(r):  # the worker dies while the batch is being processed
        if r.status == "batch":
            raise KeyboardInterrupt("worker stopped")

    with pytest.raises(KeyboardInterrupt):
        judge_run_execute(run.pk, progress=kill)
    assert not AnswerVerdict.objects.exists()
    run = judge_run_execute(run.pk)
    assert run.status == "done", run.message
    assert not fake.message_calls()  # nothing through the direct endpoint
    submits = [r["body"] for r in fake.requests if r["method"] == "POST"]
    assert [len(b["requests"]) for b in submits] == [3]  # the resume polled the batch it had, no second one
    assert {q["custom_id"] for q in submits[0]["requests"]} == {f"r-{x.pk}" for x in a}
    assert submits[0]["requests"][0]["params"]["output_config"]["format"]["schema"] == rubric.RUBRIC_SCHEMA
    assert dict(AnswerVerdict.objects.values_list("answer__text", "score")) == {GOOD: 1, BAD: 0}
    assert run.answers_done == 3 and run.cost_usd > 0 and [e["collected"] for e in run.batch_ids] == [True]


def test_it_stores_no_batch_result_once_a_cancel_took_the_lease_before_collection(fake, faithfulness, monkeypatch):
    a = answers(2)
    run = judge_run_create(version=faithfulness, dataset=a[0].dataset, use_batch=True)
    real = llm.LLMJudge.batch_results

    def cancelled_first(judge, *args):  # the lead cancels as the ended batch's results come down
        judge_run_cancel(JudgeRun.objects.get(pk=run.pk), None)
        return real(judge, *args)

    monkeypatch.setattr(llm.LLMJudge, "batch_results", cancelled_first)
    old = judge_run_execute(run.pk)
    assert not AnswerVerdict.objects.exists() and old.message.startswith("Stopped: ")
    assert JudgeRun.objects.get().status == "cancelled"
