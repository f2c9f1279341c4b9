"""The workspace in real headless Chromium, driven by the keyboard."""

import re
import time

import pytest

from annotations.models import Assignment, Label
from audit.models import HistoryEvent
from tests.factories import make_annotators, make_assigned_audit, make_user

pytestmark = pytest.mark.browser

SELECT_IN_PASSAGE = """([position, needle]) => {
  const el = document.querySelectorAll('[data-passage]')[position];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const i = n.data.indexOf(needle);
    if (i >= 0) {
      const r = document.createRange();
      r.setStart(n, i); r.setEnd(n, i + needle.length);
      getSelection().removeAllRanges(); getSelection().addRange(r);
      return true;
    }
  }
  return false;
}"""


def console_errors(page):
    """Console errors, which is where Chromium reports Content-Security-Policy violations."""
    errors = []
    page.on(
        "console",
        lambda msg: (
            errors.append((msg.text, msg.location.get("url")))
            if msg.type == "error" and "favicon" not in msg.location.get("url", "")
            else None
        ),
    )
    return errors


def pressed(page, claim, verdict):
    page.wait_for_selector(f'#claim-{claim.pk} button[value={verdict}][aria-pressed="true"]')


def test_it_labels_an_answer_with_the_keyboard_only(live_server, page, login, transactional_db, assets):
    ann, other = make_annotators()
    audit, mine = make_assigned_audit(ann, other, n_answers=2, n_claims=4, n_passages=3)
    claims = list(mine[0].audit_answer.answer.claims.order_by("position"))
    console = console_errors(page)
    login(page, ann)
    page.goto(f"{live_server.url}/label/queue/{audit.pk}/")
    page.focus("#label-next")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/label/{mine[0].pk}/")
    assert page.locator("text=answer 1 of 2").is_visible()
    assert page.evaluate("document.activeElement.id") == f"claim-{claims[0].pk}"

    page.keyboard.press("1")
    pressed(page, claims[0], "supported")
    assert page.evaluate(SELECT_IN_PASSAGE, [1, "Paris is the capital of France"])
    page.keyboard.press("e")
    page.wait_for_selector(f'[data-passage] mark.evidence[data-claims="{claims[0].pk}"]')
    assert page.locator(f"#claim-{claims[0].pk} blockquote").inner_text() == "Paris is the capital of France"

    page.keyboard.press("j")
    page.keyboard.press("2")
    pressed(page, claims[1], "contradicted")
    assert page.locator(f"#claim-{claims[1].pk} .ev-warn").is_visible()  # evidence or a note is needed
    page.keyboard.press("n")
    page.keyboard.type("1j passage 2 says Lyon")  # shortcuts pause while typing
    page.keyboard.press("Escape")
    page.wait_for_selector(f"#claim-{claims[1].pk}:not(:has(.ev-warn))")
    pressed(page, claims[1], "contradicted")

    for claim, key, verdict in [(claims[2], "3", "unsupported"), (claims[3], "4", "non_assertive")]:
        page.keyboard.press("ArrowDown")
        page.keyboard.press(key)
        pressed(page, claim, verdict)
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.id") == f"claim-{claims[2].pk}"

    page.keyboard.press("Shift+Enter")
    page.wait_for_url(f"{live_server.url}/label/{mine[1].pk}/")
    assert page.locator("text=answer 2 of 2").is_visible()

    labels = {lb.claim_id: lb for lb in Label.objects.filter(assignment=mine[0])}
    assert [labels[c.pk].verdict for c in claims] == ["supported", "contradicted", "unsupported", "non_assertive"]
    assert labels[claims[0].pk].evidence_text == "Paris is the capital of France"
    assert labels[claims[1].pk].note == "1j passage 2 says Lyon"
    mine[0].refresh_from_db()
    assert mine[0].status == Assignment.Status.SUBMITTED

    page.keyboard.press("[")  # back to the submitted answer, then reload: everything is still there
    page.wait_for_url(f"{live_server.url}/label/{mine[0].pk}/")
    page.reload()
    pressed(page, claims[0], "supported")
    pressed(page, claims[3], "non_assertive")
    assert page.locator(f'mark.evidence[data-claims="{claims[0].pk}"]').inner_text() == "Paris is the capital of France"
    assert page.locator(f"#c{claims[1].pk}-note").input_value() == "1j passage 2 says Lyon"
    assert page.locator("text=read-only").is_visible()
    assert page.js_errors == []
    assert console == []


def test_it_shows_shortcuts_records_time_and_blocks_keys_while_typing(live_server, page, login, transactional_db):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=2, n_claims=2)
    claim = mine[0].audit_answer.answer.claims.order_by("position").first()
    login(page, ann)
    reports = []  # time on task as the page reports it
    page.on("request", lambda r: r.url.endswith("/time/") and reports.append(r))
    page.clock.install()  # the page's 1 s timer counts time on task; the test decides when a second passes
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.keyboard.press("?")  # the list is fetched the first time, then the dialog opens
    page.wait_for_selector("dialog#shortcuts[open] >> text=Undo the last change")
    page.keyboard.press("Escape")
    assert not page.locator("dialog#shortcuts").is_visible()
    page.keyboard.press("n")
    page.keyboard.type("123")
    assert page.locator(f"#claim-{claim.pk}").get_attribute("data-verdict") == ""
    page.keyboard.press("Escape")
    page.wait_for_selector("#save-status:text('Saved')")
    page.keyboard.press("e")  # nothing selected: a clear message, no request
    assert "Select the evidence text" in page.locator("#save-status").inner_text()
    page.clock.pause_at(time.time() * 1000 + 1000)
    page.mouse.move(100, 300)  # activity while the tab is visible and focused counts as time on task
    with page.expect_request(lambda r: r.url.endswith("/time/")):
        page.clock.run_for(15_000)  # 15 counted seconds, then the periodic report
    sent = [int(re.search(r'name="seconds"\r\n\r\n(\d+)', r.post_data).group(1)) for r in reports if r.response()]
    mine[0].refresh_from_db()
    assert sent[-1] >= 15 and mine[0].active_seconds == sum(sent)
    page.clock.resume()
    page.keyboard.press("]")
    page.wait_for_url(f"{live_server.url}/label/{mine[1].pk}/")
    assert Label.objects.get(assignment=mine[0], claim=claim).note == "123"
    assert page.js_errors == []


def test_it_runs_no_script_from_answer_or_passage_text(live_server, page, login, transactional_db):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=1)
    answer = mine[0].audit_answer.answer
    answer.question = "<script>window.pwned=1</script>Where?"
    answer.text = "<img src=x onerror=\"window.pwned=2;document.title='pwned'\"> Paris."
    answer.save()
    answer.claims.update(text='<img src=x onerror="window.pwned=3">')
    answer.passages.update(text="<script>document.title='pwned'</script><b onmouseover=alert(1)>x</b>")
    console = console_errors(page)
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector("#claims")
    page.mouse.move(900, 300)
    assert page.evaluate("window.pwned") is None
    assert "pwned" not in page.title()
    assert page.locator(".question").inner_text().startswith("<script>window.pwned=1</script>")
    assert page.locator("[data-passage]").first.inner_text().startswith("<script>document.title")
    assert page.locator("img").count() == 0
    assert console == []  # and no inline script or style was even attempted (CSP would report it)


def test_it_fits_three_scrolling_panes_in_1280x800(live_server, page, login, transactional_db):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=1, n_claims=40, n_passages=20)
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    boxes = [page.locator(".pane").nth(i).bounding_box() for i in range(3)]
    assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
    assert all(b["y"] + b["height"] <= 800 for b in boxes)
    assert page.evaluate("document.scrollingElement.scrollHeight") <= 800  # the page itself does not scroll
    page.locator(".passages-pane").evaluate("el => el.scrollTop = el.scrollHeight")
    assert page.locator(".passages-pane").evaluate("el => el.scrollTop") > 0
    assert page.locator(".claims-pane").evaluate("el => el.scrollTop") == 0
    for _ in range(39):
        page.keyboard.press("j")
    last = mine[0].audit_answer.answer.claims.order_by("position").last()
    assert page.locator(f"#claim-{last.pk}").is_visible()
    assert page.locator(f"#claim-{last.pk}").evaluate("el => el.classList.contains('current')")
    assert page.locator(f'.claim-span[data-claim="{last.pk}"]').evaluate("el => el.classList.contains('lit')")


def test_it_renders_each_rows_controls_on_the_server(live_server, page, login, transactional_db):
    """Every control of a row is server-rendered and posts itself: they save, show state and keep focus."""
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=1, n_claims=2, n_passages=2)
    c0, c1 = mine[0].audit_answer.answer.claims.order_by("position")
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    row = page.locator(f"#claim-{c0.pk}")
    assert row.get_by_role("group", name="Verdict").get_by_role("button").count() == 4
    assert row.get_by_role("textbox", name="Note").count() == 1
    page.click(f"#claim-{c0.pk} [value=supported]")  # the mouse: focus stays on the pressed button after the re-render
    pressed(page, c0, "supported")
    focused = "document.activeElement.closest('li').id + ' ' + document.activeElement.value"
    assert page.evaluate(focused) == f"claim-{c0.pk} supported"
    flag = f"#claim-{c0.pk} [name=needs_context]"
    page.click(flag)
    page.wait_for_selector(f'{flag}[aria-pressed="true"]')
    assert page.evaluate(focused) == f"claim-{c0.pk} true"  # the flag button, showing its new state
    page.click(flag)
    page.wait_for_selector(f'{flag}[aria-pressed="false"]')
    page.keyboard.press(".")
    page.keyboard.press("e")
    page.wait_for_selector(f"#claim-{c0.pk} blockquote")
    page.keyboard.press("x")  # remove the evidence again
    page.wait_for_selector(f"#claim-{c0.pk}:not(:has(blockquote))")
    with page.expect_response(lambda r: f"/claim/{c1.pk}/" in r.url and r.request.method == "POST"):
        page.fill(f"#c{c1.pk}-note", "typed, then a pause")  # no change event: the two-second pause saves it
    label = Label.objects.get(claim=c0)
    assert (label.verdict, label.flag_needs_context, label.evidence_passage_id) == ("supported", False, None)
    assert Label.objects.get(claim=c1).note == "typed, then a pause"
    mine[0].status = Assignment.Status.SUBMITTED
    mine[0].save()
    page.reload()
    assert page.locator(f"#claim-{c0.pk} [value=supported]").is_disabled()
    assert page.locator(f"#claim-{c0.pk} [value=supported]").get_attribute("aria-pressed") == "true"
    assert page.locator(f"#claim-{c0.pk} [name=not_atomic]").is_disabled()
    assert page.js_errors == []


def test_it_opens_the_shortcut_list_at_its_top_and_leaves_room_for_the_status_at_1280(
    live_server, page, login, transactional_db
):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=2, n_claims=2)
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.keyboard.press("?")
    page.wait_for_selector("dialog#shortcuts[open] #h-shortcuts")
    heading = page.locator("#h-shortcuts").bounding_box()
    assert heading["y"] >= 0 and page.locator("dialog#shortcuts").evaluate("d => d.scrollTop") == 0
    page.keyboard.press("Escape")
    page.keyboard.press(".")  # the sentence cursor says in the status line what e would attach
    assert page.locator("#save-status").inner_text().startswith("Evidence: passage 1")
    assert page.locator("#save-status").bounding_box()["width"] >= 200


HOLD_SENDS = """
  const send = XMLHttpRequest.prototype.send;
  window.held = [];
  window.done = 0;
  XMLHttpRequest.prototype.send = function (body) {
    this.addEventListener("loadend", () => { window.done++; });
    if (window.hold) window.held.push(() => send.call(this, body)); else send.call(this, body);
  };
  window.release = () => { window.hold = false; window.held.splice(0).forEach((go) => go()); };
"""


def test_it_presses_again_on_the_fresh_row_what_was_pressed_while_the_row_saved(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace(HOLD_SENDS)  # the test decides when the first save leaves the browser
    page.evaluate("window.hold = true")
    page.keyboard.press("1")  # supported: its request is held
    page.wait_for_function("() => window.held.length === 1")
    for key in "attc2":  # while the row's save is in flight: held by the workspace, each pressed again in turn
        page.keyboard.press(key)  # a: not atomic; t twice: on, then off again; c: needs context; 2: contradicted
    assert page.evaluate("window.held.length") == 1
    page.evaluate("window.release()")
    row = f"#claim-{c0.pk}"
    page.wait_for_selector(f'{row} [value=contradicted][aria-pressed="true"]')
    pressed = page.eval_on_selector_all(f"{row} .flags button", "bs => bs.map((b) => [b.name, b.ariaPressed])")
    assert pressed == [["not_atomic", "true"], ["needs_context", "true"], ["true_not_in_passages", "false"]]
    label = Label.objects.get(claim=c0)
    flags = (label.flag_not_atomic, label.flag_needs_context, label.flag_true_not_in_passages)
    assert (label.verdict, *flags) == ("contradicted", True, True, False)
    assert HistoryEvent.objects.filter(kind="label").count() == 6  # 1, a, t, t, c, 2: each held press its own save
    assert page.js_errors == []


def test_it_turns_a_flag_back_when_it_is_pressed_again_while_its_own_save_is_in_flight(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace(HOLD_SENDS)
    page.evaluate("window.hold = true")
    page.keyboard.press("a")  # not atomic on: its request is held, the button still shows off
    page.wait_for_function("() => window.held.length === 1")
    for _ in range(3):  # off, on, off: each pressed again on the row the save before it left
        page.keyboard.press("a")
    page.evaluate("window.release()")
    page.wait_for_function("() => window.done === 4")  # the held save and the three pressed again after it
    assert HistoryEvent.objects.filter(kind="label").count() == 4
    assert Label.objects.get(claim=c0).flag_not_atomic is False
    assert page.get_attribute(f"#claim-{c0.pk} [name=not_atomic]", "aria-pressed") == "false"
    assert page.js_errors == []


def test_it_says_a_press_is_not_saved_once_the_session_has_ended(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace()
    cookies = page.context.cookies()
    page.context.clear_cookies()  # the session is gone, as after the idle timeout or a logout in another tab
    page.context.add_cookies([c for c in cookies if c["name"] != "sessionid"])
    page.keyboard.press("1")
    page.wait_for_function("() => /logged out/.test(document.querySelector('#save-status').textContent)")
    assert page.locator("#claims form[action='/login/'], #claims input[name=password]").count() == 0  # not swapped in
    assert page.get_attribute(f"#claim-{c0.pk} [value=supported]", "aria-pressed") == "false"
    assert not Label.objects.filter(claim=c0).exists()
    page.keyboard.press("]")  # one answer only: the key says why nothing happens
    page.wait_for_function("() => document.querySelector('#save-status').textContent === 'No later answer.'")
    assert page.js_errors == []


def test_it_says_the_page_is_out_of_date_when_a_new_login_rotated_its_csrf_token(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace()
    other = page.context.new_page()
    other.goto(f"{live_server.url}/")
    other.click("text=Log out")
    other.wait_for_url("**/login/**")
    login(
        other, a.annotator
    )  # logged out and in again in another tab: a new CSRF secret, the first tab's token is stale
    other.close()
    page.keyboard.press("1")
    page.wait_for_function("() => /out of date/.test(document.querySelector('#save-status').textContent)")
    assert not Label.objects.filter(claim=c0).exists()


def test_it_updates_the_submit_list_as_claims_are_fixed_and_reloads_an_answer_submitted_elsewhere(
    live_server, page, login, transactional_db
):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=1, n_claims=3, n_passages=2)
    Assignment.objects.filter(pk=mine[0].pk).update(status="started")
    audit.evidence_required = False
    audit.save()
    c = list(mine[0].audit_answer.answer.claims.order_by("position"))
    login(page, ann)
    console = console_errors(page)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector(f"#claim-{c[0].pk}.current")
    page.keyboard.press("Shift+Enter")  # nothing labelled: the list names the three claims
    page.wait_for_selector(f"#submit-box [data-goto='{c[2].pk}']")
    page.keyboard.press("1")  # the list moved to claim 1: label it, and it leaves the list
    page.wait_for_function(f"() => !document.querySelector(\"#submit-box [data-goto='{c[0].pk}']\")")
    assert page.locator("#submit-box [data-goto]").count() == 2
    assert [t for t, _ in console if "Response Status Error" in t] == []  # htmx takes a 422 as an answer, not an error
    Assignment.objects.filter(pk=mine[0].pk).update(status="submitted")  # as if submitted in another tab
    page.keyboard.press("j")
    page.keyboard.press("2")
    page.wait_for_selector(".ws-locked")  # reloaded read-only, not one refused control at a time
    assert page.locator(f"#claim-{c[0].pk} button[value=supported][disabled], #claims fieldset[disabled]").count() > 0
    assert page.js_errors == []


def test_it_still_holds_a_press_when_a_dialog_loads_while_the_row_saves(
    live_server, page, login, open_workspace, transactional_db
):
    a, c0 = open_workspace(HOLD_SENDS)
    page.evaluate("window.hold = true")
    page.keyboard.press("1")  # the row's save, held
    page.wait_for_function("() => window.held.length === 1")
    page.keyboard.press("?")  # the shortcut list's first GET, held too: not a save
    page.wait_for_function("() => window.held.length === 2")
    page.keyboard.press("a")  # pressed while the row saves: held by the workspace, pressed again after it
    page.evaluate("window.release()")
    page.wait_for_function("() => window.done === 3")  # the save, the dialog's GET, the flag pressed again
    assert Label.objects.get(claim=c0).flag_not_atomic is True
    assert HistoryEvent.objects.filter(kind="label").count() == 2
    assert page.js_errors == []
