import csv
import io
import json
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from django.core.management import call_command
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from annotations.adjudication import export, services
from annotations.models import Assignment, GoldLabel
from audit.models import Answer, AuditAnswer, Claim, JudgeVerdict
from audit.selectors import plain_rows
from tests.factories import make_gold, make_judge_version, make_labelled_audit, make_user

VERDICTS = {  # (answer index, claim position) -> (A, B)
    (0, 0): ("supported", "unsupported"),
    (0, 1): ("supported", "supported"),
    (1, 0): ("contradicted", "unsupported"),
    (1, 1): ("non_assertive", "non_assertive"),
    (2, 0): ("non_assertive", "non_assertive"),
    (2, 1): ("non_assertive", "non_assertive"),
}


def parse_jsonl(data):
    return [json.loads(line) for line in data.decode().splitlines()]


class ExportTests(TestCase):
    def setUp(self):
        self.ann1, self.ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj, self.lead = make_user("adj", "adjudicator"), make_user("lead", "lead")
        self.audit = make_labelled_audit(
            self.ann1,
            self.ann2,
            n_answers=3,
            n_claims=2,
            name="W48",
            verdicts=lambda i, p, s: VERDICTS[(i, p)]["AB".index(s)],
        )
        items = list(AuditAnswer.objects.filter(audit=self.audit).order_by("position"))
        for item, (stratum, prob) in zip(
            items, [("fail|gpt", 0.5), ("pass|gpt", 0.25), ("pass|llama", 0.1)], strict=True
        ):
            AuditAnswer.objects.filter(pk=item.pk).update(stratum=stratum, inclusion_probability=prob, weight=1 / prob)
        Assignment.objects.filter(audit_answer=items[1], slot="B").update(omission=True)
        make_gold(self.audit)
        self.c00 = Claim.objects.get(answer=items[0].answer, position=0)
        self.c10 = Claim.objects.get(answer=items[1].answer, position=0)
        version = make_judge_version("verify-v3", kind="anthropic", content_hash="f" * 64)
        JudgeVerdict.objects.create(
            claim=self.c00,
            judge_version=version,
            raw_verdict="supported",
            verdict="unsupported",
            evidence="Lyon",
            passage_external_id="passage 1",
            guard_passed=False,
        )
        services.gold_adjudicate(
            self.audit,
            self.c00,
            user=self.adj,
            verdict="supported",
            evidence="a",
            reason="A's span says it",
            expected_version=0,
        )
        services.gold_adjudicate(
            self.audit,
            self.c10,
            user=self.adj,
            verdict="unsupported",
            reason="=nothing in passage 2",
            expected_version=0,
        )

    def close(self):
        services.audit_close(self.audit, self.lead)
        self.audit.refresh_from_db()

    def test_it_exports_claim_columns_and_values(self):
        self.close()
        rows = parse_jsonl(export.export_bytes(self.audit, level="claim", fmt="jsonl"))
        self.assertEqual([list(r) for r in rows[:1]], [[name for name, _ in export.CLAIM_COLUMNS]])
        self.assertEqual(
            [(r["answer_id"], r["position"]) for r in rows],
            [("W48-ans0", 0), ("W48-ans0", 1), ("W48-ans1", 0), ("W48-ans1", 1), ("W48-ans2", 0), ("W48-ans2", 1)],
        )
        pa, pb = export.pseudonym(self.ann1.id), export.pseudonym(self.ann2.id)
        self.assertEqual(
            rows[0],
            {
                "audit": "W48",
                "answer_id": "W48-ans0",
                "claim_id": self.c00.id,
                "position": 0,
                "claim_text": self.c00.text,
                "gold_verdict": "supported",
                "gold_evidence": "Paris",
                "gold_passage_id": "passage 1",
                "gold_source": "adjudicated",
                "adjudicator": export.pseudonym(self.adj.id),
                "reason": "A's span says it",
                "annotator_a_id": pa,
                "annotator_a_verdict": "supported",
                "annotator_a_evidence": "Paris",
                "annotator_a_flags": "",
                "annotator_a_note": "",
                "annotator_b_id": pb,
                "annotator_b_verdict": "unsupported",
                "annotator_b_evidence": "",
                "annotator_b_flags": "",
                "annotator_b_note": "",
                "judge_verdict": "unsupported",
                "judge_raw_verdict": "supported",
                "judge_evidence": "Lyon",
                "judge_passage_id": "passage 1",
                "judge_guard_passed": False,
                "judge_version": "verify-v3@ffffffffffff",
                "stratum": "fail|gpt",
                "inclusion_probability": 0.5,
                "weight": 2.0,
                "provisional": False,
                "claim_meta": None,
                "gold_status": "gold",
            },
        )
        self.assertEqual(
            (rows[1]["gold_source"], rows[1]["adjudicator"], rows[1]["judge_verdict"]), ("agreed", None, None)
        )
        self.assertEqual((rows[2]["gold_verdict"], rows[2]["annotator_a_verdict"]), ("unsupported", "contradicted"))
        self.assertRegex(pa, r"^ann-[0-9a-f]{10}$")
        self.assertNotEqual(pa, pb)

    def test_it_exports_a_claims_imported_fields_as_sorted_json(self):
        Claim.objects.filter(pk=self.c00.pk).update(meta={"z": 1, "tool": {"b": [1, 2], "a": None}, "n": "é"})
        Claim.objects.filter(pk=self.c10.pk).update(meta={})
        rows = parse_jsonl(export.export_bytes(self.audit, level="claim", fmt="jsonl"))
        expected = '{"n": "é", "tool": {"a": null, "b": [1, 2]}, "z": 1}'
        self.assertEqual([r["claim_meta"] for r in rows[:3]], [expected, None, None])
        table = list(csv.DictReader(io.StringIO(export.export_bytes(self.audit, fmt="csv").decode())))
        self.assertEqual([r["claim_meta"] for r in table[:3]], [expected, "", ""])

    def test_it_exports_answer_columns_and_values(self):
        self.close()
        rows = parse_jsonl(export.export_bytes(self.audit, level="answer", fmt="jsonl"))
        self.assertEqual(list(rows[0]), [name for name, _ in export.ANSWER_COLUMNS])
        got = [
            (
                r["answer_id"],
                r["gold_pass"],
                r["claims"],
                r["supported"],
                r["contradicted"],
                r["unsupported"],
                r["non_assertive"],
                r["no_gold"],
                r["faithfulness_ratio"],
                r["omission"],
                r["weight"],
            )
            for r in rows
        ]
        self.assertEqual(
            got,
            [
                ("W48-ans0", True, 2, 2, 0, 0, 0, 0, 1.0, False, 2.0),
                ("W48-ans1", False, 2, 0, 0, 1, 1, 0, 0.0, True, 4.0),
                ("W48-ans2", True, 2, 0, 0, 0, 2, 0, None, False, 10.0),  # no scored claim: passes, ratio null
            ],
        )
        self.assertEqual(rows[0]["question"], "What is the capital of France?")

    def test_it_exports_each_answers_time_metadata_and_annotators_at_answer_level(self):
        answer = Answer.objects.get(external_id="W48-ans0")
        Answer.objects.filter(pk=answer.pk).update(meta={"model": "gen-3", "area": {"b": 1, "a": "é"}})
        rows = parse_jsonl(export.export_bytes(self.audit, level="answer", fmt="jsonl"))
        self.assertEqual(rows[0]["answer_meta"], '{"area": {"a": "é", "b": 1}, "model": "gen-3"}')
        self.assertEqual(rows[0]["created_at"], answer.created_at.isoformat())
        self.assertEqual(
            (rows[0]["annotator_a_id"], rows[0]["annotator_b_id"]),
            tuple(map(export.pseudonym, (self.ann1.id, self.ann2.id))),
        )
        named = parse_jsonl(export.export_bytes(self.audit, level="answer", fmt="jsonl", names=True))[0]
        self.assertEqual((named["annotator_a_id"], named["annotator_b_id"]), ("ann1", "ann2"))
        table = pq.read_table(io.BytesIO(export.export_bytes(self.audit, level="answer", fmt="parquet")))
        self.assertEqual(table.column("answer_meta").to_pylist()[0], rows[0]["answer_meta"])

    def test_it_gives_names_on_request_and_stable_pseudonyms_otherwise(self):
        rows = parse_jsonl(export.export_bytes(self.audit, fmt="jsonl", names=True))
        self.assertEqual(
            (rows[0]["annotator_a_id"], rows[0]["annotator_b_id"], rows[0]["adjudicator"]), ("ann1", "ann2", "adj")
        )
        plain = export.export_bytes(self.audit, fmt="csv")
        self.assertNotIn(b"ann1", plain)
        self.assertNotIn(b",adj,", plain)
        self.assertEqual(export.pseudonym(self.ann1.id), export.pseudonym(self.ann1.id))

    def test_it_marks_an_open_audit_export_provisional(self):
        rows = parse_jsonl(export.export_bytes(self.audit, level="answer", fmt="jsonl"))
        self.assertTrue(all(r["provisional"] for r in rows))
        self.assertEqual(export.file_name(self.audit, "claim", "csv"), "gold-W48-claim-provisional.csv")
        self.close()
        self.assertEqual(export.file_name(self.audit, "answer", "parquet"), "gold-W48-answer.parquet")

    def test_it_leaves_gold_pass_undecided_while_gold_is_missing(self):
        JudgeVerdict.objects.all().delete()
        audit = make_labelled_audit(self.ann1, self.ann2, n_answers=1, name="open")
        make_gold(audit)
        row = parse_jsonl(export.export_bytes(audit, level="answer", fmt="jsonl"))[0]
        self.assertEqual((row["gold_pass"], row["no_gold"], row["provisional"]), (None, 1, True))

    def test_it_neutralises_spreadsheet_formulas_in_csv(self):
        texts = ['=HYPERLINK("http://x")', "+1+1", "-2", "@SUM(A1)", "\tTAB", "\rCR"]
        for claim, text in zip(Claim.objects.order_by("id"), texts, strict=False):
            Claim.objects.filter(pk=claim.pk).update(text=text)
        cells = list(csv.reader(io.StringIO(export.export_bytes(self.audit).decode(), newline="")))
        header = cells[0]
        got = [row[header.index("claim_text")] for row in cells[1:]]
        self.assertEqual(got, ["'" + t for t in texts])
        self.assertEqual(cells[3][header.index("reason")], "'=nothing in passage 2")
        self.assertEqual(cells[1][header.index("weight")], "2.0")  # numbers are left alone
        self.assertEqual(cells[1][header.index("judge_guard_passed")], "false")

    def test_it_exports_identical_bytes_twice_in_every_format(self):
        self.close()
        for level in export.LEVELS:
            for fmt in export.FORMATS:
                first = export.export_bytes(self.audit, level=level, fmt=fmt)
                self.audit.refresh_from_db()
                self.assertEqual(export.export_bytes(self.audit, level=level, fmt=fmt), first, (level, fmt))
                self.assertGreater(len(first), 100)

    def test_it_writes_typed_parquet(self):
        table = pq.read_table(io.BytesIO(export.export_bytes(self.audit, fmt="parquet")))
        self.assertEqual(table.column_names, [name for name, _ in export.CLAIM_COLUMNS])
        self.assertEqual(str(table.schema.field("weight").type), "double")
        self.assertEqual(table.column("judge_guard_passed").to_pylist()[:2], [False, None])
        self.assertEqual(table.num_rows, 6)

    def test_it_runs_a_fixed_number_of_queries_whatever_the_size(self):
        big = make_labelled_audit(self.ann1, self.ann2, n_answers=8, n_claims=12, name="big")
        make_gold(big)
        for level in export.LEVELS:
            counts = []
            for audit in (self.audit, big):
                with CaptureQueriesContext(connection) as ctx:
                    export.export_bytes(audit, level=level, fmt="csv")
                counts.append(len(ctx))
            self.assertEqual(counts, [6, 6], level)

    def test_it_exports_from_the_command_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "gold.jsonl"
            call_command(
                "export_gold",
                "W48",
                "--level",
                "answer",
                "--format",
                "jsonl",
                "--output",
                str(out),
                stderr=io.StringIO(),
            )
            self.assertEqual(out.read_bytes(), export.export_bytes(self.audit, level="answer", fmt="jsonl"))
            call_command("export_gold", str(self.audit.id), "--names", "--output", str(out), stderr=io.StringIO())
            self.assertIn(b"ann1", out.read_bytes())


def half_agreed(answer_index, position, slot):
    """Claims 0 and 1 of every answer: both say supported; claims 2 and 3: B says unsupported (disputes)."""
    return "unsupported" if position >= 2 and slot == "B" else "supported"


class OpenGoldExportTests(TestCase):
    """While disputes are open: 3 answers of 4 claims (claims 2 and 3 disputed); answer 0 submitted by both,
    answer 1 by A only, answer 2 by nobody."""

    def setUp(self):
        self.ann1, self.ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.audit = make_labelled_audit(
            self.ann1, self.ann2, n_answers=3, n_claims=4, name="open", verdicts=half_agreed
        )
        started = Assignment.Status.STARTED
        Assignment.objects.filter(audit_answer__audit=self.audit, audit_answer__position=1, slot="B").update(
            status=started
        )
        Assignment.objects.filter(audit_answer__audit=self.audit, audit_answer__position=2).update(status=started)
        make_gold(self.audit)

    def rows(self, level, fmt):
        data = export.export_bytes(self.audit, level=level, fmt=fmt)
        if fmt == "jsonl":
            return parse_jsonl(data)
        if fmt == "parquet":
            return pq.read_table(io.BytesIO(data)).to_pylist()
        return list(csv.DictReader(io.StringIO(data.decode())))

    def test_it_leaves_the_ratio_of_an_answer_with_open_disputes_empty_and_counts_what_is_missing(self):
        # answer 0: 2 supported gold claims, 2 open disputes: over its gold only the ratio would be 2/2 = 1.0
        want = [
            # gold_pass, faithfulness_ratio, no_gold, gold_complete, open_disputes, awaiting_labels, gold_recheck
            (None, None, 2, False, 2, 0, 0),
            (None, None, 4, False, 0, 4, 0),
            (None, None, 4, False, 0, 4, 0),
        ]
        keys = ["gold_pass", "faithfulness_ratio", "no_gold", "gold_complete", "open_disputes", "awaiting_labels"]
        for fmt in ("jsonl", "parquet"):
            got = [tuple(r[k] for k in [*keys, "gold_recheck"]) for r in self.rows("answer", fmt)]
            self.assertEqual(got, want, fmt)
        table = self.rows("answer", "csv")
        self.assertEqual(
            [(r["faithfulness_ratio"], r["gold_complete"], r["open_disputes"]) for r in table],
            [("", "false", "2"), ("", "false", "0"), ("", "false", "0")],
        )

    def test_it_says_why_a_claim_has_no_gold(self):
        want = ["gold", "gold", "open dispute", "open dispute"] + ["awaiting one label"] * 4 + ["no labels yet"] * 4
        for fmt in export.FORMATS:
            rows = self.rows("claim", fmt)
            self.assertEqual([r["gold_status"] for r in rows], want, fmt)
            self.assertEqual([r["gold_verdict"] or None for r in rows[:4]], ["supported", "supported", None, None])

    def test_it_marks_gold_awaiting_a_recheck_and_computes_the_ratio_once_gold_is_complete(self):
        adj = make_user("adj", "adjudicator")
        claims = Claim.objects.filter(answer__audit_items__audit=self.audit, answer__audit_items__position=0)
        disputed = list(claims.filter(position__gte=2).order_by("position"))
        for claim, verdict in zip(disputed, ("supported", "unsupported"), strict=True):
            services.gold_adjudicate(self.audit, claim, user=adj, verdict=verdict, reason="r", expected_version=0)
        GoldLabel.objects.filter(audit=self.audit, claim=disputed[1]).update(recheck=True)
        row = parse_jsonl(export.export_bytes(self.audit, level="answer", fmt="jsonl"))[0]
        # 3 supported of 4 scored claims; the unsupported one fails the answer
        got = [row[k] for k in ("gold_pass", "faithfulness_ratio", "no_gold", "gold_complete", "open_disputes")]
        self.assertEqual(got, [False, 3 / 4, 0, True, 0])
        self.assertEqual(row["gold_recheck"], 1)
        statuses = [r["gold_status"] for r in parse_jsonl(export.export_bytes(self.audit, fmt="jsonl"))[:4]]
        self.assertEqual(statuses, ["gold", "gold", "gold", "gold, re-check"])


class ExportViewTests(TestCase):
    def setUp(self):
        self.ann1, self.ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.audit = make_labelled_audit(self.ann1, self.ann2, n_answers=1, name="2026-W48")
        make_gold(self.audit)
        self.url = f"/adjudicate/export/{self.audit.id}/"

    def test_it_forbids_annotators_and_adjudicators(self):
        for user in (self.ann1, make_user("adj", "adjudicator")):
            self.client.force_login(user)
            self.assertEqual(self.client.get(self.url).status_code, 403)

    def test_it_serves_leads_a_marked_file(self):
        self.client.force_login(make_user("lead", "lead"))
        with self.assertNumQueries(2 + 1 + 6):  # session, user with roles; audit; the six export queries
            r = self.client.get(self.url, {"level": "claim", "format": "csv", "names": "1"})
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r["Content-Disposition"], 'attachment; filename="gold-2026-W48-claim-provisional.csv"')
        self.assertIn(b"ann1", r.content)
        r = self.client.get(self.url, {"level": "answer", "format": "parquet"})
        self.assertEqual(r["Content-Type"], "application/vnd.apache.parquet")
        self.assertEqual(self.client.get(self.url, {"format": "xlsx"}).status_code, 400)


class PlainRowsTests(TestCase):
    def test_it_reads_rows_without_converters_and_nothing_for_an_empty_filter(self):
        people = make_user("p1", "annotator"), make_user("p2", "annotator")
        claim = make_labelled_audit(*people, n_answers=1, n_claims=1).claims().first()
        Claim.objects.filter(pk=claim.pk).update(meta={"k": [1]})
        self.assertEqual(plain_rows(Claim.objects.filter(pk__in=[]).values_list("id")), [])
        [(pk, meta)] = plain_rows(Claim.objects.filter(pk=claim.pk).values_list("id", "meta"))
        self.assertEqual((pk, json.loads(meta)), (claim.pk, {"k": [1]}))  # JSON as its text on both backends
