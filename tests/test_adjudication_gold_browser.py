"""How the gold evidence reads in the adjudication passages (real Chromium)."""

import pytest

from annotations.models import GoldLabel
from audit.models import Claim
from tests.test_adjudication_screens_browser import setup

pytestmark = pytest.mark.browser


def test_it_marks_the_gold_span_on_its_own_text_not_with_a_line_that_reads_as_the_line_above(
    live_server, page, login, transactional_db
):
    adj, audit, [item] = setup()
    [c0] = Claim.objects.filter(answer=item.answer, position=0)
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")
    page.wait_for_selector(f"#claim-block-{c0.id}.current")
    page.keyboard.press("a")  # A's label, with A's evidence
    page.keyboard.press("r")
    page.keyboard.type("A quotes the passage")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#claim-block-{c0.id} .saved")
    assert GoldLabel.objects.get(claim=c0, source="adjudicated").evidence_text
    gold = page.locator("#passages .passage-text mark.evidence.gold").first
    gold.wait_for()
    other = page.locator(".legend mark.ev-a")
    style = "m => { const s = getComputedStyle(m); return [s.borderTopWidth, s.backgroundColor]; }"
    (top, tint), (_, plain) = gold.evaluate(style), other.evaluate(style)
    # A top border sits in the gap between two lines, nearer the line above's underlines than its own text: the
    # gold span is tinted instead, which only its own text can carry.
    assert top == "0px" and tint != plain
    legend = page.locator(".legend mark.gold").evaluate(style)
    assert legend == [top, tint]
    assert page.js_errors == []


def test_it_says_where_the_next_press_of_bracket_goes_once_take_for_all_settled_the_answer(
    live_server, page, login, transactional_db
):
    adj, audit, items = setup(n_answers=2)
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{items[0].id}/")
    page.wait_for_selector(".claim-block.current")
    for _ in range(6):  # keyboard only: back from the current claim to the "take for all" form
        page.keyboard.press("Shift+Tab")
        if page.evaluate("document.activeElement.name") == "slot":
            break
    page.keyboard.press("ArrowDown")  # B's
    page.keyboard.press("Tab")
    page.keyboard.type("B read the passages")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("text=Took B's label for 2 claims.")
    status = page.locator("[data-answer-status]")
    assert "Every disputed claim of this answer is settled: press ] for the next answer" in status.inner_text()
    assert page.js_errors == []


def test_it_greys_the_evidence_choice_a_verdict_takes_none_of_and_keeps_it_legible(
    live_server, page, login, transactional_db
):
    adj, audit, [item] = setup()
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")
    page.wait_for_selector(".claim-block.current")
    page.keyboard.press("3")  # unsupported: no evidence
    page.wait_for_selector(".claim-block.current .gold-evidence.unused")
    assert page.axe() == []  # contrast: its "Use selection" button was faded below AA
    assert page.js_errors == []
