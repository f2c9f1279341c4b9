"""Next week's design from this week's audit: the same strata, allocation, size and minimum per stratum,
the population filter's date window moved to the target ISO week, a new name and seed."""

import datetime as dt
import re

from django.core.exceptions import ValidationError

WEEK = re.compile(r"(\d{4})-W(\d{2})")


def week_monday(text):
    """'2026-W50' -> the Monday of that ISO week; ValidationError naming the field otherwise."""
    m = WEEK.fullmatch((text or "").strip())
    try:
        return dt.date.fromisocalendar(int(m[1]), int(m[2]), 1) if m else None
    except ValueError:
        pass
    raise ValidationError(f"week: expected an ISO week like 2026-W50, got {text!r}")


def week_label(day):
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def source_monday(audit):
    """The week an audit covers: its window's start, else the ISO week its name ends with (demo-2026-W48),
    else the day it was created."""
    start = audit.population_filter.get("created_from")
    if start:
        day = dt.date.fromisoformat(start)
    elif (m := WEEK.search(audit.name)) and audit.name.endswith(m[0]):
        day = week_monday(m[0])
    else:
        day = audit.created_at.date()
    return day - dt.timedelta(days=day.weekday())


def like_design(audit, week=None):
    """{name, week, shift_days, kwargs}: kwargs are audit_preview/audit_create's design arguments."""
    target = week_monday(week) if week else source_monday(audit) + dt.timedelta(weeks=1)
    shift = (target - source_monday(audit)).days
    f = dict(audit.population_filter)
    for key in ("created_from", "created_to"):
        if f.get(key):
            f[key] = (dt.date.fromisoformat(f[key]) + dt.timedelta(days=shift)).isoformat()
    label = week_label(target)
    return {
        "name": f"{audit.dataset.name}-{label}",
        "week": label,
        "shift_days": shift,
        "kwargs": {
            "dataset": audit.dataset,
            "population_filter": f,
            "strata_keys": list(audit.strata_keys),
            "allocation_method": audit.allocation,
            "size": audit.size,
            "min_per_stratum": audit.min_per_stratum,
            "expected_fail_rates": dict(audit.expected_fail_rates),
        },
    }
