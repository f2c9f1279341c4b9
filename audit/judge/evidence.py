"""Finding a quote in a text where any whitespace run matches any whitespace run: where a verdict's
evidence sits in its passage (the same matching as the guard), and where a claim sits in its answer."""

import re


def ws_pattern(quote, flags=0):
    """A compiled pattern for quote with each whitespace run matching any whitespace; None if empty."""
    words = (quote or "").split()
    return re.compile(r"\s+".join(re.escape(w) for w in words), flags) if words else None


def evidence_span(passage_text, evidence):
    """(start, end) of evidence in passage_text, whitespace runs matching any whitespace; None if absent.
    Mirrors audit.judge.guard: a verdict that passed the guard always has a span here."""
    pattern = ws_pattern(evidence)
    m = pattern.search(passage_text) if pattern and passage_text else None
    return (m.start(), m.end()) if m else None
