"""An answer's `created_at` as files write it, read into one UTC instant (its ISO 8601 string).

Accepted: any ISO 8601 string Python reads (`2026-11-30T09:15:00Z`, `+0100`, a date alone, and the text pandas
writes for a timestamp, `2026-11-30 09:15:00+00:00`; without an offset it is UTC), and an epoch time: a number
(pandas' `to_json` writes a datetime as epoch milliseconds by default, seconds with `date_unit="s"`, also
microseconds or nanoseconds) or a string of its digits (a CSV cell). An empty string is no time, as null is.

The unit of an epoch number is told by its magnitude: a time between 1990 and 2100 is 6.3e8..4.1e9 in seconds,
6.3e11..4.1e12 in milliseconds, 6.3e14..4.1e15 in microseconds and 6.3e17..4.1e18 in nanoseconds. These windows
do not overlap, so a number falls in at most one; one in none (a row number, a duration, a year) is refused.
"""

import math
import re
from datetime import UTC, datetime, timedelta

from audit.validation import datetime_problem

FIRST, LAST = datetime(1990, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# (unit name, units per second), the unit whose 1990..2100 window holds the number wins
UNITS = (("seconds", 1), ("milliseconds", 10**3), ("microseconds", 10**6), ("nanoseconds", 10**9))
EPOCH_TEXT = re.compile(r"\d{1,20}(?:\.\d{1,9})?")  # tried only when the string is not ISO 8601


def created_at(value):
    """(the instant as a UTC ISO string, None) or (None, why it is refused)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None, f"must be an ISO 8601 string or an epoch number, got {type(value).__name__}"
    if isinstance(value, str):
        text = value.strip()
        if not text:  # pandas writes a missing time (NaT) to CSV as an empty cell: no time, as null is
            return None, None
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            if not EPOCH_TEXT.fullmatch(text):
                return None, f"not an ISO 8601 date-time nor an epoch number: {value[:40]!r}"
            return _epoch(float(text) if "." in text else int(text))
        dt = dt if dt.tzinfo else dt.replace(tzinfo=UTC)
        why = datetime_problem(dt)
        return (None, why) if why else (dt.astimezone(UTC).isoformat(), None)
    return _epoch(value)


def _epoch(number):
    if isinstance(number, float) and not math.isfinite(number):
        return None, f"{number} is not an epoch time"
    for _, per_second in UNITS:
        if FIRST.timestamp() * per_second <= number < LAST.timestamp() * per_second:
            if isinstance(number, int):  # exact: a nanosecond count is too large for a float's precision
                dt = EPOCH + timedelta(microseconds=number * 10**6 // per_second)
            else:
                dt = EPOCH + timedelta(seconds=number / per_second)
            return dt.isoformat(), None
    units = ", ".join(name for name, _ in UNITS)
    return None, f"epoch number {number!r} is not a time between 1990 and 2100 in {units}"
