"""The bill before the run on the judge pages: the start form's #estimate fragment and the run page's
estimate beside the actual figures."""

import pytest
from django.test import override_settings
from django.urls import reverse

from audit.judge import services
from audit.models import Claim, ClaimOrigin, JudgeRun
from claimaudit.models import ApiToken
from tests.factories import make_dataset, make_user
from tests.judge_helpers import fake_server, make_judged_answer

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def lead(client):
    client.force_login(make_user("lead", "lead"))
    return client


def answers(dataset, n, claims=3):
    for i in range(n):
        a = make_judged_answer(dataset, text="One fact here. " * 10, passages=[("d", "Passage. " * 600)])
        Claim.objects.bulk_create(
            Claim(answer=a, position=j, text=f"Fact {i} {j}.", origin=ClaimOrigin.IMPORTED) for j in range(claims)
        )


@override_settings(ANTHROPIC_API_KEY="test-key")
def test_it_serves_the_estimate_fragment_in_queries_that_do_not_grow(lead, django_assert_num_queries):
    small, large = make_dataset("small"), make_dataset("large")
    answers(small, 1, claims=2)
    answers(large, 6, claims=5)
    counts = []
    for ds in (small, large):
        with django_assert_num_queries(8) as ctx:  # session, user with roles, dataset, version, rows, rate (2), replies
            r = lead.get(reverse("judge_runs"), {"dataset": ds.pk, "backend": "anthropic"}, **HX)
        counts.append(len(ctx.captured_queries))
        assert r.status_code == 200
    body = r.content.decode()
    assert body.lstrip().startswith('<section id="estimate"') and "<html" not in body
    assert "6 answers" in body and "30 stored claims to verify" in body and "30 calls" in body
    assert "30 verify calls x" in body and "with caching:" in body
    assert counts[0] == counts[1]


def test_it_names_the_bad_field_of_an_estimate(lead):
    r = lead.get(reverse("judge_runs"), {"dataset": "999", "backend": "anthropic"}, **HX)
    assert r.status_code == 400 and "dataset:" in r.content.decode()
    r = lead.get(reverse("judge_runs"), {"dataset": make_dataset().pk, "backend": "gpt"}, **HX)
    assert r.status_code == 400 and "backend:" in r.content.decode()


def test_it_prices_the_offline_baseline_at_nothing(lead):
    ds = make_dataset()
    answers(ds, 2)
    r = lead.get(reverse("judge_runs"), {"dataset": ds.pk, "backend": "offline"}, **HX)
    assert "no API calls, $0" in r.content.decode()


@override_settings(ANTHROPIC_API_KEY="test-key")
def test_it_says_there_is_nothing_left_to_judge_once_every_claim_has_a_verdict(lead):
    ds = make_dataset()
    answers(ds, 2)
    before = lead.get(reverse("judge_runs"), {"dataset": ds.pk, "backend": "anthropic"}, **HX).content.decode()
    assert "Nothing left to judge" not in before and "6 stored claims to verify" in before
    with fake_server():
        services.judge_run_execute(services.judge_run_create(dataset=ds).pk)
    after = lead.get(reverse("judge_runs"), {"dataset": ds.pk, "backend": "anthropic"}, **HX).content.decode()
    assert "Nothing left to judge" in after and "0 stored claims to verify" in after and " 0 calls" in after


def test_it_keeps_the_estimate_for_annotators_out(client):
    client.force_login(make_user("ann", "annotator"))
    r = client.get(reverse("judge_runs"), {"dataset": make_dataset().pk, "backend": "anthropic"}, **HX)
    assert r.status_code == 403


def test_it_shows_estimate_and_actual_side_by_side_after_a_run(lead):
    ds = make_dataset()
    answers(ds, 2)
    with fake_server():
        run = services.judge_run_create(dataset=ds)
        services.judge_run_execute(run.pk)
    run.refresh_from_db()
    body = lead.get(reverse("judge_run", args=[run.pk])).content.decode()
    assert "Estimated before the run" in body
    assert f'<td class="num">{run.estimate["cache_read_tokens"]}</td><td class="num">{run.cache_read_tokens}</td>' in (
        body
    )
    assert "6 verify calls x" in body


def api_post(client, token, body):
    return client.post(
        "/api/v1/judge-runs/estimate", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def test_it_answers_the_estimate_through_the_api_without_creating_a_run(client, django_assert_max_num_queries):

    ds = make_dataset("api-ds")
    answers(ds, 3, claims=4)
    _, token = ApiToken.mint(make_user("lead", "lead"), "t")
    r = api_post(client, token, {"dataset": "api-ds"})
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["answers"], body["calls"]) == (3, 12) and any("12 verify calls x" in x for x in body["lines"])
    assert body["usd_cached"] < body["usd_uncached"] and not JudgeRun.objects.exists()
    assert api_post(client, token, {"dataset": "nope"}).status_code == 400
    assert api_post(client, token, {}).status_code == 400
    _, ann = ApiToken.mint(make_user("ann", "annotator"), "t")
    assert api_post(client, ann, {"dataset": "api-ds"}).status_code == 403
