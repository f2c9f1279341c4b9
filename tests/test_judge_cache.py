"""Cache-aware scheduling against a fake that caches like the API: a prefix is readable only once the first
response writing it has begun, and never when under the model's minimum cacheable length."""

import pytest
from django.conf import settings

from audit.judge.services import judge_run_create, judge_run_execute
from tests.factories import make_user
from tests.judge_helpers import fake_server, numbered_answers, prices, recorded

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake():
    with fake_server() as server:
        yield server


def test_it_sends_an_answers_other_verify_calls_only_after_its_first_reply_so_they_read_the_cache(fake):
    answers = numbered_answers(6, claims=4, padding=1200)  # 4 passages of ~1,250 characters: ~1,400 tokens
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=answers[0].dataset).pk)
    assert run.status == "done" and run.claims_done == 24 and run.uncached_answers == 0
    keys = {key for kind, key in fake.events if key}
    assert len(keys) == 6  # one cacheable prefix per answer
    for key in keys:
        mine = [kind for kind, k in fake.events if k == key]
        assert mine[:2] == ["arrive", "reply"], mine  # the first call alone, until its reply began
    verifies = [e["usage"] for e in fake.billed if e["kind"] == "verify"]
    assert sum(1 for u in verifies if u["cache_write"] and not u["cache_read"]) == 6  # one write per answer
    assert sum(1 for u in verifies if u["cache_read"] and not u["cache_write"]) == 18  # every sibling reads
    tokens, usd = fake.bill(prices())
    assert recorded(run) == tokens and run.cost_usd == pytest.approx(usd, rel=1e-9)


def test_it_says_which_answers_were_too_short_to_cache(fake, client):
    answers = numbered_answers(3, claims=3)  # short passages: under 1,024 tokens
    run = judge_run_execute(judge_run_create(backend="anthropic", dataset=answers[0].dataset).pk)
    assert run.status == "done" and run.uncached_answers == 3
    assert (run.cache_write_tokens, run.cache_read_tokens) == (0, 0)
    tokens, usd = fake.bill(prices())
    assert recorded(run) == tokens and run.cost_usd == pytest.approx(usd, rel=1e-9)
    client.force_login(make_user("lead", "lead"))
    page = client.get(f"/judge/runs/{run.pk}/").content.decode()
    minimum = settings.JUDGE_MIN_CACHE_TOKENS[settings.JUDGE_MODEL]
    assert f"3 answers had passages too short to cache ({settings.JUDGE_MODEL} caches a prefix of at least" in page
    assert f"{minimum} tokens)" in page
