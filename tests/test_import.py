"""Answer import: service, command and web page. Every failure case checks that nothing was written."""

import csv
import hashlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import TestCase, override_settings

from audit.ingest.services import answers_import
from audit.models import Answer, Claim, Dataset, ImportBatch, JudgeVerdict, JudgeVersion, Passage
from tests.factories import make_audit, make_user

RAGTRUTH = Path(__file__).resolve().parent.parent / "claimaudit" / "demo_data" / "ragtruth_qa_visible.jsonl"


def rec(i=1, **over):
    r = {
        "id": f"a{i}",
        "question": f"Question {i}?",
        "answer": "Paris is the capital. It has 2 million people.",
        "passages": [
            {"id": "p1", "source": "wiki", "text": "Paris is the capital of France."},
            {"id": "p2", "source": "wiki", "text": "About 2.1 million people live in Paris."},
        ],
        "created_at": "2026-11-02T10:00:00Z",
        "meta": {"model": "m1"},
    }
    r.update(over)
    return {k: v for k, v in r.items() if v is not ...}


def jsonl(*records):
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records)


def run(data, file_name="answers.jsonl", dataset="ds", **kw):
    return answers_import(io.BytesIO(data), dataset_name=dataset, file_name=file_name, **kw)


def counts():
    return [m.objects.count() for m in (Answer, Passage, Claim, JudgeVerdict)]


class ImportSuccessTests(TestCase):
    def test_it_imports_the_ragtruth_file_as_is(self):
        with RAGTRUTH.open("rb") as f:
            batch = answers_import(f, dataset_name="RAGTruth", file_name=RAGTRUTH.name)
        self.assertEqual((batch.status, batch.created, batch.lines), ("done", 108, 108))
        self.assertEqual(counts(), [108, 324, 0, 0])
        a = Answer.objects.get(external_id="ragtruth-12018")
        self.assertEqual(a.meta["model"], "gpt-4-0613")
        self.assertEqual(a.meta["human_labels"], [])  # unknown top-level fields go into meta
        self.assertIn("span_verdicts", a.meta["derived"])
        self.assertEqual(a.length, len(a.text))
        self.assertEqual(len(batch.file_sha256), 64)
        passage_ids = list(a.passages.values_list("external_id", flat=True))
        self.assertEqual(passage_ids, ["passage 1", "passage 2", "passage 3"])

    def test_it_reimports_the_same_file_as_a_noop(self):
        data = jsonl(rec(1), rec(2))
        self.assertEqual(run(data).status, "done")
        before = counts()
        again = run(data)
        self.assertEqual((again.status, again.unchanged, again.created), ("noop", 2, 0))
        self.assertEqual(counts(), before)
        self.assertEqual(ImportBatch.objects.filter(status="noop").count(), 1)

    def test_it_keeps_integer_ids_as_their_decimal_strings(self):
        ints = [{"id": 1, "text": "Paris is the capital of France."}, {"id": 2**64 - 1, "text": "About 2.1 million."}]
        claim = {"text": "Paris is the capital.", "verdict": "supported", "passage_id": 1}
        self.assertEqual(run(jsonl(rec(1, id=17, passages=ints, claims=[claim]), rec(2, id=-(2**63)))).created, 2)
        a = Answer.objects.get(external_id="17")
        self.assertEqual(list(a.passages.values_list("external_id", flat=True)), ["1", "18446744073709551615"])
        self.assertEqual(a.claims.get().judge_verdicts.get().passage_external_id, "1")
        self.assertTrue(Answer.objects.filter(external_id=str(-(2**63))).exists())
        # 17 and "17" are the same answer: written with string ids, the file is unchanged (a no-op)
        strings = [{**p, "id": str(p["id"])} for p in ints]
        same = rec(1, id="17", passages=strings, claims=[{**claim, "passage_id": "1"}])
        again = run(jsonl(same, rec(2, id=str(-(2**63)))))
        self.assertEqual((again.status, again.unchanged, again.created), ("noop", 2, 0))

    def test_it_finds_an_integer_id_and_its_string_twice_in_one_file(self):
        batch = run(jsonl(rec(1, id=17), rec(2, id="17")))
        self.assertEqual(batch.errors, [{"line": 2, "field": "id", "message": "duplicate id '17': already on line 1"}])

    def test_it_defaults_created_at_and_hashes_the_normalised_record(self):
        run(jsonl(rec(1, created_at=...)))
        a = Answer.objects.get()
        self.assertIsNotNone(a.created_at)
        # Key order and spacing do not change the record: the same content re-imports as unchanged.
        shuffled = json.dumps(dict(reversed(list(rec(1, created_at=...).items()))), indent=None).encode() + b"\n"
        self.assertEqual(run(shuffled).status, "noop")

    def test_it_imports_csv_with_json_columns(self):
        r = rec(1)
        buf = io.StringIO()

        w = csv.writer(buf)
        w.writerow(["id", "question", "answer", "passages", "meta", "created_at", "claims", "team"])
        w.writerow(
            [r["id"], r["question"], r["answer"], json.dumps(r["passages"]), json.dumps(r["meta"]), "", "", "search"]
        )
        batch = run(buf.getvalue().encode(), file_name="answers.csv")
        self.assertEqual(batch.status, "done", batch.errors)
        a = Answer.objects.get()
        self.assertEqual(a.meta, {"model": "m1", "team": "search"})
        self.assertEqual(a.passages.count(), 2)

    def test_it_records_external_verdicts_through_the_evidence_guard(self):
        claims = [
            {
                "text": "Paris is the capital.",
                "verdict": "supported",
                "evidence": "Paris is  the\ncapital",
                "passage_id": "p1",
            },
            {
                "text": "It has 2 million people.",
                "verdict": "supported",
                "evidence": "2 million people",
                "passage_id": "p2",
            },  # not verbatim: p2 says 2.1 million
            {"text": "Greeting.", "verdict": "non_assertive"},
            {"text": "No verdict here."},
        ]
        batch = run(jsonl(rec(1, claims=claims)), judge_name="vendor-judge")
        self.assertEqual(batch.status, "done", batch.errors)
        version = JudgeVersion.objects.get()
        self.assertEqual((version.kind, version.name), ("external", "vendor-judge"))
        self.assertEqual(version.content_hash, hashlib.sha256(b"external:vendor-judge").hexdigest())
        v = {jv.claim.position: jv for jv in JudgeVerdict.objects.select_related("claim")}
        self.assertEqual((v[0].raw_verdict, v[0].verdict, v[0].guard_passed), ("supported", "supported", True))
        self.assertEqual((v[1].raw_verdict, v[1].verdict, v[1].guard_passed), ("supported", "unsupported", False))
        self.assertEqual((v[2].verdict, v[2].guard_passed), ("non_assertive", None))
        self.assertEqual(len(v), 3)
        first = Claim.objects.get(position=0)
        self.assertEqual((first.origin, first.span_start, first.span_end), ("imported", 0, 21))
        self.assertIsNone(Claim.objects.get(position=2).span_start)  # not in the answer text

    def test_it_updates_a_changed_record_only_when_asked(self):
        run(jsonl(rec(1, claims=[{"text": "Paris is the capital."}])))
        changed = jsonl(rec(1, answer="Paris is big.", passages=[{"id": "p9", "text": "Paris is big."}]))
        before = counts()
        failed = run(changed)
        self.assertEqual(failed.status, "failed")
        self.assertEqual((failed.errors[0]["line"], failed.errors[0]["field"]), (1, "id"))
        self.assertIn("--update", failed.errors[0]["message"])
        self.assertEqual(counts(), before)
        batch = run(changed, update=True)
        self.assertEqual((batch.status, batch.updated), ("done", 1))
        a = Answer.objects.get()
        self.assertEqual((a.text, a.length, a.claims.count()), ("Paris is big.", 13, 0))
        self.assertEqual(list(a.passages.values_list("external_id", flat=True)), ["p9"])

    def test_it_refuses_to_update_an_answer_in_an_audit(self):
        run(jsonl(rec(1)))
        make_audit([Answer.objects.get()])
        before = counts()
        batch = run(jsonl(rec(1, answer="Changed.")), update=True)
        self.assertEqual(batch.status, "failed")
        self.assertIn("audit", batch.errors[0]["message"])
        self.assertEqual(Answer.objects.get().text, rec(1)["answer"])
        self.assertEqual(counts(), before)

    def test_it_keeps_unicode_and_literal_escapes(self):
        text = "Caf\u00e9 \U0001f600 and a literal \\u0000 in code"  # emoji: a surrogate pair when escaped
        data = b"\xef\xbb\xbf" + jsonl(rec(1, answer=text, meta={"note": "\\ud800 literal"}))  # with a BOM
        batch = run(data)
        self.assertEqual(batch.status, "done", batch.errors)
        a = Answer.objects.get()
        self.assertEqual((a.text, a.meta["note"]), (text, "\\ud800 literal"))

    def test_it_numbers_csv_records_by_their_first_line(self):
        data = b'id,question,answer,passages\na1,q,"two\nlines",[]\na2,q,,[]\n'
        batch = run(data, file_name="a.csv")
        self.assertEqual(batch.errors, [{"line": 4, "field": "answer", "message": "empty"}])

    def test_it_reports_progress(self):
        seen = []
        run(jsonl(rec(1), rec(2)), progress=lambda b, n: seen.append((b, n)))
        self.assertEqual(seen[-1], (len(jsonl(rec(1), rec(2))), 2))


class BadInputTests(TestCase):
    """Each case: the import fails, names the line and field, and writes nothing at all."""

    def setUp(self):
        run(jsonl(rec(100, claims=[{"text": "x", "verdict": "unsupported"}])))  # rows already there
        self.before = counts()

    def assertFails(self, data, line, field, words, file_name="answers.jsonl", **kw):
        batch = run(data, file_name=file_name, **kw)
        self.assertEqual(batch.status, "failed")
        hits = [e for e in batch.errors if e["line"] == line and e["field"] == field and words in e["message"]]
        self.assertTrue(hits, f"no error line={line} field={field!r} {words!r} in {batch.errors}")
        self.assertEqual(counts(), self.before)
        return batch

    def test_it_rejects_malformed_json(self):
        self.assertFails(jsonl(rec(1), b'{"id": "a2", "question": '), 2, "", "malformed JSON")

    def test_it_rejects_a_line_that_is_not_an_object(self):
        self.assertFails(jsonl(rec(1), [1, 2]), 2, "", "must be a JSON object")

    def test_it_rejects_missing_fields(self):
        self.assertFails(jsonl(rec(1, question=...)), 1, "question", "missing")
        self.assertFails(jsonl(rec(1, passages=...)), 1, "passages", "missing")
        self.assertFails(jsonl(rec(1, passages=[{"id": "p1"}])), 1, "passages[0].text", "missing")

    def test_it_rejects_wrong_types(self):
        self.assertFails(jsonl(rec(1, id=7.0)), 1, "id", "must be a string or an integer, got float")
        self.assertFails(jsonl(rec(1, id=True)), 1, "id", "must be a string or an integer, got bool")
        self.assertFails(jsonl(rec(1, id=2**64)), 1, "id", "integer too large for an id (over 64 bits)")
        self.assertFails(jsonl(rec(1, passages="p1: text")), 1, "passages", "must be a list")
        self.assertFails(jsonl(rec(1, meta=["x"])), 1, "meta", "must be an object")
        self.assertFails(jsonl(rec(1, claims=["x"])), 1, "claims[0]", "must be an object")

    def test_it_rejects_empty_answer_and_question(self):
        self.assertFails(jsonl(rec(1), rec(2, answer="  ")), 2, "answer", "empty")
        self.assertFails(jsonl(rec(1, question="")), 1, "question", "empty")

    def test_it_keeps_a_passage_retrieved_twice_in_its_place_and_refuses_one_id_on_two_texts(self):
        twice = {"id": "p1", "source": "wiki", "text": "Paris is the capital of France."}
        passages = [twice, {"id": "p2", "source": "wiki", "text": "About 2.1 million."}, twice, twice]
        batch = run(jsonl(rec(1, passages=passages)))
        self.assertEqual((batch.status, batch.errors), ("done", []))
        kept = list(
            Passage.objects.filter(answer__external_id="a1")
            .order_by("position")
            .values_list("external_id", "text", "meta")
        )
        self.assertEqual([k[0] for k in kept], ["p1", "p2", "p1#2", "p1#3"])  # positions kept: answers cite [n]
        self.assertEqual((kept[2][1], kept[2][2]), (twice["text"], {"duplicate_of": "p1"}))
        self.before = counts()
        other = [twice, {"id": "p1", "source": "wiki", "text": "Lyon is in France."}]
        self.assertFails(jsonl(rec(2, passages=other)), 1, "passages[1].id", "on another text")

    def test_it_rejects_duplicate_ids_within_the_file(self):
        self.assertFails(jsonl(rec(1), rec(2), rec(1)), 3, "id", "already on line 1")

    @override_settings(IMPORT_BATCH_SIZE=2)
    def test_it_rejects_duplicate_ids_across_write_batches(self):
        self.assertFails(jsonl(rec(1), rec(2), rec(3), rec(1)), 4, "id", "already earlier in this file")

    @override_settings(IMPORT_BATCH_SIZE=2)
    def test_it_rolls_back_batches_already_written(self):
        self.assertFails(jsonl(rec(1), rec(2), rec(3), rec(4), rec(5, answer="")), 5, "answer", "empty")

    @override_settings(IMPORT_MAX_FIELD_CHARS=30, IMPORT_MAX_PASSAGES=1, IMPORT_MAX_CLAIMS=1)
    def test_it_rejects_oversized_fields(self):
        self.assertFails(jsonl(rec(1)), 1, "answer", "too long: 46 characters (limit 30)")
        self.assertFails(jsonl(rec(1)), 1, "passages", "too many items: 2 (limit 1)")
        self.assertFails(jsonl(rec(1, claims=[{"text": "a"}, {"text": "b"}])), 1, "claims", "too many items")

    @override_settings(IMPORT_MAX_LINE_BYTES=100)
    def test_it_rejects_an_oversized_line_without_reading_it_whole(self):
        self.assertFails(jsonl(rec(1)), 1, "", "line longer than 100 bytes")

    def test_it_rejects_unsupported_file_types(self):
        self.assertFails(jsonl(rec(1)), 0, "file", "unsupported file type", file_name="answers.xlsx")
        self.assertFails(jsonl(rec(1)), 0, "file", "save the sheet as CSV (UTF-8) first", file_name="Answers.XLSX")
        self.assertFails(jsonl(rec(1)), 0, "file", "unsupported file type 'answers.txt'", file_name="answers.txt")

    def test_it_rejects_bad_encoding(self):
        latin1 = json.dumps(rec(2, question="Où est Paris?"), ensure_ascii=False).encode("latin-1")
        self.assertFails(jsonl(rec(1), latin1), 2, "", "not valid UTF-8")
        self.assertFails(
            b"id,question,answer,passages\n" + "a,Où,x,[]\n".encode("cp1252"),
            2,
            "",
            'not valid UTF-8 (byte 4 of the line): a spreadsheet writes UTF-8 when saved as "CSV UTF-8"',
            file_name="a.csv",
        )

    def test_it_rejects_a_bad_created_at(self):
        self.assertFails(jsonl(rec(1, created_at="last tuesday")), 1, "created_at", "not an ISO 8601")

    def test_it_rejects_unknown_verdicts_and_passage_ids(self):
        claims = [{"text": "x", "verdict": "true"}, {"text": "y", "verdict": "supported", "passage_id": "p7"}]
        batch = self.assertFails(jsonl(rec(1, claims=claims)), 1, "claims[0].verdict", "not one of")
        self.assertIn("claims[1].passage_id", [e["field"] for e in batch.errors])

    def test_it_rejects_what_the_database_cannot_store(self):
        self.assertFails(jsonl(rec(1, answer="a\x00b")), 1, "answer", "NUL")
        self.assertFails(jsonl(rec(1, meta={"x": "a\x00"})), 1, "meta.x", "NUL")
        self.assertFails(jsonl(rec(1, meta={"x": [{"a\x00": 1}]})), 1, "meta.x[0].'a\\x00'", "key contains a NUL")
        self.assertFails(jsonl(rec(1, extra={"deep": "\x00"})), 1, "extra.deep", "NUL")  # folded into meta
        self.assertFails(
            jsonl(b'{"id": "a1", "question": "q", "answer": "a", "passages": [], "meta": {"t": NaN}}'),
            1,
            "",
            "NaN is not allowed",
        )

    def test_it_rejects_numbers_that_overflow_to_infinity_anywhere_in_the_json(self):
        line = b'{"id": "a1", "question": "q", "answer": "a", "passages": [], "meta": {"t": [1, {"u": 1e400}]}}'
        self.assertFails(jsonl(line), 1, "meta.t[1].u", "inf is not a finite number")
        self.assertFails(jsonl(line.replace(b'"meta": {"t"', b'"score": {"t"')), 1, "score.t[1].u", "inf is not")
        csv = b'id,question,answer,passages,meta\na1,q,a,[],"{""t"": -1e999}"\n'
        self.assertFails(csv, 2, "meta.t", "-inf is not a finite number", file_name="a.csv")

    def test_it_rejects_utc_offsets_the_database_refuses(self):
        self.assertFails(jsonl(rec(1, created_at="2026-11-02T10:00:00+23:59")), 1, "created_at", "+2359 is out")
        self.assertFails(jsonl(rec(1, created_at="2026-11-02T10:00:00-16:00")), 1, "created_at", "out of range")
        self.assertFails(jsonl(rec(1, created_at="9999-12-31T23:59:00-01:00")), 1, "created_at", "converted to UTC")
        self.assertEqual(run(jsonl(rec(1, created_at="2026-11-02T10:00:00+15:59"))).status, "done")
        self.assertEqual(Answer.objects.get(external_id="a1").created_at.isoformat(), "2026-11-01T18:01:00+00:00")

    def test_it_rejects_unpaired_surrogates(self):
        self.assertFails(
            jsonl(b'{"id": "a1", "question": "q", "answer": "bad \\ud800", "passages": []}'),
            1,
            "answer",
            "unpaired surrogate",
        )
        self.assertFails(
            jsonl(b'{"id": "a1", "question": "q", "answer": "a", "passages": [], "meta": {"\\udfff": 1}}'),
            1,
            "meta.'\\udfff'",
            "key contains an unpaired surrogate",
        )

    def test_it_rejects_an_empty_file(self):
        self.assertFails(b"\n\n", 0, "file", "no records")

    def test_it_rejects_bad_csv(self):
        self.assertFails(b"id,question,passages\n", 1, "answer", "missing column", file_name="a.csv")
        self.assertFails(
            b"id,question,answer,passages\na1,q,a,[{oops\n", 2, "passages", "malformed JSON", file_name="a.csv"
        )

    @override_settings(IMPORT_MAX_ERRORS=3)
    def test_it_stops_after_the_error_limit(self):
        batch = run(jsonl(*[rec(i, answer="") for i in range(10)]))
        self.assertEqual(len(batch.errors), 4)
        self.assertIn("stopped reading after 3 errors", batch.errors[-1]["message"])
        self.assertEqual(batch.file_sha256, "")  # the file was not read to the end

    def test_it_keeps_a_failed_import_in_the_history_but_no_dataset_it_created(self):
        run(jsonl(rec(2, answer="")))
        self.assertEqual(ImportBatch.objects.filter(status="failed", dataset__name="ds").count(), 1)
        batch = run(jsonl(rec(1), rec(2, answer="")), dataset="brand-new")
        batch.refresh_from_db()
        self.assertEqual((batch.status, batch.dataset, batch.dataset_name), ("failed", None, "brand-new"))
        self.assertEqual(list(Dataset.objects.values_list("name", flat=True)), ["ds"])
        self.assertEqual(counts(), self.before)


class CommandTests(TestCase):
    def call(self, *args):
        out, err = io.StringIO(), io.StringIO()
        call_command("import_answers", *args, stdout=out, stderr=err)
        return out.getvalue(), err.getvalue()

    def test_it_imports_with_a_progress_bar_and_a_summary(self):
        out, err = self.call(str(RAGTRUTH), "--dataset", "RAGTruth")
        self.assertIn("108 created, 0 updated, 0 unchanged", out)
        self.assertIn("] 100% 108 answers", err)
        self.assertTrue(err.startswith("\r["))
        out, _ = self.call(str(RAGTRUTH), "--dataset", "RAGTruth", "--no-progress")
        self.assertIn("Nothing new: all 108 answers", out)
        self.assertEqual(Answer.objects.count(), 108)

    def test_it_lists_errors_and_fails_without_writing(self):
        path = Path(self._tmp()) / "bad.jsonl"
        path.write_bytes(jsonl(rec(1), rec(2, created_at="soon")))
        with self.assertRaisesMessage(CommandError, "import failed with 1 error(s); nothing was written"):
            self.call(str(path), "--dataset", "ds", "--no-progress")
        self.assertEqual(counts(), [0, 0, 0, 0])
        err = io.StringIO()
        with self.assertRaises(CommandError):
            call_command("import_answers", str(path), "--dataset", "ds", "--no-progress", stderr=err)
        self.assertIn("line 2, created_at: not an ISO 8601 date-time", err.getvalue())

    def test_it_updates_and_names_the_judge(self):
        path = Path(self._tmp()) / "a.jsonl"
        path.write_bytes(jsonl(rec(1)))
        self.call(str(path), "--dataset", "ds", "--no-progress")
        path.write_bytes(jsonl(rec(1, claims=[{"text": "Paris is the capital.", "verdict": "unsupported"}])))
        out, _ = self.call(str(path), "--dataset", "ds", "--update", "--judge-name", "acme", "--no-progress")
        self.assertIn("0 created, 1 updated", out)
        self.assertEqual(JudgeVerdict.objects.get().judge_version.name, "acme")

    def test_it_reports_a_missing_file(self):
        with self.assertRaisesMessage(CommandError, "cannot read /nonexistent/x.jsonl"):
            self.call("/nonexistent/x.jsonl", "--dataset", "ds")

    def _tmp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        return d.name


class ImportPageTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)

    def upload(self, data, name="answers.jsonl", **fields):
        return self.client.post("/import/", {"file": SimpleUploadedFile(name, data), "new_dataset": "web", **fields})

    def test_it_forbids_annotators(self):
        self.client.force_login(make_user("ann", "annotator"))
        self.assertEqual(self.client.get("/import/").status_code, 403)
        self.assertEqual(self.upload(jsonl(rec(1))).status_code, 403)
        self.assertEqual(counts(), [0, 0, 0, 0])

    def test_it_imports_an_upload_and_shows_the_counts(self):
        r = self.upload(jsonl(rec(1), rec(2)), judge_name="vendor")
        self.assertContains(r, "Imported answers.jsonl into web")
        self.assertEqual(counts()[:2], [2, 4])
        batch = ImportBatch.objects.get()
        self.assertEqual((batch.user, batch.dataset.name, batch.created), (self.lead, "web", 2))
        r = self.client.post(
            "/import/", {"file": SimpleUploadedFile("answers.jsonl", jsonl(rec(1), rec(2))), "dataset": "web"}
        )
        self.assertContains(r, "Nothing new")

    def test_it_refuses_an_existing_dataset_chosen_and_a_new_name_typed_together(self):
        """A dataset chosen in the select and a leftover new name: the new name silently won, so the answers went
        to a dataset the lead had not chosen."""
        self.upload(jsonl(rec(1)))
        r = self.upload(jsonl(rec(2)), dataset="web", new_dataset="other")
        self.assertContains(r, "Choose the dataset web or type the new name other, not both.", status_code=400)
        assert not Dataset.objects.filter(name="other").exists() and counts()[0] == 1
        r = self.upload(jsonl(rec(2)), dataset="web", new_dataset=" web ")  # the same name twice is no conflict
        self.assertContains(r, "Imported answers.jsonl into web")

    def test_it_says_which_uploads_go_to_the_background_and_what_comes_next(self):
        with self.settings(IMPORT_INLINE_BYTES=2_000_000, IMPORT_MAX_UPLOAD_BYTES=50 * 1024 * 1024):
            r = self.client.get("/import/")
        self.assertContains(r, "Files up to 50.0\xa0MB;\nthose over 1.9\xa0MB are imported in the background")
        r = self.upload(jsonl(rec(1)))
        self.assertContains(r, '<a href="/judge/runs/">judge them</a>')
        self.assertContains(r, '<a href="/audits/new/">draw an audit</a>')

    def test_it_shows_errors_naming_line_and_field(self):
        r = self.upload(jsonl(rec(1), rec(2, answer=""), b"{oops"))
        self.assertContains(r, "Import failed: nothing was written", status_code=400)
        self.assertContains(r, "line 2, <strong>answer</strong>: empty", status_code=400)
        self.assertContains(r, "line 3", status_code=400)
        self.assertEqual(counts(), [0, 0, 0, 0])

    def test_it_escapes_file_content_in_errors(self):
        r = self.upload(jsonl(rec(1, id="<script>x</script>"), rec(1, id="<script>x</script>")))
        self.assertNotContains(r, "<script>x</script>", status_code=400)
        self.assertContains(r, "&lt;script&gt;", status_code=400)

    @override_settings(IMPORT_MAX_UPLOAD_BYTES=200)
    def test_it_refuses_an_upload_over_the_limit(self):
        r = self.upload(jsonl(rec(1), rec(2), rec(3)))  # refused by the form
        self.assertContains(r, "the limit is 200\xa0bytes", status_code=400)
        r = self.upload(jsonl(*[rec(i) for i in range(300)]))  # refused before the body is read
        self.assertContains(r, "over the 200\xa0bytes limit", status_code=413)
        self.assertEqual(counts(), [0, 0, 0, 0])

    def test_it_requires_a_dataset(self):
        r = self.client.post("/import/", {"file": SimpleUploadedFile("a.jsonl", jsonl(rec(1)))})
        self.assertContains(r, "Choose a dataset or type a new name.", status_code=400)

    def test_it_serves_the_panel_partial_to_htmx(self):
        r = self.client.post(
            "/import/",
            {"file": SimpleUploadedFile("a.jsonl", jsonl(rec(1))), "new_dataset": "h"},
            headers={"HX-Request": "true"},
        )
        self.assertContains(r, 'id="import_panel"')
        self.assertNotContains(r, "<html")

    def test_it_keeps_the_page_query_count_constant(self):
        run(jsonl(rec(1)))
        with self.assertNumQueries(4) as few:
            self.client.get("/import/")
        for i in range(6):
            run(jsonl(rec(i, answer="changed" if i else "")), dataset=f"d{i % 3}" if i else "ds")  # i=0 fails
        self.assertEqual(ImportBatch.objects.count(), 7)
        with self.assertNumQueries(len(few)):
            r = self.client.get("/import/")
        self.assertContains(r, "d2")
        self.assertContains(r, "1 error")


@pytest.mark.browser
def test_it_uploads_through_htmx_in_chromium(live_server, page, login, transactional_db, tmp_path):
    lead = make_user("lead", "lead")
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_bytes(jsonl(rec(1), rec(2)))
    bad.write_bytes(jsonl(rec(3), rec(4, passages="none")))
    login(page, lead)
    page.goto(f"{live_server.url}/import/")
    page.set_input_files("input[name=file]", str(good))
    page.fill("input[name=new_dataset]", "browser")
    page.click("#import_panel button[type=submit]")
    page.wait_for_selector("#import_result")
    assert "Imported good.jsonl into browser" in page.inner_text("#import_result")
    assert page.url.endswith("/import/")  # swapped in place by htmx, no navigation
    page.set_input_files("input[name=file]", str(bad))
    page.select_option("select[name=dataset]", "browser")
    page.click("#import_panel button[type=submit]")
    page.wait_for_selector("text=Import failed")
    assert "line 2, passages: must be a list" in page.inner_text("#import_result")
    assert Answer.objects.count() == 2
    assert page.js_errors == []
