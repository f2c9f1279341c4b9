"""Sample allocation across strata: pure functions, no ORM.

allocate() returns integer sample sizes n_h that sum to exactly min(n, N): the continuous allocation
n_h = clamp(c * w_h, lower_h, N_h) (lower_h = the minimum per stratum), with c found so the sizes sum to
the target, then largest-remainder rounding. Capping at N_h and raising to the minimum both redistribute
the difference over the other strata through c.

Ties in the rounding (equal fractional parts, as when there are more strata than units to give and each
stratum's share is the same fraction of one) go to the strata in an order drawn from the audit's seed:
every tied stratum has the same chance of a unit, none is favoured by its name or position, and the same
seed gives the same allocation.
"""

import math
import random

PROPORTIONAL, EQUAL, NEYMAN = "proportional", "equal", "neyman"
DEFAULT_FAIL_RATE = 0.1


def weights(populations, method, fail_rates=None, default_p=DEFAULT_FAIL_RATE):
    """Relative allocation weight of each stratum (same order as populations, a list of (label, N_h))."""
    fail_rates = fail_rates or {}
    if method == PROPORTIONAL:
        return [float(n) for _, n in populations]
    if method == EQUAL:
        return [1.0 if n > 0 else 0.0 for _, n in populations]
    if method == NEYMAN:
        out = []
        for label, n in populations:
            p = float(fail_rates.get(label, default_p))
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"expected failure rate for {label!r} must be between 0 and 1, got {p}")
            out.append(n * math.sqrt(p * (1 - p)))
        return out
    raise ValueError(f"unknown allocation {method!r}: use proportional, equal or neyman")


def _continuous(target, w, lower, upper):
    """x_h = clamp(c * w_h, lower_h, upper_h) with sum x_h == target (bisection on c; S(c) is monotone)."""

    def total(c):
        return sum(min(u, max(lo, c * wh)) for wh, lo, u in zip(w, lower, upper, strict=True))

    positive = [u / wh for wh, u in zip(w, upper, strict=True) if wh > 0]
    if not positive:
        return [float(lo) for lo in lower]
    lo_c, hi_c = 0.0, max(positive)
    for _ in range(200):
        mid = (lo_c + hi_c) / 2
        if total(mid) < target:
            lo_c = mid
        else:
            hi_c = mid
    return [min(u, max(lo, hi_c * wh)) for wh, lo, u in zip(w, lower, upper, strict=True)]


def _round(target, x, lower, upper, seed=0):
    """Largest remainder: floors, then +1 to the biggest fractional parts (ties: in a seeded random order)."""
    n = [max(lo, min(u, math.floor(v + 1e-9))) for v, lo, u in zip(x, lower, upper, strict=True)]
    draw = random.Random(seed)
    tiebreak = [draw.random() for _ in x]
    order = sorted(range(len(x)), key=lambda i: (-round(x[i] - math.floor(x[i] + 1e-9), 9), tiebreak[i]))
    while sum(n) < target:
        progressed = False
        for i in order:
            if sum(n) >= target:
                break
            if n[i] < upper[i]:
                n[i] += 1
                progressed = True
        if not progressed:
            break
    for i in reversed(order):  # float noise can only overshoot by a unit or two
        if sum(n) <= target:
            break
        if n[i] > lower[i]:
            n[i] -= 1
    return n


def allocate(
    populations, n, method=PROPORTIONAL, *, min_per_stratum=0, fail_rates=None, default_p=DEFAULT_FAIL_RATE, seed=0
):
    """populations: [(label, N_h)] in display order. Returns [n_h] summing to min(n, sum N_h); seed orders
    the rounding's ties (see the module's docstring)."""
    if n < 0 or min_per_stratum < 0:
        raise ValueError("sample size and minimum per stratum must not be negative")
    upper = [max(0, int(N)) for _, N in populations]
    target = min(int(n), sum(upper))
    if target == 0:
        return [0] * len(upper)
    w = weights(populations, method, fail_rates, default_p)
    if sum(w) <= 0:  # e.g. Neyman with every p in {0, 1}: nothing to prefer, share equally
        w = [1.0 if u > 0 else 0.0 for u in upper]
    lower = [min(min_per_stratum, u) for u in upper]
    if sum(lower) > target:
        # The minimum cannot be met everywhere: spread the target as evenly as the minimum allows.
        w, upper, lower = [1.0 if lo > 0 else 0.0 for lo in lower], lower, [0] * len(lower)
    x = _continuous(target, w, lower, upper)
    return _round(target, x, lower, upper, seed)


def design_table(populations, sizes, fail_rates=None):
    """[{stratum, population, sample, inclusion_probability, weight}] for Audit.design (and expected_fail_rate
    under Neyman). What would give a stratum left without a sample one is said by design_notes."""
    rows = []
    for (label, N), k in zip(populations, sizes, strict=True):
        row = {
            "stratum": label,
            "population": N,
            "sample": k,
            "inclusion_probability": k / N if N else 0.0,
            "weight": N / k if k else None,
        }
        if fail_rates is not None:
            row["expected_fail_rate"] = float(fail_rates.get(label, DEFAULT_FAIL_RATE))
        rows.append(row)
    return rows


def resolve_fail_rates(labels, given=None, default_p=DEFAULT_FAIL_RATE):
    """{label: p} for every stratum label from the rates given: an exact label wins, then the most specific
    partial label whose parts all occur in the stratum's label (e.g. "judge=fail" for
    "judge=fail | meta.model=x"), then "*", then the default."""
    given = {str(k).strip(): float(v) for k, v in (given or {}).items()}
    for k, v in given.items():
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"expected failure rate for {k!r} must be between 0 and 1, got {v}")
    fallback = given.get("*", default_p)
    out = {}
    for label in labels:
        best = None
        for k, v in given.items():
            if _matches(k, label) and (best is None or _parts(k) > best[0]):
                best = (_parts(k), v)
        out[label] = best[1] if best else fallback
    return out


def _parts(text):
    return len(text.split("|"))


def _matches(key, label):
    """Whether a failure rate's key applies to a stratum: every part of the key occurs in the stratum's label."""
    return key != "*" and {p.strip() for p in key.split("|")} <= {p.strip() for p in label.split("|")}


def unmatched_rates(labels, given):
    """The keys of the failure rates given that apply to no stratum (a misspelt label), in the order given."""
    keys = [str(k).strip() for k in (given or {})]
    return [k for k in keys if k != "*" and not any(_matches(k, label) for label in labels)]


def design_notes(labelled, sizes, size, min_per_stratum, fail_rates=None):
    """What the design does that the inputs did not say, each as {field, message}: a size above the
    population, a minimum per stratum the sample cannot give every stratum, strata left without a sample.
    fail_rates: the resolved expected failure rates of a Neyman design, whose rates of 0 (or 1) are said too."""
    total, notes = sum(N for _, N in labelled), []
    strata = sum(1 for _, N in labelled if N)
    if total and size > total:
        notes.append(note("size", f"size {size} is above the population's {total} answers: all {total} are taken"))
    lower = sum(min(min_per_stratum, N) for _, N in labelled)
    if min_per_stratum and lower > min(size, total):
        notes.append(note(
            "min_per_stratum",
            f"at least {min_per_stratum} in each of {strata} strata needs {lower} answers, more than the "
            f"sample's {sum(sizes)}: the sample is spread as evenly as the minimum allows instead",
        ))  # fmt: skip
    certain = [lb for lb, N in labelled if N and fail_rates is not None and fail_rates[lb] in (0.0, 1.0)]
    unsampled = [lb for (lb, N), k in zip(labelled, sizes, strict=True) if N and not k]
    if certain and len(certain) == strata > 1:
        notes.append(note(
            "fail_rates",
            "every stratum's expected failure rate is 0 or 1, which gives Neyman allocation nothing to weigh them "
            "by: the sample is shared equally instead",
        ))  # fmt: skip
    elif zeroed := [lb for lb in unsampled if lb in certain]:
        notes.append(note(
            "fail_rates",
            f"{_strata(len(zeroed))} expected to fail at a rate of 0 (or 1) {'gets' if len(zeroed) == 1 else 'get'} "
            f"no answer under Neyman allocation ({', '.join(zeroed)}), so a failure there could never be seen: "
            "expect a small rate instead (e.g. 0.02), or set a minimum per stratum",
        ))  # fmt: skip
        unsampled = [lb for lb in unsampled if lb not in zeroed]
    left = len(unsampled)
    if left and strata > sum(sizes):
        notes.append(note("strata", too_many_strata(strata, sum(sizes), left)))
    elif left:
        notes.append(note(
            "min_per_stratum",
            f"{left} strat{'um gets' if left == 1 else 'a get'} no answer (inclusion probability 0: "
            f"not weighted back to the population); a minimum of 1 per stratum includes {'it' if left < 2 else 'them'}",
        ))  # fmt: skip
    return notes


def _strata(n):
    return f"{n} stratum" if n == 1 else f"{n} strata"


FIELD_LABELS = {
    "size": "Size",
    "min_per_stratum": "Min per stratum",
    "fail_rates": "Expected failure rates",
    "strata": "Strata keys",
    "meta_filters": "Metadata filters",
    "created_from": "Created from",
    "exclude_audited": "Exclude answers already in an audit",
    "dataset": "Dataset",
}


def note(field, message):
    return {"field": field, "label": FIELD_LABELS[field], "message": message}


def too_many_strata(strata, sample, left):
    return (
        f"{strata} strata share {sample} answers: the seed would pick {sample} strata (each with the same chance) "
        f"and leave {left} with inclusion probability 0, which cannot be weighted back to the population, so "
        f"this design is not created; raise the size to {strata} or use fewer strata"
    )


def drawn_notes(design):
    """The note of an audit's saved design table: its strata drawn without a sample, if any."""
    left = sum(1 for r in design if r["population"] and not r["sample"])
    if not left:
        return []
    message = f"{left} strat{'um' if left == 1 else 'a'} of this design got no sample (inclusion probability 0): "
    return [note("strata", message + "not weighted back to the population, and listed as such in the report")]
