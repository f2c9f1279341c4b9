"""The run page of the offline baseline shows no budget (as its start form hides it): no budget field to resume
with, no cost or token counts of API calls it never makes; an LLM run keeps them. Its version page shows no
empty prompt."""

import re

import pytest

from audit.judge.offline import offline_version
from audit.judge.services import judge_run_create, judge_run_execute
from tests.factories import make_dataset, make_user
from tests.judge_helpers import make_judged_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_client(client):
    client.force_login(make_user("lead", "lead"))
    return client


def resume_form(page):
    return re.search(r'<form[^>]*id="resume_form".*?</form>', page, re.S)[0]


def test_it_shows_no_budget_on_an_offline_run(lead_client):
    ds = make_dataset("d")
    make_judged_answer(ds)
    run = judge_run_execute(judge_run_create(backend="offline", dataset=ds).pk)
    page = lead_client.get(f"/judge/runs/{run.pk}/").content.decode()
    form = resume_form(page)
    assert 'name="budget_usd"' not in form and 'name="budget_tokens"' not in form and "Resume" in form
    assert "estimated cost" not in page and "Tokens:" not in page
    assert "The offline baseline makes no API call: no tokens, no cost, no budget." in page


def test_it_keeps_the_budget_on_an_llm_run(lead_client, settings):
    settings.ANTHROPIC_API_KEY = "sk-test"
    ds = make_dataset("d")
    make_judged_answer(ds)
    run = judge_run_create(backend="anthropic", dataset=ds, budget_usd=2.0)
    run.status = "cancelled"
    run.save()
    page = lead_client.get(f"/judge/runs/{run.pk}/").content.decode()
    form = resume_form(page)
    assert 'name="budget_usd"' in form and 'value="2.0"' in form and 'name="budget_tokens"' in form
    assert "estimated cost of $2.00 budget" in page and "Tokens: 0 input" in page


def test_it_shows_no_empty_wording_on_the_offline_version_page(lead_client):
    page = lead_client.get(f"/judge/versions/{offline_version().pk}/").content.decode()
    assert "<h2>decompose_system</h2>" not in page and "<h2>verify_system</h2>" not in page
    assert '<code id="version-ref">offline-lexical-v3@' in page
