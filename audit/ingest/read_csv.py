"""CSV answer files, read with bounded memory, one row at a time.

The delimiter is whichever of `,` `;` and tab the header line holds most (Excel writes `;` in many locales), or
the one a first line `sep=;` names (Excel's own hint, which it writes and reads before the header).
The header is checked against the format's required columns (formats.csv_columns); a cell of a JSON column
holds JSON or a dict or list as a Python literal (how pandas writes an object column: pyliteral.py), a
`|`-joined list of DeepEval's save_as is split by formats.to_native. A quoted cell may span lines: a record's line
is where it starts.
A column without a name is left out: pandas' `to_csv()` writes the frame's index first under an empty header
(read back by pandas as `Unnamed: 0`, and written again under that name), which is no field of the answer.

`csv_file(stream, lim, fmt, mapping, adapter)` yields (line, record_or_None, errors); adapter(fmt, mapping,
lim) makes the `adapt` of the format the header shows (see read.adapter).
"""

import csv
import itertools
import json
import re

from audit.ingest import formats, pyliteral
from audit.ingest.parse import RecordError
from audit.ingest.read_json import no_constant

SEP_HINT = re.compile(r'^"?sep=([,;\t|])"?\r?\n?$')
UNNAMED = re.compile(r"Unnamed: \d+")  # pandas' name for a column read under an empty header


# Excel's plain "CSV (Comma delimited)" writes the machine's legacy code page (Windows-1252, Mac Roman).
SPREADSHEET_HINT = 'a spreadsheet writes UTF-8 when saved as "CSV UTF-8"'


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
            where = f"not valid UTF-8 (byte {e.start + 1} of the line)"
            raise _StopLine(RecordError(counter[0], "", f"{where}: {SPREADSHEET_HINT}")) from None


def csv_file(stream, lim, fmt, mapping, adapter):
    csv.field_size_limit(max(lim["line_bytes"], 1 << 20))
    counter = [0]  # physical lines read so far
    lines = _csv_lines(stream, lim, counter)
    try:
        first = next(lines, None)
        hint = first and SEP_HINT.match(first)  # Excel's `sep=;` line names the delimiter, then the header follows
        if hint:
            first = next(lines, None)
        if first is None:
            return
        reader = csv.reader(itertools.chain([first], lines), delimiter=hint[1] if hint else _delimiter(first))
        header, at = next(reader, None), counter[0]  # the header's line
        width, keep = len(header), _named(header, mapping)
        header = [header[i] for i in keep]
        hint = formats.unknown_shape(fmt, header)
        fmt, required, json_cols = formats.csv_columns(fmt, mapping, header)
        joined = formats.JOINED.get(fmt, ())
        adapt = adapter(fmt, mapping, lim)
        missing = [c for c in required if c not in header]
        if missing:
            yield (
                at,
                None,
                [RecordError(at, c, "missing column in the CSV header" + hint * (c == "question")) for c in missing],
            )
            return
        dupes = {c for c in header if header.count(c) > 1}
        if dupes:
            yield at, None, [RecordError(at, c, "column appears twice in the CSV header") for c in sorted(dupes)]
            return
        while True:
            line = counter[0] + 1  # a quoted cell may span lines: the record starts here
            row = next(reader, None)
            if row is None:
                return
            if not any(row):
                continue
            if len(row) != width:
                yield line, None, [RecordError(line, "", f"{len(row)} cells, the header has {width}")]
                continue
            row = [row[i] for i in keep]
            obj, errors = _csv_object(dict(zip(header, row, strict=True)), line, json_cols, required, joined)
            yield (line, None, errors) if errors else (line, *adapt(obj, line))
    except _StopLine as stop:
        yield stop.error.line, None, [stop.error]
    except csv.Error as e:
        yield counter[0], None, [RecordError(counter[0], "", f"malformed CSV: {e}")]


def _named(header, mapping):
    """The indexes of the columns to read: all but those without a name (empty, or pandas' `Unnamed: N`),
    unless the field mapping names one."""
    mapped = set((mapping or {}).values())
    return [i for i, c in enumerate(header) if (c.strip() and not UNNAMED.fullmatch(c.strip())) or c in mapped]


def _cell_json(value):
    """JSON, or a dict or list written as a Python literal (how pandas saves an object column: see pyliteral)."""
    try:
        return json.loads(value, parse_constant=no_constant)
    except ValueError as e:
        if not value.lstrip().startswith(("[", "{")):
            raise
        try:
            return pyliteral.read(value)
        except ValueError as why:
            raise ValueError(f"{getattr(e, 'msg', e)}; not a Python literal either: {why}") from None


def _delimiter(header_line):
    return max((",", ";", "\t"), key=header_line.count)  # a tie (a one-column header) is ","


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
