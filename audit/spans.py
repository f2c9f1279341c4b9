"""Text spans: the one rule for finding a piece of text in another and for cutting a text into highlights.

Whitespace is never significant: leading and trailing whitespace is ignored and any run of spaces, tabs
or newlines (CRLF included) matches any other run. Claims are found in their answer with `locate` (also
ignoring case, as a decomposer may recapitalise a clause), evidence in its passage with `evidence_span`
(case kept: evidence is a quote). Import, the judge, its guard and every page use these functions.
Pure functions, no ORM.
"""

import re


def normalise_ws(text):
    """Collapse every whitespace run to one space and strip the ends."""
    # str.split() splits on the same Unicode whitespace as re's \s, several times faster than re.sub.
    return " ".join((text or "").split())


def ws_pattern(quote, flags=0):
    """A compiled pattern for quote with each whitespace run matching any whitespace; None if empty."""
    words = (quote or "").split()
    return re.compile(r"\s+".join(re.escape(w) for w in words), flags) if words else None


def _search(text, needle, start, flags):
    """(start, end) of needle in text, searching from `start` first, then from the beginning; or None."""
    core = (needle or "").strip()
    if not core or not text:
        return None
    for begin in (start, 0):
        i = text.find(core, begin)
        if i >= 0:
            return i, i + len(core)
    pattern = ws_pattern(core, flags)
    m = pattern.search(text, start) or pattern.search(text)
    return (m.start(), m.end()) if m else None


def locate(text, claim, start=0):
    """(start, end) of a claim in its answer, searching on from `start` (the previous claim's end) first;
    (None, None) when the claim is not in the answer."""
    return _search(text, claim, start, re.IGNORECASE) or (None, None)


def evidence_span(passage_text, evidence):
    """(start, end) of a quoted evidence span in its passage, or None. A verdict that passed the guard
    (`quote_in`) always has a span here."""
    return _search(passage_text, evidence, 0, 0)


def quote_in(quote, normalised_text):
    """True when the quote occurs in a text already passed through normalise_ws."""
    q = normalise_ws(quote)
    return bool(q) and q in normalised_text


def segments(text, spans):
    """spans: iterable of (start, end, tag). Returns [(piece, tag_or_None)] covering text.

    Overlapping or out-of-range spans are skipped: the first span to claim a character keeps it."""
    out, pos = [], 0
    for start, end, tag in sorted(
        (s for s in spans if s[0] is not None and s[1] is not None), key=lambda s: (s[0], s[1])
    ):
        if start < pos or end <= start or end > len(text):
            continue
        if start > pos:
            out.append((text[pos:start], None))
        out.append((text[start:end], tag))
        pos = end
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def layers(text, spans):
    """Like segments, but overlapping spans all stay visible: [(piece, [tag, ...])] cut at every boundary."""
    spans = [s for s in spans if s[0] is not None and s[1] is not None]
    cuts = {0, len(text)}
    for start, end, _ in spans:
        cuts.update((start, end))
    cuts = sorted(c for c in cuts if 0 <= c <= len(text))
    return [
        (text[a:b], [tag for start, end, tag in spans if start <= a and b <= end])
        for a, b in zip(cuts, cuts[1:], strict=False)
    ]


def dom_to_raw_offsets(text, start, end):
    """Browsers parse CR LF and lone CR as LF, so offsets measured in the page are offsets into that
    normalised text: map them back onto the stored text."""
    if "\r" not in text:
        return start, end
    raw_at, i = [], 0  # raw_at[k] = raw index of normalised character k
    while i < len(text):
        raw_at.append(i)
        i += 2 if text.startswith("\r\n", i) else 1
    raw_at.append(len(text))
    if not 0 <= start <= end < len(raw_at):
        return start, end
    return raw_at[start], raw_at[end]
