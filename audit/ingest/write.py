"""Writes one chunk of validated records in bulk (each chunk in the caller's short transaction).

One lookup query per chunk for the ids already in the dataset (never the whole dataset), then
bulk inserts of answers, passages, claims and external verdicts. New answers belong to the import's
batch, which hides them (staging, see Answer.objects) until the batch is done. A record whose id was
written earlier by this same import is a duplicate within the file: that is how duplicates are found
without holding every id of the file in memory. Changed answers (update mode) are kept aside in a
temporary file and replaced by `replace_changed()` in the import's last transaction.
"""

import json
import tempfile
from datetime import UTC, datetime

from django.db import connection

from audit.ingest.parse import RecordError
from audit.judge.guard import evidence_guard
from audit.judge.numeric import numeric_guard
from audit.models import Answer, AuditAnswer, Claim, ClaimOrigin, JudgeVerdict, Passage
from audit.models.answers import ACTIVE_IMPORT
from audit.spans import locate, normalise_ws

BUSY = "is being imported by another import"  # the API answers 409 when this is every error

ANSWER_FIELDS = ["question", "text", "created_at", "meta", "content_hash", "length", "import_batch"]


class Written:
    """What writing the parts needs of an answer: cheaper than a model instance per new answer."""

    __slots__ = ("id", "text", "record")

    def __init__(self, pk, text, record):
        self.id, self.text, self.record = pk, text, record


class BatchWriter:
    def __init__(self, batch, *, update, judge, now):
        self.batch, self.update, self.judge_factory, self.now = batch, update, judge, now
        self.judge = None  # created on the first verdict only
        self.pending, self.pending_lines = [], {}
        self.created = self.updated = self.unchanged = 0
        self.changed, self.changed_ids = None, {}  # a temporary file of (line, record, pk, created_at); id: line
        # answers stored before numbered passage strings were split (see unsplit.py): ids of those to split now,
        # and how many were split, kept (not replacing), and kept because they are in an audit
        self.resplit_ids, self.resplit, self.kept_unsplit, self.kept_in_audit = set(), 0, 0, 0

    def add(self, line, rec):
        first = self.pending_lines.get(rec["id"])
        if first is not None:
            return [RecordError(line, "id", f"duplicate id {rec['id']!r}: already on line {first}")]
        self.pending_lines[rec["id"]] = line
        self.pending.append((line, rec))
        return []

    def flush(self):
        """Write the pending records; return the errors found (the caller rolls back if there are any)."""
        pending, self.pending, self.pending_lines = self.pending, [], {}
        if not pending:
            return []
        existing = {
            row[0]: row[1:]
            for row in Answer._base_manager.filter(
                dataset=self.batch.dataset,
                external_id__in=[rec["id"] for _, rec in pending],
            ).values_list("external_id", "id", "content_hash", "import_batch_id", "created_at", "import_batch__status")
        }
        errors, new, changed = [], [], []
        for line, rec in pending:
            old = existing.get(rec["id"])
            if old is None:
                new.append(rec)
            elif old[2] == self.batch.id or rec["id"] in self.changed_ids:
                errors.append(RecordError(line, "id", f"duplicate id {rec['id']!r}: already earlier in this file"))
            elif old[4] in ACTIVE_IMPORT:
                errors.append(RecordError(line, "id", f"answer {rec['id']!r} {BUSY}"))
            elif old[1] == rec["hash"]:
                self.unchanged += 1
            elif old[1] == rec.get("before_split") and not self.update:
                self.unchanged += 1  # only read differently since: kept, and said so in the notes
                self.kept_unsplit += 1
            elif not self.update:
                errors.append(
                    RecordError(
                        line,
                        "id",
                        f"answer {rec['id']!r} already exists in dataset "
                        f"{self.batch.dataset.name!r} with different content; import with "
                        "--update (web: 'Replace changed answers') to replace it",
                    )
                )
            else:
                if old[1] == rec.get("before_split"):
                    self.resplit_ids.add(rec["id"])
                changed.append((line, self._answer(rec, pk=old[0], created_at=old[3])))
        refused, kept = self._refuse_frozen(changed)
        errors += refused
        self._keep_changed([(line, a) for line, a in changed if a.id not in kept])
        self.created += len(new)
        self._parts(self._insert(new))
        return errors

    def _keep_changed(self, changed):
        if not changed:
            return
        if self.changed is None:
            self.changed = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed by replace_changed)
        for line, a in changed:
            self.changed_ids[a.external_id] = line
            self.changed.write(json.dumps([line, a.record, a.id, a.created_at.isoformat()]) + "\n")

    def replace_changed(self, chunk):
        """Replace the changed answers kept aside, `chunk` at a time: inside the import's last transaction."""
        if self.changed is None:
            return []
        errors, group = [], []
        with self.changed as f:
            f.seek(0)
            for text in f:
                line, rec, pk, created_at = json.loads(text)
                group.append((line, self._answer(rec, pk=pk, created_at=datetime.fromisoformat(created_at))))
                if len(group) >= chunk:
                    errors += self._replace_group(group)
                    group = []
            errors += self._replace_group(group)
        self.changed = None
        return errors

    def _replace_group(self, group):
        errors, kept = self._refuse_frozen(group)  # again: an audit may have drawn it since the check in flush
        if group and not errors:
            answers = [a for _, a in group if a.id not in kept]
            self._replace(answers)
            self._parts(answers)
            self.updated += len(answers)
            self.resplit += sum(a.external_id in self.resplit_ids for a in answers)
        return errors

    def _insert(self, records):
        """Insert new answers with one executemany, then read their ids back with one query."""
        if not records:
            return []
        meta, when = Answer._meta.get_field("meta"), Answer._meta.get_field("created_at")
        batch, dataset = self.batch.id, self.batch.dataset_id
        insert_rows(
            Answer,
            [
                "dataset",
                "external_id",
                "question",
                "text",
                "created_at",
                "meta",
                "content_hash",
                "length",
                "import_batch",
            ],
            [
                (
                    dataset,
                    r["id"],
                    r["question"],
                    r["answer"],
                    when.get_db_prep_save(self._when(r), connection),
                    meta.get_db_prep_save(r["meta"], connection),
                    r["hash"],
                    len(r["answer"]),
                    batch,
                )
                for r in records
            ],
        )
        ids = dict(
            Answer._base_manager.filter(dataset_id=dataset, external_id__in=[r["id"] for r in records]).values_list(
                "external_id", "id"
            )
        )
        return [Written(ids[r["id"]], r["answer"], r) for r in records]

    def _when(self, rec, default=None):
        # In UTC: PostgreSQL's text input (COPY) refuses an offset with a fraction of a second.
        return datetime.fromisoformat(rec["created_at"]).astimezone(UTC) if rec["created_at"] else (default or self.now)

    def _answer(self, rec, pk, created_at):
        answer = Answer(
            id=pk,
            dataset_id=self.batch.dataset_id,
            external_id=rec["id"],
            question=rec["question"],
            text=rec["answer"],
            created_at=self._when(rec, created_at),
            meta=rec["meta"],
            content_hash=rec["hash"],
            length=len(rec["answer"]),
            import_batch_id=self.batch.id,
        )
        answer.record = rec  # the validated parts, written by _parts
        return answer

    def _refuse_frozen(self, changed):
        """(errors for the changed answers in an audit, the pks of those kept as stored): an answer in an audit
        that only reads differently since it was stored (split, see unsplit.py) is kept, and counted unchanged."""
        if not changed:
            return [], set()
        by_id = {a.id: (line, a) for line, a in changed}
        frozen = set(AuditAnswer.objects.filter(answer_id__in=by_id).values_list("answer_id", flat=True))
        kept = {pk for pk in frozen if by_id[pk][1].external_id in self.resplit_ids}
        self.unchanged += len(kept)
        self.kept_in_audit += len(kept)
        return [
            RecordError(
                by_id[pk][0],
                "id",
                f"answer {by_id[pk][1].external_id!r} changed but it is in an "
                "audit, and audits are frozen: not replaced",
            )
            for pk in frozen - kept
        ], kept

    def _replace(self, answers):
        Answer._base_manager.bulk_update(answers, ANSWER_FIELDS, batch_size=500)
        ids = [a.id for a in answers]
        Claim.objects.filter(answer_id__in=ids).delete()  # cascades to verdicts; labels protect (ProtectedError)
        Passage.objects.filter(answer_id__in=ids).delete()

    def _parts(self, answers):
        passages, claims, verdicts = [], [], []
        imported = ClaimOrigin.IMPORTED.value
        meta = _meta_prep(Passage)
        empty = meta({})  # most parts carry no meta: prepared once
        for a in answers:
            rec = a.record
            texts, normalised = {}, {}
            for i, p in enumerate(rec["passages"]):
                passages.append((a.id, i, p["id"], p["source"], p["text"], meta(p["meta"]) if "meta" in p else empty))
                texts[p["id"]] = p["text"]
            pos = 0
            for i, c in enumerate(rec["claims"]):
                start, end = locate(a.text, c["text"], pos)
                pos = end if end is not None else pos
                claims.append((a.id, i, c["text"], start, end, imported, meta(c["meta"]) if "meta" in c else empty))
                if c["verdict"]:
                    pid = c["passage_id"]
                    if pid in texts and pid not in normalised:  # once per passage, not once per claim
                        normalised[pid] = normalise_ws(texts[pid])
                    guard = evidence_guard(c["verdict"], c["evidence"], normalised.get(pid), normalised=True)
                    verdicts.append((a.id, i, c, *guard))
        insert_rows(Passage, ["answer", "position", "external_id", "source", "text", "meta"], passages)
        insert_rows(Claim, ["answer", "position", "text", "span_start", "span_end", "origin", "meta"], claims)
        if verdicts:
            self._verdicts(answers, verdicts)

    def _verdicts(self, answers, verdicts):
        self.judge = self.judge or self.judge_factory()
        claim_ids = {
            (a, pos): pk
            for a, pos, pk in Claim.objects.filter(answer_id__in=[a.id for a in answers]).values_list(
                "answer_id", "position", "id"
            )
        }
        now = connection.ops.adapt_datetimefield_value(self.now)
        insert_rows(
            JudgeVerdict,
            [
                "claim",
                "judge_version",
                "raw_verdict",
                "verdict",
                "evidence",
                "passage_external_id",
                "reason",
                "guard_passed",
                "numeric_passed",
                "created_at",
            ],
            [
                (
                    claim_ids[a, pos],
                    self.judge.id,
                    c["verdict"],
                    scored,
                    c["evidence"],
                    c["passage_id"],
                    c["reason"],
                    passed,
                    numeric_guard(scored, c["text"], c["evidence"]),
                    now,
                )
                for a, pos, c, scored, passed in verdicts
            ],
        )


def _meta_prep(model):
    field = model._meta.get_field("meta")
    return lambda value: field.get_db_prep_save(value, connection)


def insert_rows(model, field_names, rows):
    """INSERT many rows of plain values (already in database form): executemany, or COPY on PostgreSQL.

    Why not bulk_create: for hundreds of thousands of passages and claims, building model instances
    and compiling Django's multi-row INSERT cost four times the database work itself. On PostgreSQL
    executemany waits on a round trip per row; COPY streams them.
    """
    if not rows:
        return
    qn = connection.ops.quote_name
    table = qn(model._meta.db_table)
    columns = ", ".join(qn(model._meta.get_field(f).column) for f in field_names)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The raw psycopg cursor: its errors are wrapped as Django's (DatabaseError) by hand.
            with connection.wrap_database_errors, cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        marks = ", ".join(["%s"] * len(field_names))
        # Only identifiers from the model definitions are formatted in; every value is a parameter.
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)  # noqa: S608
