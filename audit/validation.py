"""What the databases accept, checked before a value is written: one helper for every path.

PostgreSQL refuses NUL in text and in JSON (strings and keys), text that is not valid Unicode (a lone
surrogate cannot be encoded as UTF-8), non-finite numbers in JSON (NaN, and floats that overflowed to
infinity, e.g. 1e400), and UTC offsets beyond +/-15:59:59. SQLite stores all of these, but the app must not
keep data it could not move to PostgreSQL, so both get the same rules.
"""

import math
from datetime import UTC, timedelta

from django.http import HttpResponseBadRequest, JsonResponse

MAX_UTC_OFFSET = timedelta(hours=15, minutes=59, seconds=59)


BIGINT_MAX = 2**63 - 1  # the largest integer (a primary key, a bigint column) either database stores


def row_id(value):
    """A request value naming a row: its id, or None unless it is ASCII digits within the databases' range
    (so a bad or oversized link finds nothing instead of overflowing the database driver)."""
    text = str(value or "").strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 19:
        return None
    number = int(text)
    return number if 0 < number <= BIGINT_MAX else None


class RowIdConverter:
    """`<id:name>` in a URL: digits up to the largest id the databases store, so a larger one matches no URL (a
    404) instead of overflowing the database driver; 0 still reaches the view (its role check comes first).
    Registered by audit.apps."""

    regex = "[0-9]{1,19}"

    def to_python(self, value):
        number = int(value)
        if number > BIGINT_MAX:
            raise ValueError(value)
        return number

    def to_url(self, value):
        return str(value)


def text_problem(value):
    """Why `value` (a str) cannot be stored as text, or None."""
    if "\x00" in value:
        return "contains a NUL character, which the database cannot store"
    if value.isascii():
        return None
    try:
        value.encode()
    except UnicodeEncodeError:
        return "contains an unpaired surrogate (\\ud800-\\udfff), not text"
    return None


def storable(value):
    """`value` with what cannot be stored written as escapes (NUL as \\x00, a lone surrogate as \\udxxx):
    for messages and field names that quote user input."""
    if text_problem(value) is None:
        return value
    return value.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode()


def json_problem(value, path):
    """(path, why) of the first value inside decoded JSON that cannot be stored, or None.

    `path` names the field holding `value` (e.g. "meta"); the problem's path goes down to the key or item.
    """
    stack = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            why = text_problem(v)
        elif isinstance(v, float):
            why = None if math.isfinite(v) else f"{v} is not a finite number"
        elif isinstance(v, dict):
            why = None
            for k, item in v.items():
                key_why = text_problem(k) if isinstance(k, str) else None
                if key_why:
                    return f"{where}.{k!r}", f"key {key_why}"
                stack.append((f"{where}.{k}", item))
        elif isinstance(v, list):
            why = None
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(v))
        else:
            why = None
        if why:
            return where, why
    return None


def datetime_problem(dt):
    """Why an aware datetime cannot be stored, or None: its offset, or an instant outside years 1-9999 in UTC."""
    offset = dt.utcoffset()
    if offset is not None and abs(offset) > MAX_UTC_OFFSET:
        return f"UTC offset {dt.strftime('%z')} is out of range (at most +/-15:59:59)"
    try:
        dt.astimezone(UTC)
    except OverflowError:
        return "out of range once converted to UTC"
    return None


def request_problem(query_dict):
    """(field, why) of the first submitted field (name or value) that cannot be stored as text, or None."""
    for key, values in query_dict.lists():
        why = text_problem(key)
        if why:
            return repr(key), why
        for value in values:
            why = text_problem(value)
            if why:
                return key, why
    return None


class RefuseUnstorableInput:
    """400 naming the field for any query or form field (name or value) that cannot be stored as text,
    before a view sees it: every form, search and API parameter gets the same rule."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view, args, kwargs):
        api = getattr(view, "json_errors", False)  # the HTTP API: no form fields (a body is JSON or a file)
        problem = request_problem(request.GET) or (
            request.method == "POST" and not api and request_problem(request.POST)
        )
        if problem and api:  # its own JSON error shape
            body = {"message": "invalid request", "errors": [{"field": problem[0], "message": problem[1]}]}
            return JsonResponse(body, status=400)
        if problem:
            return HttpResponseBadRequest(f"{problem[0]}: {problem[1]}", content_type="text/plain")
        return None
