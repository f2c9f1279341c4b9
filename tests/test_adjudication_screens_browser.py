"""Adjudication screens in real headless Chromium at 1280x800: overlapping evidence, the inline missing
reason, ] past the last dispute, taking one annotator's labels for the rest of the answer. axe-core checks
every page (see the page fixture), contrast included."""

import pytest

from annotations.models import GoldLabel
from audit.models import AuditAnswer, Claim, HistoryEvent, JudgeVerdict, Passage
from tests.factories import judge_audit, make_gold, make_labelled_audit, make_user

pytestmark = pytest.mark.browser


def disputed_0_and_2(i, position, slot):
    if position in (0, 2):
        return "supported" if slot == "A" else ("unsupported" if position == 0 else "contradicted")
    return "supported"


def setup(n_answers=1):
    ann1, ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
    adj = make_user("adj", "adjudicator")
    audit = make_labelled_audit(ann1, ann2, n_answers=n_answers, verdicts=disputed_0_and_2)
    make_gold(audit)
    return adj, audit, list(AuditAnswer.objects.filter(audit=audit).order_by("position"))


def test_it_shows_every_span_where_evidence_overlaps_and_the_missing_reason_inline(
    live_server, page, login, transactional_db
):
    adj, audit, [item] = setup()
    judge_audit(audit, lambda c: "supported")
    [c0] = Claim.objects.filter(answer=item.answer, position=0)
    JudgeVerdict.objects.filter(claim=c0).update(evidence="Paris is the capital of France")  # covers A's "Paris"
    Passage.objects.filter(answer=item.answer).update(source="https://example.org/" + "a-long-path-segment-" * 12)
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")
    page.wait_for_selector(f"#claim-block-{c0.id}.current")
    both = page.locator("#passages .passage-text mark.evidence.ev-a.judge")  # A's span inside the judge's: both named
    assert both.inner_text() == "Paris"
    assert both.get_attribute("title") == "Evidence: A, judge"
    judge_only = page.locator("#passages .passage-text mark.evidence.judge:not(.ev-a)").first
    assert judge_only.inner_text() == " is the capital of France"
    styles = both.evaluate("m => [getComputedStyle(m).boxShadow, getComputedStyle(m).textDecorationLine]")
    assert "rgb(31, 122, 61)" in styles[0] and styles[1] == "underline"  # A's underline and the judge's, stacked
    assert page.locator(".legend mark.ev-a, .legend mark.ev-b, .legend mark.judge, .legend mark.gold").count() == 4

    page.keyboard.press("2")  # a verdict, no reason: the refusal shows in the block, not in a native tooltip
    page.keyboard.press("Enter")
    error = page.locator(f"#claim-block-{c0.id} .error")
    error.wait_for()
    assert "A reason is required" in error.inner_text()
    assert page.locator(f"#claim-block-{c0.id} input[name=reason]").get_attribute("aria-invalid") == "true"
    assert not GoldLabel.objects.filter(claim=c0, source="adjudicated").exists()
    # The block's swap reloads the passages pane (its htmx:afterSwap): measure once that request is swapped in.
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')")
    source = page.locator("#passages .source").first.bounding_box()  # long urls wrap inside the pane
    pane = page.locator(".passages-pane").bounding_box()
    assert source["x"] + source["width"] <= pane["x"] + pane["width"]
    assert page.axe() == []
    assert page.js_errors == []


def test_it_says_so_past_the_last_dispute_instead_of_wrapping(live_server, page, login, transactional_db):
    adj, audit, items = setup(n_answers=2)
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{items[1].id}/")
    page.wait_for_selector(".claim-block.current")
    page.keyboard.press("]")
    status = page.locator("[data-evidence-status]")
    assert "No later answer has open disputes; 1 earlier answer has some left" in status.inner_text()
    assert page.url.endswith(f"/answers/{items[1].id}/")  # stayed: no wrap round to the first answer
    page.keyboard.press("[")
    page.wait_for_url(f"**/answers/{items[0].id}/")
    assert page.js_errors == []


def test_it_takes_one_annotators_labels_for_all_remaining_claims_with_a_reason(
    live_server, page, login, transactional_db
):
    adj, audit, [item] = setup()
    c0, c2 = (Claim.objects.get(answer=item.answer, position=p) for p in (0, 2))
    login(page, adj)
    page.goto(f"{live_server.url}/adjudicate/{audit.id}/answers/{item.id}/")
    page.select_option(".take-all select[name=slot]", "b")
    page.fill(".take-all input[name=reason]", "B read the passages; A did not.")
    page.click(".take-all button")
    page.wait_for_selector("text=Took B's label for 2 claims.")
    gold = {g.claim_id: g for g in GoldLabel.objects.filter(audit=audit, source="adjudicated")}
    assert (gold[c0.id].verdict, gold[c2.id].verdict) == ("unsupported", "contradicted")
    assert {g.reason for g in gold.values()} == {"B read the passages; A did not."}
    assert HistoryEvent.objects.filter(kind="gold", action="adjudicated").count() == 2
    page.fill(".take-all input[name=reason]", "again")  # nothing left: said so, nothing changed
    page.click(".take-all button")
    page.wait_for_selector("text=Nothing taken: No disputed claim of this answer is left to take")
    assert HistoryEvent.objects.filter(kind="gold", action="adjudicated").count() == 2
    assert page.js_errors == []
