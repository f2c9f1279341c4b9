"""The bill before the run: what a judge run over a set of answers will ask for and cost, before any call.

Requests are built with the runner's own prompt functions (prompts.py, rubric.py) around placeholder text of
each answer's real lengths, so every change to a prompt or its framing is counted. One token counting rule:
a token is 4 characters of the text the model reads (the system blocks' text and the messages as JSON);
English prose averages about 4 characters per token, and the local fake API counts the same way. The
schema the API turns into output instructions is not counted (no published rule for it).

Claims an answer does not have yet (the decomposer makes them) are expected from its length: the rate of
claims per character fitted over every answer in the database that has claims, else DEFAULT_CHARS_PER_CLAIM.
The verify replies' evidence and reason are expected as long as the stored verdicts' average, else a claim
long and REASON_CHARS. Caching as the API does it: the prefix through the last cache breakpoint is
cached when it reaches the model's JUDGE_MIN_CACHE_TOKENS; an answer's first verify call writes it (1.25x
input) and its other verify calls read it (0.1x), which they can when they wait for the first reply (and
come within the cache's 5 minutes). In batch mode (batch.cache_ttl) the write is for 1 hour (2x input) and
an answer with fewer than batch.MIN_CACHED_CALLS claims (expected claims rounded) sends its source uncached.
Wall time: SECONDS_PER_CALL plus the reply at OUTPUT_TOKENS_PER_SECOND, JUDGE_CONCURRENCY calls at once,
and at least the longest answer's chain (decompose, first verify, rest).
"""

import json
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.db.models import Count, IntegerField, OuterRef, Subquery, Sum, Value
from django.db.models.functions import Coalesce, Length

from audit.judge import prompts, rubric
from audit.judge.batch import BATCH_DISCOUNT, BATCH_TTL, MIN_CACHED_CALLS, cache_ttl
from audit.judge.store import one_hour_write_price
from audit.models import Answer, Claim, JudgeVerdict, JudgeVersion, Passage

CHARS_PER_TOKEN = 4
DEFAULT_CHARS_PER_CLAIM = 90  # one claim a sentence of about 15 words
REASON_CHARS = 80  # "reason" is one short sentence
SECONDS_PER_CALL = 1.0  # queue and time to the first token
OUTPUT_TOKENS_PER_SECOND = 60.0


def tokens(chars):
    return int(chars) // CHARS_PER_TOKEN


@dataclass
class Estimate:
    backend: str
    model: str
    answers: int = 0
    answers_to_decompose: int = 0
    claims_known: int = 0
    claims_expected: float = 0.0
    chars_per_claim: float = DEFAULT_CHARS_PER_CLAIM
    rate_source: str = "default"
    calls: int = 0
    input_tokens: int = 0  # uncached part of every request
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    uncacheable_answers: int = 0
    cache_ttl: str = "5m"  # the cache writes' lifetime, which sets their price
    usd_uncached: float = 0.0
    usd_cached: float = 0.0
    wall_seconds: float = 0.0
    concurrency: int = 1
    batch: bool = False
    lines: list = field(default_factory=list)  # the arithmetic, as text

    def as_dict(self):
        return asdict(self)


def _sub(queryset, expr):
    agg = queryset.filter(answer=OuterRef("pk")).order_by().values("answer").annotate(v=expr).values("v")
    return Coalesce(Subquery(agg, output_field=IntegerField()), Value(0))


def answer_rows(answers, version_id):
    """Per answer: its length, its passages' count and characters, its claims and those still to verify."""
    todo = Claim.objects.exclude(judge_verdicts__judge_version_id=version_id) if version_id else Claim.objects.all()
    return (
        answers.order_by()
        .annotate(
            chars=Length("text"),
            qchars=Length("question"),
            n_pass=_sub(Passage.objects, Count("id")),
            pass_chars=_sub(Passage.objects, Sum(Length("text")) + Sum(Length("external_id"))),
            n_claims=_sub(Claim.objects, Count("id")),
            n_todo=_sub(todo, Count("id")),
            todo_chars=_sub(todo, Sum(Length("text"))),
        )
        .values_list("chars", "qchars", "n_pass", "pass_chars", "n_claims", "n_todo", "todo_chars")
    )


def chars_per_claim():
    """(characters of answer text per claim, where it comes from), fitted over answers with claims."""
    with_claims = Answer.objects.filter(claims__isnull=False).distinct()
    n = Claim.objects.count()
    chars = Answer.objects.filter(pk__in=with_claims.values("pk")).aggregate(c=Sum(Length("text")))["c"]
    if not n or not chars:
        return float(DEFAULT_CHARS_PER_CLAIM), "default"
    return chars / n, f"fitted on {n:,} stored claims"


def reply_chars():
    """Characters of a verdict's evidence + reason: the stored verdicts' average, or None."""
    agg = JudgeVerdict.objects.aggregate(n=Count("id"), c=Sum(Length("evidence")) + Sum(Length("reason")))
    return agg["c"] / agg["n"] if agg["n"] else None


class Shapes:
    """Characters of each request part, measured on requests built by the prompt functions."""

    def __init__(self, spec):
        self.spec = spec
        empty = prompts.verify_system_blocks(spec, [])
        one = prompts.verify_system_blocks(spec, [("", "")])
        self.prefix_base = sum(len(b["text"]) for b in empty)
        self.per_passage = sum(len(b["text"]) for b in one) - self.prefix_base + len("\n\n")
        self.blocks = empty
        self.verify_user = self._messages(prompts.verify_params(spec, empty, ""))
        decompose = prompts.decompose_params(spec, "")
        self.decompose_in = len(decompose["system"]) + self._messages(decompose)
        self.verify_reply = len(json.dumps(dict.fromkeys(prompts.VERIFY_SCHEMA["required"], "")))
        self.decompose_reply = len(json.dumps({"claims": []}))

    @staticmethod
    def _messages(params):
        return len(json.dumps(params["messages"]))

    def prefix_chars(self, n_pass, pass_chars):
        return self.prefix_base + pass_chars + max(0, n_pass * self.per_passage - len("\n\n"))


def estimate(answers, *, backend="anthropic", version=None, use_batch=False):
    """answers: a queryset of Answer (the run's scope). version: the JudgeVersion the run would use, or None
    (the current prompts; claims judged by no version yet). Returns an Estimate; reads only."""
    spec = version.spec if version is not None and version.kind == JudgeVersion.Kind.ANTHROPIC else None
    spec = spec or prompts.build_spec()
    est = Estimate(backend=backend, model=spec["model"], concurrency=max(1, settings.JUDGE_CONCURRENCY))
    rows = list(answer_rows(answers, version.pk if version else _current_version_id(spec)))
    est.answers = len(rows)
    if backend == "offline":
        est.lines = [f"{est.answers:,} answers judged by the offline baseline: no API calls, $0."]
        return est
    est.batch = use_batch
    if version is not None and version.level == "answer":
        _add_rubric_calls(est, rows, spec)
    else:
        est.chars_per_claim, est.rate_source = chars_per_claim()
        _add_calls(est, rows, Shapes(spec), reply_chars())
    _price(est, settings.JUDGE_PRICES.get(spec["model"]))
    return est


def _current_version_id(spec):
    return JudgeVersion.objects.filter(content_hash=prompts.spec_hash(spec)).values_list("pk", flat=True).first()


def _add_calls(est, rows, sh, stored_reply):
    minimum = _min_cache(est.model)
    est.cache_ttl = BATCH_TTL if est.batch else "5m"
    chain, decompose_calls, verify_calls, lone = 0.0, 0, 0, 0
    prefix_total, user_total = 0, 0
    for chars, _q, n_pass, pass_chars, n_claims, n_todo, todo_chars in rows:
        chain_d = 0.0
        if n_claims:
            k, claim_chars, est.claims_known = n_todo, todo_chars, est.claims_known + n_todo
        else:
            k = chars / est.chars_per_claim
            claim_chars, est.claims_expected = chars, est.claims_expected + k
            est.answers_to_decompose += 1
            decompose_calls += 1
            est.input_tokens += tokens(sh.decompose_in + chars)
            out = tokens(sh.decompose_reply + chars + 4 * k)
            est.output_tokens += out
            chain_d = _latency(out)
        if not k:
            continue
        per_claim = claim_chars / k
        verify_calls += k
        prefix = tokens(sh.prefix_chars(n_pass, pass_chars))
        prefix_total += prefix * k
        user = tokens(sh.verify_user + per_claim)
        user_total += user * k
        est.input_tokens += round(user * k)
        reply = tokens(sh.verify_reply + (stored_reply if stored_reply is not None else per_claim + REASON_CHARS))
        est.output_tokens += round(reply * k)
        if prefix >= minimum and est.batch and cache_ttl(round(k), cacheable=True) is None:  # too few claims to cache
            lone += 1
            est.input_tokens += round(prefix * k)
        elif prefix >= minimum:
            est.cache_write_tokens += prefix
            est.cache_read_tokens += round(prefix * (k - 1))
        else:
            est.uncacheable_answers += 1
            est.input_tokens += round(prefix * k)
        chain = max(chain, chain_d + _latency(reply) * (2 if k > 1 else 1))
    est.calls = decompose_calls + round(verify_calls)
    total_out = est.output_tokens
    est.wall_seconds = max(
        chain, (est.calls * SECONDS_PER_CALL + total_out / OUTPUT_TOKENS_PER_SECOND) / est.concurrency
    )
    est.lines = _arithmetic(est, decompose_calls, verify_calls, prefix_total, user_total, minimum, lone)


def _min_cache(model):
    table = settings.JUDGE_MIN_CACHE_TOKENS
    return table.get(model, max(table.values()))


def _system_chars(params):
    return sum(len(b["text"]) for b in params["system"])


def _add_rubric_calls(est, rows, spec):
    """Answer-level definitions: one rubric call per answer, so a cached source is written and never read."""
    minimum = _min_cache(est.model)
    empty = rubric.rubric_params(spec, "", [], "")
    base, user = _system_chars(empty), len(json.dumps(empty["messages"]))
    per_passage = _system_chars(rubric.rubric_params(spec, "", [("", "")], "")) - base + len("\n\n")
    reply = tokens(len(json.dumps({"score": 0, "reason": ""})) + REASON_CHARS)
    for chars, qchars, n_pass, pass_chars, *_ in rows:
        prefix = tokens(base + pass_chars + max(0, n_pass * per_passage - 2))
        est.input_tokens += tokens(user + chars + qchars)
        if prefix >= minimum:
            est.cache_write_tokens += prefix
        else:
            est.uncacheable_answers += 1
            est.input_tokens += prefix
        est.output_tokens += reply
    est.calls = len(rows)
    est.wall_seconds = (est.calls * _latency(reply)) / est.concurrency
    est.lines = [
        f"{est.answers:,} answers x 1 rubric call = {est.calls:,} calls (answer-level definition)",
        f"input: {est.input_tokens:,} tokens uncached, {est.cache_write_tokens:,} written to the cache (one call "
        f"per answer: nothing reads it back); {est.uncacheable_answers:,} sources under the {minimum:,}-token "
        "minimum are not cached",
        f"output: {est.calls:,} calls x {reply:,} tokens = {est.output_tokens:,} tokens",
        f"wall time: {est.calls:,} calls x {_latency(reply):.1f} s, {est.concurrency} at once = about "
        f"{est.wall_seconds:,.0f} s" + (" (Batch API: results within 24 h)" if est.batch else ""),
    ]


def _latency(out_tokens):
    return SECONDS_PER_CALL + out_tokens / OUTPUT_TOKENS_PER_SECOND


def _price(est, prices):
    if prices is None:
        est.lines.append(f"No prices for model {est.model} in JUDGE_PRICES: dollars not estimated.")
        return
    d = BATCH_DISCOUNT if est.batch else 1.0
    write, write_name = (
        (one_hour_write_price(prices), "1-hour cache write")
        if est.cache_ttl == "1h"
        else (prices["cache_write"], "cache write")
    )
    inp = est.input_tokens + est.cache_write_tokens + est.cache_read_tokens
    est.usd_uncached = (inp * prices["input"] + est.output_tokens * prices["output"]) / 1e6 * d
    est.usd_cached = (
        (
            est.input_tokens * prices["input"]
            + est.cache_write_tokens * write
            + est.cache_read_tokens * prices["cache_read"]
            + est.output_tokens * prices["output"]
        )
        / 1e6
        * d
    )
    batch = f" x {BATCH_DISCOUNT} (Batch API)" if est.batch else ""
    est.lines += [
        f"uncached: {inp:,} input tokens x ${prices['input']}/M + {est.output_tokens:,} output x "
        f"${prices['output']}/M{batch} = ${est.usd_uncached:,.4f}",
        f"with caching: {est.input_tokens:,} x ${prices['input']}/M + {est.cache_write_tokens:,} {write_name} x "
        f"${write}/M + {est.cache_read_tokens:,} cache read x ${prices['cache_read']}/M + "
        f"{est.output_tokens:,} output x ${prices['output']}/M{batch} = ${est.usd_cached:,.4f}",
    ]


def _arithmetic(est, decompose_calls, verify_calls, prefix_total, user_total, minimum, lone):
    avg_prefix = prefix_total / verify_calls if verify_calls else 0
    avg_user = user_total / verify_calls if verify_calls else 0
    lines = [
        f"{est.answers:,} answers: {est.answers_to_decompose:,} to decompose, expecting "
        f"{est.claims_expected:,.0f} claims (1 per {est.chars_per_claim:,.0f} characters, {est.rate_source}); "
        f"{est.claims_known:,} stored claims to verify",
        f"{decompose_calls:,} decompose + {verify_calls:,.0f} verify = {est.calls:,} calls",
        f"{verify_calls:,.0f} verify calls x {avg_prefix:,.0f}-token source (instructions + passages) = "
        f"{prefix_total:,.0f} tokens, + {avg_user:,.0f}-token claim each = {user_total:,.0f} tokens",
        f"cache: {est.cache_write_tokens:,} tokens written{' for 1 hour' if est.cache_ttl == '1h' else ''} (first "
        f"verify of an answer), {est.cache_read_tokens:,} read (its other verifies); {est.uncacheable_answers:,} "
        f"answers' sources under the {minimum:,}-token minimum are not cached"
        + (
            f"; {lone:,} answers with fewer than {MIN_CACHED_CALLS} claims send theirs uncached (too few to read it)"
            if est.batch
            else ""
        ),
        f"output: {est.output_tokens:,} tokens (decompose: the claims' JSON; verify: verdict, evidence, reason)",
        f"wall time: {est.calls:,} calls x {SECONDS_PER_CALL:g} s + {est.output_tokens:,} output tokens / "
        f"{OUTPUT_TOKENS_PER_SECOND:g} per s, {est.concurrency} at once = about {est.wall_seconds:,.0f} s"
        + (" (Batch API: results within 24 h)" if est.batch else ""),
    ]
    return lines
