"""The numeric guard, beside the evidence guard: numbers are the judge's weak spot (the misses of a
calibration run were contradicted claims scored supported, all numeric), so a supported verdict on a
claim with numbers, dates or quantities must quote evidence that contains the same values.

Values are compared after normalising their format: 1,000 / 1000 / 1 000 are one value, 10.0 / 10 are
one value, "10%" / "10 percent" / "10 per cent" are one percentage, "1.5 million" is 1500000, and simple
dates (2021-03-05, 5 March 2021, March 5, 2021, March 2021) become ISO dates. Evidence that has a date
also has its year and month; evidence that has a percentage also has the bare number. Spelled-out
numbers ("three") are not read. Pure functions, no ORM.
"""

import re
from decimal import Decimal, InvalidOperation

MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        ]  # fmt: skip
    )
    for m in names.split()
}
_MONTH = r"(?P<mon>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
DATES = [
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"),
    re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+(?P<y>\d{4})\b", re.I),
    re.compile(r"\b" + _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b", re.I),
    re.compile(r"\b" + _MONTH + r"\s+(?P<y>\d{4})\b", re.I),
]
# A number: thousands grouped by comma, space, no-break or thin space (groups of exactly three digits),
# or plain digits; an optional decimal part; then an optional percent or multiplier word.
NUMBER = re.compile(
    r"(?<![\w.,])(?P<n>\d{1,3}(?:(?:,|[ \u00a0\u202f])\d{3})+(?!\d)|\d+)(?P<frac>\.\d+)?(?:st|nd|rd|th)?"
    r"(?:\s*(?P<pct>%|percent\b|per\s+cent\b)|\s+(?P<mult>thousand|million|billion)\b)?",
    re.I,
)
MULTIPLIERS = {"thousand": 1000, "million": 10**6, "billion": 10**9}


def _canonical(number):
    text = format(number.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _dates(text):
    """(ISO date strings, text with the dates blanked out)."""
    found = []
    for pattern in DATES:

        def take(m):
            groups = m.groupdict()
            month = MONTHS[groups["mon"].lower()] if groups.get("mon") else int(groups["m"])
            iso = f"{groups['y']}-{month:02d}" + (f"-{int(groups['d']):02d}" if groups.get("d") else "")
            found.append(iso)
            return " " * len(m.group())

        text = pattern.sub(take, text)
    return found, text


def values(text):
    """The set of normalised values in text: 'n:1000', 'p:10' (percent), 'd:2021-03-05', 'd:2021-03'."""
    dates, rest = _dates(text or "")
    out = {f"d:{d}" for d in dates}
    for m in NUMBER.finditer(rest):
        try:
            number = Decimal(re.sub(r"[, \u00a0\u202f]", "", m["n"]) + (m["frac"] or ""))
        except InvalidOperation:
            continue
        if m["mult"]:
            number *= MULTIPLIERS[m["mult"].lower()]
        out.add(("p:" if m["pct"] else "n:") + _canonical(number))
    return out


def evidence_values(text):
    """values(text), plus what a date or a percentage implies (its year and month; its bare number)."""
    out = values(text)
    for v in list(out):
        kind, _, body = v.partition(":")
        if kind == "d":
            out.add(f"n:{body[:4]}")
            out.add(f"d:{body[:7]}")
        elif kind == "p":
            out.add(f"n:{body}")
    return out


def missing_values(claim, evidence):
    """The claim's values that the evidence does not contain, sorted (empty when none are missing)."""
    return sorted(values(claim) - evidence_values(evidence))


def numeric_guard(verdict, claim, evidence):
    """None when it does not apply (not a supported verdict, or a claim without numbers, dates or
    quantities); True when the evidence holds every value of the claim; False (flagged) otherwise."""
    if verdict != "supported" or not values(claim):
        return None
    return not missing_values(claim, evidence)
