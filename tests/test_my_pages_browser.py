"""The people, guidelines and import pages in Chromium at 1280 px: layout and the Content Security Policy."""

import pytest

from tests.factories import make_assigned_audit, make_user

pytestmark = pytest.mark.browser

GAP = """label => {
  const box = label.querySelector('input').getBoundingClientRect();
  const range = document.createRange(); range.selectNodeContents(label);
  const text = [...range.getClientRects()].filter(r => r.left >= box.right - 1)[0] || range.getBoundingClientRect();
  return {gap: text.left - box.right, dy: Math.abs((box.top + box.bottom) / 2 - (text.top + text.bottom) / 2)};
}"""


def console_errors(page):
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


def test_it_puts_each_role_checkbox_next_to_its_name(live_server, page, login, transactional_db):
    lead = make_user("lead", "lead")
    login(page, lead)
    for url in ("/people/", f"/people/{lead.pk}/"):
        page.goto(f"{live_server.url}{url}")
        labels = page.locator("label:has(input[name=roles])")
        assert labels.count() == 3
        for i in range(3):
            where = labels.nth(i).evaluate(GAP)
            assert 0 <= where["gap"] <= 12 and where["dy"] <= 6, (url, i, where)
    assert page.js_errors == []


def test_it_loads_the_guidelines_editor_without_a_csp_violation(live_server, page, login, transactional_db):
    lead = make_user("lead", "lead")
    audit, _ = make_assigned_audit(make_user("ann", "annotator"))
    errors = console_errors(page)
    login(page, lead)
    page.goto(f"{live_server.url}/audits/{audit.pk}/guidelines/")
    page.fill("#guidelines_text", "# Rules\n\nLabel every claim.")
    page.click("text=Save guidelines")
    page.wait_for_selector("text=Guidelines saved as a new version.")
    editor, card = page.locator("#guidelines_text").bounding_box(), page.locator("form.card").bounding_box()
    assert editor["width"] > card["width"] * 0.9  # spans its card, from the stylesheet
    assert errors == [] and page.js_errors == []
