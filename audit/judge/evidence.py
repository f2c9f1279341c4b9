"""Where a verdict's evidence sits in its passage, for highlighting (the same matching as the guard)."""

import re


def evidence_span(passage_text, evidence):
    """(start, end) of evidence in passage_text, whitespace runs matching any whitespace; None if absent.
    Mirrors audit.judge.guard: a verdict that passed the guard always has a span here."""
    words = (evidence or "").split()
    if not words or not passage_text:
        return None
    m = re.search(r"\s+".join(re.escape(w) for w in words), passage_text)
    return (m.start(), m.end()) if m else None
