"""Gzipped uploads (`logs.jsonl.gz`, `export.csv.gz`, a gzipped API body): inflated as they are read, through
the web form, the API and the task worker, storing what the plain file stores; a damaged or cut-off stream, an
inflated size over IMPORT_MAX_INFLATED_BYTES, a gzipped Parquet file and an oversized JSON array are refused
naming the file, with nothing written. UTF-16 files (Excel's "Unicode Text") are read as their UTF-8 twin."""

import csv
import gzip
import hashlib
import io
import json
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from django.core.files.uploadedfile import InMemoryUploadedFile, SimpleUploadedFile
from django.test import TestCase, override_settings
from django_tasks_db.models import DBTaskResult

from audit.ingest.services import import_upload
from audit.models import Answer, ImportBatch
from claimaudit.services import api_token_create
from tests.factories import make_user, worker_run
from tests.test_import_real_shapes import REAL

JSONL = (REAL / "ragas_v01_amnesty.jsonl").read_bytes()
CSV = (REAL / "ragas_v01_fiqa.csv").read_bytes()


def stored(dataset):
    return [
        (a.external_id, a.question, a.text, a.meta, list(a.passages.values_list("external_id", "text", "meta")))
        for a in Answer.objects.filter(dataset__name=dataset).order_by("external_id")
    ]


class ReadCounted(io.BytesIO):
    """A file that counts the bytes read from it."""

    bytes_read = 0

    def read(self, n=-1):
        data = super().read(n)
        self.bytes_read += len(data)
        return data

    def readinto(self, buf):
        n = super().readinto(buf)
        self.bytes_read += n
        return n


def stored_plain(test, data):
    """What the plain (not gzipped) file stores."""
    test.upload("plain.jsonl", data, dataset="plain")
    return stored("plain")


class Upload(TestCase):
    def setUp(self):
        self.client.force_login(make_user("lead", "lead"))

    def upload(self, name, data, status=200, dataset="gz"):
        r = self.client.post("/import/", {"file": SimpleUploadedFile(name, data), "new_dataset": dataset})
        self.assertEqual(r.status_code, status, r.content.decode()[-1500:])
        return ImportBatch.objects.latest("id")

    def refused(self, name, data):
        batch = self.upload(name, data, status=400)
        self.assertEqual(Answer._base_manager.count(), 0)  # nothing written
        return [(e["line"], e["field"], e["message"]) for e in batch.errors]


@override_settings(IMPORT_INLINE_BYTES=1 << 40)  # read in the request: these tests are about reading, not routing
class GzipTests(Upload):
    def test_it_stores_from_a_gzipped_jsonl_or_csv_what_the_plain_file_stores(self):
        for name, data in (("ragas.jsonl", JSONL), ("fiqa.csv", CSV)):
            self.upload(name, data, dataset=f"plain-{name}")
            batch = self.upload(f"{name}.gz", gzip.compress(data), dataset=f"gz-{name}")
            self.assertEqual((batch.status, batch.errors), ("done", []))
            self.assertEqual(stored(f"gz-{name}"), stored(f"plain-{name}"))
            self.assertTrue(stored(f"gz-{name}"))

    def test_it_reads_a_gzipped_api_body_from_its_magic_bytes(self):
        token = api_token_create(make_user("bot", "lead"), "ci")[1]
        r = self.client.post(
            "/api/v1/datasets/api/answers",
            gzip.compress(JSONL),
            content_type="application/x-ndjson",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        self.assertEqual((r.status_code, r.json()["created"]), (200, 2), r.content)

    def test_it_inflates_a_large_upload_in_the_background_and_counts_the_compressed_bytes(self):
        rows = [json.loads(line) | {"question": f"Q{i}?"} for i, line in enumerate(JSONL.splitlines() * 50)]
        data = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())
        spool = Path(self.enterContext(tempfile.TemporaryDirectory()))
        with self.settings(IMPORT_SPOOL_DIR=spool, IMPORT_INLINE_BYTES=100):
            with self.captureOnCommitCallbacks(execute=True):
                self.upload("big.jsonl.gz", data, status=202)
            task = worker_run(DBTaskResult.objects.get(status="READY"), "gzip")
        batch = ImportBatch.objects.latest("id")
        self.assertEqual((task.status, batch.status, batch.created), ("SUCCESSFUL", "done", 100))
        self.assertEqual((batch.bytes_done, batch.file_sha256), (len(data), hashlib.sha256(data).hexdigest()))

    def test_it_refuses_a_cut_off_or_damaged_stream_naming_the_file(self):
        whole = gzip.compress(JSONL * 20)
        [(line, field, message)] = self.refused("cut.jsonl.gz", whole[: len(whole) // 2])
        self.assertEqual((line, field), (0, "file"))
        self.assertIn("the gzip data is damaged or cut short", message)
        damaged = whole[:10] + bytes(b ^ 0xFF for b in whole[10:40]) + whole[40:]
        [(_, field, message)] = self.refused("bad.jsonl.gz", damaged)
        self.assertEqual(field, "file")
        self.assertIn("damaged or cut short", message)

    @override_settings(IMPORT_MAX_INFLATED_BYTES=5_000)
    def test_it_stops_inflating_past_the_limit(self):
        bomb = gzip.compress(JSONL * 100)  # about 70 KB inflated, 2 KB compressed
        self.assertLess(len(bomb), 5_000)
        [(_, field, message)] = self.refused("bomb.jsonl.gz", bomb)
        self.assertEqual(
            (field, message), ("file", "inflated, the file is over 5,000 bytes (IMPORT_MAX_INFLATED_BYTES)")
        )

    def test_it_refuses_a_gzipped_parquet_file(self):
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist([json.loads(JSONL.splitlines()[0])]), buf)
        [(_, field, message)] = self.refused("data.parquet.gz", gzip.compress(buf.getvalue()))
        self.assertEqual(field, "file")
        self.assertIn("a gzipped Parquet file", message)

    @override_settings(IMPORT_MAX_UPLOAD_BYTES=3_000)
    def test_it_refuses_a_json_array_larger_than_an_upload_may_be_once_inflated(self):
        rows = [json.loads(line) for line in JSONL.splitlines()] * 5
        data = gzip.compress(json.dumps(rows).encode())
        self.assertLess(len(data), 3_000)
        [(_, field, message)] = self.refused("array.json.gz", data)
        self.assertEqual((field, message), ("file", "a JSON array over 3,000 bytes: write JSON lines"))


@override_settings(IMPORT_INLINE_BYTES=1 << 40)
class Utf16Tests(Upload):
    """Excel's "Unicode Text" (UTF-16 with its byte order mark, tab-separated, CRLF), and UTF-16 JSON lines."""

    def test_it_reads_an_excel_unicode_text_export_like_its_utf8_csv(self):
        rows = list(csv.reader(io.StringIO(CSV.decode())))
        tsv = io.StringIO()
        csv.writer(tsv, delimiter="\t", lineterminator="\r\n").writerows(rows)
        self.upload("fiqa.csv", CSV, dataset="utf8")
        for encoding in ("utf-16", "utf-16-be"):
            data = (b"\xfe\xff" if encoding == "utf-16-be" else b"") + tsv.getvalue().encode(encoding)
            batch = self.upload("fiqa-unicode.csv", data, dataset=encoding)
            self.assertEqual((batch.status, batch.errors), ("done", []))
            self.assertEqual(stored(encoding), stored("utf8"))

    def test_it_reads_gzipped_utf16_json_lines(self):
        self.upload("a.jsonl", JSONL, dataset="utf8")
        batch = self.upload("a.jsonl.gz", gzip.compress(JSONL.decode().encode("utf-16")), dataset="utf16")
        self.assertEqual((batch.created, stored("utf16")), (2, stored("utf8")))

    def test_it_refuses_broken_utf16_naming_the_file(self):
        data = "id,question\r\n".encode("utf-16") + b"\x00\xd8\x41"  # a lone high surrogate, then half a unit
        [(_, field, message)] = self.refused("broken.csv", data)
        self.assertEqual(field, "file")
        self.assertIn("not valid UTF-16", message)


class InlineOrQueuedTests(Upload):
    def test_it_queues_a_gzipped_upload_whose_trailer_understates_its_size(self):
        rows = [json.loads(line) | {"question": f"Q{i}?"} for i, line in enumerate(JSONL.splitlines() * 20)]
        data = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())
        lying = data[:-4] + (10).to_bytes(4, "little")  # the trailer says 10 bytes; it inflates to 28 KB
        spool = Path(self.enterContext(tempfile.TemporaryDirectory()))
        with self.settings(IMPORT_SPOOL_DIR=spool, IMPORT_INLINE_BYTES=5_000), self.captureOnCommitCallbacks():
            self.upload("lying.jsonl.gz", lying, status=202)  # not inflated whole in the request
        self.assertEqual(ImportBatch.objects.latest("id").status, "queued")

    def test_it_imports_a_small_gzipped_upload_in_the_request(self):
        with self.settings(IMPORT_INLINE_BYTES=5_000):
            self.assertEqual(self.upload("small.jsonl.gz", gzip.compress(JSONL)).status, "done")

    def test_it_inflates_a_small_gzipped_upload_once_and_records_it_as_sent(self):
        data = gzip.compress(JSONL)
        file = ReadCounted(data)
        upload = InMemoryUploadedFile(file, "file", "once.jsonl.gz", "application/gzip", len(data), None)
        with self.settings(IMPORT_INLINE_BYTES=5_000):
            batch = import_upload(upload, dataset_name="once", user=None)
        self.assertEqual((batch.status, batch.created), ("done", 2))
        self.assertEqual(file.bytes_read, len(data))  # measured and imported from one read of the upload
        self.assertEqual((batch.bytes_done, batch.file_sha256), (len(data), hashlib.sha256(data).hexdigest()))
        self.assertEqual(stored("once"), stored_plain(self, JSONL))

    def test_it_queues_a_small_gzipped_upload_by_the_size_it_inflates_to(self):
        rows = [json.loads(line) | {"question": f"Q{i}?"} for i, line in enumerate(JSONL.splitlines() * 20)]
        data = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())  # under 5 KB, 28 KB inflated
        spool = Path(self.enterContext(tempfile.TemporaryDirectory()))
        with self.settings(IMPORT_SPOOL_DIR=spool, IMPORT_INLINE_BYTES=5_000):
            self.assertEqual(
                self.upload("small.jsonl", JSONL, dataset="inline").status, "done"
            )  # 1.4 KB: in the request
            with self.captureOnCommitCallbacks(execute=True):
                self.upload("big.jsonl.gz", data, status=202)
            self.assertLess(len(data), 5_000)
            task = worker_run(DBTaskResult.objects.get(status="READY"), "gzip")
        batch = ImportBatch.objects.latest("id")
        self.assertEqual((task.status, batch.status, batch.created), ("SUCCESSFUL", "done", 40))
