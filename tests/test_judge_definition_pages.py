"""The definition pages: list, edit (mints a version; warns; 400 naming the field), read-only version page."""

import html

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.judge import rubric
from audit.judge.definitions import current_version, definitions_seed
from audit.models import JudgeDefinition, JudgeVersion
from tests.factories import make_judge_version, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_client(client):
    client.force_login(make_user("lead", "lead"))
    return client


def form(version, **changes):
    return {"rubric_system": version.spec["rubric_system"], "model": version.model, "effort": version.effort} | changes


def test_it_lists_the_seeded_definitions_in_a_fixed_number_of_queries(lead_client):
    lead_client.get("/judge/definitions/")
    with CaptureQueriesContext(connection) as two:
        page = lead_client.get("/judge/definitions/").content.decode()
    assert "claim-judge" in page and "answer_faithfulness" in page
    for i in range(3):
        d = JudgeDefinition.objects.create(name=f"extra{i}", level="answer")
        make_judge_version(f"x{i}", kind="anthropic", content_hash=f"{i}" * 64, definition=d)
    with CaptureQueriesContext(connection) as five:
        page = lead_client.get("/judge/definitions/").content.decode()
    assert "extra2" in page and len(five) == len(two)


def test_it_mints_a_version_from_the_edit_page_and_shows_its_diff(lead_client):
    answer = definitions_seed()[1]
    first = current_version(answer)
    text = first.spec["rubric_system"].replace("the answer.", "the answer <of our bot>.", 1)
    r = lead_client.post(f"/judge/definitions/{answer.pk}/", form(first, rubric_system=text))
    new = current_version(answer)
    assert r.status_code == 302 and r["Location"] == f"/judge/versions/{new.pk}/" and new != first
    # One naming scheme: <definition>-v<n>, as the first claim prompts' claim-judge-v1.
    assert first.name.startswith("answer_faithfulness-v1 ") and new.name.startswith("answer_faithfulness-v2 ")
    assert current_version(definitions_seed()[0]).name.startswith("claim-judge-v1 ")
    page = lead_client.get(r["Location"]).content.decode()
    assert (
        "+You are given the user question, the retrieved context (the passages below) and the answer "
        "&lt;of our bot&gt;." in page
    )
    assert "<of our bot>" not in page  # escaped
    first.refresh_from_db()
    assert first.spec["rubric_system"] == rubric.RUBRIC_SYSTEM  # read-only


def test_it_warns_and_saves_nothing_until_confirmed(lead_client):
    answer = definitions_seed()[1]
    first = current_version(answer)
    data = form(first, rubric_system=first.spec["rubric_system"].replace("- summary\n", ""))
    r = lead_client.post(f"/judge/definitions/{answer.pk}/", data)
    assert r.status_code == 200 and "removed the exclusions: summary" in r.content.decode()
    assert '<span class="del">-- summary</span>' in r.content.decode()  # the diff the save would make
    assert answer.versions.count() == 1
    r = lead_client.post(f"/judge/definitions/{answer.pk}/", data | {"confirm": "on"})
    assert r.status_code == 302 and answer.versions.count() == 2


@pytest.mark.parametrize(("field", "value"), [("effort", "extreme"), ("model", ""), ("rubric_system", "  ")])
def test_it_rejects_bad_values_with_400_naming_the_field(lead_client, field, value):
    answer = definitions_seed()[1]
    r = lead_client.post(f"/judge/definitions/{answer.pk}/", form(current_version(answer), **{field: value}))
    assert r.status_code == 400 and f"{field}: " in r.content.decode() and answer.versions.count() == 1


BAD_MODELS = ["gpt-nonsense", "claude-nonsense-9", "Claude-Sonnet-5-5", "claude sonnet", "claude-"]


@pytest.mark.parametrize("model", BAD_MODELS)
def test_it_refuses_a_model_that_is_no_anthropic_model_with_400_naming_it(lead_client, model):
    claim, answer = definitions_seed()
    for d in (claim, answer):
        data = {f: current_version(d).spec[f] for f in ("decompose_system", "verify_system", "rubric_system")
                if f in current_version(d).spec} | {"model": model, "effort": "low"}  # fmt: skip
        r = lead_client.post(f"/judge/definitions/{d.pk}/", data)
        page = html.unescape(r.content.decode())
        assert r.status_code == 400 and f"model: {model!r} is " in page and d.versions.count() == 1


def test_it_takes_a_model_the_sdk_lists_or_the_prices_name(lead_client, settings):
    answer = definitions_seed()[1]
    first = current_version(answer)
    # claude-opus-4-6 is in the installed SDK's model list and not priced here; claude-next-9 only priced.
    settings.JUDGE_PRICES = settings.JUDGE_PRICES | {"claude-next-9": {"input": 1.0, "output": 2.0}}
    for n, model in enumerate(("claude-opus-4-6", "claude-next-9"), start=2):
        r = lead_client.post(f"/judge/definitions/{answer.pk}/", form(first, model=model))
        new = current_version(answer)
        assert r.status_code == 302 and new.model == model
        assert new.name == f"answer_faithfulness-v{n} {model} effort=low"


def test_it_is_for_leads_only(client):
    client.force_login(make_user("ann", "annotator"))
    definitions_seed()
    v = JudgeVersion.objects.first()
    assert client.get("/judge/definitions/").status_code == 403
    assert client.get(f"/judge/versions/{v.pk}/").status_code == 403
    client.logout()
    assert client.get("/judge/definitions/").status_code in (302, 403)
