"""The offline baseline judge: deterministic, no network, no model.

Decompose: see offline_decompose (sentences, clauses, list lead-ins folded, citations and pleasantries
dropped). Verify: a claim that only says the passages do not answer is non_assertive.
Otherwise content-word recall (light stemming, numbers as words) of the claim in every window of one or
two adjacent sentences of one passage; the best window at or above the threshold supports the claim
(evidence = that window, verbatim). Contradicted only on a clear cue and when no window supports it: one
sentence with most of the claim's words says the opposite (negation differs), or puts a different
number next to the same words.
A baseline, not a judge anyone should trust: pages label it "offline baseline".
"""

import hashlib
import json
import re

from audit.judge import offline_decompose
from audit.judge.offline_decompose import SENTENCE, decompose, decompose_spans  # noqa: F401 (decompose: interface)
from audit.judge.outcome import Outcome
from audit.models import JudgeVersion

NAME = "offline-lexical-v3"
THRESHOLD = 0.55  # tuned on the RAGTruth demo sample: bench/offline_judge_eval.py --sweep
CONTRADICT_THRESHOLD = 0.8  # overlap a contradicting sentence needs (without the differing number)
MIN_WORDS_TO_CONTRADICT = 4  # "must be obtained from the diet" is too short to be contradicted by cue words
_STOPWORDS = """a an the of to in on at by for with from as is are was were be been being it its this that
these those and or but if then than so such there their they them he she his her we our you your i me my not no
also can could will would may might must should do does did has have had which who whom whose what when where why
how all any each some more most other into about over under after before between through during up down out off
very just only own same too both either neither nor per via"""
STOPWORDS = frozenset(_STOPWORDS.split())
_NEGATIONS = "not no never none cannot nobody nothing neither nor without"
NEGATIONS = frozenset(_NEGATIONS.split())
SUFFIXES = (
    "ational",
    "ization",
    "ingly",
    "ation",
    "ments",
    "ment",
    "ness",
    "ings",
    "ies",
    "ing",
    "ied",
    "ly",
    "ed",
    "es",
    "s",
    "e",
)
REFUSAL = re.compile(
    r"\b(?:unable to (?:answer|provide|determine)|(?:cannot|can't|can not) (?:answer|provide|determine|be determined)"
    r"|none of the passages|(?:passages?|context|information) (?:provided |given |above )?"
    r"(?:do|does|did)(?: not|n't) |not (?:explicitly |specifically |directly )?(?:stated|mentioned|specified|"
    r"provided|given|addressed|covered|found|included) in the (?:provided |given |above )?passages?)",
    re.I,
)
# "Passage 2 says", "(step 5)", "Option 1": numbers that name a part of the text, not a fact to match.
REFERENCE = re.compile(r"\b(?:passages?|steps?|options?)\s+\d+(?:\s*(?:,|and|&|or)\s*\d+)*\b", re.I)
TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:'[^\W\d_]+)?")  # words of any script (a claim's Arabic counts)
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")  # scripts written without spaces: read in pairs
WINDOW = 2  # sentences per evidence window
ELSEWHERE = 0.5  # credit for a claim word found in the same passage but outside the window


def spec():
    return {
        "name": NAME,
        "threshold": THRESHOLD,
        "contradict_threshold": CONTRADICT_THRESHOLD,
        "min_words_to_contradict": MIN_WORDS_TO_CONTRADICT,
        "window": WINDOW,
        "elsewhere": ELSEWHERE,
        "stopwords": sorted(STOPWORDS),
        "negations": sorted(NEGATIONS),
        "suffixes": SUFFIXES,
        "refusal": REFUSAL.pattern,
        "reference": REFERENCE.pattern,
        "token": TOKEN.pattern,
        "cjk_pairs": CJK.pattern,
        "decompose": offline_decompose.SPEC,
    }


def offline_version():
    s = spec()
    digest = hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest()
    version, _ = JudgeVersion.objects.get_or_create(
        content_hash=digest, defaults={"kind": JudgeVersion.Kind.OFFLINE, "name": NAME, "spec": s}
    )
    return version


def _stem(word):
    """Light suffix stripping so "nucleotides" meets "nucleotide" and "replicated" meets "replicate";
    numbers lose their formatting so "10.0" meets "10" and "1,000" meets "1000"."""
    if word[0].isdigit():
        word = word.replace(",", "")
        return word.rstrip("0").rstrip(".") if "." in word else word
    word = word.removesuffix("'s").removesuffix("'t")
    for suffix in SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word


def _pieces(token):
    """A word, or the overlapping character pairs of a run of Chinese, Japanese or Korean (no spaces to cut it)."""
    return [token[i : i + 2] for i in range(max(1, len(token) - 1))] if CJK.search(token) else [token]


def _analyse(text):
    """(tokens, content stems, negated?) of a text."""
    tokens = [piece for token in TOKEN.findall(text.lower()) for piece in _pieces(token)]
    content = {_stem(t) for t in tokens if t not in STOPWORDS and (len(t) > 1 or t.isdigit())}
    return tokens, content, any(t in NEGATIONS or t.endswith("n't") for t in tokens)


def _windows(passages):
    """(passage id, verbatim slice of 1..WINDOW adjacent sentences, single sentence?, its analysis, the
    passage's content stems) for every passage."""
    for pid, text in passages:
        whole = _analyse(text)[1]
        spans = [(m.start(), m.end()) for m in SENTENCE.finditer(text) if m.group().strip()]
        for size in range(1, WINDOW + 1):
            for i in range(len(spans) - size + 1):
                window = text[spans[i][0] : spans[i + size - 1][1]].strip()
                yield pid, window, size == 1, _analyse(window), whole


def _number_clash(claim_tokens, window_tokens):
    """A number of the claim missing from the window while the window has another number next to one
    of the same words ("completed in 1925" vs "completed in 1889")."""

    def neighbours(tokens):
        out = {}
        for i, t in enumerate(tokens):
            if t[0].isdigit():
                near = tokens[max(0, i - 2) : i] + tokens[i + 1 : i + 3]
                out[_stem(t)] = {_stem(w) for w in near if w not in STOPWORDS and not w[0].isdigit()}
        return out

    mine, theirs = neighbours(claim_tokens), neighbours(window_tokens)
    return any(
        n not in theirs and any(words & other for m, other in theirs.items() if m != n) for n, words in mine.items()
    )


def verify(passages, claim):
    """passages: [(external_id, text)]. Returns the same dict shape as the LLM's verify output."""
    if REFUSAL.search(claim):
        return {
            "verdict": "non_assertive",
            "evidence": "",
            "passage_id": "",
            "reason": "says the passages do not answer: not scored",
        }
    tokens, wanted, negated = _analyse(REFERENCE.sub(" ", claim))
    if not wanted:
        return {"verdict": "non_assertive", "evidence": "", "passage_id": "", "reason": "no content words"}
    numbers = {w for w in wanted if w[0].isdigit()}
    best, clash = (0.0, "", ""), (0.0, "", "", "")
    for pid, window, single, (w_tokens, w_content, w_negated), whole in _windows(passages):
        words_only = len((wanted - numbers) & w_content) / max(1, len(wanted - numbers))
        why = ""
        if single and len(wanted) >= MIN_WORDS_TO_CONTRADICT and words_only >= CONTRADICT_THRESHOLD:
            if w_negated != negated:
                why = "negation differs"
            elif numbers and _number_clash(tokens, w_tokens):
                why = "a different number stands next to the same words"
        if why:
            clash = max(clash, (words_only, pid, window, why))
        if why or numbers - w_content:  # a window lacking one of the claim's numbers cannot support it
            continue
        # Answers often join facts from neighbouring sentences: words elsewhere in the passage count part.
        elsewhere = len((wanted & whole) - w_content)
        recall = (len(wanted & w_content) + ELSEWHERE * elsewhere) / len(wanted)
        best = max(best, (recall, pid, window), key=lambda b: b[0])
    recall, pid, window = best
    if recall >= THRESHOLD:
        return {
            "verdict": "supported",
            "evidence": window,
            "passage_id": pid,
            "reason": f"content words found in one passage window (overlap {recall:.2f})",
        }
    if clash[0]:  # no window supports it, and one sentence with the same words says the opposite
        return {
            "verdict": "contradicted",
            "evidence": clash[2],
            "passage_id": clash[1],
            "reason": f"{clash[3]} in the sentence matching its words (overlap {clash[0]:.2f})",
        }
    return {
        "verdict": "unsupported",
        "evidence": "",
        "passage_id": "",
        "reason": f"best content-word overlap {recall:.2f} is below {THRESHOLD}",
    }


class OfflineJudge:
    """Same call interface as llm.LLMJudge, answered in-process."""

    priced = False

    def decompose_params(self, answer_text):
        return {"answer_text": answer_text}

    def cacheable(self, context):
        return False

    def verify_context(self, passages):
        return passages

    def verify_params(self, context, claim_text):
        return {"passages": context, "claim_text": claim_text}

    def call(self, stage, params):
        if stage == "decompose":
            return Outcome(data=[tuple(c) for c in decompose_spans(params["answer_text"])])
        return Outcome(data=verify(params["passages"], params["claim_text"]))
