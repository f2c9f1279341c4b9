"""Streaming reading of answer files, one record at a time: JSON lines, .json, CSV and Parquet.

The kind of a file is its name's suffix; a .json or .jsonl file (the API's body has no name of its own) that starts
with Parquet's magic bytes is read as Parquet. A gzipped file (`logs.jsonl.gz`, or any body starting with gzip's
magic bytes) is inflated as it is read, up to IMPORT_MAX_INFLATED_BYTES (a small web upload once, in memory, by
inline_file); Parquet compresses itself and is refused gzipped. A file starting with a UTF-16 byte order mark
(Excel's "Unicode Text") is read as UTF-8. Each kind has its module: read_json (JSON lines and .json files),
read_csv, read_parquet. Every record goes through formats.to_native (the format named, or detected) before
validation (parse.normalise).

`read_records(reader, file_name)` yields `(line, record, errors)`: `record` is the normalised dict (see
parse.normalise) or None when `errors` (a list of RecordError) is not empty. File-level problems (unsupported type,
bad header) come as a single item with line 0 / 1 and no record.
"""

import codecs
import gzip
import hashlib
import io
import zlib

from django.conf import settings

from audit.ingest import formats, read_csv, read_json, unsplit
from audit.ingest.parse import RecordError, limits, normalise
from audit.ingest.spool import max_upload_bytes
from audit.lazy import lazy_module

read_parquet = lazy_module("audit.ingest.read_parquet")  # pyarrow: loaded by the first Parquet file only

JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv",)
JSON_SUFFIXES = (".json",)  # a JSON array of records, or JSON lines
PARQUET_SUFFIXES = (".parquet", ".pq")
PARQUET_MAGIC = b"PAR1"
GZIP_MAGIC = b"\x1f\x8b"
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


class StreamError(Exception):
    """The file cannot be read as a whole (damaged gzip data, too large inflated, broken UTF-16): one file error."""


class Inflating(io.RawIOBase):
    """A gzip stream read inflated, at most `limit` bytes of it; StreamError when it is damaged or larger."""

    def __init__(self, raw, limit):
        self.gz, self.limit, self.inflated = gzip.GzipFile(fileobj=raw), limit, 0

    def readable(self):
        return True

    def readinto(self, buf):
        try:
            n = self.gz.readinto(buf)
        except (OSError, EOFError, zlib.error) as e:  # BadGzipFile is an OSError; a cut-off stream an EOFError
            raise StreamError(f"the gzip data is damaged or cut short ({e})") from None
        self.inflated += n
        if self.inflated > self.limit:
            raise StreamError(f"inflated, the file is over {self.limit:,} bytes (IMPORT_MAX_INFLATED_BYTES)")
        return n


class Utf8From16(io.RawIOBase):
    """A UTF-16 file (its byte order mark first, as Excel's "Unicode Text" and some exports write it) read as the
    UTF-8 bytes every reader expects; line ends are kept as written."""

    def __init__(self, buffered):
        self.text, self.pending = io.TextIOWrapper(buffered, encoding="utf-16", newline=""), b""

    def readable(self):
        return True

    def readinto(self, buf):
        while len(self.pending) < len(buf):
            try:
                chunk = self.text.read(1 << 16)
            except UnicodeDecodeError as e:
                raise StreamError(f"the file starts as UTF-16 but is not valid UTF-16 ({e.reason})") from None
            if not chunk:
                break
            self.pending += chunk.encode("utf-8")
        n = min(len(buf), len(self.pending))
        buf[:n], self.pending = self.pending[:n], self.pending[n:]
        return n


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

    def rewound(self):
        """For a file read out of order (Parquet): (the wrapped file back at its start, its size), the whole
        file hashed and nothing counted as read yet (the reader reports its progress itself)."""
        self.raw.seek(0)
        self.sha, self.bytes_read, size = hashlib.sha256(), 0, 0
        while chunk := self.raw.read(1 << 20):
            self.sha.update(chunk)
            size += len(chunk)
        self.raw.seek(0)
        return self.raw, size

    def sent(self):
        """(bytes, sha256 hex) of the file as sent: what was read, or an Inflated upload's own."""
        return getattr(self.raw, "sent", None) or (self.bytes_read, self.sha.hexdigest())


class Inflated(io.BytesIO):
    """A small gzipped upload inflated in memory, once (see inline_file), and imported from these bytes; `sent` is
    (size, sha256 hex) of the upload as sent, which the batch records (CountingReader.sent)."""

    def __init__(self, data, sent):
        super().__init__(data)
        self.sent = sent


def inline_file(fileobj, file_name, limit):
    """The file to import in the request, or None when it gives `limit` bytes or more once read (it is queued).
    A gzip stream is inflated here, at most `limit` bytes and only once: the import reads what it gave (Inflated).
    Its trailer is not trusted (it states only the last member's size, and only what the file says). A stream the
    import refuses (damaged, over IMPORT_MAX_INFLATED_BYTES or the upload limit, Parquet) goes as sent: the import
    names why."""
    fileobj.seek(0, io.SEEK_END)
    size = fileobj.tell()
    fileobj.seek(0)
    if size >= limit:
        return None
    sent = fileobj.read()
    fileobj.seek(0)
    if not sent.startswith(GZIP_MAGIC) or file_kind(file_name) == "parquet":
        return fileobj
    keep = min(settings.IMPORT_MAX_INFLATED_BYTES, max_upload_bytes())
    try:
        data = gzip.GzipFile(fileobj=io.BytesIO(sent)).read(min(limit, keep + 1))
    except (OSError, EOFError, zlib.error):
        return fileobj
    if len(data) >= limit:
        return None
    if len(data) > keep or data.startswith(PARQUET_MAGIC):
        return fileobj
    return Inflated(data, (size, hashlib.sha256(sent).hexdigest()))


def file_kind(file_name):
    name = (file_name or "").lower().removesuffix(".gz")
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if name.endswith(JSON_SUFFIXES):
        return "json"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


def read_records(reader, file_name, fmt="auto", mapping=None):
    """Yield (line, record_or_None, errors) from a CountingReader (or any buffered, seekable binary file)."""
    kind = file_kind(file_name)
    if kind is None:
        message = f"unsupported file type {file_name!r}: use .jsonl, .json, .csv or .parquet (or .jsonl.gz, ...)"
        if (file_name or "").lower().endswith((".xlsx", ".xls", ".ods", ".numbers")):
            message += "; save the sheet as CSV (UTF-8) first, a spreadsheet's own format is not read"
        yield 0, None, [RecordError(0, "file", message)]
        return
    try:
        fmt = formats.check_format(fmt, mapping)
    except formats.MappingError as e:
        yield 0, None, [RecordError(0, "format", str(e))]
        return
    lim, mapping = limits(), mapping or {}
    stream = io.BufferedReader(reader, 1 << 20) if isinstance(reader, CountingReader) else reader
    gzipped = hasattr(stream, "peek") and stream.peek(len(GZIP_MAGIC)).startswith(GZIP_MAGIC)
    try:
        if kind != "parquet":
            stream = _decoded(stream, gzipped, lim)
        yield from _records(stream, reader, kind, file_name, lim, fmt, mapping, gzipped)
    except StreamError as e:
        yield 0, None, [RecordError(0, "file", str(e))]


def _decoded(stream, gzipped, lim):
    """The stream inflated when gzipped, and as UTF-8 when it is UTF-16 (told from its byte order mark)."""
    if gzipped:
        stream = io.BufferedReader(Inflating(stream, settings.IMPORT_MAX_INFLATED_BYTES), 1 << 20)
        lim["array_bytes"] = max_upload_bytes()
    if hasattr(stream, "peek") and stream.peek(2)[:2] in UTF16_BOMS:
        stream = io.BufferedReader(Utf8From16(stream), 1 << 20)
    return stream


def _records(stream, reader, kind, file_name, lim, fmt, mapping, gzipped):
    if kind in ("json", "jsonl") and stream.peek(len(PARQUET_MAGIC)).startswith(PARQUET_MAGIC):
        kind = "parquet"
    if kind == "parquet" and gzipped:
        message = "a gzipped Parquet file: Parquet compresses its own columns, upload the .parquet file itself"
        yield 0, None, [RecordError(0, "file", message)]
    elif kind == "parquet":
        yield from _parquet(reader, file_name, lim, adapter(fmt, mapping, lim))
    elif kind == "csv":
        yield from read_csv.csv_file(stream, lim, fmt, mapping, adapter)
    elif kind == "json":
        yield from read_json.json_file(stream, lim, adapter(fmt, mapping, lim), _shares(reader))
    else:
        yield from read_json.jsonl_file(stream, lim, adapter(fmt, mapping, lim))


def _shares(reader):
    """For a file read whole before its records (a JSON array, a pandas frame): advance(share of the records
    yielded) makes the bytes read stand for that share of the file, as Parquet's rows do; 1.0 restores them all."""
    if not isinstance(reader, CountingReader):
        return None
    total = []

    def advance(share):
        total[:] = total or [reader.bytes_read]  # the whole file, read before the first record
        reader.bytes_read = int(total[0] * share)

    return advance


def adapter(fmt, mapping, lim):
    """adapt(obj, line) -> (record, errors): obj in the format's shape, validated as a native record."""

    def adapt(obj, line):
        native, renames = formats.to_native(obj, fmt, mapping)
        rec, errors = normalise(native, line, lim)
        if rec is not None and fmt != "native":  # the native format never splits a string
            rec["before_split"] = unsplit.before_split_hash(native, rec, lim)
        return rec, formats.renamed(errors, renames) if renames else formats.hinted(errors, fmt, obj)

    return adapt


def _parquet(reader, file_name, lim, adapt):
    if not isinstance(reader, CountingReader):
        yield from read_parquet.parquet_file(reader, file_name, lim, adapt)
        return
    source, size = reader.rewound()

    def advance(fraction):  # the share of the rows read so far stands for the bytes
        reader.bytes_read = int(size * fraction)

    yield from read_parquet.parquet_file(source, file_name, lim, adapt, advance)
