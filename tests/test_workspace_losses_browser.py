"""The workspace never drops what the annotator pressed or typed while a save was on its way (real Chromium)."""

import pytest

from annotations.models import Assignment, Label
from audit.models import HistoryEvent
from tests.factories import make_assigned_audit, make_user
from tests.test_workspace_browser import HOLD_SENDS

pytestmark = pytest.mark.browser


def test_it_keeps_presses_on_a_row_queued_behind_another_rows_save(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace(HOLD_SENDS)
    c1 = a.audit_answer.answer.claims.order_by("position")[1]
    page.evaluate("window.hold = true")
    page.keyboard.press("1")  # claim 1: supported, held
    page.wait_for_function("() => window.held.length === 1")
    for key in "j3a":  # claim 2, while claim 1 saves: unsupported, then not atomic
        page.keyboard.press(key)
    page.evaluate("window.release()")
    page.wait_for_function("() => window.done === 3")  # claim 1's save, then claim 2's two, in turn
    page.wait_for_selector(f'#claim-{c1.pk} [name=not_atomic][aria-pressed="true"]')
    got = Label.objects.get(claim=c1)
    assert (got.verdict, got.flag_not_atomic) == ("unsupported", True)
    assert HistoryEvent.objects.filter(kind="label").count() == 3
    assert page.js_errors == []


def test_it_keeps_a_press_queued_behind_an_undo(live_server, page, login, open_workspace, transactional_db):
    a, c0 = open_workspace(HOLD_SENDS)
    page.keyboard.press("1")
    page.wait_for_function("() => window.done === 1")
    page.evaluate("window.hold = true")
    page.keyboard.press("u")  # the undo, held: it swaps claim 1's row when it comes back
    page.wait_for_function("() => window.held.length === 1")
    for key in "2a":  # claim 1 again, while the undo is on its way
        page.keyboard.press(key)
    page.evaluate("window.release()")
    page.wait_for_function("() => window.done === 4")
    page.wait_for_selector(f'#claim-{c0.pk} [name=not_atomic][aria-pressed="true"]')
    got = Label.objects.get(claim=c0)
    assert (got.verdict, got.flag_not_atomic) == ("contradicted", True)
    assert page.js_errors == []


def test_it_keeps_what_is_typed_in_the_answer_note_while_the_answer_fields_save(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace(HOLD_SENDS)
    page.evaluate("window.hold = true")
    page.keyboard.press("o")  # the omission: its save (held) swaps the answer's fields when it comes back
    page.wait_for_function("() => window.held.length === 1")
    page.keyboard.press("m")
    page.keyboard.type("misses the dosage")
    page.evaluate("window.release()")
    page.wait_for_function("() => window.done === 1")
    assert page.input_value("#answer-note") == "misses the dosage"
    page.evaluate("window.hold = true")
    page.keyboard.press("Escape")  # the note saves (held) ...
    page.wait_for_function("() => window.held.length === 1")
    page.keyboard.press("m")
    page.keyboard.type(" for children")  # ... and the annotator goes on typing meanwhile
    page.evaluate("window.release()")
    page.wait_for_function("() => window.done === 2")
    assert page.input_value("#answer-note") == "misses the dosage for children"
    page.keyboard.press("Escape")
    page.wait_for_function("() => window.done === 3")
    a.refresh_from_db()
    assert (a.omission, a.note) == (True, "misses the dosage for children")
    assert page.js_errors == []


def test_it_unchecks_the_omission_a_refused_save_did_not_record(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace()
    cookies = page.context.cookies()
    page.context.clear_cookies()  # the session ended (idle timeout, or a logout in another tab)
    page.context.add_cookies([c for c in cookies if c["name"] != "sessionid"])
    page.keyboard.press("o")
    page.wait_for_function("() => /logged out/.test(document.querySelector('#save-status').textContent)")
    assert page.is_checked("#omission") is False  # as stored: the box does not claim a save that never happened
    assert Assignment.objects.get(pk=a.pk).omission is False
    assert page.js_errors == []


def test_it_says_what_was_pressed_last_was_not_saved_when_the_page_reloads_read_only(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace(HOLD_SENDS)
    page.evaluate("window.hold = true")
    page.keyboard.press("2")  # contradicted: held on its way ...
    page.wait_for_function("() => window.held.length === 1")
    page.keyboard.press("a")  # ... and a flag pressed behind it
    Assignment.objects.filter(pk=a.pk).update(status="submitted")  # meanwhile submitted in another tab
    with page.expect_navigation():
        page.evaluate("window.release()")  # refused (409): the page reloads read-only
    page.wait_for_selector(".ws-locked")
    assert "Not saved" in page.locator(".messages").inner_text()  # not a silent reload
    assert not Label.objects.filter(claim=c0).exists()
    page.goto(f"{live_server.url}/label/queue/{a.audit_answer.audit_id}/")
    assert page.locator(".messages").count() == 0  # said once, on the reloaded page only
    assert page.js_errors == []


def test_it_goes_to_the_next_answer_only_once_the_presses_made_before_are_saved(
    live_server, page, login, transactional_db
):
    ann = make_user("ann", "annotator")
    _, mine = make_assigned_audit(ann, n_answers=2, n_claims=2, n_passages=2)
    c0, c1 = mine[0].audit_answer.answer.claims.order_by("position")
    page.add_init_script(HOLD_SENDS)
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector(f"#claim-{c0.pk}.current")
    page.evaluate("window.hold = true")
    page.keyboard.press("1")  # its save held on its way
    page.wait_for_function("() => window.held.length === 1")
    for key in "j3]":  # claim 2 pressed behind it (held by the page), then on to the next answer
        page.keyboard.press(key)
    assert page.url.endswith(f"/label/{mine[0].pk}/")  # not yet: leaving now would drop the press held
    with page.expect_navigation(url=f"**/label/{mine[1].pk}/"):
        page.evaluate("window.release()")
    got = {lab.claim_id: lab.verdict for lab in Label.objects.filter(assignment=mine[0])}
    assert got == {c0.pk: "supported", c1.pk: "unsupported"}
    assert page.js_errors == []


def test_it_attaches_the_sentence_pointed_at_when_e_was_pressed_though_the_cursor_moved_on_before_it_was_sent(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace(HOLD_SENDS)
    page.evaluate("window.hold = true")
    page.keyboard.press("1")  # its save held on its way
    page.wait_for_function("() => window.held.length === 1")
    for key in "p1e":  # the sentence cursor on passage 1, attached: held by the page behind the verdict
        page.keyboard.press(key)
    for key in "p2j":  # already looking at passage 2, and on to the next claim
        page.keyboard.press(key)
    page.evaluate("window.release()")
    page.wait_for_function("() => window.done === 2")
    label = Label.objects.get(claim=c0)
    assert label.evidence_passage.position == 0
    assert label.evidence_text == "Passage 1: Paris is the capital of France."
    assert page.js_errors == []


def test_a_refused_submit_shows_the_rows_it_names_as_stored_when_another_tab_changed_them(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace()
    for key in "4j4":  # both claims non-assertive in this tab
        page.keyboard.press(key)
    c1 = a.audit_answer.answer.claims.order_by("position")[1]
    page.wait_for_selector(f'#claim-{c1.pk} [value=non_assertive][aria-pressed="true"]')
    Label.objects.filter(claim=c0).update(verdict="supported")  # changed in another tab: supported, no evidence
    page.keyboard.press("Shift+Enter")
    page.wait_for_selector(f"#submit-box [data-goto='{c0.pk}']")  # refused: claim 1 needs evidence ...
    # ... and its row says why: supported, as stored, not the non-assertive this tab last showed
    page.wait_for_selector(f'#claim-{c0.pk} [value=supported][aria-pressed="true"]')
    assert page.locator(f"#claim-{c0.pk} .ev-warn").count() == 1
    assert page.js_errors == []


def test_it_says_which_way_o_turned_the_omission_which_may_be_out_of_view(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace()
    saved = "() => /^Saved: the answer omits %s/.test(document.querySelector('#save-status').textContent)"
    page.keyboard.press("o")
    page.wait_for_function(saved % "something")
    page.keyboard.press("o")
    page.wait_for_function(saved % "nothing")
    assert Assignment.objects.get(pk=a.pk).omission is False
    assert page.js_errors == []
