"""The bill before the run (audit.judge.estimate) against the fake API's bill for the same run."""

import random
import re
from collections import Counter

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

from audit.judge import estimate, prompts, services
from audit.judge.definitions import current_version, definitions_seed
from audit.models import Answer, Claim, ClaimOrigin, JudgeRun
from tests.factories import make_dataset
from tests.fake_anthropic import FakeAnthropic, claim_of, passages_of
from tests.judge_helpers import fake_server, make_judged_answer

pytestmark = pytest.mark.django_db

WRITE_1H_PRICE = 6.0  # claude-sonnet-5-5: 2 x $3/M input

WORDS = [
    "river",
    "bank",
    "harbour",
    "engine",
    "valve",
    "signal",
    "copper",
    "timber",
    "market",
    "lantern",
    "garden",
    "orbit",
    "tunnel",
]


def realistic_handler(kind, body):
    """Decompose: one claim a sentence. Verify: supported with the claim's span and a one-sentence reason when
    a passage holds it, else unsupported with a reason."""
    if kind == "decompose":
        answer = body["messages"][0]["content"].removeprefix("<answer>\n").removesuffix("\n</answer>")
        return {"claims": [s for s in re.split(r"(?<=\.)\s+", answer) if s]}
    claim = claim_of(body)
    for pid, text in passages_of(body):
        if claim in text:
            reason = "The passage states this in nearly the same words, so it supports the claim."
            return {"verdict": "supported", "evidence": claim, "passage_id": pid, "reason": reason}
    reason = "No passage mentions this fact; they discuss other parts of the topic only."
    return {"verdict": "unsupported", "evidence": "", "passage_id": "", "reason": reason}


def sentence(rng, i):
    return f"The {rng.choice(WORDS)} {i} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))) + "."


def realistic_mix(seed=7, n=24):
    """Answers of 2-12 sentences, 1-6 passages of 300-4,000 characters (some sources under the cache minimum,
    most above), most sentences quoted in a passage; a third of the answers arrive with their claims."""
    rng = random.Random(seed)
    dataset = make_dataset()
    for a in range(n):
        sentences = [sentence(rng, f"{a}-{j}") for j in range(rng.randint(2, 12))]
        filler = " ".join(sentence(rng, "x") for _ in range(40))
        passages = []
        for p in range(rng.randint(1, 6)):
            quoted = " ".join(s for j, s in enumerate(sentences) if j % 6 == p and rng.random() < 0.85)
            passages.append((f"doc-{p}", (quoted + " " + filler)[: rng.randint(300, 4000)]))
        answer = make_judged_answer(dataset, text=" ".join(sentences), passages=passages, external_id=f"mix{a}")
        if a % 3 == 0:
            Claim.objects.bulk_create(
                Claim(answer=answer, position=j, text=s, origin=ClaimOrigin.IMPORTED) for j, s in enumerate(sentences)
            )
    return dataset


def run_against(fake, dataset):
    run = services.judge_run_create(dataset=dataset)
    services.judge_run_execute(run.pk)
    run.refresh_from_db()
    return run, fake.bill(settings.JUDGE_PRICES[settings.JUDGE_MODEL])


def test_it_estimates_the_fake_bill_within_ten_percent_on_a_realistic_mix():
    dataset = realistic_mix()
    with (
        FakeAnthropic(handler=realistic_handler, min_cache_tokens=settings.JUDGE_MIN_CACHE_TOKENS) as fake,
        override_settings(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test-key", JUDGE_CONCURRENCY=4),
    ):
        run, (tokens, usd) = run_against(fake, dataset)
    est = run.estimate
    assert run.status == "done" and not run.items_failed
    calls = len(fake.message_calls())
    assert est["calls"] == pytest.approx(calls, rel=0.10)
    assert est["usd_cached"] == pytest.approx(usd, rel=0.10)
    assert est["cache_read_tokens"] == pytest.approx(tokens["cache_read"], rel=0.10)
    assert est["output_tokens"] == pytest.approx(tokens["output"], rel=0.10)
    assert 0 < est["uncacheable_answers"] < Answer.objects.count()  # the mix has both kinds
    assert est["usd_uncached"] > est["usd_cached"]


def test_it_estimates_the_fake_bill_of_a_batch_run_within_ten_percent():
    dataset = realistic_mix(seed=11)
    rng = random.Random(5)
    for a in range(4):  # one claim and a cacheable source: a batch sends it without a breakpoint
        text = sentence(rng, f"one{a}")
        passages = [("doc-0", text + " " + " ".join(sentence(rng, "x") for _ in range(80)))]
        answer = make_judged_answer(dataset, text=text, passages=passages, external_id=f"one{a}")
        if a % 2:
            Claim.objects.create(answer=answer, position=0, text=text, origin=ClaimOrigin.IMPORTED)
    with (
        FakeAnthropic(handler=realistic_handler, min_cache_tokens=settings.JUDGE_MIN_CACHE_TOKENS) as fake,
        override_settings(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test-key", JUDGE_BATCH_POLL_SECONDS=0.01),
    ):
        run = services.judge_run_create(dataset=dataset, use_batch=True)
        services.judge_run_execute(run.pk)
        run.refresh_from_db()
        tokens, usd = fake.bill(settings.JUDGE_PRICES[settings.JUDGE_MODEL])
    est = run.estimate
    assert run.status == "done" and not run.items_failed and est["batch"] and est["cache_ttl"] == "1h"
    assert {e["ttl"] for e in fake.billed if e["usage"]["cache_write"]} == {"1h"}
    calls = sum(len(r["body"]["requests"]) for r in fake.requests if r["path"] == "/v1/messages/batches")
    assert est["calls"] == pytest.approx(calls, rel=0.10)
    assert est["usd_cached"] == pytest.approx(usd, rel=0.10)
    assert est["cache_write_tokens"] == pytest.approx(tokens["cache_write"], rel=0.10)
    assert est["cache_read_tokens"] == pytest.approx(tokens["cache_read"], rel=0.10)
    lines = "\n".join(est["lines"])
    assert f"1-hour cache write x ${WRITE_1H_PRICE}/M" in lines and "$3.75/M" not in lines  # not the 5-minute price
    batches = [r["body"]["requests"] for r in fake.requests if r["path"] == "/v1/messages/batches"]
    per_source = Counter(str(q["params"]["system"]) for b in batches for q in b if q["custom_id"].startswith("v-"))
    lone = sum(n < 3 for n in per_source.values())  # answers with one or two verify requests: sent uncached
    said = re.search(r"(\d+) answers with fewer than 3 claims send theirs uncached", lines)
    assert lone >= 4 and said and abs(int(said[1]) - lone) <= 1  # expected claims of undecomposed answers, rounded


def test_it_shows_the_arithmetic_of_a_cached_source():
    dataset = make_dataset()
    text = "Copper conducts heat well. " * 600  # one 16,200-character passage: above every minimum
    answer = make_judged_answer(dataset, text="A. B.", passages=[("doc-1", text)])
    Claim.objects.bulk_create(
        Claim(answer=answer, position=j, text=f"Claim {j} is here.", origin=ClaimOrigin.IMPORTED) for j in range(7)
    )
    est = estimate.estimate(Answer.objects.filter(dataset=dataset))
    spec = prompts.build_spec()
    source = sum(len(b["text"]) for b in prompts.verify_system_blocks(spec, [("doc-1", text)])) // 4
    assert est.calls == 7 and est.answers_to_decompose == 0
    assert f"7 verify calls x {source:,}-token source (instructions + passages) = {7 * source:,} tokens" in "\n".join(
        est.lines
    )
    assert (est.cache_write_tokens, est.cache_read_tokens) == (source, 6 * source)


def test_it_counts_a_short_source_as_uncached():
    dataset = make_dataset()
    answer = make_judged_answer(dataset, text="A. B.", passages=[("doc-1", "Short.")])
    Claim.objects.bulk_create(
        Claim(answer=answer, position=j, text=f"Claim {j}.", origin=ClaimOrigin.IMPORTED) for j in range(3)
    )
    est = estimate.estimate(Answer.objects.filter(dataset=dataset))
    assert est.uncacheable_answers == 1 and est.cache_write_tokens == est.cache_read_tokens == 0
    assert est.usd_cached == pytest.approx(est.usd_uncached)


def test_it_fits_the_claim_rate_from_stored_decompositions():
    dataset = make_dataset()
    known = make_judged_answer(dataset, text="x" * 300, passages=[("d", "p")])
    Claim.objects.bulk_create(Claim(answer=known, position=j, text="c", origin=ClaimOrigin.IMPORTED) for j in range(6))
    make_judged_answer(dataset, text="y" * 500, passages=[("d", "p")])
    est = estimate.estimate(Answer.objects.filter(dataset=dataset))
    assert est.chars_per_claim == 50 and est.claims_expected == 10  # 300 / 6 characters a claim; 500 / 50
    assert est.calls == 1 + 6 + 10


def test_it_prints_the_estimate_from_the_command_without_calling(capsys):
    dataset = make_dataset(name="est")
    make_judged_answer(dataset, text="One fact. Two facts.", passages=[("d", "p")])
    with fake_server() as fake:
        call_command("judge", dataset="est", estimate=True)
        assert fake.message_calls() == []
    out = capsys.readouterr().out
    assert "1 answers: 1 to decompose" in out and "with caching:" in out

    assert not JudgeRun.objects.exists()


def test_it_estimates_an_answer_level_rubric_run_as_one_call_per_answer():

    faithfulness = current_version(definitions_seed()[1])
    dataset = realistic_mix(seed=3, n=8)
    reply = {"score": 1, "reason": "Every sentence of the answer is stated in one of the passages given."}
    with (
        FakeAnthropic(handler=lambda kind, body: reply, min_cache_tokens=settings.JUDGE_MIN_CACHE_TOKENS) as fake,
        override_settings(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test-key"),
    ):
        run = services.judge_run_create(dataset=dataset, version=faithfulness)
        services.judge_run_execute(run.pk)
        tokens, usd = fake.bill(settings.JUDGE_PRICES[settings.JUDGE_MODEL])
    est = run.estimate
    assert est["calls"] == len(fake.message_calls()) == 8 and est["cache_read_tokens"] == tokens["cache_read"] == 0
    assert est["usd_cached"] == pytest.approx(usd, rel=0.10)
    assert est["cache_write_tokens"] == tokens["cache_write"]
