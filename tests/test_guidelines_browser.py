"""Guidelines in real Chromium: shown before the first answer, `g` opens them in the workspace and on the
adjudication page, and a script in the Markdown does not run."""

import pytest

from audit.guidelines.services import guidelines_save
from audit.models import AuditAnswer
from tests.factories import make_assigned_audit, make_gold, make_labelled_audit, make_user
from tests.test_guidelines import EVIL

pytestmark = pytest.mark.browser


def check_safe(page):
    assert page.evaluate("window.pwned") is None
    dialog = page.locator("#guidelines_dialog")
    assert dialog.locator("script, img").count() == 0
    assert dialog.locator("a[href^='javascript']").count() == 0


def test_it_shows_guidelines_first_then_on_g_in_the_workspace(live_server, page, login, transactional_db):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann, n_answers=1)
    guidelines_save(audit, EVIL, None)
    login(page, ann)
    page.goto(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector("h1:has-text('Annotation guidelines')")  # before the first answer
    assert page.locator(".guidelines-text h1").inner_text() == "Rules"
    assert page.evaluate("window.pwned") is None
    page.click("button:has-text('I have read them')")
    page.wait_for_url(f"{live_server.url}/label/{mine[0].pk}/")
    page.wait_for_selector("#claims")
    assert not page.is_visible("#guidelines_dialog")
    page.keyboard.press("g")
    page.wait_for_selector("#guidelines_dialog[open]")
    assert "Label every claim." in page.inner_text("#guidelines_dialog")
    assert "<script>window.pwned=1</script>" in page.inner_text("#guidelines_dialog")  # shown as text
    check_safe(page)
    page.keyboard.press("Escape")
    page.wait_for_selector("#guidelines_dialog:not([open])", state="attached")
    assert not page.js_errors


def test_it_shows_guidelines_to_adjudicators_too(live_server, page, login, transactional_db):
    ann1, ann2, adj = make_user("ann1", "annotator"), make_user("ann2", "annotator"), make_user("adj", "adjudicator")
    audit = make_labelled_audit(ann1, ann2, n_answers=1)
    make_gold(audit)
    guidelines_save(audit, EVIL, None)
    item = AuditAnswer.objects.get(audit=audit)
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")
    page.click("button:has-text('I have read them')")
    page.wait_for_url(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")
    page.keyboard.press("g")
    page.wait_for_selector("#guidelines_dialog[open]")
    assert "Label every claim." in page.inner_text("#guidelines_dialog")
    check_safe(page)
