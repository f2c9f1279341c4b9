"""JSON answer files: JSON lines (.jsonl, .ndjson), and .json files, one record at a time.

A .json file is a JSON array of records, one object spread over lines (a record, or records in a list under a
key of formats.RECORD_LISTS such as a DeepEval test run's testCases: the file's other fields, lists aside, go
with each record as its field `file`; or a pandas frame's rows, see frame_rows), or JSON lines; an array or an
object is decoded whole. JSON lines are read with bounded memory (a line over IMPORT_MAX_LINE_BYTES is refused
without being held). NaN and Infinity are not JSON (and a JSON column cannot store them): the error names the
field that holds one.

Each reader takes a buffered binary stream, the limits (parse.limits) and `adapt(obj, line)`, which turns a
decoded object into (record, errors) (see read.adapter), and yields (line, record_or_None, errors).
"""

import json
import re

from audit.ingest import formats
from audit.ingest.parse import RecordError

# how a pandas frame saved by to_json starts: orient "columns" ({"col": {"0": ...), "index" ({"0": {...), "split",
# "table" ({"schema": {"fields": ...)
A_FRAME = re.compile(
    rb'^\{\s*(?:"(?:[^"\\]|\\.)*"\s*:\s*\{\s*"0"\s*:|"0"\s*:\s*\{|"columns"\s*:\s*\[|"schema"\s*:\s*\{\s*"fields"\s*:)'
)
# the name pandas gives an unnamed index (level_0, level_1, ... for each level of an unnamed multi-index)
DEFAULT_INDEX = re.compile(r"index|level_\d+")


def json_file(stream, lim, adapt, advance=None):
    """A .json file: an array, one object spread over lines, or JSON lines (a first line that parses). One read
    whole calls advance(share of its records yielded so far), when given, for the progress bar."""
    head = stream.peek(1 << 16)[: 1 << 16].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"[") and not (head.startswith(b"{") and (not _json_lines(head) or _holds_records(head))):
        yield from jsonl_file(stream, lim, adapt)
        return
    cap = lim.get("array_bytes")  # a gzipped file: parsed whole, an array is held to what an upload may be
    data = stream.read(cap + 1 if cap else -1)
    if cap and len(data) > cap:
        yield 0, None, [RecordError(0, "file", f"a JSON array over {cap:,} bytes: write JSON lines")]
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        yield 0, None, [RecordError(0, "", f"not valid UTF-8 (byte {e.start + 1} of the file)")]
        return
    advance = advance or (lambda share: None)
    yield from (
        _json_array(text, adapt, None, advance) if head.startswith(b"[") else _json_object(text, adapt, advance)
    )
    advance(1.0)


def _json_lines(head):
    """Whether a .json file starting with "{" is JSON lines: its first line is a whole value, or (a first
    record cut short) its second line is a whole object. Neither is, in an object spread over lines."""
    first, newline, rest = head.partition(b"\n")
    second = rest.lstrip(b" \t\r\n").partition(b"\n")[0]
    return not newline or _whole(first) is not None or isinstance(_whole(second), dict)


def _holds_records(head):
    """A .json file of one line that is one object holding a list of records (formats.record_list) or a pandas
    frame (formats.frame_rows); one longer than the head is known by how it starts."""
    first, newline, rest = head.partition(b"\n")
    if not newline and _whole(first) is None:
        return bool(formats.HOLDS_RECORDS.match(first) or A_FRAME.match(first))
    whole = _whole(first)
    return not rest.strip() and (formats.record_list(whole) is not None or frame_rows(whole) is not None)


def _whole(line):
    try:
        return json.loads(line)
    except ValueError:
        return None
    except RecursionError:
        return True


def _json_object(text, adapt, advance):
    """One object: a record, records in a list under a key of formats.RECORD_LISTS, or a pandas frame's rows."""
    constants = _Constants()
    try:
        obj = json.loads(text, parse_constant=constants)
    except json.JSONDecodeError as e:
        yield e.lineno, None, [RecordError(e.lineno, "", f"malformed JSON: {e.msg} (column {e.colno})")]
        return
    except RecursionError:
        yield 1, None, [RecordError(1, "", "malformed JSON: too deeply nested")]
        return
    rows = frame_rows(obj)
    if rows is not None:  # a pandas frame: a row's number stands for its line (the file is one line)
        for line, row in enumerate(rows, 1):
            bad = constants.error(row, line)
            yield (line, None, [bad]) if bad else (line, *adapt(row, line))
            advance(line / len(rows))
        return
    key = formats.record_list(obj)
    if key is None:
        bad = constants.error(obj, 1)
        yield (1, None, [bad]) if bad else (1, *adapt(obj, 1))
        return
    fields, errors = formats.file_fields(obj, key)
    errors = [RecordError(1, f, m) for f, m in errors] + [e for e in [constants.error(fields, 1)] if e]
    if errors:
        yield 1, None, errors
        return

    def with_file(record, line):
        if not fields or not isinstance(record, dict):
            return adapt(record, line)
        if "file" in record:
            return None, [RecordError(line, "file", "the file's other fields go into 'file': rename the record's")]
        return adapt({**record, "file": fields}, line)

    yield from _json_array(text, with_file, _member(text, key), advance)


def _member(text, key):
    """Where the value of the top-level member `key` starts, in the text of a well-formed JSON object."""
    decoder, pos = json.JSONDecoder(), _skip(text, text.index("{") + 1)
    while True:
        name, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)  # past the ':'
        if name == key:
            return pos
        pos = _skip(text, _skip(text, decoder.raw_decode(text, pos)[1]) + 1)  # past the value and its ','


def _json_array(text, adapt, start=None, advance=None):
    """A JSON array of records: the whole text, or the member of an object at `start`. Each record's line is
    where it starts in the file."""
    constants = _Constants()
    decoder = json.JSONDecoder(parse_constant=constants)
    pos = _skip(text, (text.index("[") if start is None else start) + 1)
    line, counted = 1, 0
    while pos < len(text) and text[pos] != "]":
        line, counted = line + text.count("\n", counted, pos), pos
        try:
            obj, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as e:
            yield line, None, [RecordError(line, "", f"malformed JSON: {getattr(e, 'msg', 'too deeply nested')}")]
            return
        bad = constants.error(obj, line)
        yield (line, None, [bad]) if bad else (line, *adapt(obj, line))
        if advance:
            advance(end / len(text))
        pos = _skip(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip(text, pos + 1)
        elif pos >= len(text) or text[pos] != "]":
            line += text.count("\n", counted, pos)
            yield line, None, [RecordError(line, "", "malformed JSON: expected ',' or ']' after a record")]
            return
    if pos >= len(text) or (start is None and text[pos + 1 :].strip()):
        yield line, None, [RecordError(line, "", "malformed JSON: the array is not closed by a final ']'")]


def _skip(text, pos):
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def jsonl_file(stream, lim, adapt):
    """JSON lines: one value a line, blank lines skipped; an oversized line is skipped without being held."""
    line, constants = 0, _Constants()
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
            obj = json.loads(text, parse_constant=constants)
        except (ValueError, RecursionError) as e:
            msg = getattr(e, "msg", str(e) or "too deeply nested")
            yield line, None, [RecordError(line, "", f"malformed JSON: {msg} (column {getattr(e, 'colno', '?')})")]
            continue
        bad = constants.error(obj, line)
        yield (line, None, [bad]) if bad else (line, *adapt(obj, line))


def no_constant(name):
    # NaN and Infinity are not JSON and cannot be stored in a JSON column (PostgreSQL refuses them).
    raise ValueError(f"{name} is not allowed")


class _Constant:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _Constants:
    """parse_constant of a decoder: each NaN or Infinity becomes a marker, so the error names its field."""

    def __init__(self):
        self.seen = False

    def __call__(self, name):
        self.seen = True
        return _Constant(name)

    def error(self, obj, line):
        """The RecordError naming the fields of obj that hold NaN or Infinity, or None; ready for the next."""
        if not self.seen:
            return None
        self.seen = False
        found, stack = [], [("", obj)]
        while stack:
            where, value = stack.pop()
            if isinstance(value, _Constant):
                found.append((value.name, where))
            elif isinstance(value, dict):
                stack.extend((f"{where}.{k}" if where else k, v) for k, v in reversed(value.items()))
            elif isinstance(value, list):
                stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
        if not found:
            return None
        at = ", ".join(where for _, where in found if where)
        at = f" (in {at}: write null for a missing value)" if at else ""
        return RecordError(line, "", f"malformed JSON: {found[0][0]} is not allowed{at}")


def frame_rows(obj):
    """The rows of a pandas frame saved by to_json in its default orient, "columns" ({column: {index: value}}), or
    in "index" ({index: {column: value}}), "split" ({columns, index, data}) or "table" (see _table_rows); else None.
    A frame of the first two is told by its index, pandas' default: the row numbers "0", "1", ... as keys."""
    if not isinstance(obj, dict) or not obj:
        return None
    if set(obj) == {"schema", "data"} and isinstance(obj["schema"], dict) and "fields" in obj["schema"]:
        return _table_rows(obj["schema"], obj["data"])
    if set(obj) in ({"columns", "index", "data"}, {"columns", "data"}):
        columns, data = obj["columns"], obj["data"]
        rows = isinstance(columns, list) and isinstance(data, list)
        if rows and all(isinstance(r, list) and len(r) == len(columns) for r in data):
            return [dict(zip(columns, r, strict=True)) for r in data]
        return None
    if not all(isinstance(v, dict) for v in obj.values()):
        return None
    if _row_numbers(obj):
        return list(obj.values())
    index = list(next(iter(obj.values())))
    if _row_numbers(index) and all(list(v) == index for v in obj.values()):
        return [{column: values[i] for column, values in obj.items()} for i in index]
    return None


def _row_numbers(keys):
    return all(isinstance(k, str) and k.isascii() and k.isdecimal() for k in keys)


def _table_rows(schema, data):
    """The rows of orient "table" ({"schema": {"fields", "primaryKey", "pandas_version"}, "data": [row, ...]}):
    the schema describes the file, not an answer, and is left out; so is the index when pandas named it (an
    unnamed index is written as the column "index"), while a named one (`rename_axis("row")`) is a field."""
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        return None
    key = schema.get("primaryKey")
    unnamed = [k for k in key if isinstance(k, str) and DEFAULT_INDEX.fullmatch(k)] if isinstance(key, list) else []
    return [{k: v for k, v in row.items() if k not in unnamed} for row in data]
