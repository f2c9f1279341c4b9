"""Shared shapes for the report's statistics: every figure is a plain dict that either carries a value
(with its CI and denominator) or says why it is not computable. Pure: no ORM (the verdict sets are the
Verdict choices' own)."""

import math

import numpy as np

from audit.models.answers import BAD_VERDICTS, SCORED_VERDICTS
from audit.models.answers import VERDICTS as ALL_VERDICTS

VERDICTS, BAD, SCORED = ALL_VERDICTS, BAD_VERDICTS, SCORED_VERDICTS


def finite(x):
    return x is not None and isinstance(x, (int, float, np.floating, np.integer)) and math.isfinite(float(x))


def stat(value, ci=None, **extra):
    """A computed figure. A NaN/inf value (or CI bound) is turned into 'not computable' rather than shown."""
    if not finite(value):
        return not_computable(extra.pop("why", "the statistic is undefined for these data"), **extra)
    out = {"value": float(value), "ci": None, "why": None, **extra}
    if ci is not None and all(finite(c) for c in ci):
        out["ci"] = [float(ci[0]), float(ci[1])]
    return out


def not_computable(why, **extra):
    return {"value": None, "ci": None, "why": f"not computable: {why}", **extra}


def not_informative(why, **extra):
    """A coefficient that can be computed but says nothing (e.g. kappa when a rater used one class)."""
    return {"value": None, "ci": None, "why": f"not informative: {why}", **extra}


def withheld(figures, why):
    """A nested shape of figures with every figure made not computable for one reason (e.g. population figures
    whose population the data do not cover); the counts beside them stay."""
    if isinstance(figures, dict):
        if "value" in figures and "why" in figures:
            return not_computable(why)
        return {k: withheld(v, why) for k, v in figures.items()}
    return figures


def shared_why(*figures):
    """The reason when every figure is not computable for one and the same reason (to say it once), else None."""
    whys = {f["why"] for f in figures}
    return whys.pop() if all(f["value"] is None for f in figures) and len(whys) == 1 else None


def clean(obj):
    """Make a report JSON-safe: NaN/inf -> None, numpy scalars/arrays -> Python."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return clean(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    return obj
