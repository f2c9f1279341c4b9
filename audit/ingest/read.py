"""Streaming reading of answer files (JSONL, CSV, or a JSON array), one record at a time.

Every record goes through formats.to_native (the format named, or detected) before validation.
JSONL and CSV are read with bounded memory. A .json file is a JSON array of records, one object spread over
lines (a record, or records in a list under a key of formats.RECORD_LISTS such as a DeepEval test run's
testCases: the file's other fields, lists aside, go with each record as its field `file`), or JSON lines;
an array or an object is decoded whole. A CSV file's delimiter is whichever of `,` `;` and tab its header
line holds most (Excel writes `;` in many locales). NaN and Infinity are not JSON (and a JSON column cannot
store them): the error names the field that holds one.

`read_records(reader, file_name)` yields `(line, record, errors)`: `record` is the normalised dict (see
parse.normalise) or None when `errors` (a list of RecordError) is not empty. File-level problems
(unsupported type, bad header) come as a single item with line 0 / 1 and no record.
"""

import ast
import csv
import hashlib
import io
import itertools
import json

from audit.ingest import formats
from audit.ingest.parse import RecordError, limits, normalise

JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv",)
JSON_SUFFIXES = (".json",)  # a JSON array of records, or JSON lines


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
    if name.endswith(JSON_SUFFIXES):
        return "json"
    return None


def read_records(reader, file_name, fmt="auto", mapping=None):
    """Yield (line, record_or_None, errors) from a CountingReader (or any buffered binary file)."""
    kind = file_kind(file_name)
    if kind is None:
        yield 0, None, [RecordError(0, "file", f"unsupported file type {file_name!r}: use .jsonl, .json or .csv")]
        return
    try:
        fmt = formats.check_format(fmt, mapping)
    except formats.MappingError as e:
        yield 0, None, [RecordError(0, "format", str(e))]
        return
    lim = limits()
    stream = io.BufferedReader(reader, 1 << 20) if isinstance(reader, CountingReader) else reader
    adapt = _adapter(fmt, mapping or {}, lim)
    if kind == "json":
        yield from _json(stream, lim, adapt)
    else:
        yield from (_csv(stream, lim, fmt, mapping or {}) if kind == "csv" else _jsonl(stream, lim, adapt))


def _adapter(fmt, mapping, lim):
    def adapt(obj, line):
        native, renames = formats.to_native(obj, fmt, mapping)
        rec, errors = normalise(native, line, lim)
        return rec, formats.renamed(errors, renames)

    return adapt


def _json(stream, lim, adapt):
    """A .json file: an array, one object spread over lines, or JSON lines (a first line that parses)."""
    head = stream.peek(1 << 16)[: 1 << 16].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"[") and not (head.startswith(b"{") and not _json_lines(head)):
        yield from _jsonl(stream, lim, adapt)
        return
    try:
        text = stream.read().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        yield 0, None, [RecordError(0, "", f"not valid UTF-8 (byte {e.start + 1} of the file)")]
        return
    yield from (_json_array(text, adapt) if head.startswith(b"[") else _json_object(text, adapt))


def _json_lines(head):
    """Whether a .json file starting with "{" is JSON lines: its first line is a whole value, or (a first
    record cut short) its second line is a whole object. Neither is, in an object spread over lines."""
    first, newline, rest = head.partition(b"\n")
    second = rest.lstrip(b" \t\r\n").partition(b"\n")[0]
    return not newline or _whole(first) is not None or isinstance(_whole(second), dict)


def _whole(line):
    try:
        return json.loads(line)
    except ValueError:
        return None
    except RecursionError:
        return True


def _json_object(text, adapt):
    """One object: a record, or records in a list under a key of formats.RECORD_LISTS."""
    constants = _Constants()
    try:
        obj = json.loads(text, parse_constant=constants)
    except json.JSONDecodeError as e:
        yield e.lineno, None, [RecordError(e.lineno, "", f"malformed JSON: {e.msg} (column {e.colno})")]
        return
    except RecursionError:
        yield 1, None, [RecordError(1, "", "malformed JSON: too deeply nested")]
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

    yield from _json_array(text, with_file, _member(text, key))


def _member(text, key):
    """Where the value of the top-level member `key` starts, in the text of a well-formed JSON object."""
    decoder, pos = json.JSONDecoder(), _skip(text, text.index("{") + 1)
    while True:
        name, pos = decoder.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)  # past the ':'
        if name == key:
            return pos
        pos = _skip(text, _skip(text, decoder.raw_decode(text, pos)[1]) + 1)  # past the value and its ','


def _json_array(text, adapt, start=None):
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


def _jsonl(stream, lim, adapt):
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


def _csv(stream, lim, fmt, mapping):
    csv.field_size_limit(max(lim["line_bytes"], 1 << 20))
    counter = [0]  # physical lines read so far
    lines = _csv_lines(stream, lim, counter)
    try:
        first = next(lines, None)
        if first is None:
            return
        reader = csv.reader(itertools.chain([first], lines), delimiter=_delimiter(first))
        header = next(reader, None)
        fmt, required, json_cols = formats.csv_columns(fmt, mapping, header)
        joined = formats.JOINED.get(fmt, ())
        adapt = _adapter(fmt, mapping, lim)
        missing = [c for c in required if c not in header]
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
            obj, errors = _csv_object(dict(zip(header, row, strict=True)), line, json_cols, required, joined)
            yield (line, None, errors) if errors else (line, *adapt(obj, line))
    except _StopLine as stop:
        yield stop.error.line, None, [stop.error]
    except csv.Error as e:
        yield counter[0], None, [RecordError(counter[0], "", f"malformed CSV: {e}")]


def _cell_json(value):
    """JSON, or a list of strings written as a Python literal (how pandas saves a list column)."""
    try:
        return json.loads(value, parse_constant=_no_constant)
    except ValueError:
        if not value.lstrip().startswith("["):
            raise
        parsed = ast.literal_eval(value.strip())
        if not isinstance(parsed, list) or not all(isinstance(x, str) for x in parsed):
            raise ValueError("not a JSON value nor a list of strings") from None
        return parsed


def _delimiter(header_line):
    return max((",", ";", "\t"), key=header_line.count)  # a tie (a one-column header) is ","


def _no_constant(name):
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


def _csv_object(row, line, json_cols, required, joined=()):
    """CSV cells are strings: the JSON columns are decoded (a `joined` one unless it holds a list), empty
    optional cells dropped."""
    obj, errors = {}, []
    for key, value in row.items():
        if key in json_cols and value.strip() == "" and key not in required:
            continue
        if key in joined and not value.lstrip().startswith("["):
            obj[key] = value  # "a|b": split by formats.to_native
        elif key in json_cols:
            try:
                obj[key] = _cell_json(value)
            except (ValueError, RecursionError, SyntaxError, MemoryError) as e:
                errors.append(RecordError(line, key, f"malformed JSON in the column: {getattr(e, 'msg', e)}"))
        elif key == "created_at" and value.strip() == "":
            continue
        else:
            obj[key] = value
    return obj, errors
