"""Keyboard-only evidence: the sentence cursor of static/evidence.js, in the workspace and the adjudication
view, in real headless Chromium. No text is ever selected with the mouse or by script."""

import pytest

from annotations.models import GoldLabel, Label
from audit.models import AuditAnswer, Claim, Passage
from tests.factories import make_assigned_audit, make_gold, make_labelled_audit, make_user

pytestmark = pytest.mark.browser

# Offsets are stored in code points: the emoji is two UTF-16 units in the browser, one in Python.
ODD_TEXT = "Ça va\u00a0? L\u2019été 🌞 est chaud! «\u00a0Fin\u00a0» ici.\nDernière phrase sans point"


def add_odd_passage(answer, position):
    return Passage.objects.create(
        answer=answer, position=position, external_id=f"passage {position + 1}", source="test", text=ODD_TEXT
    )


def status(page):
    return page.locator("#save-status").inner_text()


def press_verdict(page, claim, key, verdict):
    page.keyboard.press(key)  # and wait for the save
    page.wait_for_selector(f'#claim-{claim.pk} button[value={verdict}][aria-pressed="true"]')


def assert_evidence(row, passage, text):
    assert row.evidence_passage_id == passage.pk
    assert row.evidence_text == text
    assert passage.text[row.evidence_start : row.evidence_end] == text


def test_it_attaches_sentences_as_evidence_with_the_keyboard_only(live_server, page, login, transactional_db, assets):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=1, n_claims=3, n_passages=3)
    answer = mine[0].audit_answer.answer
    odd = add_odd_passage(answer, 3)
    p2 = answer.passages.get(position=1)
    claims = list(answer.claims.order_by("position"))
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector(f"#claim-{claims[0].pk}.current")

    for _ in range(3):  # passage 1 has two sentences: the third step lands on passage 2, sentence 1
        page.keyboard.press(".")
    page.keyboard.press(",")
    assert status(page).startswith("Evidence: passage 1, sentence 2")
    page.keyboard.press(".")
    assert status(page) == "Evidence: passage 2, sentence 1: \u201cPassage 2: Paris is the capital of France.\u201d"
    assert page.evaluate("CSS.highlights.has('sentence-cursor')")
    assert page.evaluate("String(getSelection())") == ""  # a cursor, not a selection
    press_verdict(page, claims[0], "1", "supported")
    page.keyboard.press("e")
    page.wait_for_selector(f'[data-passage="{p2.pk}"] mark.evidence[data-claims="{claims[0].pk}"]')
    assert_evidence(Label.objects.get(claim=claims[0]), p2, "Passage 2: Paris is the capital of France.")
    assert page.evaluate("CSS.highlights.get('sentence-cursor').size") == 1  # redrawn over the new marks

    page.keyboard.press("j")  # claim 2: the cursor grown over both sentences of passage 2
    press_verdict(page, claims[1], "2", "contradicted")
    page.keyboard.press("Shift+ArrowRight")
    assert status(page).startswith("Evidence: passage 2, sentences 1\u20132")
    page.keyboard.press("e")
    page.wait_for_selector(f"#claim-{claims[1].pk} blockquote")
    assert_evidence(Label.objects.get(claim=claims[1]), p2, p2.text)

    page.keyboard.press("j")  # claim 3: the second sentence of the passage with accents, NBSP and an emoji
    press_verdict(page, claims[2], "1", "supported")
    page.keyboard.press("Shift+ArrowLeft")  # back to one sentence
    for _ in range(5):
        page.keyboard.press(".")
    assert status(page).startswith("Evidence: passage 4, sentence 2")
    page.keyboard.press("e")
    page.wait_for_selector(f"#claim-{claims[2].pk} blockquote")
    assert_evidence(Label.objects.get(claim=claims[2]), odd, "L\u2019été 🌞 est chaud!")
    for _ in range(5):  # stops at the last sentence, which has no full stop
        page.keyboard.press(".")
    assert status(page).startswith("Evidence: passage 4, sentence 4: \u201cDernière phrase sans point\u201d")
    assert page.js_errors == []


def test_it_prefers_a_real_selection_over_the_cursor(live_server, page, login, transactional_db):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=1, n_claims=1, n_passages=2)
    answer = mine[0].audit_answer.answer
    p1 = answer.passages.get(position=0)
    claim = answer.claims.get()
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.keyboard.press(".")
    page.evaluate(
        """(pid) => {
        const node = document.querySelector(`[data-passage="${pid}"]`).firstChild;
        const i = node.data.indexOf("capital of France"), r = document.createRange();
        r.setStart(node, i); r.setEnd(node, i + 17);
        getSelection().removeAllRanges(); getSelection().addRange(r);
    }""",
        p1.pk,
    )
    press_verdict(page, claim, "1", "supported")
    page.keyboard.press("e")
    page.wait_for_selector(f"#claim-{claim.pk} blockquote")
    assert_evidence(Label.objects.get(claim=claim), p1, "capital of France")


def test_it_takes_the_sentence_cursor_as_gold_evidence(live_server, page, login, transactional_db):
    ann1, ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
    adj = make_user("adj", "adjudicator")
    audit = make_labelled_audit(
        ann1,
        ann2,
        n_answers=1,
        verdicts=lambda i, pos, slot: "unsupported" if pos == 0 and slot == "B" else "supported",
    )
    make_gold(audit)
    item = AuditAnswer.objects.get(audit=audit)
    odd = add_odd_passage(item.answer, 3)
    c0 = Claim.objects.get(answer=item.answer, position=0)
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")
    page.wait_for_selector(f"#claim-block-{c0.id}.current")
    for _ in range(8):  # three passages of two sentences, then passage 4, sentence 2
        page.keyboard.press(".")
    assert page.locator("[data-evidence-status]").inner_text().startswith("Evidence: passage 4, sentence 2")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("s")
    quote = "L\u2019été 🌞 est chaud! «\u00a0Fin\u00a0» ici."
    assert page.locator(f"#claim-block-{c0.id} .new-evidence").inner_text() == f"\u201c{quote}\u201d"
    page.keyboard.press("2")
    page.keyboard.press("r")
    page.keyboard.type("Passage 4 says so.")
    page.keyboard.press("Enter")
    page.locator(f"#claim-block-{c0.id} .saved").wait_for()
    gold = GoldLabel.objects.get(claim=c0)
    assert gold.verdict == "contradicted"
    assert_evidence(gold, odd, quote)
    page.keyboard.press("?")
    assert page.locator("#adjudication-help").get_by_text("sentence cursor: next / previous").is_visible()
    assert page.js_errors == []


def test_it_does_not_keep_announcing_a_sentence_the_cursor_left_behind_on_another_claim(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace()
    page.keyboard.press("p")
    page.keyboard.press("2")
    assert status(page).startswith("Evidence: passage 2, sentence 1")
    page.keyboard.press("j")  # another claim: the cursor hides, e would not attach that sentence
    assert not status(page).startswith("Evidence:")
    assert ". or ," in status(page)  # how to bring it back
    page.keyboard.press(".")
    assert status(page).startswith("Evidence: passage 2")
    assert page.js_errors == []
