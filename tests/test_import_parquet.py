"""Parquet uploads (Hugging Face / pandas exports): small files written here with pyarrow, imported through
the web form, the API, the task worker and the command, read back from the database; a corrupt file is a 400
naming it. The same rows as JSON lines store the same values."""

import datetime as dt
import hashlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest.mock import patch

import pyarrow as pa
import pyarrow.parquet as pq
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import TestCase, override_settings
from django_tasks_db.models import DBTaskResult

from audit.ingest import read_parquet
from audit.ingest.services import answers_import
from audit.models import Answer, ImportBatch
from claimaudit.services import api_token_create
from tests.factories import make_user, worker_run

RAGAS = pa.schema(
    [
        ("user_input", pa.string()),
        ("retrieved_contexts", pa.list_(pa.string())),
        ("response", pa.string()),
        ("reference", pa.string()),
        ("faithfulness", pa.float64()),
    ]
)
RAGAS_ROWS = [
    {
        "user_input": "How long is the warranty?",
        "retrieved_contexts": ["Two years on hardware faults.", "Batteries: one year."],
        "response": "Two years, batteries one.",
        "reference": "Two years.",
        "faithfulness": 1.0,
    },
    {
        "user_input": "Can I get a refund after 30 days?",
        "retrieved_contexts": ["Returns are accepted within 30 days."],
        "response": "No.",
        "reference": None,
        "faithfulness": float("nan"),  # how pandas writes a missing metric
    },
]
PASSAGE = pa.struct([("id", pa.string()), ("source", pa.string()), ("text", pa.string()), ("title", pa.string())])
CLAIM = pa.struct(
    [("text", pa.string()), ("verdict", pa.string()), ("evidence", pa.string()), ("passage_id", pa.string())]
)
NATIVE = pa.schema(
    [
        ("id", pa.string()),
        ("question", pa.string()),
        ("answer", pa.string()),
        ("created_at", pa.timestamp("us", tz="UTC")),
        ("passages", pa.list_(PASSAGE)),
        ("claims", pa.list_(CLAIM)),
        ("meta", pa.struct([("model", pa.string()), ("retrieval", pa.struct([("k", pa.int64())]))])),
    ]
)
NATIVE_ROW = {
    "id": "log-1",
    "question": "Where is EU data stored?",
    "answer": "In Frankfurt.",
    "created_at": dt.datetime(2026, 11, 2, 10, 30, tzinfo=dt.UTC),
    "passages": [{"id": "infra-4", "source": "kb", "text": "EU data is stored in Frankfurt.", "title": "Infra"}],
    "claims": [
        {"text": "EU data is in Frankfurt.", "verdict": "supported", "evidence": "Frankfurt", "passage_id": "infra-4"}
    ],
    "meta": {"model": "rag-v7", "retrieval": {"k": 4}},
}
INT_IDS = pa.schema(
    [
        ("id", pa.int64()),
        ("question", pa.string()),
        ("answer", pa.string()),
        ("passages", pa.list_(pa.struct([("id", pa.int64()), ("text", pa.string())]))),
    ]
)
INT_ROWS = [
    {"id": 17, "question": "q17", "answer": "a.", "passages": [{"id": 1, "text": "a."}, {"id": 2, "text": "b."}]},
    {"id": 18, "question": "q18", "answer": "b.", "passages": [{"id": 1, "text": "b."}]},
]


def parquet(rows, schema=None, **options):
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), out, **options)
    return out.getvalue()


def passages(answer):
    return list(answer.passages.values_list("external_id", "source", "text", "meta"))


def stored(dataset):
    return [
        (a.external_id, a.question, a.text, a.meta, passages(a))
        for a in Answer.objects.filter(dataset__name=dataset).order_by("external_id")
    ]


class Upload(TestCase):
    def setUp(self):
        self.client.force_login(make_user("lead", "lead"))
        self.token = api_token_create(make_user("bot", "lead"), "ci")[1]

    def upload(self, name, data, status=200, dataset="pq", **fields):
        r = self.client.post("/import/", {"file": SimpleUploadedFile(name, data), "new_dataset": dataset, **fields})
        self.assertEqual(r.status_code, status, r.content.decode()[-1500:])
        return ImportBatch.objects.latest("id")

    def api(self, data, dataset="api", query=""):
        return self.client.post(
            f"/api/v1/datasets/{dataset}/answers?{query}",
            data,
            content_type="application/vnd.apache.parquet",
            HTTP_AUTHORIZATION=f"Bearer {self.token}",
        )

    def refused(self, name, data):
        batch = self.upload(name, data, status=400)
        self.assertEqual(Answer._base_manager.count(), 0)  # nothing written, nothing left staged
        return [(e["line"], e["field"], e["message"]) for e in batch.errors]


class FormTests(Upload):
    def test_it_imports_a_ragas_file_with_a_list_column_and_a_nan_metric(self):
        self.assertEqual(self.upload("ragas.parquet", parquet(RAGAS_ROWS, RAGAS)).created, 2)
        a = Answer.objects.get(question="How long is the warranty?")
        self.assertEqual(a.text, "Two years, batteries one.")
        self.assertEqual([p[2] for p in passages(a)], ["Two years on hardware faults.", "Batteries: one year."])
        self.assertEqual(a.meta, {"reference": "Two years.", "faithfulness": 1.0})
        b = Answer.objects.get(question__startswith="Can I")
        self.assertEqual(b.meta, {"reference": None, "faithfulness": None})  # NaN is null, as pandas' to_json writes
        self.assertEqual(self.upload("ragas.parquet", parquet(RAGAS_ROWS, RAGAS)).status, "noop")

    def test_it_stores_what_the_same_rows_store_as_json_lines(self):
        self.upload("ragas.parquet", parquet(RAGAS_ROWS, RAGAS), dataset="parquet")
        nulls = [{**r, "faithfulness": None} if r["faithfulness"] != r["faithfulness"] else r for r in RAGAS_ROWS]
        self.upload("ragas.jsonl", b"".join(json.dumps(r).encode() + b"\n" for r in nulls), dataset="jsonl")
        self.assertEqual(len(stored("parquet")), 2)
        self.assertEqual(stored("parquet"), stored("jsonl"))

    def test_it_keeps_integer_ids_as_their_decimal_strings(self):
        self.assertEqual(self.upload("ids.parquet", parquet(INT_ROWS, INT_IDS)).created, 2)
        a = Answer.objects.get(external_id="17")
        self.assertEqual([p[0] for p in passages(a)], ["1", "2"])
        # the same rows with string ids are the same answers: a no-op
        strings = [
            {**r, "id": str(r["id"]), "passages": [{**p, "id": str(p["id"])} for p in r["passages"]]} for r in INT_ROWS
        ]
        again = self.upload("ids.jsonl", b"".join(json.dumps(r).encode() + b"\n" for r in strings))
        self.assertEqual((again.status, again.unchanged), ("noop", 2))

    def test_it_reads_nested_list_and_struct_columns_of_the_other_formats(self):
        deepeval = {
            "input": "q?",
            "actual_output": "a.",
            "retrieval_context": ["c1", "c2"],
            "additional_metadata": {"topic": "billing", "tags": ["x"]},
        }
        self.upload("deepeval.parquet", parquet([deepeval]), dataset="deepeval")
        a = Answer.objects.get(dataset__name="deepeval")
        self.assertEqual(
            (a.meta, [p[2] for p in passages(a)]),
            ({"additional_metadata": deepeval["additional_metadata"]}, ["c1", "c2"]),
        )
        doc = {"page_content": "Refunds take 5 days.", "metadata": {"source": "kb/refunds.md", "id": 12}}
        run = {
            "id": "run-1",
            "inputs": {"question": "How long do refunds take?"},
            "outputs": {"answer": "Five days.", "source_documents": [doc]},
            "start_time": dt.datetime(2026, 3, 1, 9, 0),  # no zone: UTC
        }
        self.upload("runs.parquet", parquet([run]), dataset="langsmith")
        b = Answer.objects.get(dataset__name="langsmith")
        self.assertEqual(
            (b.external_id, b.text, b.created_at), ("run-1", "Five days.", dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC))
        )
        self.assertEqual(passages(b), [("12", "kb/refunds.md", "Refunds take 5 days.", {})])
        hf = {
            "id": 3,
            "question": "q",
            "prediction": "a.",
            "ctxs": [{"id": 628725, "title": "T", "text": "a.", "score": 71.5}],
        }
        self.upload(
            "hf.parquet", parquet([hf]), dataset="hf", format="mapping", mapping="answer=prediction\npassages=ctxs"
        )
        c = Answer.objects.get(dataset__name="hf")
        self.assertEqual((c.external_id, passages(c)), ("3", [("628725", "", "a.", {"title": "T", "score": 71.5})]))

    def test_it_leaves_out_the_pandas_index_and_makes_dates_and_bytes_plain(self):
        row = {
            "id": "x",
            "question": "q",
            "answer": "a.",
            "passages": [],
            "day": dt.date(2026, 1, 5),
            "raw": b"caf\xc3\xa9",
            "__index_level_0__": 7,
        }
        self.upload("plain.parquet", parquet([row]))
        self.assertEqual(Answer.objects.get().meta, {"day": "2026-01-05", "raw": "café"})


class RefusalTests(Upload):
    def test_it_refuses_a_file_that_is_not_parquet_naming_it(self):
        errors = self.refused("export.parquet", b'{"id": "a"}\n')
        self.assertEqual([e[:2] for e in errors], [(0, "file")])
        self.assertTrue(errors[0][2].startswith("'export.parquet' is not a readable Parquet file: "), errors)

    def test_it_refuses_a_truncated_or_damaged_file_naming_it(self):
        data = parquet(RAGAS_ROWS, RAGAS)
        self.assertIn("'cut.parquet' is not a readable Parquet file", self.refused("cut.parquet", data[:-9])[0][2])
        damaged = bytearray(data)
        damaged[8:200] = bytes(192)
        errors = self.refused("damaged.parquet", bytes(damaged))
        self.assertIn("'damaged.parquet' is not a readable Parquet file", errors[0][2])

    def test_it_refuses_a_date_python_cannot_hold_naming_the_file_not_a_500(self):
        table = pa.table(
            {"id": ["d1"], "question": ["q"], "answer": ["a."], "created_at": pa.array([2**62], pa.timestamp("ms"))}
        )
        out = io.BytesIO()
        pq.write_table(table, out)
        errors = self.refused("dates.parquet", out.getvalue())
        self.assertIn("'dates.parquet' is not a readable Parquet file", errors[0][2])

    def test_it_refuses_a_file_without_rows(self):
        self.assertEqual(
            self.refused("empty.parquet", parquet([], RAGAS)), [(0, "file", "no records found (the file is empty)")]
        )

    def test_it_names_the_row_and_field_across_row_groups(self):
        rows = [
            {"id": f"r{i}", "question": "q", "answer": "a." if i != 4 else None, "passages": []} for i in range(1, 6)
        ]
        data = parquet(rows, row_group_size=2)
        self.assertEqual(pq.ParquetFile(io.BytesIO(data)).metadata.num_row_groups, 3)
        self.assertEqual(self.refused("rows.parquet", data), [(4, "answer", "missing")])

    def test_it_refuses_binary_data_that_is_not_text_naming_the_field(self):
        row = {"id": "x", "question": "q", "answer": "a.", "passages": [], "blob": {"b": b"\xff\xfe"}}
        self.assertEqual(
            self.refused("blob.parquet", parquet([row])), [(1, "blob.b", "binary data that is not UTF-8 text")]
        )

    @override_settings(IMPORT_MAX_LINE_BYTES=64)
    def test_it_refuses_rows_over_the_line_limit_from_the_footer(self):
        rows = [{"id": "x", "question": "q" * 200, "answer": "a.", "passages": []}]
        [(line, field, message)] = self.refused("big.parquet", parquet(rows))
        self.assertEqual((line, field), (1, ""))
        self.assertIn("over the 64 bytes limit", message)

    @override_settings(IMPORT_MAX_LINE_BYTES=5_000)
    def test_it_refuses_rows_that_decode_over_the_limit_though_the_footer_says_small(self):
        """One 8,000-character question shared by 300 rows is stored once (dictionary encoding): the footer's
        average row is tiny, each decoded row is not."""
        rows = [{"id": f"r{i}", "question": "q" * 8_000, "answer": "a.", "passages": ["p."]} for i in range(300)]
        data = parquet(rows, compression="zstd")
        meta = pq.ParquetFile(io.BytesIO(data)).metadata
        self.assertLess(meta.row_group(0).total_byte_size / meta.num_rows, 5_000)  # what the footer says
        [(line, field, message)] = self.refused("shared.parquet", data)
        self.assertEqual((line, field), (1, ""))
        self.assertIn("bytes on average (decoded), over the 5,000 bytes limit", message)


class ApiTests(Upload):
    def test_it_imports_a_native_parquet_body_with_nested_passages_and_claims(self):
        r = self.api(parquet([NATIVE_ROW], NATIVE))
        self.assertEqual(r.status_code, 200, r.content)
        self.assertEqual((r.json()["created"], r.json()["records"]), (1, 1))
        a = Answer.objects.get(external_id="log-1")
        self.assertEqual(a.created_at, dt.datetime(2026, 11, 2, 10, 30, tzinfo=dt.UTC))
        self.assertEqual(a.meta, {"model": "rag-v7", "retrieval": {"k": 4}})
        self.assertEqual(passages(a), [("infra-4", "kb", "EU data is stored in Frankfurt.", {"title": "Infra"})])
        claim = a.claims.get()
        self.assertEqual(
            (claim.text, claim.judge_verdicts.get().passage_external_id), ("EU data is in Frankfurt.", "infra-4")
        )

    def test_it_stores_the_same_through_the_api_as_through_the_form(self):
        for name, data, query in (
            ("ragas.parquet", parquet(RAGAS_ROWS, RAGAS), ""),
            ("ids.parquet", parquet(INT_ROWS, INT_IDS), "format=native"),
        ):
            with self.subTest(name):
                self.upload(name, data, dataset=f"web-{name}")
                self.assertEqual(self.api(data, dataset=f"api-{name}", query=query).status_code, 200)
                self.assertTrue(stored(f"web-{name}"))
                self.assertEqual(stored(f"web-{name}"), stored(f"api-{name}"))

    def test_it_answers_a_corrupt_parquet_body_with_a_400_not_a_500(self):
        r = self.api(parquet(RAGAS_ROWS, RAGAS)[:-9])
        self.assertEqual(r.status_code, 400)
        [error] = r.json()["errors"]
        self.assertEqual(error["field"], "file")
        self.assertIn("'body.parquet' is not a readable Parquet file", error["message"])
        self.assertEqual(Answer._base_manager.count(), 0)


class OtherPathTests(Upload):
    def test_it_imports_a_parquet_upload_in_the_background_the_same(self):
        rows = [{**r, "user_input": f"{r['user_input']} #{i}"} for i, r in enumerate(RAGAS_ROWS * 3)]
        data = parquet(rows, RAGAS, row_group_size=2)
        self.upload("many.parquet", data, dataset="inline")
        spool = Path(self.enterContext(tempfile.TemporaryDirectory()))
        with self.settings(IMPORT_SPOOL_DIR=spool, IMPORT_INLINE_BYTES=100):
            with self.captureOnCommitCallbacks(execute=True):
                self.upload("many.parquet", data, status=202, dataset="queued")
            task = worker_run(DBTaskResult.objects.get(status="READY"), "parquet")
        batch = ImportBatch.objects.latest("id")
        self.assertEqual((task.status, batch.status, batch.created), ("SUCCESSFUL", "done", 6))
        self.assertEqual((batch.bytes_done, batch.file_sha256), (len(data), hashlib.sha256(data).hexdigest()))
        self.assertEqual(stored("inline"), stored("queued"))

    @override_settings(IMPORT_MAX_LINE_BYTES=10_000_000)
    def test_it_decodes_fewer_rows_at_a_time_when_they_are_large(self):
        text = " ".join(str(n) for n in range(15_000))  # about 74 KB, a different answer in each row
        rows = [{"id": f"r{i}", "question": "q", "answer": f"{i} {text}", "passages": []} for i in range(3)]
        with patch.object(read_parquet, "BATCH_BYTES", 100_000):
            batch = answers_import(io.BytesIO(parquet(rows)), dataset_name="wide", file_name="wide.parquet")
            self.assertEqual(read_parquet._batch_rows(pq.ParquetFile(io.BytesIO(parquet(rows))).metadata), 1)
        self.assertEqual((batch.status, batch.created), ("done", 3))

    def test_it_reports_progress_by_rows_and_hashes_the_whole_file(self):
        rows = [{**RAGAS_ROWS[0], "user_input": f"q{i}"} for i in range(600)]
        data, seen = parquet(rows, RAGAS, row_group_size=250), []
        with override_settings(IMPORT_PROGRESS_RECORDS=256):
            batch = answers_import(
                io.BytesIO(data), dataset_name="p", file_name="p.parquet", progress=lambda b, n: seen.append((b, n))
            )
        self.assertEqual(
            (batch.status, batch.created, batch.file_sha256), ("done", 600, hashlib.sha256(data).hexdigest())
        )
        self.assertEqual([n for _, n in seen], [256, 512, 600])
        self.assertEqual(seen[-1][0], len(data))
        self.assertTrue(all(a[0] <= b[0] for a, b in zip(seen, seen[1:], strict=False)))

    def test_it_imports_a_parquet_file_with_the_command(self):
        path = Path(self.enterContext(tempfile.TemporaryDirectory())) / "ids.parquet"
        path.write_bytes(parquet(INT_ROWS, INT_IDS))
        call_command("import_answers", str(path), "--dataset", "cmd", "--no-progress", stdout=io.StringIO())
        self.assertEqual(sorted(Answer.objects.values_list("external_id", flat=True)), ["17", "18"])


LEAN = """
import io, json, sys
import django
django.setup()
from audit.ingest.read import CountingReader, read_records
line = b'{"id": "a", "question": "q", "answer": "a.", "passages": []}\\n'
assert [r[1]["id"] for r in read_records(CountingReader(io.BytesIO(line)), "a.jsonl")] == ["a"]
before = "pyarrow" in sys.modules
data = open(sys.argv[1], "rb").read()
assert [r[1]["id"] for r in read_records(CountingReader(io.BytesIO(data)), "a.parquet")] == ["17", "18"]
print(json.dumps([before, "pyarrow" in sys.modules]))
"""


def test_it_loads_pyarrow_for_the_first_parquet_file_only(tmp_path):
    path = tmp_path / "ids.parquet"
    path.write_bytes(parquet(INT_ROWS, INT_IDS))
    env = {"DJANGO_SETTINGS_MODULE": "claimaudit.settings", "DEBUG": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", LEAN, str(path)], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True]
