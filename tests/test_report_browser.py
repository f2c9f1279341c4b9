"""The report in real Chromium: charts render under the strict CSP, the version select swaps the judge
section through htmx, and nothing logs a console error."""

import pytest
from playwright.sync_api import expect

from annotations.models import Assignment, GoldLabel
from tests.factories import make_user
from tests.report_helpers import known_audit


@pytest.mark.browser
def test_it_switches_judge_version_without_errors(live_server, page, login, transactional_db):
    k = known_audit()
    lead = make_user("lead", "lead")
    console = []
    page.on(
        "console",
        lambda m: console.append(m.text) if m.type == "error" and "favicon" not in m.location.get("url", "") else None,
    )
    login(page, lead)
    page.goto(f"{live_server.url}/reports/{k['audit'].id}/")
    assert page.locator("#trend svg.chart circle").count() == 2
    assert page.locator("#faithfulness svg.chart").is_visible()
    assert "11 of 14" in page.locator("#noise-floor").inner_text()
    page.select_option("#judge select[name=version]", str(k["baseline"].id))
    expect(page.locator("#noise-floor")).to_contain_text("11 of 15")
    assert f"version={k['baseline'].id}" in page.url
    assert page.locator("#trend svg.chart").is_visible()  # only the judge section was swapped
    page.click("#matrix a[href*='judge=supported&gold=contradicted']")
    page.wait_for_url("**/claims/**")
    assert page.locator("#claims tbody tr").count() == 1
    page.goto(f"{live_server.url}/reports/{k['audit'].id}/")
    page.click("#faithfulness a[href*='answers/?gold=fail&version']")  # the headline's failing answers
    page.wait_for_url("**/answers/**")
    assert page.locator("#answers tbody tr").count() == int(page.locator("#count").inner_text()) == 2
    assert page.js_errors == [] and console == []


@pytest.mark.browser
def test_it_keeps_a_not_computable_reason_small_and_inside_its_card(live_server, page, login, transactional_db):
    k = known_audit()
    items = k["audit"].items.filter(stratum="s2")  # 20 of 120 in the population: the weighted rate is refused
    Assignment.objects.filter(audit_answer__in=items).delete()
    GoldLabel.objects.filter(audit=k["audit"], claim__answer__audit_items__in=items).delete()
    login(page, make_user("lead", "lead"))
    page.goto(f"{live_server.url}/reports/{k['audit'].id}/")
    card = page.locator("#faithfulness .card", has=page.locator("#weighted-fail-rate")).bounding_box()
    why = page.locator("#weighted-fail-rate-why")
    box = why.bounding_box()
    assert "not computable: stratum 's2'" in why.inner_text()
    assert card["x"] <= box["x"] and box["x"] + box["width"] <= card["x"] + card["width"]
    size = lambda sel: float(page.eval_on_selector(sel, "e => parseFloat(getComputedStyle(e).fontSize)"))  # noqa: E731
    assert size("#weighted-fail-rate-why") < size("#weighted-fail-rate") / 1.5
    assert page.locator("#weighted-fail-rate").inner_text().strip() == "—"
