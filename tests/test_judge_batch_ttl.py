"""Batch mode asks for the 1-hour prompt cache where a sibling can read it, and bills it at the 1-hour price:
the real SDK against the fake Messages API (tests/fake_anthropic.py), which caches and bills by ttl."""

import json
from types import SimpleNamespace as U

import pytest
from django.conf import settings

from audit.judge import llm, runner
from audit.judge.services import judge_run_create, judge_run_execute
from tests.factories import make_dataset, make_user
from tests.fake_anthropic import claim_of
from tests.judge_helpers import fake_server, make_judged_answer, prices, recorded

pytestmark = pytest.mark.django_db

ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}
# claude-sonnet-5-5, USD per million tokens, from the pricing page: a base input price and its multiples.
BASE_INPUT, OUTPUT = 3.0, 15.0
WRITE_5M, WRITE_1H, READ, BATCH = 1.25 * BASE_INPUT, 2 * BASE_INPUT, 0.1 * BASE_INPUT, 0.5


@pytest.fixture
def fake():
    with fake_server() as server:
        yield server


def answer(dataset, name, claims, padding):
    """An answer of `claims` sentences, each quoted in its own passage lengthened by `padding` characters."""
    sentences = [f"Fact {name}-{j} is stated in passage {j}." for j in range(claims)]
    more = ("More background text. " * (padding // 22 + 1))[:padding]
    passages = [(f"doc-{j}", f"Background. {s} {more}") for j, s in enumerate(sentences)]
    return make_judged_answer(dataset, text=" ".join(sentences), passages=passages, external_id=name)


def batch_run(dataset):
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=dataset, use_batch=True).pk)
    assert run.status == "done", run.message
    return run


def verify_requests(fake):
    """{claim text: params} of every verify request the fake received in a batch."""
    bodies = [r["body"] for r in fake.requests if r["method"] == "POST" and r["path"] == "/v1/messages/batches"]
    return {claim_of(q["params"]): q["params"] for b in bodies for q in b["requests"] if q["custom_id"][0] == "v"}


def verify_bills(fake, name):
    return [e for e in fake.billed if e["kind"] == "verify" and f"Fact {name}-" in e["about"]]


def first_principles_usd(fake):
    """The fake's bill from the usage it reported, priced here from the base prices."""
    usd = 0.0
    for e in fake.billed:
        u, one_hour = e["usage"], e["ttl"] == "1h"
        write = u["cache_write"] * (WRITE_1H if one_hour else WRITE_5M)
        dollars = u["input"] * BASE_INPUT + u["output"] * OUTPUT + write + u["cache_read"] * READ
        usd += dollars / 1e6 * (BATCH if e["batch"] else 1.0)
    return usd


def test_it_asks_for_the_1_hour_cache_on_every_verify_request_of_a_multi_claim_answer(fake):
    dataset = make_dataset()
    for name in ("a", "b"):
        answer(dataset, name, claims=3, padding=1200)  # ~1,160-token source: above the 1,024 minimum
    run = batch_run(dataset)
    sent = verify_requests(fake)
    assert len(sent) == 6
    for params in sent.values():
        assert params["system"][-1]["cache_control"] == ONE_HOUR
        assert all("cache_control" not in b for b in params["system"][:-1])
    assert not fake.message_calls()  # all of it went through the batch endpoint
    for name in ("a", "b"):
        bills = verify_bills(fake, name)
        assert [e["ttl"] for e in bills] == ["1h"] * 3  # the fake saw a 1-hour breakpoint on each
        writes = [e["usage"]["cache_write"] for e in bills if e["usage"]["cache_write"]]
        reads = [e["usage"]["cache_read"] for e in bills if e["usage"]["cache_read"]]
        assert len(writes) == 1 and len(reads) == 2 and reads == writes * 2  # written once, read by the siblings
    assert run.uncached_answers == 0 and run.cache_write_tokens == 2 * writes[0]


def test_it_sends_a_single_claim_answer_without_a_cache_breakpoint(fake):
    dataset = make_dataset()
    answer(dataset, "lone", claims=1, padding=5000)  # one claim, a source long enough to cache
    answer(dataset, "pair", claims=2, padding=2500)  # two: a 1-hour write would cost more than none
    answer(dataset, "trio", claims=3, padding=2500)
    run = batch_run(dataset)
    sent = verify_requests(fake)
    lone = sent["Fact lone-0 is stated in passage 0."]
    assert all("cache_control" not in block for block in lone["system"])
    assert fake.prefix(lone) == (None, 0, None)
    (bill,) = verify_bills(fake, "lone")
    assert bill["usage"]["cache_write"] == bill["usage"]["cache_read"] == 0 and bill["usage"]["input"] > 1024
    assert [e["ttl"] for e in verify_bills(fake, "pair")] == [None, None]
    assert [e["ttl"] for e in verify_bills(fake, "trio")] == ["1h", "1h", "1h"]
    assert run.uncached_answers == 0  # left uncached by choice, not too short
    assert run.cache_write_tokens == fake.prefix(sent["Fact trio-0 is stated in passage 0."])[1]


@pytest.mark.parametrize("report_ttl", [True, False], ids=["usage-by-ttl", "total-only"])
def test_it_records_the_bill_of_a_batch_run_at_the_1_hour_price(fake, report_ttl):
    fake.report_ttl = report_ttl  # total-only: the recorder bills the write at the ttl the request asked for
    dataset = make_dataset()
    for i in range(3):
        answer(dataset, f"m{i}", claims=4, padding=1200)
    answer(dataset, "lone", claims=1, padding=5000)
    answer(dataset, "short", claims=3, padding=0)
    run = batch_run(dataset)
    assert settings.JUDGE_MODEL == "claude-sonnet-5-5"
    assert prices() == {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_write_1h": 6.0, "cache_read": 0.3}
    one_hour = [e for e in fake.billed if e["usage"]["cache_write"]]
    assert len(one_hour) == 3 and {e["ttl"] for e in one_hour} == {"1h"}
    usd = first_principles_usd(fake)
    assert run.cost_usd == pytest.approx(usd, rel=1e-12)
    tokens, fake_usd = fake.bill(prices())
    assert recorded(run) == tokens and fake_usd == pytest.approx(usd, rel=1e-12)


def test_it_still_reports_a_short_prefix_as_uncacheable(fake, client):
    dataset = make_dataset()
    answer(dataset, "s3", claims=3, padding=300)  # 1,910 bytes could be 1,024 tokens: a breakpoint goes; 477 are
    answer(dataset, "s2", claims=2, padding=0)  # 930 bytes: surely under 1,024 tokens, no breakpoint
    run = batch_run(dataset)
    sent = verify_requests(fake)
    assert sent["Fact s3-0 is stated in passage 0."]["system"][-1]["cache_control"] == ONE_HOUR
    assert all("cache_control" not in b for b in sent["Fact s2-0 is stated in passage 0."]["system"])
    assert {fake.prefix(params) for params in sent.values()} == {(None, 0, None)}  # the fake caches neither
    assert all(e["ttl"] is None for e in fake.billed)
    assert run.uncached_answers == 2 and (run.cache_write_tokens, run.cache_read_tokens) == (0, 0)
    tokens, usd = fake.bill(prices())
    assert recorded(run) == tokens and run.cost_usd == pytest.approx(first_principles_usd(fake), rel=1e-12)
    client.force_login(make_user("lead", "lead"))
    assert "2 answers had passages too short to cache" in client.get(f"/judge/runs/{run.pk}/").content.decode()


def test_it_keeps_the_5_minute_cache_in_direct_mode(fake):
    dataset = make_dataset()
    answer(dataset, "d", claims=3, padding=1200)
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=dataset).pk)
    verifies = fake.message_calls("verify")
    assert [b["system"][-1]["cache_control"] for b in verifies] == [{"type": "ephemeral"}] * 3
    assert [e["ttl"] for e in fake.billed if e["kind"] == "verify"] == ["5m"] * 3
    assert run.cost_usd == pytest.approx(first_principles_usd(fake), rel=1e-12)


def test_it_reserves_a_1_hour_write_at_the_1_hour_price():
    """The budget's worst case: every byte of the request a token, at the write price of the ttl it asks for."""
    for cache_control, price in (({"type": "ephemeral"}, WRITE_5M), (ONE_HOUR, WRITE_1H)):
        system = [{"type": "text", "text": "x" * 4000, "cache_control": cache_control}]
        params = {"model": "m", "max_tokens": 10, "system": system, "messages": []}
        tokens_in = len(json.dumps(params).encode()) + runner.OVERHEAD_TOKENS
        expected = (tokens_in * price + 10 * OUTPUT) / 1e6
        assert runner.call_worst_case(params, prices()) == (tokens_in + 10, pytest.approx(expected, rel=1e-12))


def test_it_bills_a_write_at_the_asked_ttl_unless_the_breakdown_says_otherwise():
    def one_hour(ttl, split):
        u = U(input_tokens=1, output_tokens=1, cache_creation_input_tokens=100, cache_read_input_tokens=0)
        if split is not ...:
            u.cache_creation = split
        return llm._usage(u, ttl)["cache_write_1h"]

    assert one_hour("1h", ...) == 100 and one_hour("5m", ...) == 0  # no breakdown: the ttl asked
    assert one_hour("1h", U(ephemeral_1h_input_tokens=None, ephemeral_5m_input_tokens=None)) == 100  # empty one too
    assert one_hour("5m", U(ephemeral_1h_input_tokens=40, ephemeral_5m_input_tokens=60)) == 40  # the breakdown wins
    assert one_hour("1h", U(ephemeral_1h_input_tokens=900, ephemeral_5m_input_tokens=0)) == 100  # never over the total


def test_it_sends_what_a_budget_cut_leaves_of_an_answer_without_the_1_hour_breakpoint(fake):
    """Five verify requests would share a 1-hour entry; a budget that lets two through sends them uncached."""
    full = make_dataset("full")
    answer(full, "e", claims=5, padding=1200)
    batch_run(full)
    sent = verify_requests(fake)
    decompose = fake.bill(prices(), 0, sum(e["kind"] == "decompose" for e in fake.billed))[1]  # billed first
    worst = max(  # a request's worst case as the budget reserves it: every byte a token, at the 1-hour write price
        (len(json.dumps(p).encode()) + runner.OVERHEAD_TOKENS) * WRITE_1H + p["max_tokens"] * OUTPUT
        for p in sent.values()
    )
    fake.requests.clear(), fake.billed.clear()
    cut = make_dataset("cut")
    answer(cut, "f", claims=5, padding=1200)  # the same lengths: the same worst case
    budget = decompose + 2.5 * worst / 1e6 * BATCH
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=cut, use_batch=True, budget_usd=budget).pk)
    assert run.status == "budget", run.message
    kept = verify_requests(fake)
    assert len(kept) == 2
    assert all("cache_control" not in b for params in kept.values() for b in params["system"])
    assert [e["ttl"] for e in verify_bills(fake, "f")] == [None, None]
