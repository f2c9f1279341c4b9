"""The workspace at 200% zoom (a 1280x800 screen is then a 640x400 window), in real Chromium."""

import pytest

from tests.factories import make_assigned_audit, make_user

pytestmark = pytest.mark.browser


def test_it_keeps_the_sticky_bar_small_and_the_current_claim_clear_of_it_at_200_percent(
    live_server, page, login, transactional_db
):
    ann = make_user("ann", "annotator")
    _, mine = make_assigned_audit(ann, n_answers=2, n_claims=10, n_passages=2, name="support-bot-2026-W48")
    claims = list(mine[0].audit_answer.answer.claims.order_by("position"))
    page.set_viewport_size({"width": 640, "height": 400})
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector(f"#claim-{claims[0].pk}.current")
    page.keyboard.press(".")  # the status line shows the sentence e would attach: the bar at its tallest
    bar = page.locator(".ws-bar").bounding_box()
    assert bar["height"] <= 400 * 0.2, bar  # it took a third of the window
    for key in "j" * 9 + "k" * 6:
        page.keyboard.press(key)
    page.wait_for_selector(f"#claim-{claims[3].pk}.current")
    row = page.locator(f"#claim-{claims[3].pk}").bounding_box()
    assert row["y"] >= bar["y"] + bar["height"]  # moved back up to, the claim is not under the bar
    assert page.js_errors == []
