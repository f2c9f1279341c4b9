"""Property: whatever the file holds, the import ends in the app's own outcome (done, noop, or failed with
errors naming line and field), never another exception, on SQLite and PostgreSQL alike; a failure leaves no
row behind. Bounded and derandomized, so CI runs the same examples every time."""

import csv
import io
import json
import shutil
import tempfile
from datetime import timedelta, timezone
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from audit.ingest.run import import_run
from audit.ingest.services import answers_import, import_enqueue
from audit.models import Answer, Dataset, ImportBatch
from tests.test_import import counts, jsonl, rec

BOUNDED = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
RAW = "\x01raw:"  # a placeholder string replaced by a raw JSON number the encoder would never write
NUMBERS = ["1e400", "-1e999", "1e-400", "123456789012345678901234567890", "-0.0", "NaN", "Infinity"]

texts = st.one_of(
    st.text(max_size=12),
    st.text(alphabet=st.sampled_from("a é\x00\ud800\udfff\u2028\x7f\t"), max_size=6),
)
raw_numbers = st.sampled_from(NUMBERS).map(lambda n: RAW + n)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), texts, raw_numbers
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=8,
)
plain_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=12)
good_text = plain_text.filter(lambda s: s.strip())
plain_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        plain_text,
        st.integers(0, 9).flatmap(lambda n: scalars if n == 0 else plain_text),  # now and then an odd one
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(plain_text, inner, max_size=3)),
    max_leaves=6,
)


def field(good):
    """Mostly a well-formed value, so that most files reach the database with one odd value in them."""
    return st.integers(0, 19).flatmap(lambda n: values if n == 0 else good)


day = timedelta(hours=23, minutes=59)
offsets = st.integers(0, 3).flatmap(  # one in four beyond what PostgreSQL accepts (+/-15:59:59)
    lambda n: st.timedeltas(-day, day) if n == 0 else st.timedeltas(-timedelta(hours=15), timedelta(hours=15))
)
instants = st.datetimes(timezones=st.builds(timezone, offsets))
created = field(instants.map(lambda d: d.isoformat()))
passage_texts = st.lists(field(plain_text), max_size=3)
passages = field(passage_texts.map(lambda ts: [{"id": f"p{i + 1}", "text": t} for i, t in enumerate(ts)]))
good_claim = st.fixed_dictionaries(
    {"text": field(good_text)},
    optional={
        "verdict": field(st.sampled_from(["supported", "unsupported", "contradicted"])),
        "evidence": field(plain_text),
        "passage_id": st.sampled_from(["p1", "p2", "p9"]),
        "reason": field(plain_text),
    },
)
claims = field(st.lists(field(good_claim), max_size=3))


records = st.fixed_dictionaries(
    {
        "id": field(st.sampled_from(["a1", "a2", "a3", "a4", "a5", "a6"])),
        "question": field(good_text),
        "answer": field(good_text),
        "passages": passages,
    },
    optional={"created_at": created, "meta": field(st.dictionaries(plain_text, field(plain_values))), "claims": claims},
).flatmap(lambda r: st.dictionaries(plain_text, field(plain_values), max_size=2).map(lambda extra: {**extra, **r}))


def encode(obj):
    text = json.dumps(obj)  # ASCII: a lone surrogate becomes its \udxxx escape, as a producer might write it
    for n in NUMBERS:
        text = text.replace(json.dumps(RAW + n), n)
    return text


def as_jsonl(items):
    return b"".join((i if isinstance(i, bytes) else encode(i).encode()) + b"\n" for i in items)


def as_csv(items):
    out = io.StringIO()
    columns = ["id", "question", "answer", "passages", "claims", "meta", "created_at"]
    writer = csv.writer(out)
    writer.writerow(columns)
    for item in items:
        r = item if isinstance(item, dict) else {}
        writer.writerow([v if isinstance(v := r.get(c, ""), str) else encode(v) for c in columns])
    return out.getvalue().encode("utf-8", "surrogatepass")  # a lone surrogate: bytes that are not UTF-8


files = st.tuples(
    st.lists(
        st.integers(0, 9).flatmap(lambda n: st.binary(max_size=20) if n == 0 else field(records)),
        min_size=1,
        max_size=2,
    ),
    st.sampled_from(["jsonl", "csv"]),
    st.booleans(),
)


def data_of(items, kind):
    return as_jsonl(items) if kind == "jsonl" else as_csv(items)


class ImportPropertyTests(TestCase):
    def setUp(self):
        answers_import(io.BytesIO(jsonl(rec(1))), dataset_name="ds", file_name="seed.jsonl")
        self.before = counts()

    def check_outcome(self, batch):
        self.assertIn(batch.status, ("done", "noop", "failed"))
        if batch.status == "failed":
            self.assertTrue(batch.errors)
            for e in batch.errors:  # found by validation, not by the database refusing a value
                self.assertEqual(set(e), {"line", "field", "message"})
                self.assertNotIn("the database refused", e["message"])
            self.assertEqual(counts(), self.before)
        self.assertEqual(Answer._base_manager.count(), Answer.objects.count())  # nothing left staged
        self.assertFalse(Dataset.objects.filter(answers__isnull=True).exclude(name="ds").exists())
        list(Answer.objects.values_list("meta", "created_at"))  # what was stored reads back

    @BOUNDED
    @given(files)
    def test_it_ends_every_command_import_in_the_apps_own_outcome(self, example):
        items, kind, update = example
        path = Path(self.tmp_dir()) / f"f.{kind}"
        path.write_bytes(data_of(items, kind))
        args = [str(path), "--dataset", "ds", "--no-progress", *(["--update"] if update else [])]
        try:
            call_command("import_answers", *args, stdout=io.StringIO(), stderr=io.StringIO())
        except CommandError as e:
            self.assertIn("nothing was written", str(e))
        self.check_outcome(ImportBatch.objects.order_by("-pk").first())

    @BOUNDED
    @given(files)
    def test_it_ends_every_background_import_in_the_apps_own_outcome(self, example):
        items, kind, update = example
        upload = SimpleUploadedFile(f"f.{kind}", data_of(items, kind))
        with override_settings(IMPORT_SPOOL_DIR=Path(self.tmp_dir()), IMPORT_BATCH_SIZE=1):
            batch = import_enqueue(upload, dataset_name="new-ds", update=update)
            self.check_outcome(import_run(batch.pk))

    def tmp_dir(self):
        d = tempfile.mkdtemp(prefix="import-property-")
        self.addCleanup(shutil.rmtree, d, True)
        return d
