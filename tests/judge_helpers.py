"""Fixtures for the judge tests: the fake Messages API server and answers with known passages."""

import threading
from contextlib import contextmanager

from django.conf import settings
from django.test import override_settings

from audit.models import Answer, Claim, JudgeFailure, JudgeVerdict, Passage
from tests.factories import make_answer, make_dataset
from tests.fake_anthropic import FakeAnthropic, Gate

PASSAGES = [
    ("doc-1", "Paris is the capital of France and its largest city."),
    ("doc-2", "The Eiffel Tower was completed in 1889 for the World's Fair."),
]
ANSWER = "Paris is the capital of France. The Eiffel Tower was completed in 1889. It has 300 floors."


def make_judged_answer(dataset=None, *, text=ANSWER, passages=PASSAGES, external_id=None):
    """An answer without claims (the judge decomposes it) and with the given passages."""
    answer = make_answer(dataset or make_dataset(), text=text, n_claims=0, n_passages=0, external_id=external_id)
    Passage.objects.bulk_create(
        Passage(answer=answer, position=i, external_id=pid, text=t) for i, (pid, t) in enumerate(passages)
    )
    return answer


def numbered_answers(n, dataset=None, claims=3, padding=0):
    """n answers whose sentences are unique across answers, so requests can be told apart; padding
    lengthens each passage by that many characters (long passages can be cached)."""
    dataset = dataset or make_dataset()
    out = []
    for i in range(n):
        sentences = [f"Fact {i}-{j} is stated in passage {j}." for j in range(claims)]
        more = ("More background text. " * (padding // 22 + 1))[:padding]
        passages = [
            (f"doc-{j}", f"Background. Fact {i}-{j} is stated in passage {j}. More text. {more}") for j in range(claims)
        ]
        out.append(make_judged_answer(dataset, text=" ".join(sentences), passages=passages, external_id=f"n{i}"))
    return out


@contextmanager
def fake_server():
    """The fake server, with settings pointing the SDK at it (fast retries and batch polls)."""
    with (
        FakeAnthropic(min_cache_tokens=settings.JUDGE_MIN_CACHE_TOKENS) as server,
        override_settings(
            ANTHROPIC_BASE_URL=server.url,
            ANTHROPIC_API_KEY="test-key",
            JUDGE_MAX_RETRIES=2,
            JUDGE_CONCURRENCY=4,
            JUDGE_BATCH_POLL_SECONDS=0.01,
        ),
    ):
        yield server


def stored_results():
    """Calls whose result is stored: answers decomposed by the judge, verdicts, failures."""
    decomposed = Claim.objects.filter(origin="judge").values("answer_id").distinct().count()
    return decomposed + JudgeVerdict.objects.count() + JudgeFailure.objects.count()


def open_items():
    """Calls a run could make now: answers to decompose, claims to verify."""
    return Answer.objects.filter(claims=None).count() + Claim.objects.filter(judge_verdicts=None).count()


def kill_after(fake, n, exc, in_flight):
    """A progress hook for a deterministic kill: the fake answers the first n calls and holds every later
    one; the hook raises exc once those n more results are stored and the runner's slots are full of held
    calls (`in_flight` of them, or as many as there are calls left to make)."""
    fake.gate, base = Gate(after=n), stored_results()

    def progress(run):
        if stored_results() >= base + n and fake.gate.held >= min(in_flight, open_items()):
            raise exc

    return progress


def answer_held_calls(fake):
    """After a kill: the fake answers (and bills) the calls that were in flight, every thread of the killed
    execution ends, and the gate goes. Returns how many calls were in flight."""
    fake.gate.release()
    for thread in threading.enumerate():
        if thread.name.startswith("judge-http"):
            thread.join()
    held, fake.gate = fake.gate.held, None
    return held


def recorded(run):
    """A run's recorded usage in the fake's bill format."""
    return {
        "input": run.input_tokens,
        "output": run.output_tokens,
        "cache_write": run.cache_write_tokens,
        "cache_read": run.cache_read_tokens,
    }


def prices():
    return settings.JUDGE_PRICES[settings.JUDGE_MODEL]
