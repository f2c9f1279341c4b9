"""The numeric guard end to end: a real-SDK run against the fake API stores the flag on the verdict,
the adjudicator sees a marker, the report counts the flagged verdicts."""

import io
import json

import pytest

from annotations.report.build import build_report
from audit.ingest.services import answers_import
from audit.judge.services import judge_run_create, judge_run_execute
from audit.models import AuditAnswer, Claim, JudgeVerdict
from tests.factories import make_gold, make_labelled_audit, make_user
from tests.judge_helpers import fake_server

pytestmark = pytest.mark.django_db


def handler(kind, body):
    """Every claim supported by a quote that is verbatim in passage 1 but lacks the claim's number 0."""
    if kind == "decompose":
        return {"claims": []}
    return {"verdict": "supported", "evidence": "Paris is the capital of France.", "passage_id": "passage 1",
            "reason": "r"}  # fmt: skip


def test_it_flags_supported_verdicts_missing_the_claims_numbers_and_shows_the_flag(client):
    a, b, adj = make_user("ann1", "annotator"), make_user("ann2", "annotator"), make_user("adj", "adjudicator")
    audit = make_labelled_audit(a, b, n_answers=1, n_claims=3)  # claims "Claim number {i} says Paris is the capital."
    make_gold(audit)
    with fake_server() as fake:
        fake.handler = handler
        run = judge_run_execute(judge_run_create(backend="anthropic", audit=audit).pk)
    assert run.status == "done", run.message
    verdicts = {v.claim.position: v for v in JudgeVerdict.objects.select_related("claim")}
    assert {p: (v.verdict, v.guard_passed, v.numeric_passed) for p, v in verdicts.items()} == {
        p: ("supported", True, False) for p in range(3)
    }
    item = AuditAnswer.objects.get(audit=audit)
    client.force_login(adj)
    page = client.get(f"/adjudicate/{audit.id}/answers/{item.id}/").content.decode()
    claim0 = Claim.objects.get(answer=item.answer, position=0)
    assert f'id="numeric-flag-{claim0.id}"' in page and "numbers not in evidence" in page
    assert build_report(audit, run.judge_version_id)["judge"]["numeric_flagged"] == 3


def test_it_leaves_verdicts_whose_evidence_has_the_numbers_unflagged():
    a, b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
    audit = make_labelled_audit(a, b, n_answers=1, n_claims=2)

    def quoting(kind, body):
        if kind == "decompose":
            return {"claims": []}
        claim = body["messages"][0]["content"].removeprefix("<claim>").removesuffix("</claim>")
        return {"verdict": "supported", "evidence": claim, "passage_id": f"passage {int(claim.split()[2]) + 1}",
                "reason": "r"}  # fmt: skip

    with fake_server() as fake:
        fake.handler = quoting
        judge_run_execute(judge_run_create(backend="anthropic", audit=audit).pk)
    assert list(JudgeVerdict.objects.values_list("guard_passed", "numeric_passed")) == [(True, True)] * 2


def test_it_flags_imported_external_verdicts_too():
    record = {
        "id": "a1",
        "question": "How many people live in Paris?",
        "answer": "About 2.5 million people live in Paris. Paris is the capital.",
        "passages": [{"id": "p1", "text": "About 2.1 million people live in Paris, the capital."}],
        "created_at": "2026-11-02T10:00:00Z",
        "claims": [
            {"text": "About 2.5 million people live in Paris.", "verdict": "supported",
             "evidence": "million people live in Paris", "passage_id": "p1"},
            {"text": "Paris is the capital.", "verdict": "supported", "evidence": "the capital", "passage_id": "p1"},
        ],
    }  # fmt: skip
    batch = answers_import(io.BytesIO(json.dumps(record).encode() + b"\n"), dataset_name="ds", file_name="a.jsonl",
                           judge_name="vendor")  # fmt: skip
    assert batch.status == "done", batch.errors
    got = [(v.guard_passed, v.numeric_passed) for v in JudgeVerdict.objects.order_by("claim__position")]
    assert got == [(True, False), (True, None)]  # the quote is verbatim, but 2.5 million is not in it
