"""The evidence guard.

A supported or contradicted verdict must quote a span that occurs verbatim, after whitespace
normalisation, in the passage it names. Otherwise the verdict was reached from how plausible the
claim sounded: it fails the guard and is scored as unsupported. Pure functions, no ORM.
"""

from audit.models.answers import Verdict
from audit.spans import normalise_ws, quote_in

NEEDS_EVIDENCE = (Verdict.SUPPORTED, Verdict.CONTRADICTED)


def evidence_guard(verdict, evidence, passage_text, *, normalised=False):
    """Return (scored_verdict, guard_passed).

    guard_passed is None for verdicts that need no evidence (unsupported, non_assertive): they are
    scored as given. For supported/contradicted it is True when the whitespace-normalised evidence is
    non-empty and occurs in the whitespace-normalised passage text (None passage = not found).
    normalised=True says passage_text is already normalise_ws(...): callers checking many claims
    against the same passage normalise it once.
    """
    if verdict not in NEEDS_EVIDENCE:
        return verdict, None
    if passage_text is None:
        return Verdict.UNSUPPORTED.value, False
    passed = quote_in(evidence, passage_text if normalised else normalise_ws(passage_text))
    return (verdict if passed else Verdict.UNSUPPORTED.value), passed
