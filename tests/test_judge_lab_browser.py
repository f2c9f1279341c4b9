"""In Chromium: a lead edits the rubric wording, sees the new version, runs it on the gold items (real SDK
against the local fake API, through the task worker) and compares it with the first wording in the lab."""

import pytest
from django.core.management import call_command
from django.test import override_settings

from audit.judge import rubric
from audit.judge.definitions import current_version, definitions_seed
from audit.models import AnswerVerdict, JudgeRun
from tests.factories import make_user
from tests.fake_anthropic import FakeAnthropic
from tests.lab_helpers import build_gold_set

EDIT = "the answer of our support bot."


def handler(kind, body):
    """The first wording passes every answer, the edited one fails every answer."""
    return {"score": 0 if EDIT in body["system"][0]["text"] else 1, "reason": "fake"}


def work_off_the_queue():
    call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0.1", verbosity=0)


@pytest.mark.browser
def test_it_edits_the_rubric_runs_the_new_version_on_gold_and_compares(live_server, page, login, transactional_db):
    lead = make_user("lead", "lead")
    audit, *_ = build_gold_set(
        make_user("a1", "annotator"), make_user("a2", "annotator"), make_user("adj", "adjudicator")
    )
    first = current_version(definitions_seed()[1])
    with FakeAnthropic(handler=handler) as fake, override_settings(ANTHROPIC_BASE_URL=fake.url, JUDGE_MAX_RETRIES=0):
        login(page, lead)
        page.goto(f"{live_server.url}/judge/definitions/")
        page.click("text=answer_faithfulness")
        box = page.locator("textarea[name=rubric_system]")
        box.fill(box.input_value().replace("the answer.", EDIT, 1))
        page.click("text=Save as a new version")
        page.locator("#diff").wait_for()
        assert "answer_faithfulness-v2" in page.locator("#version-name").inner_text()
        assert (
            f"+You are given the user question, the retrieved context (the passages below) and {EDIT}"
            in page.locator("#diff").inner_text()
        )
        second = current_version(first.definition)
        assert second.previous == first and second.spec["rubric_system"] != rubric.RUBRIC_SYSTEM

        page.click("text=Score it in the judge lab")
        page.select_option("select[name=dataset]", str(audit.dataset_id))
        page.select_option("#lab-compare", str(first.pk))
        page.click("button:has-text('Score')")
        estimate = page.locator("#run-a").inner_text()
        assert "3 gold answers not judged by this version yet: 3 calls" in estimate and "estimated $" in estimate
        page.click("#run-a button")
        page.wait_for_url(f"{live_server.url}/judge/runs/*/")
        work_off_the_queue()
        page.go_back()
        page.reload()
        page.click("#run-b button")  # the first wording, on the same gold items
        page.wait_for_url(f"{live_server.url}/judge/runs/*/")
        work_off_the_queue()

        assert set(JudgeRun.objects.values_list("status", flat=True)) == {"done"}
        assert len(fake.message_calls("rubric")) == 6
        assert set(AnswerVerdict.objects.filter(judge_version=second).values_list("score", flat=True)) == {0}
        page.goto(f"{live_server.url}/lab/?dataset={audit.dataset_id}&version={second.pk}&compare={first.pk}")
        # Gold (strict): fail, fail, pass. The edit fails all three (2 right), the first wording passes all (1 right).
        assert "0.667" in page.locator("#scores-a .answer-scores .acc").inner_text()
        assert "0.333" in page.locator("#scores-b .answer-scores .acc").inner_text()
        paired = page.locator("#paired-answers").inner_text()
        assert "Answers judged by both: 3; right only by the first 2, only by the second 1" in paired
        assert page.locator("#run-a").count() == 0  # nothing left to judge
    assert page.js_errors == []
