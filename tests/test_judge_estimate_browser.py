"""In Chromium: the judge start form shows the bill before the run, and updates it (htmx) when the dataset
or the backend changes, with no script of ours."""

import pytest
from django.test import override_settings
from playwright.sync_api import expect

from audit.models import Claim, ClaimOrigin
from tests.factories import make_dataset, make_user
from tests.judge_helpers import make_judged_answer

GUARD = 30_000  # ms: a guard against hanging, not a timing assertion


def answers(dataset, n, claims):
    for _ in range(n):
        a = make_judged_answer(dataset, text="A fact. " * 5, passages=[("d", "Passage text. " * 400)])
        Claim.objects.bulk_create(
            Claim(answer=a, position=j, text=f"Fact {j}.", origin=ClaimOrigin.IMPORTED) for j in range(claims)
        )


@pytest.mark.browser
@override_settings(ANTHROPIC_API_KEY="test-key")
def test_it_updates_the_estimate_when_the_scope_or_backend_changes(live_server, page, login, transactional_db):
    small, large = make_dataset("alpha"), make_dataset("beta")
    answers(small, 1, 2)
    answers(large, 3, 4)
    login(page, make_user("lead", "lead"))
    page.goto(f"{live_server.url}/judge/runs/")
    estimate = page.locator("#estimate")
    page.select_option("select[name=dataset]", label="alpha")
    expect(estimate).to_contain_text("2 verify calls x", timeout=GUARD)
    page.select_option("select[name=dataset]", label="beta")
    expect(estimate).to_contain_text("12 verify calls x", timeout=GUARD)
    assert "3 answers" in estimate.inner_text()
    page.select_option("select[name=backend]", value="offline")
    expect(estimate).to_contain_text("no API calls, $0", timeout=GUARD)
    assert page.js_errors == []
