"""Adjudication at 200% zoom (a 1280x800 screen is then a 640x400 window: one column), in real Chromium."""

import pytest

from tests.test_adjudication_screens_browser import setup

pytestmark = pytest.mark.browser


def in_window(box, height=400):
    return box["y"] >= 0 and box["y"] + box["height"] <= height


def test_it_keeps_the_status_line_in_the_window_at_200_percent(live_server, page, login, transactional_db):
    adj, audit, items = setup(n_answers=2)
    page.set_viewport_size({"width": 640, "height": 400})
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{items[1].id}/")
    page.wait_for_selector(".claim-block.current")
    status = page.locator("[data-evidence-status]")
    page.keyboard.press(".")  # the sentence cursor says what s would take: the passages are far down the page
    page.wait_for_function(
        "() => /^Evidence: passage 1/.test(document.querySelector('[data-evidence-status]').textContent)"
    )
    assert in_window(status.bounding_box())
    page.keyboard.press("]")  # past the last answer with disputes: said in the status line, which is in view
    page.wait_for_function("() => /No later answer/.test(document.querySelector('[data-evidence-status]').textContent)")
    assert in_window(status.bounding_box())
    page.keyboard.press("j")
    block, bar = page.locator(".claim-block.current").bounding_box(), page.locator(".passages-form").bounding_box()
    assert block["y"] >= bar["y"] + bar["height"]  # the claim moved to is not under the status line
    assert page.js_errors == []


def test_it_says_in_view_what_taking_a_label_did_and_that_it_is_not_saved_yet(
    live_server, page, login, transactional_db
):
    adj, audit, items = setup()
    page.set_viewport_size({"width": 640, "height": 400})
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{items[0].id}/")
    page.wait_for_selector(".claim-block.current")
    page.keyboard.press("b")  # the gold form is below the window: the status line says what happened
    status = page.locator("[data-evidence-status]")
    assert status.inner_text().startswith("B's label taken (unsupported), not saved yet")
    assert in_window(status.bounding_box())
    assert page.js_errors == []
