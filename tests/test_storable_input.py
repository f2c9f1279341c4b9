"""NUL (which PostgreSQL cannot store) in any text field of any form or search: 400 naming the field,
nothing saved, never a 500; on SQLite too, so both databases behave alike."""

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotations.models import Assignment
from audit.models import Claim, Passage
from tests.factories import PASSWORD, make_assigned_audit, make_labelled_audit, make_user

BAD = "x\x00y"


def fingerprint():
    """Every row of every model except sessions: what a refused request must leave as it was."""
    skip = {"session"}
    return {
        m._meta.label: list(m._base_manager.order_by("pk").values())
        for m in apps.get_models()
        if m._meta.model_name not in skip
    }


@pytest.fixture
def world(db):
    lead = make_user("lead", "lead", "adjudicator")
    ann, ann_b = make_user("ann", "annotator"), make_user("bob", "annotator")
    audit = make_labelled_audit(ann, ann_b, name="2026-W47")  # submitted by both, one dispute per answer
    item = audit.items.order_by("position").first()
    disputed = Claim.objects.filter(answer_id=item.answer_id).order_by("position").first()
    submitted = Assignment.objects.filter(audit_answer=item, annotator=ann).get()
    _, (open_a, *_) = make_assigned_audit(ann, name="2026-W48")  # still being labelled
    claim = Claim.objects.filter(answer_id=open_a.audit_answer.answer_id).first()
    passage = Passage.objects.filter(answer_id=open_a.audit_answer.answer_id).first()
    gold_passage = Passage.objects.filter(answer_id=item.answer_id).first()
    gold = f"/adjudicate/{audit.pk}/answers/{item.pk}/claims/{disputed.pk}/"
    label = {"verdict": "supported", "note": "n", "passage": passage.pk, "start": 0, "end": 4, "text": passage.text[:4]}
    label |= {"needs_context": "false"}
    sample = {"name": "W50", "dataset": audit.dataset_id, "size": 1, "seed": 1, "meta_filters": "", "strata": ""}
    sample["fail_rates"] = ""
    return {
        # (who, url, a valid form, its text fields)
        "lead": lead,
        "ann": ann,
        "cases": [
            (
                "ann",
                f"/label/{open_a.pk}/claim/{claim.pk}/",
                label,
                ["note", "verdict", "text", "start", "needs_context"],
            ),
            ("ann", f"/label/{open_a.pk}/answer/", {"note": "n"}, ["note"]),
            ("ann", f"/label/{open_a.pk}/submit/", {"seconds": "3"}, ["seconds"]),
            ("ann", f"/label/{open_a.pk}/time/", {"seconds": "3"}, ["seconds"]),
            ("lead", f"/label/{submitted.pk}/reopen/", {"reason": "why", "next": "/"}, ["reason", "next"]),
            (
                "lead",
                gold,
                {"verdict": "supported", "evidence": "none", "passage": gold_passage.pk, "reason": "r", "version": 0},
                ["reason", "verdict", "evidence", "passage", "start", "end", "version"],
            ),
            ("lead", f"/adjudicate/{audit.pk}/close/", {"next": "/"}, ["next"]),
            ("lead", f"/adjudicate/{audit.pk}/reopen/", {"reason": "why", "next": "/"}, ["reason", "next"]),
            ("lead", "/audits/new/", sample, ["name", "meta_filters", "strata", "fail_rates", "size", "seed"]),
            ("lead", "/judge/runs/", {"budget_tokens": "1", "budget_usd": "1"}, ["budget_tokens", "budget_usd"]),
            ("lead", "/import/", {"new_dataset": "d", "judge_name": "j"}, ["new_dataset", "dataset", "judge_name"]),
            (None, "/login/", {"username": "lead", "password": PASSWORD}, ["username", "password", "next"]),
        ],
    }


def test_it_refuses_nul_in_every_text_field_of_every_form_with_400_naming_it(client, world):
    for who, url, form, fields in world["cases"]:
        if who:
            client.force_login(world[who])
        else:
            client.logout()
        for name in fields:
            data = {**form, name: BAD}
            if url == "/import/":
                data["file"] = SimpleUploadedFile("a.jsonl", b'{"id": "1"}\n')
            before = fingerprint()
            r = client.post(url, data)
            assert (r.status_code, url, name) == (400, url, name)
            assert r.content.decode().startswith(f"{name}: contains a NUL character"), (url, name, r.content[:200])
            assert fingerprint() == before, (url, name)


def test_it_refuses_nul_in_the_answers_search_and_any_field_name(client, world):
    client.force_login(world["lead"])
    for name in ("q", "meta_key", "meta_value", "dataset", "page"):
        r = client.get("/answers/", {name: BAD})
        assert r.status_code == 400 and r.content.decode().startswith(f"{name}: contains a NUL"), name
    r = client.get("/answers/", {"q": "é ok"})  # the rule is about what cannot be stored, not about non-ASCII
    assert r.status_code == 200
    r = client.post(world["cases"][4][1], {"reason": "why", "x\x00": "1"})
    assert r.status_code == 400 and r.content.decode().startswith("'x\\x00': contains a NUL")


def test_it_checks_csrf_before_looking_at_the_values(world):

    c = Client(enforce_csrf_checks=True)
    c.force_login(world["ann"])
    _, url, form, _ = world["cases"][1]
    assert c.post(url, {**form, "note": BAD}).status_code == 403
