"""Streaming reading and validation of answer files (JSONL or CSV). No ORM here.

`read_records(fileobj, file_name)` yields `(line, record, errors)` one record at a time: `record` is the
normalised dict (see `normalise`) or None when `errors` (a list of `RecordError`) is not empty. File-level
problems (unsupported type, bad header) come as a single item with line 0 / 1 and no record.
"""
import csv
import hashlib
import io
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings

from audit.models.answers import Verdict

JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv",)
REQUIRED = ("id", "question", "answer", "passages")
KNOWN = (*REQUIRED, "created_at", "meta", "claims")
PASSAGE_FIELDS = {"id", "source", "text"}
CLAIM_FIELDS = {"text", "verdict", "evidence", "passage_id", "reason"}
VERDICTS = tuple(Verdict.values)


def limits():
    return {
        "chars": getattr(settings, "IMPORT_MAX_FIELD_CHARS", 100_000),
        "passages": getattr(settings, "IMPORT_MAX_PASSAGES", 200),
        "claims": getattr(settings, "IMPORT_MAX_CLAIMS", 500),
        "meta_chars": getattr(settings, "IMPORT_MAX_META_CHARS", 200_000),
        # A line longer than this is refused without being held in memory whole.
        "line_bytes": getattr(settings, "IMPORT_MAX_LINE_BYTES", 32 * 1024 * 1024),
    }


@dataclass(frozen=True)
class RecordError:
    line: int
    field: str
    message: str

    def __str__(self):
        where = f"line {self.line}" if self.line else "file"
        return f"{where}, {self.field}: {self.message}" if self.field else f"{where}: {self.message}"

    def as_dict(self):
        return {"line": self.line, "field": self.field, "message": self.message}


class CountingReader(io.RawIOBase):
    """Wraps a binary file: counts the bytes read (for the progress bar) and hashes them (file sha256)."""

    def __init__(self, raw):
        self.raw, self.bytes_read, self.sha = raw, 0, hashlib.sha256()

    def readable(self):
        return True

    def readinto(self, buf):
        data = self.raw.read(len(buf))
        n = len(data)
        buf[:n] = data
        self.bytes_read += n
        self.sha.update(data)
        return n


def file_kind(file_name):
    name = (file_name or "").lower()
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    return None


def read_records(reader, file_name):
    """Yield (line, record_or_None, errors) from a CountingReader (or any buffered binary file)."""
    kind = file_kind(file_name)
    if kind is None:
        yield 0, None, [RecordError(0, "file", f"unsupported file type {file_name!r}: use .jsonl or .csv")]
        return
    lim = limits()
    stream = io.BufferedReader(reader, 1 << 20) if isinstance(reader, CountingReader) else reader
    yield from (_jsonl(stream, lim) if kind == "jsonl" else _csv(stream, lim))


def _jsonl(stream, lim):
    line = 0
    while True:
        raw = stream.readline(lim["line_bytes"] + 1)
        if not raw:
            return
        line += 1
        if len(raw) > lim["line_bytes"] and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # skip the rest of the oversized line
                raw = stream.readline(1 << 20)
            yield line, None, [RecordError(line, "", f"line longer than {lim['line_bytes']:,} bytes")]
            continue
        try:
            text = raw.decode("utf-8-sig" if line == 1 else "utf-8")
        except UnicodeDecodeError as e:
            yield line, None, [RecordError(line, "", f"not valid UTF-8 (byte {e.start + 1} of the line)")]
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError) as e:
            msg = getattr(e, "msg", str(e) or "too deeply nested")
            yield line, None, [RecordError(line, "", f"malformed JSON: {msg} (column {getattr(e, 'colno', '?')})")]
            continue
        yield (line, *normalise(obj, line, lim))


class _StopLine(Exception):
    def __init__(self, error):
        self.error = error


def _csv_lines(stream, lim, counter):
    """Decode line by line, so an encoding error names its line (a TextIOWrapper decodes whole chunks)."""
    while raw := stream.readline(lim["line_bytes"] + 1):
        counter[0] += 1
        if len(raw) > lim["line_bytes"] and not raw.endswith(b"\n"):
            raise _StopLine(RecordError(counter[0], "", f"line longer than {lim['line_bytes']:,} bytes"))
        try:
            yield raw.decode("utf-8-sig" if counter[0] == 1 else "utf-8")
        except UnicodeDecodeError as e:
            raise _StopLine(RecordError(counter[0], "", f"not valid UTF-8 (byte {e.start + 1} of the line)"))


def _csv(stream, lim):
    csv.field_size_limit(max(lim["line_bytes"], 1 << 20))
    counter = [0]  # physical lines read so far
    reader = csv.reader(_csv_lines(stream, lim, counter))
    try:
        header = next(reader, None)
        if header is None:
            return
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            yield 1, None, [RecordError(1, c, "missing column in the CSV header") for c in missing]
            return
        dupes = {c for c in header if header.count(c) > 1}
        if dupes:
            yield 1, None, [RecordError(1, c, "column appears twice in the CSV header") for c in sorted(dupes)]
            return
        while True:
            line = counter[0] + 1  # a quoted cell may span lines: the record starts here
            row = next(reader, None)
            if row is None:
                return
            if not any(row):
                continue
            if len(row) != len(header):
                yield line, None, [RecordError(line, "", f"{len(row)} cells, the header has {len(header)}")]
                continue
            obj, errors = _csv_object(dict(zip(header, row, strict=True)), line)
            yield (line, None, errors) if errors else (line, *normalise(obj, line, lim))
    except _StopLine as stop:
        yield stop.error.line, None, [stop.error]
    except csv.Error as e:
        yield counter[0], None, [RecordError(counter[0], "", f"malformed CSV: {e}")]


def _no_constant(name):
    # NaN and Infinity are not JSON and cannot be stored in a JSON column (PostgreSQL refuses them).
    raise ValueError(f"{name} is not allowed")


def _csv_object(row, line):
    """CSV cells are strings: the JSON columns are decoded, empty optional cells dropped."""
    obj, errors = {}, []
    for key, value in row.items():
        if key in ("passages", "claims", "meta"):
            if value.strip() == "" and key != "passages":
                continue
            try:
                obj[key] = json.loads(value, parse_constant=_no_constant)
            except (ValueError, RecursionError) as e:
                errors.append(RecordError(line, key, f"malformed JSON in the column: {getattr(e, 'msg', e)}"))
        elif key == "created_at" and value.strip() == "":
            continue
        else:
            obj[key] = value
    return obj, errors


def _text(obj, key, line, where, lim, errors, *, required=True, allow_empty=False, max_chars=None):
    """The string at obj[key], or "" with an error naming `where.key`. The fast path builds no names."""
    value = obj.get(key)
    if (type(value) is str and (allow_empty or (value and not value.isspace()))
            and len(value) <= (max_chars or lim["chars"]) and "\x00" not in value):
        return value
    field = f"{where}.{key}" if where else key
    if value is None:
        if required:
            errors.append(RecordError(line, field, "missing"))
        return ""
    if not isinstance(value, str):
        errors.append(RecordError(line, field, f"must be a string, got {type(value).__name__}"))
        return ""
    if not allow_empty and not value.strip():
        errors.append(RecordError(line, field, "empty"))
    if "\x00" in value:
        errors.append(RecordError(line, field, "contains a NUL character, which the database cannot store"))
    limit = max_chars or lim["chars"]
    if len(value) > limit:
        errors.append(RecordError(line, field, f"too long: {len(value):,} characters (limit {limit:,})"))
    return value


def _list(obj, key, line, limit, errors):
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        errors.append(RecordError(line, key, f"must be a list, got {type(value).__name__}"))
        return []
    if len(value) > limit:
        errors.append(RecordError(line, key, f"too many items: {len(value):,} (limit {limit:,})"))
        return []
    return value


def normalise(obj, line, lim):
    """Validate one decoded object; return (record, errors). Unknown top-level fields go into meta."""
    if not isinstance(obj, dict):
        return None, [RecordError(line, "", f"must be a JSON object, got {type(obj).__name__}")]
    errors = []
    rec = {
        "id": _text(obj, "id", line, "", lim, errors, max_chars=200),
        "question": _text(obj, "question", line, "", lim, errors),
        "answer": _text(obj, "answer", line, "", lim, errors),
        "created_at": _created_at(obj.get("created_at"), line, errors),
    }
    meta = obj.get("meta")
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        errors.append(RecordError(line, "meta", f"must be an object, got {type(meta).__name__}"))
        meta = {}
    for key in obj.keys() - set(KNOWN):
        if key in meta:
            errors.append(RecordError(line, key, "unknown field also present in meta: rename one of them"))
        meta[key] = obj[key]
    rec["meta"] = meta
    if obj.get("passages") is None:
        errors.append(RecordError(line, "passages", "missing"))
    rec["passages"] = _passages(_list(obj, "passages", line, lim["passages"], errors), line, lim, errors)
    ids = {p["id"] for p in rec["passages"]}
    rec["claims"] = _claims(_list(obj, "claims", line, lim["claims"], errors), ids, line, lim, errors)
    if errors:
        return None, errors
    # ASCII-only canonical JSON: twice as fast to encode as ensure_ascii=False, and just as canonical.
    canonical = json.dumps(rec, sort_keys=True, separators=(",", ":"))
    if len(canonical) > lim["meta_chars"] and _meta_too_big(rec, lim):
        return None, [RecordError(line, "meta", f"too large (limit {lim['meta_chars']:,} characters as JSON)")]
    if "\\u0000" in canonical and _has_nul(rec["meta"]):  # the text fields were checked already
        return None, [RecordError(line, "meta", "contains a NUL character, which the database cannot store")]
    if "\\ud" in canonical and _has_lone_surrogate(rec):  # \ud8xx-\udfxx: an emoji, or a broken escape
        return None, [RecordError(line, "", "contains an unpaired surrogate escape (\\ud800-\\udfff), not text")]
    rec["hash"] = hashlib.sha256(canonical.encode()).hexdigest()
    return rec, []


def _has_nul(value):
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    return isinstance(value, list) and any(_has_nul(v) for v in value)


def _has_lone_surrogate(rec):
    try:
        json.dumps(rec, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return True
    return False


def _meta_too_big(rec, lim):
    # Called only when the whole record is over the limit, so small records skip this serialisation.
    return len(json.dumps(rec["meta"], ensure_ascii=False)) > lim["meta_chars"]


def _created_at(value, line, errors):
    if value is None:
        return None
    if not isinstance(value, str):
        errors.append(RecordError(line, "created_at", f"must be an ISO 8601 string, got {type(value).__name__}"))
        return None
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        errors.append(RecordError(line, "created_at", f"not an ISO 8601 date-time: {value[:40]!r}"))
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).isoformat()


def _passages(items, line, lim, errors):
    out, seen = [], set()
    for i, p in enumerate(items):
        field = f"passages[{i}]"
        if not isinstance(p, dict):
            errors.append(RecordError(line, field, f"must be an object, got {type(p).__name__}"))
            continue
        if not p.keys() <= PASSAGE_FIELDS:
            for key in sorted(p.keys() - PASSAGE_FIELDS):
                errors.append(RecordError(line, f"{field}.{key}", "unknown field (allowed: id, source, text)"))
        pid = _text(p, "id", line, field, lim, errors, max_chars=200)
        if pid in seen:
            errors.append(RecordError(line, f"{field}.id", f"duplicate passage id {pid!r}"))
        seen.add(pid)
        source = _text(p, "source", line, field, lim, errors, required=False, allow_empty=True, max_chars=500)
        text = _text(p, "text", line, field, lim, errors, allow_empty=True)
        out.append({"id": pid, "source": source, "text": text})
    return out


def _claims(items, passage_ids, line, lim, errors):
    out = []
    for i, c in enumerate(items):
        field = f"claims[{i}]"
        if not isinstance(c, dict):
            errors.append(RecordError(line, field, f"must be an object, got {type(c).__name__}"))
            continue
        if not c.keys() <= CLAIM_FIELDS:
            for key in sorted(c.keys() - CLAIM_FIELDS):
                errors.append(RecordError(line, f"{field}.{key}", "unknown field (allowed: " + ", ".join(
                    sorted(CLAIM_FIELDS)) + ")"))
        claim = {"text": _text(c, "text", line, field, lim, errors)}
        verdict = c.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            errors.append(RecordError(line, f"{field}.verdict", f"{verdict!r} is not one of {', '.join(VERDICTS)}"))
        claim["verdict"] = verdict
        for key in ("evidence", "passage_id", "reason"):
            claim[key] = _text(c, key, line, field, lim, errors, required=False, allow_empty=True)
        if claim["passage_id"] and claim["passage_id"] not in passage_ids:
            errors.append(RecordError(line, f"{field}.passage_id",
                                      f"{claim['passage_id']!r} is not among this answer's passage ids"))
        out.append(claim)
    return out
