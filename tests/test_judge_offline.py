"""The offline baseline judge, the judge command, selectors, and a real task worker executing a run."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.judge import offline
from audit.judge.guard import evidence_guard
from audit.judge.services import JudgeRunError, judge_run_create, judge_run_execute
from audit.judge.tasks import judge_run_enqueue
from audit.models import AnswerJudgement, Claim, JudgeRun, JudgeVerdict
from audit.spans import evidence_span
from tests.factories import make_answer, make_audit, make_dataset
from tests.judge_helpers import make_judged_answer

PASSAGES = [
    ("p1", "The Eiffel Tower was completed in 1889. It is 330 metres tall."),
    ("p2", "The tower is not open at night in winter."),
]


def test_it_decomposes_by_sentence_and_clause_and_drops_pleasantries():
    text = (
        "Hello! Based on the passages, the Eiffel Tower was completed in 1889 and it is 330 metres tall. "
        "Salt and pepper are spices. I hope this helps! Do you want more?\n- Paris is big; Lyon is smaller."
    )
    assert offline.decompose(text) == [
        "the Eiffel Tower was completed in 1889",
        "it is 330 metres tall.",
        "Salt and pepper are spices.",
        "Paris is big",
        "Lyon is smaller.",
    ]


def test_it_verifies_by_overlap_with_verbatim_evidence():
    supported = offline.verify(PASSAGES, "The Eiffel Tower was completed in 1889.")
    assert supported == {
        "verdict": "supported",
        "evidence": "The Eiffel Tower was completed in 1889.",
        "passage_id": "p1",
        "reason": supported["reason"],
    }
    assert offline.verify(PASSAGES, "The Eiffel Tower was completed in 1925.")["verdict"] == "contradicted"
    assert offline.verify(PASSAGES, "The tower is open at night in winter.")["verdict"] == "contradicted"
    unsupported = offline.verify(PASSAGES, "The tower has a restaurant run by a famous chef.")
    assert (unsupported["verdict"], unsupported["evidence"]) == ("unsupported", "")


def test_it_folds_a_list_lead_in_into_fragment_items_and_strips_citations():
    text = (
        "Based on the provided passages, the main symptoms of IBS are:\n\n1. Diarrhea ( passage 1)\n"
        "2. Gas or bloating (Passages 1 and 2)\n\n(Passage 3)\nHere are some differences between them:\n"
        "- The tower was completed in 1889 (Passage 1).\n- According to passage 2, it is not open at night."
    )
    spans = offline.decompose_spans(text)
    assert [c for c, _, _ in spans] == [
        "the main symptoms of IBS are diarrhea",
        "the main symptoms of IBS are gas or bloating",
        "The tower was completed in 1889",
        "it is not open at night.",
    ]
    # The span is where the claim's own words sit in the answer (the item, not the folded lead-in).
    assert [text[a:b] for _, a, b in spans] == [
        "Diarrhea",
        "Gas or bloating",
        "The tower was completed in 1889",
        "it is not open at night.",
    ]
    cited = "Vietnam (Passage 2) was a colony of France."  # a citation inside a claim stays inside its span
    assert offline.decompose_spans(cited) == [("Vietnam was a colony of France.", 0, len(cited))]
    assert offline.decompose("The causes are:\n\nNobody knows.") == ["Nobody knows."]  # no list: lead-in dropped


def test_it_keeps_a_refusal_as_one_non_assertive_claim():
    text = "Unable to answer based on given passages.\n\nThe passages do not mention a restaurant. Good luck!"
    claims = offline.decompose(text)
    assert claims == ["Unable to answer based on given passages.", "The passages do not mention a restaurant."]
    assert {offline.verify(PASSAGES, c)["verdict"] for c in claims} == {"non_assertive"}


def test_it_gives_the_expected_verdicts_on_a_hand_example_with_evidence_passing_the_guard():
    answer = (
        "Based on the passages, the Eiffel Tower was completed in 1925 and it is 330 metres tall (Passage 1). "
        "The tower is open at night in winter. It hosts a famous restaurant run by a chef."
    )
    got = [(c, offline.verify(PASSAGES, c)) for c in offline.decompose(answer)]
    assert [(c, v["verdict"]) for c, v in got] == [
        ("the Eiffel Tower was completed in 1925", "contradicted"),
        ("it is 330 metres tall", "supported"),
        ("The tower is open at night in winter.", "contradicted"),
        ("It hosts a famous restaurant run by a chef.", "unsupported"),
    ]
    texts = dict(PASSAGES)
    for _, v in got[:3]:
        assert evidence_guard(v["verdict"], v["evidence"], texts[v["passage_id"]]) == (v["verdict"], True)
    # Stemming and number formatting: "completing ... 1889.0" still meets "completed in 1889".
    assert offline.verify(PASSAGES, "Completing the Eiffel Tower took until 1889.0.")["verdict"] == "supported"


def test_it_is_deterministic_and_versioned(db):
    assert offline.decompose("A is B. C is D.") == offline.decompose("A is B. C is D.")
    v = offline.offline_version()
    assert v == offline.offline_version() and v.kind == "offline" and "offline baseline" in v.label
    assert v.name == "offline-lexical-v3" and v.spec["threshold"] == offline.THRESHOLD


@pytest.mark.django_db
def test_it_judges_a_dataset_from_the_command_and_is_idempotent():
    ds = make_dataset("demo")
    answer = make_judged_answer(
        ds, text="The Eiffel Tower was completed in 1889. It has a famous chef.", passages=PASSAGES
    )
    imported = make_answer(ds, n_claims=2)  # claims given at import are never decomposed again
    out, err = io.StringIO(), io.StringIO()
    call_command("judge", "--dataset", "demo", "--backend", "offline", stdout=out, stderr=err)
    assert "answers 2/2, claims judged 4, failed 0" in out.getvalue() and "offline baseline" in out.getvalue()
    assert "2/2 answers" in err.getvalue()  # the progress bar
    assert list(Claim.objects.filter(answer=imported).values_list("origin", flat=True)) == ["imported"] * 2
    claims = Claim.objects.filter(answer=answer).order_by("position")
    assert [(c.text, c.span_start, c.origin) for c in claims] == [
        ("The Eiffel Tower was completed in 1889.", 0, "judge"),
        ("It has a famous chef.", 40, "judge"),
    ]
    v = JudgeVerdict.objects.get(claim=claims[0])
    assert (v.verdict, v.guard_passed, v.evidence, v.passage_external_id) == (
        "supported",
        True,
        "The Eiffel Tower was completed in 1889.",
        "p1",
    )
    call_command("judge", "--dataset", "demo", "--backend", "offline", stdout=io.StringIO(), stderr=io.StringIO())
    assert Claim.objects.count() == 4 and JudgeVerdict.objects.count() == 4


@pytest.mark.django_db
def test_it_judges_an_audit_sample_only():
    ds = make_dataset()
    answers = [make_judged_answer(ds, passages=PASSAGES) for _ in range(3)]
    audit = make_audit(answers[:2])
    run = judge_run_execute(judge_run_create(backend="offline", audit=audit).pk)
    assert (run.answers_total, run.answers_done, run.status) == (2, 2, "done")
    assert not Claim.objects.filter(answer=answers[2]).exists()


@pytest.mark.django_db
def test_it_explains_bad_command_input():
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        call_command("judge", "--dataset", "nope", "--backend", "offline")
    with pytest.raises(CommandError, match="no judge run with id 999"):
        call_command("judge", "--resume", "999")
    with pytest.raises(JudgeRunError, match="exactly one"):
        judge_run_create(backend="offline")
    closed = make_audit([make_answer(make_dataset("closed-ds"))], name="closed-w48", status="closed")
    with pytest.raises(JudgeRunError, match="closed-w48 is closed"):  # the web, the API and the command all come here
        judge_run_create(backend="offline", audit=closed)


@pytest.mark.django_db
def test_it_gives_answer_level_outcomes_and_passes_a_refusal():
    ds = make_dataset()
    good = make_judged_answer(ds, text="The Eiffel Tower was completed in 1889.", passages=PASSAGES)
    bad = make_judged_answer(ds, text="The Eiffel Tower was completed in 1889. It was painted gold.", passages=PASSAGES)
    refusal = make_judged_answer(ds, text="Unable to answer based on given passages.", passages=PASSAGES)
    run = judge_run_execute(judge_run_create(backend="offline", dataset=ds).pk)
    assert Claim.objects.get(answer=refusal).judge_verdicts.get().verdict == "non_assertive"
    # An answer that says the passages do not answer passes: its claim is not scored.
    outcomes = dict(AnswerJudgement.objects.filter(judge_version=run.judge_version).values_list("answer_id", "outcome"))
    assert outcomes == {good.pk: "pass", bad.pk: "fail", refusal.pk: "pass"}


@pytest.mark.django_db(transaction=True)
def test_it_is_executed_by_the_database_task_worker():
    ds = make_dataset()
    make_judged_answer(ds, passages=PASSAGES)
    run = judge_run_create(backend="offline", dataset=ds)
    result = judge_run_enqueue(run)
    run.refresh_from_db()
    assert run.status == "queued"
    call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0.1", verbosity=0)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.claims_done == 3, run.message
    result.refresh()
    assert result.status == "SUCCESSFUL" and result.return_value["status"] == "done"


def test_it_locates_evidence_in_a_passage_across_whitespace():
    text = "Intro.  The Eiffel Tower was\ncompleted in 1889. End."
    start, end = evidence_span(text, "The Eiffel Tower was completed in 1889.")
    assert text[start:end] == "The Eiffel Tower was\ncompleted in 1889."
    assert evidence_span(text, "completed in 1890") is None and evidence_span(text, "") is None


@pytest.mark.django_db
def test_it_judges_explicit_answers_and_audits_by_name():
    ds = make_dataset()
    answers = [make_judged_answer(ds, passages=PASSAGES) for _ in range(3)]
    run = judge_run_execute(judge_run_create(backend="offline", answers=answers[1:]).pk)
    assert (run.answers_total, run.answers_done) == (2, 2) and not answers[0].claims.exists()
    audit = make_audit(answers[:1], name="2026-W49")
    run = judge_run_create(backend="offline", audit="2026-W49")
    assert (run.audit, run.dataset, run.answers_total) == (audit, ds, 1)


def test_it_stores_the_span_of_a_folded_list_item(db):
    text = "The main symptoms of IBS are:\n1. Diarrhea\n2. Constipation"
    answer = make_answer(text=text, n_claims=0)
    run = judge_run_create(backend="offline", answers=[answer])
    judge_run_execute(run.id)
    folded = [c for c in Claim.objects.filter(answer=answer) if c.text.lower().endswith("diarrhea")]
    assert len(folded) == 1
    assert folded[0].text not in text  # folded: not verbatim in the answer
    assert folded[0].span_start is not None
    assert "Diarrhea" in text[folded[0].span_start : folded[0].span_end]


def test_it_keeps_answer_judgements_current_after_a_run(db):
    answer = make_answer(text="Paris is the capital of France.", n_claims=0)
    run = judge_run_create(backend="offline", answers=[answer])
    judge_run_execute(run.id)
    assert AnswerJudgement.objects.filter(answer=answer, judge_version=run.judge_version).count() == 1


def test_it_reads_words_of_every_script_and_cjk_in_pairs_so_a_shared_number_alone_supports_nothing():
    passages = [("p1", "東京の人口は約1400万人です。大阪は第二の都市です。")]
    same = offline.verify(passages, "東京の人口は約1400万人です。")
    other = offline.verify(passages, "名古屋の面積は1400平方キロです。 مرحبا بالعالم")  # shares only 1400
    assert same["verdict"] == "supported" and same["evidence"] == "東京の人口は約1400万人です。"
    assert other["verdict"] != "supported"
    assert offline.decompose("東京は大きい。大阪は古い。") == ["東京は大きい。", "大阪は古い。"]
