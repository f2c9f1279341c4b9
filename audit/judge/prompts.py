"""The LLM judge's prompts, output schemas and request shapes, versioned by content hash.

Everything that can change a verdict (prompts, schemas, model, effort, max_tokens) goes into one spec
dict; its sha256 names the JudgeVersion, so a changed prompt mints a new version.
No SDK import here: these build plain request dicts that llm.py sends (or submits as a batch).
"""

import hashlib
import json

from django.conf import settings

from audit.models import JudgeVersion
from audit.models.answers import VERDICTS as ALL_VERDICTS

PROMPT_SET = "claim-judge-v1"

DECOMPOSE_SYSTEM = """You split the answer of a question-answering assistant into atomic claims.
You see only the answer. Do not judge whether claims are true.

Rules:
1. One claim per assertion. Split coordinated assertions ("X was founded in 1990 and is based in Oslo"
   becomes two claims).
2. Each claim must stand alone: replace pronouns and definite references ("it", "they", "the company",
   "this version") with what they refer to in the answer.
3. Drop non-assertive text: greetings, thanks, restated questions, offers of further help, statements
   about the answer itself ("Here is a summary", "I hope this helps").
4. Keep hedges and qualifiers with the claim they modify ("may", "usually", "in version 2 and later").
5. If the answer says the available information does not answer the question, return that statement
   as one claim.
6. Stay close to the answer's wording; do not add facts, do not merge separate assertions.
A claim is atomic enough when a single span of a single source text could confirm or refute it.

Return JSON: {"claims": ["claim one", "claim two", ...]} in the order they appear in the answer."""

VERIFY_SYSTEM = """You check one claim against the retrieved passages below, and nothing else.
Decide the verdict:
- "supported": a passage states or directly entails the claim.
- "contradicted": a passage states something incompatible with the claim.
- "unsupported": no passage settles the claim either way (it may still be true in the world).
- "non_assertive": the claim asserts nothing checkable (greeting, question, offer of help).
For "supported" and "contradicted", "evidence" must be copied character for character from ONE passage
(the shortest span that settles the claim) and "passage_id" must be that passage's id. Otherwise give
an empty evidence and passage_id. "reason" is one short sentence.
Judge only from the passages: do not use outside knowledge."""

DECOMPOSE_SCHEMA = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["claims"],
    "additionalProperties": False,
}

VERDICTS = list(ALL_VERDICTS)
VERIFY_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": VERDICTS},
        "evidence": {"type": "string"},
        "passage_id": {"type": "string"},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "evidence", "passage_id", "reason"],
    "additionalProperties": False,
}

DECOMPOSE_MAX_TOKENS = 2048  # the floor: a long answer gets room for its claims (decompose_max_tokens)
# The project's ceiling, not the API's: at the slowest output rate the SDK plans for (128,000 tokens an hour)
# a longer reply could take over 10 minutes, which the call's timeout (llm.call_timeout) would then have to allow.
DECOMPOSE_MAX_TOKENS_CAP = 21_000
VERIFY_MAX_TOKENS = 1024


def build_spec(model=None, effort=None):
    return {
        "prompt_set": PROMPT_SET,
        "model": model or settings.JUDGE_MODEL,
        "effort": effort or settings.JUDGE_EFFORT,
        "decompose_system": DECOMPOSE_SYSTEM,
        "decompose_schema": DECOMPOSE_SCHEMA,
        "decompose_max_tokens": DECOMPOSE_MAX_TOKENS,
        "decompose_max_tokens_cap": DECOMPOSE_MAX_TOKENS_CAP,
        "verify_system": VERIFY_SYSTEM,
        "verify_passage_format": '<passage id="{id}">\n{text}\n</passage>',
        "verify_schema": VERIFY_SCHEMA,
        "verify_max_tokens": VERIFY_MAX_TOKENS,
    }


def spec_hash(spec):
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def anthropic_version(model=None, effort=None):
    """The JudgeVersion for the current prompts, model and effort (created on first use)."""
    spec = build_spec(model, effort)
    version, _ = JudgeVersion.objects.get_or_create(
        content_hash=spec_hash(spec),
        defaults={
            "kind": JudgeVersion.Kind.ANTHROPIC,
            "name": f"{PROMPT_SET} {spec['model']} effort={spec['effort']}",
            "model": spec["model"],
            "effort": spec["effort"],
            "spec": spec,
        },
    )
    return version


def _output_config(spec, schema_key):
    return {"format": {"type": "json_schema", "schema": spec[schema_key]}, "effort": spec["effort"]}


def decompose_max_tokens(spec, answer_text):
    """Room for an answer's claims: they restate it (about a token per four characters) with its references
    spelt out, as JSON, so half a token per character of the answer; at least the spec's floor, at most its cap
    (a version minted before the cap existed keeps its fixed max_tokens)."""
    floor = spec["decompose_max_tokens"]
    return min(spec.get("decompose_max_tokens_cap", floor), max(floor, len(answer_text) // 2))


def decompose_params(spec, answer_text):
    """The answer text only: the decomposer never sees passages or the question's context (rule 1)."""
    return {
        "model": spec["model"],
        "max_tokens": decompose_max_tokens(spec, answer_text),
        "system": spec["decompose_system"],
        "messages": [{"role": "user", "content": f"<answer>\n{answer_text}\n</answer>"}],
        "output_config": _output_config(spec, "decompose_schema"),
    }


def cache_control(ttl):
    """The breakpoint asking the API to cache the prefix for ttl: "5m" (its default, sent without a ttl,
    billed 1.25x input to write) or "1h" (billed 2x input to write)."""
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def cache_ttl(params):
    """The ttl a request's last cache breakpoint asks for ("5m" or "1h"), or None when it has none."""
    system = params.get("system")
    marks = [b["cache_control"] for b in system if b.get("cache_control")] if isinstance(system, list) else []
    return marks[-1].get("ttl", "5m") if marks else None


def verify_system_blocks(spec, passages, ttl="5m"):
    """passages: [(external_id, text)]. The last block carries the cache breakpoint (none when ttl is None;
    a ttl changes no verdict, so it is not in the spec); the blocks depend only on the spec, the passages and
    the ttl, so every claim of one answer sends byte-identical system text."""
    body = "\n\n".join(spec["verify_passage_format"].format(id=pid, text=text) for pid, text in passages)
    last = {"type": "text", "text": f"<passages>\n{body}\n</passages>"}
    if ttl:
        last["cache_control"] = cache_control(ttl)
    return [{"type": "text", "text": spec["verify_system"]}, last]


def verify_params(spec, system_blocks, claim_text):
    """system_blocks from verify_system_blocks, built once per answer and shared by its claims."""
    return {
        "model": spec["model"],
        "max_tokens": spec["verify_max_tokens"],
        "system": system_blocks,
        "messages": [{"role": "user", "content": f"<claim>{claim_text}</claim>"}],
        "output_config": _output_config(spec, "verify_schema"),
    }


class OutputError(ValueError):
    """The model's text did not parse as JSON or broke the schema."""


def parse_decompose(text):
    data = _load(text)
    claims = data.get("claims")
    if set(data) != {"claims"} or not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise OutputError('expected {"claims": [string, ...]}')
    return [c.strip() for c in claims if c.strip()]


def parse_verify(text):
    data = _load(text)
    if set(data) != set(VERIFY_SCHEMA["required"]):
        raise OutputError(f"expected keys {sorted(VERIFY_SCHEMA['required'])}, got {sorted(data)}")
    if data["verdict"] not in VERDICTS:
        raise OutputError(f"verdict {data['verdict']!r} is not one of {VERDICTS}")
    if not all(isinstance(data[k], str) for k in ("evidence", "passage_id", "reason")):
        raise OutputError("evidence, passage_id and reason must be strings")
    return data


def _load(text):
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise OutputError(f"not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise OutputError("expected a JSON object")
    return data
