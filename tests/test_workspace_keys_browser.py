"""The annotator's keys and tools in real headless Chromium at 1280x800, on a long 17-claim / 17-passage
answer whose passages are real web text (the RAGTruth demo data shipped with the app)."""

import json
import re
from pathlib import Path

import pytest

from annotations.models import Assignment, Label
from audit.models import HistoryEvent, Passage
from tests.factories import make_assigned_audit, make_user

pytestmark = pytest.mark.browser
DEMO = Path(__file__).resolve().parent.parent / "claimaudit" / "demo_data" / "ragtruth_qa_visible.jsonl"


def demo_passages():
    """Every distinct passage text of the demo data, in file order."""
    seen = []
    for line in DEMO.read_text().splitlines():
        for p in json.loads(line)["passages"]:
            text = p["text"] if isinstance(p, dict) else p
            if text not in seen:
                seen.append(text)
    return seen


def long_answer(ann):
    """An answer of 17 claims citing [1]..[17], over 17 real passages; the first has a missing space."""
    audit, mine = make_assigned_audit(ann, n_answers=2, n_claims=17, n_passages=17)
    answer = mine[0].audit_answer.answer
    texts = demo_passages()
    glued = next(t for t in texts if "code.Similar" in t)
    rest = [t for t in texts if t != glued][:16]
    for p, text in zip(answer.passages.order_by("position"), [glued, *rest], strict=True):
        p.text = text
        p.save()
    claims = list(answer.claims.order_by("position"))
    answer.text = " ".join(f"{c.text} [{i + 1}]" for i, c in enumerate(claims))
    answer.save()
    return mine, claims, answer


def status(page):
    return page.locator("#save-status").inner_text()


def verdict_of(claim):
    return Label.objects.get(claim=claim).verdict


def test_it_clears_undoes_flags_and_jumps_with_keys_on_a_long_answer(live_server, page, login, transactional_db):
    ann = make_user("ann", "annotator")
    mine, claims, answer = long_answer(ann)
    passages = list(answer.passages.order_by("position"))
    p3, p17 = passages[2], passages[16]
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    row = f"#claim-{claims[0].pk}"
    page.wait_for_selector(f"{row}.current")

    page.keyboard.press("1")
    page.wait_for_selector(f'{row}[data-verdict="supported"]')
    page.keyboard.press("0")  # clear
    page.wait_for_selector(f'{row}[data-verdict=""]')
    page.keyboard.press("2")
    page.wait_for_selector(f'{row}[data-verdict="contradicted"]')
    page.keyboard.press("Backspace")  # clear again
    page.wait_for_selector(f'{row}[data-verdict=""]')
    page.keyboard.press("3")
    page.wait_for_selector(f'{row}[data-verdict="unsupported"]')
    for key, flag in (("a", "not_atomic"), ("c", "needs_context"), ("t", "true_not_in_passages")):
        page.keyboard.press(key)
        page.wait_for_selector(f'{row} [name={flag}][aria-pressed="true"]')
    label = Label.objects.get(claim=claims[0])
    assert (label.flag_not_atomic, label.flag_needs_context, label.flag_true_not_in_passages) == (True, True, True)

    page.keyboard.press("u")  # undo the last three changes, one at a time, each a real save with history
    page.wait_for_selector(f'{row} [name=true_not_in_passages][aria-pressed="false"]')
    page.keyboard.press("Control+z")
    page.wait_for_selector(f'{row} [name=needs_context][aria-pressed="false"]')
    page.keyboard.press("u")
    page.wait_for_selector(f'{row}:not(:has(.flags [aria-pressed="true"]))')
    page.keyboard.press("u")  # and the verdict back to the cleared state before it
    page.wait_for_selector(f'{row}[data-verdict=""]')
    assert verdict_of(claims[0]) == ""
    undos = HistoryEvent.objects.filter(kind="label", action="undo").order_by("id")
    assert [sorted(set(e.new) - {"undoes"}) for e in undos] == [
        ["true_not_in_passages"],
        ["needs_context"],
        ["not_atomic"],
        ["verdict"],
    ]
    assert len({e.new["undoes"] for e in undos}) == 4  # four different changes undone

    page.keyboard.press("p")  # p 1 7: passage 17, its first sentence under the cursor
    page.keyboard.press("1")
    page.keyboard.press("7")
    first = page.evaluate("(t) => ClaimAudit.sentenceSpans(t)[0]", p17.text)
    assert status(page) == f"Evidence: passage 17, sentence 1: \u201c{p17.text[first[0] : first[1]]}\u201d"
    box = page.locator(f"#passage-{p17.pk}").bounding_box()
    assert 0 <= box["y"] < 800
    page.keyboard.press("1")
    page.wait_for_selector(f'{row}[data-verdict="supported"]')
    page.keyboard.press("e")
    page.wait_for_selector(f"{row} blockquote")
    got = Label.objects.get(claim=claims[0])
    assert (got.evidence_passage_id, got.evidence_text) == (p17.pk, p17.text[first[0] : first[1]])

    page.locator('a.cite-n[data-passage-no="3"]').first.click()  # [3] in the answer links to passage 3
    assert page.evaluate("location.hash") == f"#passage-{p3.pk}"
    assert 0 <= page.locator(f"#passage-{p3.pk}").bounding_box()["y"] < 800
    assert page.js_errors == []


def test_it_searches_the_passages_and_puts_the_cursor_on_each_hit(live_server, page, login, transactional_db):
    ann = make_user("ann", "annotator")
    mine, claims, answer = long_answer(ann)
    passages = list(answer.passages.order_by("position"))
    needle = "nucleotides"
    hits = [(i, p.text.lower().count(needle)) for i, p in enumerate(passages) if needle in p.text.lower()]
    assert sum(n for _, n in hits) >= 2
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector(f"#claim-{claims[0].pk}.current")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "passage-search"
    page.keyboard.type(needle)
    assert status(page).startswith(f"{sum(n for _, n in hits)} hits")
    assert page.evaluate("CSS.highlights.get('search-hit').size") == sum(n for _, n in hits)
    page.keyboard.press("Enter")
    assert status(page).startswith(f"Evidence: passage {hits[0][0] + 1}, sentence")
    assert needle in status(page).lower()
    page.keyboard.press("Enter")  # the next hit
    assert needle in status(page).lower()
    page.keyboard.press("Escape")  # back to the current claim; keys work again
    assert page.evaluate("document.activeElement.id") == f"claim-{claims[0].pk}"
    page.keyboard.press("1")
    page.wait_for_selector(f'#claim-{claims[0].pk}[data-verdict="supported"]')
    page.keyboard.press("e")  # the hit's sentence is the evidence
    page.wait_for_selector(f"#claim-{claims[0].pk} blockquote")
    assert needle in Label.objects.get(claim=claims[0]).evidence_text.lower()
    assert page.js_errors == []


def test_it_keeps_the_current_row_in_view_and_hides_the_cursor_after_moving_on(
    live_server, page, login, transactional_db
):
    ann = make_user("ann", "annotator")
    mine, claims, answer = long_answer(ann)
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector(f"#claim-{claims[0].pk}.current")
    for _ in range(4):  # the fifth row sits at the bottom of the claims pane at 1280x800
        page.keyboard.press("j")
    row = page.locator(f"#claim-{claims[4].pk}")
    page.keyboard.press("1")
    page.wait_for_selector(f'#claim-{claims[4].pk}[data-verdict="supported"]')
    page.keyboard.press(".")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("e")  # a long quote: the row grows
    page.wait_for_selector(f"#claim-{claims[4].pk} blockquote")
    page.wait_for_function(
        """([r]) => { const a = document.getElementById(r).getBoundingClientRect(),
             b = document.getElementById('submit-box').getBoundingClientRect(); return a.bottom <= b.top + 1; }""",
        arg=[f"claim-{claims[4].pk}"],
    )
    pane = page.locator(".claims-pane").bounding_box()
    box = row.bounding_box()
    assert box["y"] >= pane["y"]
    assert page.evaluate("CSS.highlights.get('sentence-cursor').size") == 1  # in use: shown
    page.keyboard.press("j")
    assert page.evaluate("CSS.highlights.has('sentence-cursor')") is False  # moved on: hidden
    page.keyboard.press(".")  # and back where it was, one sentence on
    assert page.evaluate("CSS.highlights.get('sentence-cursor').size") == 1
    assert page.js_errors == []


def test_it_splits_real_passages_at_glued_full_stops_but_not_at_abbreviations_or_decimals(
    live_server, page, login, transactional_db
):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=1, n_claims=1, n_passages=1)
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    glued = next(t for t in demo_passages() if "code.Similar" in t)

    def sentences(text):
        return [text[a:b] for a, b in page.evaluate("(t) => ClaimAudit.sentenceSpans(t)", text)]

    got = sentences(glued)
    assert any(s.endswith("genetic code.") for s in got)  # "...genetic code.Similar to the way..."
    assert any(s.startswith("Similar to the way") for s in got)
    assert re.sub(r"\s", "", "".join(got)) == re.sub(r"\s", "", glued)  # nothing lost between sentences
    made_up = "Dr. Watson measured 3.5 mm in the U.S. lab, e.g. in May.It rained. Then J. Smith left!Done"
    assert sentences(made_up) == [
        "Dr. Watson measured 3.5 mm in the U.S. lab, e.g. in May.",
        "It rained.",
        "Then J. Smith left!",
        "Done",
    ]
    texts = demo_passages()  # no sentence of the real passages ends after "Dr." or "e.g.", nor inside a number
    all_spans = page.evaluate("(ts) => ts.map((t) => ClaimAudit.sentenceSpans(t))", texts)
    for text, spans in zip(texts, all_spans, strict=True):
        for a, b in spans:
            assert not text[a:b].endswith(("Dr.", "Mr.", "e.g.", "i.e.")), text[a:b]
            assert not (b < len(text) and text[b - 1] == "." and text[b].isdigit()), text[a : b + 3]
    assert Passage.objects.count() == 1


def test_it_takes_letter_keys_with_caps_lock_on_and_says_why_shift_enter_does_nothing_when_read_only(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace()
    caps_a = "new KeyboardEvent('keydown', {key: 'A', bubbles: true, cancelable: true, modifierCapsLock: true})"
    page.evaluate(f"document.activeElement.dispatchEvent({caps_a})")  # Caps Lock on, no Shift: 'A' is a
    page.wait_for_selector(f"#claim-{c0.pk} [name=not_atomic][aria-pressed=true]")
    assert Label.objects.get(claim=c0).flag_not_atomic is True
    Assignment.objects.filter(pk=a.pk).update(status="submitted")
    page.reload()
    page.wait_for_selector(".ws-locked")
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("() => /Read-only/.test(document.querySelector('#save-status').textContent)")
    assert page.js_errors == []


def test_it_puts_the_caret_after_an_existing_note_when_n_opens_it(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace()
    page.keyboard.press("n")
    page.keyboard.type("first")
    page.keyboard.press("Escape")  # leaves the note: it saves
    page.wait_for_function("() => document.querySelector('#save-status').textContent === 'Saved'")
    page.reload()
    page.wait_for_selector(f"#claim-{c0.pk}.current")
    page.keyboard.press("n")
    page.keyboard.type(", then more")
    assert page.locator(f"#c{c0.pk}-note").input_value() == "first, then more"
