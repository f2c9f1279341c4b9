"""Validation of one decoded record into its normalised form. No ORM, no files.

`normalise(obj, line, lim)` returns `(record, [])` or `(None, errors)`. The record has fixed keys: id,
question, answer, created_at (a UTC ISO string or None; read from ISO text or an epoch number, see times.py),
meta (unknown top-level fields folded in), passages
[{id, source, text, meta?}], claims [{text, verdict, evidence, passage_id, reason, meta?}] (a passage's or
claim's unknown fields are folded into its own `meta`, present only when not empty), and hash: the sha256 of
its canonical JSON (sorted keys, no spaces), so a re-import of unchanged content is recognised. An id (of
an answer or a passage, and a claim's passage_id) is a string or an integer, kept as its decimal string.
"""

import hashlib
import json
from dataclasses import dataclass

from django.conf import settings

from audit.ingest import times
from audit.models.answers import Verdict
from audit.validation import json_problem, storable, text_problem

REQUIRED = ("id", "question", "answer", "passages")
KNOWN = (*REQUIRED, "created_at", "meta", "claims")
PASSAGE_FIELDS = {"id", "source", "text"}
CLAIM_FIELDS = {"text", "verdict", "evidence", "passage_id", "reason"}
META_FIELD = "meta"
VERDICTS = tuple(Verdict.values)
ID_CHARS = 200
# An integer id (Hugging Face datasets, eval sets) is kept as its decimal string if a 64-bit integer column,
# signed or unsigned, could hold it: 17 and "17" are the same id.
INT_ID_MIN, INT_ID_MAX = -(2**63), 2**64 - 1


def limits():
    return {
        "chars": settings.IMPORT_MAX_FIELD_CHARS,
        "passages": settings.IMPORT_MAX_PASSAGES,
        "claims": settings.IMPORT_MAX_CLAIMS,
        "meta_chars": settings.IMPORT_MAX_META_CHARS,
        # A line longer than this is refused without being held in memory whole.
        "line_bytes": settings.IMPORT_MAX_LINE_BYTES,
    }


@dataclass(frozen=True)
class RecordError:
    line: int
    field: str
    message: str

    def __post_init__(self):  # field names and messages may quote the input: keep them storable
        object.__setattr__(self, "field", storable(self.field))
        object.__setattr__(self, "message", storable(self.message))

    def __str__(self):
        where = f"line {self.line}" if self.line else "file"
        return f"{where}, {self.field}: {self.message}" if self.field else f"{where}: {self.message}"

    def as_dict(self):
        return {"line": self.line, "field": self.field, "message": self.message}


def _id(obj, key, line, where, lim, errors, **kw):
    """An id: a string, or an integer (not a bool, not a float) as its decimal string; else "" and an error."""
    value = obj.get(key)
    if type(value) is not int:
        return _text(obj, key, line, where, lim, errors, max_chars=ID_CHARS, expected="a string or an integer", **kw)
    if INT_ID_MIN <= value <= INT_ID_MAX:
        return str(value)
    field = f"{where}.{key}" if where else key
    errors.append(RecordError(line, field, "integer too large for an id (over 64 bits): write it as a string"))
    return ""


def _text(obj, key, line, where, lim, errors, *, required=True, allow_empty=False, max_chars=None, expected=None):
    """The string at obj[key], or "" with an error naming `where.key`. The fast path builds no names."""
    value = obj.get(key)
    if (
        type(value) is str
        and (allow_empty or (value and not value.isspace()))
        and len(value) <= (max_chars or lim["chars"])
        and text_problem(value) is None
    ):
        return value
    field = f"{where}.{key}" if where else key
    if value is None:
        if required:
            errors.append(RecordError(line, field, "missing"))
        return ""
    if not isinstance(value, str):
        errors.append(RecordError(line, field, f"must be {expected or 'a string'}, got {type(value).__name__}"))
        return ""
    if not allow_empty and not value.strip():
        errors.append(RecordError(line, field, "empty"))
    why = text_problem(value)
    if why:
        errors.append(RecordError(line, field, why))
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
        "id": _id(obj, "id", line, "", lim, errors),
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
    _storable(meta, "meta", line, errors)
    for key in obj.keys() - set(KNOWN):
        if key in meta:
            errors.append(RecordError(line, key, "unknown field also present in meta: rename one of them"))
        if text_problem(key):
            errors.append(RecordError(line, repr(key), f"field name {text_problem(key)}"))
        _storable(obj[key], key, line, errors)
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
    rec["hash"] = hashlib.sha256(canonical.encode()).hexdigest()
    return rec, []


def _storable(value, field, line, errors):
    """Any JSON value kept in meta: every string, key and number must be storable (see audit.validation)."""
    if isinstance(value, (dict, list, float)):
        problem = json_problem(value, field)
        if problem:
            errors.append(RecordError(line, *problem))
    elif isinstance(value, str) and text_problem(value):
        errors.append(RecordError(line, field, text_problem(value)))


def _meta_too_big(rec, lim):
    # Called only when the whole record is over the limit, so small records skip this serialisation.
    return len(json.dumps(rec["meta"], ensure_ascii=False)) > lim["meta_chars"]


def _created_at(value, line, errors):
    if value is None:
        return None
    when, why = times.created_at(value)
    if why:
        errors.append(RecordError(line, "created_at", why))
    return when  # one instant, one hash


def _is_object(item, line, field, errors):
    if not isinstance(item, dict):
        errors.append(RecordError(line, field, f"must be an object, got {type(item).__name__}"))
        return False
    return True


def _part_meta(item, known, out, line, field, errors):
    """Fold a passage's or claim's unknown fields (and its own `meta` object) into out["meta"]."""
    extra = item.keys() - known
    if not extra:
        return
    meta = item.get(META_FIELD)
    if meta is None:
        meta = {}
    elif isinstance(meta, dict):
        meta = dict(meta)
    else:
        errors.append(RecordError(line, f"{field}.meta", f"must be an object, got {type(meta).__name__}"))
        meta = {}
    for key in sorted(extra - {META_FIELD}):
        if key in meta:
            errors.append(RecordError(line, f"{field}.{key}", "unknown field also present in meta: rename one"))
        meta[key] = item[key]
    if meta:
        _storable(meta, f"{field}.meta", line, errors)  # a NaN, a NUL or a lone surrogate would fail in the database
        out["meta"] = meta


def _passages(items, line, lim, errors):
    """A retriever that returned one chunk twice (the same id, text and source) keeps both, in place (an answer
    cites passages by position): the second as `<id>#2` with meta.duplicate_of. The same id on other text is
    refused: a claim's passage_id could not say which it means."""
    out, seen = [], {}
    for i, p in enumerate(items):
        field = f"passages[{i}]"
        if not _is_object(p, line, field, errors):
            continue
        pid = _id(p, "id", line, field, lim, errors)
        source = _text(p, "source", line, field, lim, errors, required=False, allow_empty=True, max_chars=500)
        text = _text(p, "text", line, field, lim, errors, allow_empty=True)
        passage = {"id": pid, "source": source, "text": text}
        _part_meta(p, PASSAGE_FIELDS, passage, line, field, errors)
        if pid in seen and seen[pid] != (text, source):
            errors.append(RecordError(line, f"{field}.id", f"duplicate passage id {pid!r} on another text"))
        elif pid in seen:
            n = 2
            while f"{pid}#{n}" in seen:
                n += 1
            passage["id"] = f"{pid}#{n}"
            passage["meta"] = {**passage.get("meta", {}), "duplicate_of": pid}
        seen.setdefault(passage["id"], (text, source))
        out.append(passage)
    return out


def _claims(items, passage_ids, line, lim, errors):
    out = []
    for i, c in enumerate(items):
        field = f"claims[{i}]"
        if not _is_object(c, line, field, errors):
            continue
        claim = {"text": _text(c, "text", line, field, lim, errors)}
        verdict = c.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            errors.append(RecordError(line, f"{field}.verdict", f"{verdict!r} is not one of {', '.join(VERDICTS)}"))
        claim["verdict"] = verdict
        for key in ("evidence", "reason"):
            claim[key] = _text(c, key, line, field, lim, errors, required=False, allow_empty=True)
        claim["passage_id"] = _id(c, "passage_id", line, field, lim, errors, required=False, allow_empty=True)
        if claim["passage_id"] and claim["passage_id"] not in passage_ids:
            errors.append(
                RecordError(
                    line, f"{field}.passage_id", f"{claim['passage_id']!r} is not among this answer's passage ids"
                )
            )
        _part_meta(c, CLAIM_FIELDS, claim, line, field, errors)
        out.append(claim)
    return out
