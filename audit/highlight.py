"""Cut a text into segments so spans (claims, evidence) can be highlighted without |safe."""


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
