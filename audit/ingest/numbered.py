"""One string of context that is clearly a numbered list of passages, cut into those passages.

RAGTruth keeps all passages of an answer in one string, "passage 1:...\\n\\npassage 2:...\\n\\n"; prompts built by
other tools number them as "Passage 1:", "Document 1:", "Source 1:" or "[1]". `split(text)` returns the passages
[{"id": "passage 1", "text": "..."}, ...] in order when the string starts with marker 1 of one spelling and every
marker of that spelling at the start of a line is numbered 1, 2, 3... in sequence, at least two of them; else
None, and the string stays one passage (a string that merely mentions "[2] See the appendix.", or has its
markers out of sequence, is not a list). A passage's id is its marker as written, without the colon ("passage 1",
"Document 2") or, for "[3]", its number ("3"). The text of a passage is stripped of the blank lines around it.
"""

import re

# One spelling each: "<word> N:" (any case of the word, kept as written in the id) and "[N]".
_WORDED = re.compile(r"^[ \t]*((passage|document|source)[ \t]*(\d{1,4}))[ \t]*:", re.IGNORECASE | re.MULTILINE)
_BRACKETED = re.compile(r"^[ \t]*\[(\d{1,4})\]", re.MULTILINE)


def split(text):
    """The passages of a numbered list written as one string, or None when it is not clearly one."""
    if not isinstance(text, str):
        return None
    for markers in (_worded(text), _bracketed(text)):
        passages = _cut(text, markers)
        if passages:
            return passages
    return None


def _worded(text):
    """(start, end, id, number) of each "<word> N:" marker, of the word the string starts with."""
    found = list(_WORDED.finditer(text))
    word = found[0].group(2).lower() if found else ""
    return [(m.start(), m.end(), m.group(1), int(m.group(3))) for m in found if m.group(2).lower() == word]


def _bracketed(text):
    return [(m.start(), m.end(), m.group(1).lstrip("0") or "0", int(m.group(1))) for m in _BRACKETED.finditer(text)]


def _cut(text, markers):
    if len(markers) < 2 or text[: markers[0][0]].strip():  # a list starts the string
        return None
    if [n for *_, n in markers] != list(range(1, len(markers) + 1)):
        return None
    stops = [start for start, *_ in markers[1:]] + [len(text)]
    passages = [{"id": m[2], "text": text[m[1] : stop].strip()} for m, stop in zip(markers, stops, strict=True)]
    return passages if all(p["text"] for p in passages) else None  # an empty item: not clearly a list
