"""Decomposition for the offline baseline judge: rules in regexes, no model.

Per line, then per sentence, then per clause (";" / "and" / "whereas" / ", while" only when the right side
looks like a clause). Citation markers ("(Passage 2)", "(Passages 1 and 2)", "According to passage 2,")
are blanked out before splitting, so they never become claims and never cut one; the claim text leaves
them out while its span still covers the original words. A lead-in ending with ":" is not a claim: it is
folded into the list items after it when they are bare fragments ("the main symptoms of IBS are:" +
"Diarrhea" -> "the main symptoms of IBS are Diarrhea": claims stand alone), else dropped.
Greetings, offers of help and questions are dropped; refusals ("Unable to answer based on given
passages") stay as claims, which verify() marks non_assertive (such an answer passes).
"""

import re

CITATION = re.compile(
    r"\s*\((?=[^()]*\bpassages?\b)[^()]{0,60}\)"  # (Passage 1), (passages 2 & 3), (unspecified in passages)
    r"|\b(?:according to|as (?:stated|mentioned|suggested|described|shown|noted) in|per) "
    r"(?:the )?passages?(?: \d+(?:(?:,| and| &) ?\d+)*)?\s*,?",
    re.I,
)
PREAMBLE = re.compile(
    r"^(?:(?:based on|according to|from|using) (?:the )?(?:provided |given |retrieved |above )?"
    r"(?:passages?|context|information|documents?|sources?)(?: \d+)?\s*[,:]\s*"
    r"|(?:note|please note|it is important to note|it's important to note|note also)(?: that)?\s*[,:]?\s+"
    r"|(?:therefore|thus|so|in summary|in conclusion|overall|additionally|however|also)\s*,\s*)+",
    re.I,
)
NON_ASSERTIVE = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|you're welcome|i hope (this|that) helps|hope (this|that) helps|"
    r"let me know|please let me know|feel free|great question|good question|good luck|sure|certainly|of course|"
    r"here is|here's|here are)\b[^.!?]{0,80}[.!?]*\s*$",
    re.I,
)
LEAD_IN_NOISE = re.compile(r"^(?:here (?:is|are)|there are)\s+|,?\s*(?:as follows|the following)\s*$", re.I)
LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
ITEM_LABEL = re.compile(r"[A-Z][\w' -]{0,40}:\s+(?=\S)")  # "Education system: While India's ..."
SENTENCE = re.compile(
    r".+?(?:[.!?]+[\"')\]]*(?=\s+[A-Z0-9\"'(]|\s*$)|[\u3002\uff01\uff1f]+|$)", re.S
)  # 。！？ end one too
CLAUSE_SPLIT = re.compile(r";\s+|,?\s+(?:and|whereas)\s+(?=\S)|,\s+while\s+(?=\S)")
VERBISH = re.compile(
    r"\b(is|are|was|were|has|have|had|can|could|will|would|may|might|must|should|does|did|do"
    r"|makes?|made|uses?|used|takes?|took|gives?|gave|contains?|includes?|means?|meant"
    r"|\w{3,}ed)\b",
    re.I,
)
WORD = re.compile(r"[^\W_]+")  # a letter or digit of any script
FRAGMENT_WORDS = 6  # a list item this short with no verb does not stand alone: it gets the lead-in
# Only a lead-in that ends like the start of a predicate can take an item ("X are" + "Diarrhea");
# "here is how to grill a steak:" + "Replace the grate" would read as nonsense, so it is dropped.
FOLDS_INTO = re.compile(
    r"\b(?:are|is|were|was|include|includes|including|such as|contain|contains|involve|"
    r"involves|consist of|consists of|be)$",
    re.I,
)


def _blank(text):
    """Citation markers replaced by spaces of the same length: offsets stay those of the answer."""
    return CITATION.sub(lambda m: " " * len(m.group()), text)


def _clauses(s, start, end):
    """(start, end) pieces of s[start:end], cut at a conjunction only when both sides look like clauses
    (3+ words with a verb, the right one within its first two words): "salt and pepper" stays whole."""
    cuts = [m for m in CLAUSE_SPLIT.finditer(s, start, end)]
    pieces, begin = [], start
    for i, cut in enumerate(cuts):
        right = s[cut.end() : cuts[i + 1].start() if i + 1 < len(cuts) else end]
        left, words = s[begin : cut.start()], right.split()
        if len(left.split()) >= 3 and VERBISH.search(left) and len(words) >= 3 and VERBISH.search(" ".join(words[:2])):
            pieces.append((begin, cut.start()))
            begin = cut.end()
    return [*pieces, (begin, end)]


def _tidy(text):
    """Whitespace collapsed; the stop after a blanked citation goes too ("grill (Passage 1)." -> "grill"),
    so the claim stays a verbatim piece of the answer that the store can locate."""
    text = re.sub(r"\s+[.!?]+$", "", " ".join(text.split()))
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return re.sub(r"[,;:]+([.!?])", r"\1", text).strip(" ,;")


def _trim(s, start, end):
    """Shrink (start, end) past surrounding spaces and punctuation left by blanked citations, and past a
    stop that follows one, as _tidy does: the span then holds exactly the claim's words."""
    while start < end and s[start] in " \t,;":
        start += 1
    while end > start and s[end - 1] in " \t,;":
        end -= 1
    stop = end
    while stop > start and s[stop - 1] in ".!?":
        stop -= 1
    if stop < end and stop > start and s[stop - 1].isspace():
        return _trim(s, start, stop)
    return start, end


def decompose_spans(text):
    """[(claim_text, start, end)] in answer order; start/end are offsets in text."""
    masked, out, offset, lead_in = _blank(text), [], 0, None
    for raw in text.splitlines(keepends=True):
        line_start, offset = offset, offset + len(raw)
        line = masked[line_start : line_start + len(raw.rstrip("\r\n"))]
        if not line.strip():
            continue
        marker = LIST_MARKER.match(line)
        if not marker:
            lead_in = None  # a plain paragraph ends the list the lead-in introduced
        body = marker.end() if marker else 0
        if marker and (label := ITEM_LABEL.match(line, body)):
            body = label.end()
        for m in SENTENCE.finditer(line, body):
            start, end = _trim(masked, line_start + m.start(), line_start + m.end())
            sentence = masked[start:end]
            if not sentence.strip() or sentence.endswith("?") or NON_ASSERTIVE.match(sentence):
                continue
            pre = PREAMBLE.match(sentence)
            start += pre.end() if pre else 0
            if sentence.endswith(":"):
                lead_in = _tidy(LEAD_IN_NOISE.sub("", masked[start : end - 1]))
                continue
            for a, b in _clauses(masked, start, end):
                a, b = _trim(masked, a, b)
                claim = _tidy(masked[a:b])
                if not WORD.search(claim):
                    continue
                fragment = len(claim.split()) <= FRAGMENT_WORDS and not VERBISH.search(claim)
                if marker and lead_in and fragment and FOLDS_INTO.search(lead_in):
                    claim = f"{lead_in} {claim[0].lower() + claim[1:] if claim[1:2].islower() else claim}"
                out.append((claim, a, b))
    return out


def decompose(text):
    return [claim for claim, _, _ in decompose_spans(text)]


SPEC = {
    "citation": CITATION.pattern,
    "preamble": PREAMBLE.pattern,
    "non_assertive": NON_ASSERTIVE.pattern,
    "lead_in_noise": LEAD_IN_NOISE.pattern,
    "item_label": ITEM_LABEL.pattern,
    "sentence": SENTENCE.pattern,
    "word": WORD.pattern,
    "clause_split": CLAUSE_SPLIT.pattern,
    "verbish": VERBISH.pattern,
    "fragment_words": FRAGMENT_WORDS,
    "folds_into": FOLDS_INTO.pattern,
}
