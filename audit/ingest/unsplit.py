"""Answers imported before numbered passage strings were split (audit/ingest/numbered.py), told from the others.

Before the split, a tool's one string of context such as "passage 1:...\\n\\npassage 2:..." was stored as one
passage (its text the string, its id derived from the text) and no `passages_raw` in meta. The same record now
gives its passages. Re-importing it is therefore a change, but one of how the file is read, not of the data:
`before_split_hash(native, rec, lim)` is the hash the record had then (or None when it was not split), so the
writer can tell such an answer from one whose content changed (see write.BatchWriter), keep it unless asked to
replace changed answers, keep it always in an audit, and say so in the import's notes.
"""

from audit.ingest import numbered
from audit.ingest.formats import passages_of_text
from audit.ingest.parse import normalise

WHY = "imported before a numbered passage string (passage 1:, [1], ...) was split into its passages"


def before_split_hash(native, rec, lim):
    """The hash of the record as imported before the split, when its passages were split from meta.passages_raw."""
    meta = native.get("meta")
    raw = meta.get("passages_raw") if isinstance(meta, dict) else None
    parts = numbered.split(raw)
    if not parts or [(p["id"], p["text"]) for p in parts] != [(p["id"], p["text"]) for p in rec["passages"]]:
        return None
    rest = {k: v for k, v in meta.items() if k != "passages_raw"}
    before, errors = normalise({**native, "meta": rest, "passages": passages_of_text(raw)}, 0, lim)
    return None if errors else before["hash"]


def notes(resplit, kept, kept_in_audit):
    """What the import summary says about such answers: how many, what was done, and why."""
    out = []
    if resplit:
        out.append(f"{_count(resplit, 'updated')} {WHY}: now split.")
    if kept:
        out.append(
            f"{_count(kept, 'unchanged')} {WHY}: kept as stored, the string as one passage. To split them, "
            "import again replacing changed answers (answers in an audit keep theirs)."
        )
    if kept_in_audit:
        out.append(
            f"{_count(kept_in_audit, 'unchanged')} {WHY}, and {'is' if kept_in_audit == 1 else 'are'} in an "
            "audit: kept as stored, the string as one passage (audits are frozen)."
        )
    return out


def _count(n, counted):
    return f"{n} of the {counted} answers {'was' if n == 1 else 'were'}"
