"""The answer-level rubric judge `answer_faithfulness`: its first wording, output schema and request shape.

One call per answer: the rubric and the answer's passages go in the system block (the passages carry the
cache breakpoint), the question and the answer in the user turn; the output is schema-constrained
{"score": 0|1, "reason": string}. No SDK import here: llm.py sends what this builds. The offline
answer-level baseline (OfflineRubricJudge) scores 0 when the offline claim judge finds a bad claim.
"""

import hashlib
import json

from django.conf import settings

from audit.judge import offline
from audit.judge.outcome import Outcome
from audit.judge.prompts import OutputError, _load
from audit.models import BAD_VERDICTS, JudgeLevel, JudgeVersion

NAME = "answer_faithfulness"

RUBRIC_SYSTEM = """answer_faithfulness: Is every claim in the answer supported by the retrieved context?
You are given the user question, the retrieved context (the passages below) and the answer.

Scale:
- Score 1 if and only if every factual claim can be traced to a specific span of the context, no claim
  contradicts it, and numbers, dates, names and quantities appear in the context with the same values.
- Score 0 if any claim is unsupported, contradicted or invented, including a claim that happens to be
  true in the world but is absent from the context.

Not unsupported (these do not lower the score):
- paraphrase
- summary
- reasonable arithmetic on numbers present
- common-knowledge connective language
- an explicit statement that the context does not contain the answer (which scores 1)

Output: {"score": 0|1, "reason": string}, both required, no other fields."""

RUBRIC_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "enum": [0, 1]}, "reason": {"type": "string"}},
    "required": ["score", "reason"],
    "additionalProperties": False,
}
RUBRIC_MAX_TOKENS = 1024
PASSAGE_FORMAT = '<passage id="{id}">\n{text}\n</passage>'


def build_spec(system=RUBRIC_SYSTEM, model=None, effort=None):
    return {
        "definition": NAME,
        "level": "answer",
        "model": model or settings.JUDGE_MODEL,
        "effort": effort or settings.JUDGE_EFFORT,
        "rubric_system": system,
        "rubric_passage_format": PASSAGE_FORMAT,
        "rubric_schema": RUBRIC_SCHEMA,
        "rubric_max_tokens": RUBRIC_MAX_TOKENS,
    }


def rubric_params(spec, question, passages, answer_text):
    """passages: [(external_id, text)]. The system blocks depend only on the spec and the passages."""
    body = "\n\n".join(spec["rubric_passage_format"].format(id=pid, text=text) for pid, text in passages)
    return {
        "model": spec["model"],
        "max_tokens": spec["rubric_max_tokens"],
        "system": [
            {"type": "text", "text": spec["rubric_system"]},
            {"type": "text", "text": f"<passages>\n{body}\n</passages>", "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [
            {"role": "user", "content": f"<question>\n{question}\n</question>\n<answer>\n{answer_text}\n</answer>"}
        ],
        "output_config": {"format": {"type": "json_schema", "schema": spec["rubric_schema"]}, "effort": spec["effort"]},
    }


def parse_rubric(text):
    data = _load(text)
    if set(data) != {"score", "reason"}:
        raise OutputError(f"expected keys ['reason', 'score'], got {sorted(data)}")
    if type(data["score"]) is not int or data["score"] not in (0, 1):
        raise OutputError(f"score {data['score']!r} is not 0 or 1")
    if not isinstance(data["reason"], str):
        raise OutputError("reason must be a string")
    return data


OFFLINE_NAME = "offline-rubric-v1"


def offline_spec():
    return {"name": OFFLINE_NAME, "level": "answer", "claim_judge": offline.spec()}


def offline_rubric_version():
    s = offline_spec()
    digest = hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest()
    version, _ = JudgeVersion.objects.get_or_create(
        content_hash=digest,
        defaults={"kind": JudgeVersion.Kind.OFFLINE, "level": JudgeLevel.ANSWER, "name": OFFLINE_NAME, "spec": s},
    )
    return version


class OfflineRubricJudge:
    """The answer-level counterpart of the offline baseline: decompose and verify offline, score 0 when any
    claim is unsupported or contradicted. Same call interface as llm.LLMJudge's rubric call."""

    priced = False

    def rubric_params(self, question, passages, answer_text):
        return {"passages": passages, "answer_text": answer_text}

    def call(self, stage, params):
        for text, _, _ in offline.decompose_spans(params["answer_text"]):
            v = offline.verify(params["passages"], text)
            if v["verdict"] in BAD_VERDICTS:
                return Outcome(data={"score": 0, "reason": f"{v['verdict']}: {text}"[:500]})
        return Outcome(data={"score": 1, "reason": "no claim found unsupported or contradicted"})
