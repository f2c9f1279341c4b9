"""The offline baseline judge: deterministic, no network, no model.

Decompose: sentence split, then split on ";" and "and" when both sides look like clauses; drop
non-assertive sentences (greetings, offers of help, questions); strip "Based on the passages,"
preambles but keep the assertion after them. Claims stay verbatim pieces of the answer.
Verify: content-word recall of the claim in each passage sentence; the best sentence at or above the
threshold supports the claim (evidence = that sentence, verbatim), unless negation or numbers
disagree (contradicted); below the threshold the claim is unsupported. A baseline, not a judge
anyone should trust: pages label it "offline baseline".
"""

import hashlib
import json
import re

from audit.judge.outcome import Outcome

NAME = "offline-lexical-v1"
THRESHOLD = 0.7
_STOPWORDS = """a an the of to in on at by for with from as is are was were be been being it its this that
these those and or but if then than so such there their they them he she his her we our you your i me my not no
also can could will would may might must should do does did has have had which who whom whose what when where why
how all any each some more most other into about over under after before between through during up down out off
very just only own same too both either neither nor per via"""
STOPWORDS = frozenset(_STOPWORDS.split())
_NEGATIONS = "not no never none cannot nobody nothing neither nor without"
NEGATIONS = frozenset(_NEGATIONS.split())
VERBISH = re.compile(r"\b(is|are|was|were|has|have|had|can|could|will|would|may|might|must|should|does|did|do"
                     r"|makes?|made|uses?|used|takes?|took|gives?|gave|contains?|includes?|\w{3,}ed)\b", re.I)
NON_ASSERTIVE = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|you're welcome|i hope (this|that) helps|hope (this|that) helps|"
    r"let me know|please let me know|feel free|great question|good question|sure|certainly|of course|"
    r"here is|here's|here are)\b[^.!?]{0,80}[.!?]*\s*$", re.I)
PREAMBLE = re.compile(r"^(based on|according to|from) the (provided |given |retrieved )?"
                      r"(passages?|context|information|documents?|sources?)\s*[,:]\s*", re.I)
SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
CLAUSE_SPLIT = re.compile(r";\s+|,?\s+and\s+(?=\S)")
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def spec():
    return {"name": NAME, "threshold": THRESHOLD, "stopwords": sorted(STOPWORDS), "negations": sorted(NEGATIONS),
            "non_assertive": NON_ASSERTIVE.pattern, "preamble": PREAMBLE.pattern, "clause_split": CLAUSE_SPLIT.pattern}


def offline_version():
    from audit.models import JudgeVersion

    s = spec()
    digest = hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest()
    version, _ = JudgeVersion.objects.get_or_create(
        content_hash=digest, defaults={"kind": JudgeVersion.Kind.OFFLINE, "name": NAME, "spec": s})
    return version


def _clauses(sentence):
    """Split at "; " / "and" only where both sides look like clauses (3+ words, the right one verb-ish),
    so "salt and pepper" stays whole while "X was built in 1889 and it is tall" splits."""
    cuts = list(CLAUSE_SPLIT.finditer(sentence))
    parts, start = [], 0
    for i, cut in enumerate(cuts):
        right = sentence[cut.end():cuts[i + 1].start() if i + 1 < len(cuts) else len(sentence)]
        if len(sentence[start:cut.start()].split()) >= 3 and len(right.split()) >= 3 and VERBISH.search(right):
            parts.append(sentence[start:cut.start()].strip())
            start = cut.end()
    return [*parts, sentence[start:].strip()]


def decompose(text):
    claims = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", "", line)  # list markers
        for match in SENTENCE.finditer(line):
            sentence = match.group().strip()
            if not sentence or sentence.endswith("?") or NON_ASSERTIVE.match(sentence):
                continue
            sentence = PREAMBLE.sub("", sentence)
            claims.extend(c for c in _clauses(sentence) if WORD.search(c.lower()))
    return claims


def _words(text):
    return WORD.findall(text.lower())


def _stem(word):
    """Crude suffix stripping so "nucleotides" meets "nucleotide" and "replicated" meets "replicate"."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _content(words):
    return {_stem(w.removesuffix("'s")) for w in words if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def _has_negation(words):
    return any(w in NEGATIONS or w.endswith("n't") for w in words)


def _windows(text):
    """Each sentence, then each pair of adjacent sentences, as verbatim slices of the passage."""
    spans = [(m.start(), m.end()) for m in SENTENCE.finditer(text) if m.group().strip()]
    for start, end in spans + [(a[0], b[1]) for a, b in zip(spans, spans[1:], strict=False)]:
        yield text[start:end].strip()


def verify(passages, claim):
    """passages: [(external_id, text)]. Returns the same dict shape as the LLM's verify output."""
    claim_words = _words(claim)
    wanted = _content(claim_words)
    if not wanted:
        return {"verdict": "unsupported", "evidence": "", "passage_id": "", "reason": "no content words to match"}
    best = (0.0, "", "")
    for pid, text in passages:
        for sentence in _windows(text):
            recall = len(wanted & _content(_words(sentence))) / len(wanted)
            if recall > best[0]:
                best = (recall, pid, sentence)
    recall, pid, sentence = best
    if recall < THRESHOLD:
        return {"verdict": "unsupported", "evidence": "", "passage_id": "",
                "reason": f"best content-word overlap {recall:.2f} is below {THRESHOLD}"}
    claim_numbers, passage_numbers = set(NUMBER.findall(claim)), set(NUMBER.findall(sentence))
    if _has_negation(claim_words) != _has_negation(_words(sentence)):
        verdict, why = "contradicted", "negation differs from the best-matching sentence"
    elif claim_numbers and passage_numbers and not claim_numbers & passage_numbers:
        verdict, why = "contradicted", "numbers differ from the best-matching sentence"
    else:
        verdict, why = "supported", "content words found in one passage sentence"
    return {"verdict": verdict, "evidence": sentence, "passage_id": pid, "reason": f"{why} (overlap {recall:.2f})"}


class OfflineJudge:
    """Same call interface as llm.LLMJudge, answered in-process."""

    priced = False

    def decompose_params(self, answer_text):
        return {"answer_text": answer_text}

    def verify_context(self, passages):
        return passages

    def verify_params(self, context, claim_text):
        return {"passages": context, "claim_text": claim_text}

    def call(self, stage, params):
        if stage == "decompose":
            return Outcome(data=decompose(params["answer_text"]))
        return Outcome(data=verify(params["passages"], params["claim_text"]))
