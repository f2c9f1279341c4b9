"""Acceptance: re-importing a file imported before numbered passage strings were split (audit/ingest/numbered.py).
Then such an answer was stored with the string as its one passage; the same record now gives its passages. A
re-import keeps the stored answer unless asked to replace changed answers, never touches an answer in an audit,
and its summary says how many answers this concerns and why. The old import is reproduced by uploading the
context as a one-item list, which stores exactly what the import stored before the split; web form and API."""

import io
import json
import tempfile
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from audit.models import Answer
from claimaudit.services import api_token_create
from tests.factories import make_audit, make_user
from tests.test_import_real_shapes import Upload

RAW = "passage 1:SSO is on the Enterprise plan.\n\npassage 2:SCIM comes with SSO.\n\n"


def body(*ids, context=RAW, answer="The Enterprise plan."):
    recs = [{"id": i, "input": "Which plan has SSO?", "output": answer, "context": context} for i in ids]
    return "\n".join(json.dumps(r) for r in recs).encode()


def ids(answer):
    return list(answer.passages.values_list("external_id", flat=True))


class ResplitTests(Upload):
    def setUp(self):
        super().setUp()
        self.upload("logs.jsonl", body("a1", "a2", context=[RAW]), dataset="logs")  # as imported before the split
        self.assertEqual(len(ids(Answer.objects.get(external_id="a1"))), 1)

    def reimport(self, data, **fields):
        r = self.client.post("/import/", {"file": SimpleUploadedFile("logs.jsonl", data), "dataset": "logs", **fields})
        self.assertEqual(r.status_code, 200, r.content.decode()[-1500:])
        return r

    def test_it_keeps_answers_stored_before_the_split_and_says_so(self):
        r = self.reimport(body("a1", "a2", "a3"))
        batch = Answer.objects.get(external_id="a3").import_batch
        self.assertEqual((batch.status, batch.created, batch.updated, batch.unchanged), ("done", 1, 0, 2))
        self.assertEqual(Answer.objects.get(external_id="a1").passages.get().text, RAW)
        self.assertEqual(ids(Answer.objects.get(external_id="a3")), ["passage 1", "passage 2"])
        note = (
            "2 of the unchanged answers were imported before a numbered passage string (passage 1:, [1], ...) "
            "was split into its passages: kept as stored, the string as one passage. To split them, import "
            "again replacing changed answers (answers in an audit keep theirs)."
        )
        self.assertEqual(batch.notes, [note])
        self.assertContains(r, note)

    def test_it_splits_them_when_replacing_changed_answers_but_not_one_in_an_audit(self):
        make_audit([Answer.objects.get(external_id="a2")])
        self.reimport(body("a1", "a2"), update="on")
        a1, a2 = Answer.objects.get(external_id="a1"), Answer.objects.get(external_id="a2")
        self.assertEqual((ids(a1), len(ids(a2))), (["passage 1", "passage 2"], 1))
        self.assertEqual(a1.meta["passages_raw"], RAW)
        batch = a1.import_batch
        self.assertEqual((batch.status, batch.updated, batch.unchanged), ("done", 1, 1))
        self.assertEqual(
            batch.notes,
            [
                "1 of the updated answers was imported before a numbered passage string (passage 1:, [1], ...) "
                "was split into its passages: now split.",
                "1 of the unchanged answers was imported before a numbered passage string (passage 1:, [1], ...) "
                "was split into its passages, and is in an audit: kept as stored, the string as one passage "
                "(audits are frozen).",
            ],
        )

    def test_it_still_refuses_a_real_change_and_says_the_same_through_the_api(self):
        changed = SimpleUploadedFile("logs.jsonl", body("a1", answer="The Team plan."))
        r = self.client.post("/import/", {"file": changed, "dataset": "logs"})
        self.assertContains(r, "already exists in dataset", status_code=400)
        token = api_token_create(make_user("bot", "lead"), "ci")[1]
        api = self.client.post(
            "/api/v1/datasets/logs/answers",
            body("a1", "a2"),
            content_type="application/x-ndjson",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        self.assertEqual(api.status_code, 200, api.content)
        self.assertEqual((api.json()["status"], api.json()["unchanged"]), ("noop", 2))
        self.assertEqual(len(api.json()["notes"]), 1)
        self.assertTrue(api.json()["notes"][0].startswith("2 of the unchanged answers were imported before"))

    def test_it_says_the_same_from_the_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "logs.jsonl"
            path.write_bytes(body("a1", "a2"))
            out = io.StringIO()
            call_command("import_answers", str(path), "--dataset", "logs", "--no-progress", stdout=out)
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("2 of the unchanged answers were imported before a numbered passage"))
        self.assertIn("Nothing new: all 2 answers of logs.jsonl", lines[1])
