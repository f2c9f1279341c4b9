import pytest

from annotations.models import GoldLabel
from audit.models import AuditAnswer, Claim, HistoryEvent
from tests.factories import make_gold, make_labelled_audit, make_user


def disputed_0_and_2(i, position, slot):
    if position == 0:
        return "supported" if slot == "A" else "unsupported"
    if position == 2:
        return "supported" if slot == "A" else "contradicted"
    return "supported"


@pytest.mark.browser
def test_it_adjudicates_disputed_claims_with_the_keyboard_only(live_server, page, login, transactional_db, assets):
    ann1, ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
    adj = make_user("adj", "adjudicator")
    audit = make_labelled_audit(ann1, ann2, n_answers=1, verdicts=disputed_0_and_2)
    make_gold(audit)
    item = AuditAnswer.objects.get(audit=audit)
    c0, c2 = (Claim.objects.get(answer=item.answer, position=p) for p in (0, 2))
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/")
    assert page.locator("text=2 disputed claims").count() == 1
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")

    first = page.locator(f"#claim-block-{c0.id}")
    assert "current" in first.get_attribute("class")
    page.keyboard.press("b")  # take B's label: unsupported, no evidence
    page.keyboard.press("r")
    page.keyboard.type("No passage names the capital.")
    page.keyboard.press("Enter")
    page.locator(f"#claim-block-{c0.id} .saved").wait_for()

    page.keyboard.press("j")
    second = page.locator(f"#claim-block-{c2.id}")
    assert "current" in second.get_attribute("class")
    page.locator(f'#passages[data-claim="{c2.id}"]').wait_for()  # the passages pane follows the claim
    page.keyboard.press("a")  # A's label: supported with A's evidence
    page.keyboard.press("3")  # then change the verdict to unsupported ...
    page.keyboard.press("1")  # ... and back to supported
    page.keyboard.press("r")
    page.keyboard.type("A's span says so.")
    page.keyboard.press("Control+Enter")
    page.locator(f"#claim-block-{c2.id} .saved").wait_for()

    g0, g2 = GoldLabel.objects.get(claim=c0), GoldLabel.objects.get(claim=c2)
    assert (g0.verdict, g0.source, g0.adjudicator, g0.reason) == (
        "unsupported",
        "adjudicated",
        adj,
        "No passage names the capital.",
    )
    assert (g2.verdict, g2.evidence_text, g2.reason) == ("supported", "Paris", "A's span says so.")
    assert HistoryEvent.objects.filter(kind="gold", action="adjudicated").count() == 2
    page.keyboard.press("?")
    assert page.locator("#adjudication-help").is_visible()
    assert page.js_errors == []


@pytest.mark.browser
def test_it_takes_new_evidence_from_a_passage_selection(live_server, page, login, transactional_db):
    ann1, ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
    adj = make_user("adj", "adjudicator")
    audit = make_labelled_audit(ann1, ann2, n_answers=1, verdicts=disputed_0_and_2)
    make_gold(audit)
    item = AuditAnswer.objects.get(audit=audit)
    c0 = Claim.objects.get(answer=item.answer, position=0)
    passage = item.answer.passages.get(position=2)
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")
    # Select "capital of France" in passage 3 (the only mouse-like step: a text selection).
    page.evaluate(
        """(pid) => {
        const el = document.querySelector(`.passage-text[data-passage-id="${pid}"]`);
        const node = el.firstChild, i = node.textContent.indexOf("capital of France");
        const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 17);
        const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
    }""",
        passage.id,
    )
    page.keyboard.press("s")
    assert page.locator(f"#claim-block-{c0.id} .new-evidence").inner_text() == "\u201ccapital of France\u201d"
    page.keyboard.press("2")
    page.keyboard.press("r")
    page.keyboard.type("Passage 3 says otherwise.")
    page.keyboard.press("Enter")
    page.locator(f"#claim-block-{c0.id} .saved").wait_for()
    gold = GoldLabel.objects.get(claim=c0)
    start = passage.text.index("capital of France")
    assert (gold.verdict, gold.evidence_passage, gold.evidence_start, gold.evidence_end, gold.evidence_text) == (
        "contradicted",
        passage,
        start,
        start + 17,
        "capital of France",
    )
    page.locator('#passages mark.evidence.gold:text("capital of France")').wait_for()
    assert page.js_errors == []


@pytest.mark.browser
def test_it_moves_to_the_next_answer_with_disputes_with_the_keyboard(live_server, page, login, transactional_db):
    ann1, ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
    adj = make_user("adj", "adjudicator")
    audit = make_labelled_audit(ann1, ann2, n_answers=2)  # claim 0 of each answer is disputed
    make_gold(audit)
    first, second = AuditAnswer.objects.filter(audit=audit).order_by("position")
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{first.id}/")
    page.keyboard.press("b")
    page.keyboard.press("r")
    page.keyboard.type("B is right.")
    page.keyboard.press("Enter")
    status = page.locator("[data-answer-status]")
    status.filter(has_text="press ] for the next answer with disputes").wait_for()
    page.keyboard.press("]")
    page.wait_for_url(f"**/adjudicate/{audit.id}/answers/{second.id}/")
    page.keyboard.press("[")
    page.wait_for_url(f"**/adjudicate/{audit.id}/answers/{first.id}/")
    page.keyboard.press("]")
    page.wait_for_url(f"**/answers/{second.id}/")
    page.keyboard.press("b")
    page.keyboard.press("r")
    page.keyboard.type("B again.")
    page.keyboard.press("Enter")
    status.filter(has_text="press ] for the queue").wait_for()
    page.keyboard.press("]")
    page.wait_for_url(f"**/adjudicate/?done={audit.id}")
    assert page.locator("text=No disputes left in this audit").count() == 1
    assert page.js_errors == []
