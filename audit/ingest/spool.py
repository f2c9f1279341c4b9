"""The private spool of background imports: uploaded files and their progress, under IMPORT_SPOOL_DIR.

A spooled file is named by a random token (never the user's file name) and is never served. Its progress
sits beside it in `<token>.progress` ("bytes records"): the import runs in one transaction, so progress
written to the batch row would stay invisible to the page until the end (and on SQLite a second
connection cannot write while the import holds the write lock). The file's mtime is the heartbeat.
"""

import hashlib
import os
import re
import secrets
from pathlib import Path

from django.conf import settings

TOKEN = re.compile(r"[A-Za-z0-9_-]{20,64}")


class SpoolError(Exception):
    pass


def max_upload_bytes():
    return settings.IMPORT_MAX_UPLOAD_BYTES


def spool_dir():
    path = Path(settings.IMPORT_SPOOL_DIR)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def _path(name, suffix=""):
    if not TOKEN.fullmatch(name or ""):  # only names this module made: no path from the row is trusted
        raise SpoolError(f"not a spool name: {name!r}")
    return spool_dir() / f"{name}{suffix}"


def spool_save(upload, max_bytes):
    """Copy an uploaded file chunk by chunk into the spool: (name, size, sha256). Over max_bytes: SpoolError."""
    name = secrets.token_urlsafe(24)
    path, size, sha = _path(name), 0, hashlib.sha256()
    try:
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            for chunk in upload.chunks():
                size += len(chunk)
                if size > max_bytes:
                    raise SpoolError(f"the file is over the {max_bytes:,} bytes limit")
                sha.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return name, size, sha.hexdigest()


def spool_open(name):
    return open(_path(name), "rb")


def spool_remove(name):
    if not TOKEN.fullmatch(name or ""):
        return
    for suffix in ("", ".progress"):
        _path(name, suffix).unlink(missing_ok=True)


def progress_write(name, bytes_done, records_done):
    """Best effort: a progress report that cannot be written must not fail the import."""
    try:
        tmp = _path(name, ".progress.tmp")
        tmp.write_text(f"{bytes_done} {records_done}")
        os.replace(tmp, _path(name, ".progress"))  # atomic: a reader never sees half a line
    except OSError:
        pass


def progress_read(name):
    """(bytes_done, records_done, mtime) of a running import, or None before its first report."""
    try:
        path = _path(name, ".progress")
        text, mtime = path.read_text(), path.stat().st_mtime
        done, records = (int(x) for x in text.split())
    except (OSError, ValueError, SpoolError):
        return None
    return done, records, mtime
