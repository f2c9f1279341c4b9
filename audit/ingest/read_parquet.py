"""Parquet answer files (Hugging Face `Dataset.to_parquet()`, pandas `DataFrame.to_parquet()`), read a batch
of rows at a time: never the whole table.

Heavy (pyarrow, which brings pandas): read.py loads this module through audit.lazy on the first Parquet
file only. Each row becomes a plain record and goes through the format adapters like a JSON object: list and
struct columns are Python lists and dicts, a map column a dict, a timestamp, date or time its ISO 8601
string, a duration its seconds, a decimal a number, binary data its UTF-8 text, and a float NaN null (pandas
writes a missing number as NaN). pandas' index columns (`__index_level_0__`) are left out. The line of an
error is the row's number in the file (1: the first row).

A file that is not Parquet, or is corrupt, is one error naming the file; so is a row group whose rows
average more than IMPORT_MAX_LINE_BYTES uncompressed (the bound of one JSON line), read from the footer
before any row is decoded. The footer's sizes also set how many rows are decoded at a time (BATCH_BYTES).
They are sizes as encoded: a value repeated in many rows is stored once (dictionary encoding), so such a
column decodes larger than the footer says; each decoded batch is measured again (pyarrow's nbytes) before its
rows become Python objects, and refused the same way when its rows average over the limit.
"""

import datetime as dt
import decimal
import math
import re

import pyarrow
import pyarrow.parquet as pq

from audit.ingest.parse import RecordError

BATCH_ROWS = 64  # rows decoded into Python objects at a time, at most
BATCH_BYTES = 32 * 1024 * 1024  # and about this much data (uncompressed): fewer rows when they are large
INDEX_COLUMN = re.compile(r"__index_level_\d+__")
# What pyarrow raises on a file that is not Parquet or is damaged (a bad footer, a corrupt page, a map with
# a key twice).
# OverflowError: a date past year 9999; TypeError: a map column keyed by lists or structs (unhashable)
UNREADABLE = (pyarrow.ArrowException, OSError, ValueError, KeyError, OverflowError, TypeError)


def parquet_file(source, file_name, lim, adapt, advance=None):
    """Yield (line, record_or_None, errors) from a seekable binary file; advance(share of the rows read)."""
    try:
        # No pre-buffering: it reads ahead on Arrow's I/O threads, which the file object's reads would then
        # cross (and which, left running, can abort the interpreter's exit); each read here is in this thread.
        pf = pq.ParquetFile(source, pre_buffer=False)
        refused = _too_large(pf.metadata, lim)
    except UNREADABLE as e:
        refused = _unreadable(file_name, e, 0)
    if refused:
        yield refused.line, None, [refused]
        return
    total = max(pf.metadata.num_rows, 1)
    for line, row in _rows(pf, file_name, lim):
        if isinstance(row, RecordError):
            yield line, None, [row]
            return
        yield (line, *_record(row, line, adapt))
        if advance:
            advance(line / total)


def _rows(pf, file_name, lim):
    """(line, row as a dict) of every row, decoded a batch at a time; (line, RecordError) where the file is
    damaged, then nothing more. Only pyarrow's own calls are guarded: an error in the caller's code is not
    mistaken for a damaged file."""
    columns = [name for name in pf.schema_arrow.names if not INDEX_COLUMN.fullmatch(name)]
    batches = pf.iter_batches(batch_size=_batch_rows(pf.metadata), columns=columns, use_threads=False)
    line = 0
    while True:
        try:
            batch = next(batches, None)
            if batch is not None and batch.num_rows and batch.nbytes / batch.num_rows > lim["line_bytes"]:
                yield line + 1, _decoded_too_large(batch, lim, line + 1)
                return
            rows = [] if batch is None else batch.to_pylist(maps_as_pydicts="strict")
        except UNREADABLE as e:
            yield line + 1, _unreadable(file_name, e, line + 1)
            return
        if batch is None:
            return
        for row in rows:
            line += 1
            yield line, row


def _decoded_too_large(batch, lim, line):
    """A batch whose rows, decoded, average over the limit: the footer's sizes are as encoded, and a value
    stored once (dictionary encoding) for many rows decodes once per row."""
    size = batch.nbytes // batch.num_rows
    return RecordError(
        line, "", f"rows of {size:,} bytes on average (decoded), over the {lim['line_bytes']:,} bytes limit"
    )


def _unreadable(file_name, error, line):
    return RecordError(line, "file", f"{file_name!r} is not a readable Parquet file: {error}")


def _too_large(meta, lim):
    """The RecordError of the first row group whose rows are over the limit on average, or None."""
    first = 1
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        if group.num_rows and group.total_byte_size / group.num_rows > lim["line_bytes"]:
            size = group.total_byte_size // group.num_rows
            message = f"rows of {size:,} bytes on average (uncompressed), over the {lim['line_bytes']:,} bytes limit"
            return RecordError(first, "", message)
        first += group.num_rows
    return None


def _batch_rows(meta):
    """Rows to decode at a time: BATCH_ROWS, fewer when the widest row group's rows are large."""
    groups = (meta.row_group(i) for i in range(meta.num_row_groups))
    widest = max((g.total_byte_size / g.num_rows for g in groups if g.num_rows), default=1)
    return max(1, min(BATCH_ROWS, int(BATCH_BYTES / max(widest, 1))))


def _record(row, line, adapt):
    bad = []
    obj = _plain(row, "", bad)
    if bad:
        return None, [RecordError(line, field, "binary data that is not UTF-8 text") for field in bad]
    return adapt(obj, line)


def _plain(value, where, bad):
    """value with what JSON has no form for made plain (see the module docstring); `bad` collects the fields
    holding binary data that is not UTF-8 text."""
    if isinstance(value, dict):
        return {_key(k, where, bad): _plain(v, f"{where}.{k}" if where else str(k), bad) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, f"{where}[{i}]", bad) for i, v in enumerate(value)]
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        try:
            return value.decode()
        except UnicodeDecodeError:
            bad.append(where)
            return None
    return value


def _key(key, where, bad):
    """A map column's key as a JSON object key (a string)."""
    return key if isinstance(key, str) else str(_plain(key, where, bad))
