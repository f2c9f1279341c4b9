"""Judge definitions leads edit: the current code prompts are the first claim-level version, the
`answer_faithfulness` rubric the first answer-level one. Saving new wording mints a content-hashed
JudgeVersion chained to the one it edits; versions are never changed afterwards (read-only), so every
verdict (JudgeVerdict, AnswerVerdict) traces to the exact wording that produced it."""

import difflib
import re

from django.conf import settings
from django.db import transaction

from audit.judge import prompts, rubric
from audit.lazy import lazy_module
from audit.models import JudgeDefinition, JudgeEdit, JudgeLevel, JudgeVersion
from audit.validation import row_id

# The SDK's model list is read only when a lead saves a model: a page that never saves does not load the SDK.
llm = lazy_module("audit.judge.llm")

CLAIM_NAME = "claim-judge"
# The characters of the content hash in a version's reference NAME@HASH, the form the gold export writes.
REF_HASH_CHARS = 12
MIN_HASH_PREFIX = 6
# The texts a lead may edit, per level, besides model and effort.
EDITABLE = {JudgeLevel.CLAIM: ("decompose_system", "verify_system"), JudgeLevel.ANSWER: ("rubric_system",)}
EFFORTS = ("low", "medium", "high")
MAX_TEXT = 20_000
ANTHROPIC_MODEL = re.compile(r"claude-[a-z0-9]+(?:[-.][a-z0-9]+)*")
# Terms whose removal warns: the scale and the exclusions of the rubric, the verdicts of the verifier.
GUARDED = {
    "rubric_system": [
        ("score 1", "the scale: the definition of score 1"),
        ("score 0", "the scale: the definition of score 0"),
        ("paraphrase", "the exclusions: paraphrase"),
        ("summary", "the exclusions: summary"),
        ("arithmetic", "the exclusions: reasonable arithmetic"),
        ("connective", "the exclusions: connective language"),
        ("does not contain the answer", "the exclusions: the context does not contain the answer"),
    ],
    "verify_system": [(f'"{v}"', f"the scale: the verdict {v}") for v in prompts.VERDICTS],
}


class DefinitionError(ValueError):
    """A field of an edit is invalid: (field, message)."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


def definitions_seed():
    """The two first definitions with their first versions (idempotent)."""
    with transaction.atomic():
        claim, _ = JudgeDefinition.objects.get_or_create(
            name=CLAIM_NAME,
            defaults={"level": JudgeLevel.CLAIM, "description": "Decompose the answer, then verify each claim."},
        )
        answer, _ = JudgeDefinition.objects.get_or_create(
            name=rubric.NAME,
            defaults={"level": JudgeLevel.ANSWER, "description": "Binary, strict answer-level rubric."},
        )
        first = prompts.anthropic_version()
        JudgeVersion.objects.filter(pk=first.pk, definition__isnull=True).update(definition=claim)
        spec = rubric.build_spec()
        JudgeVersion.objects.get_or_create(
            content_hash=prompts.spec_hash(spec),
            defaults=_version_fields(answer, spec, None, 1),
        )
    return claim, answer


def _version_fields(definition, spec, previous, number):
    return {
        "kind": JudgeVersion.Kind.ANTHROPIC,
        "level": definition.level,
        "name": f"{version_name(definition.name, number)} {spec['model']} effort={spec['effort']}",
        "model": spec["model"],
        "effort": spec["effort"],
        "spec": spec,
        "definition": definition,
        "previous": previous,
    }


def version_name(definition_name, number):
    """The name of a definition's n-th version: claim-judge-v2, like the first claim prompts' claim-judge-v1."""
    return f"{definition_name}-v{number}"


def version_ref(version):
    """NAME@HASH (the hash's first REF_HASH_CHARS): how the gold export names a verdict's version, and a form
    version_lookup accepts."""
    return ref_of(version.name, version.content_hash)


def ref_of(name, content_hash):
    """version_ref from a version's name and content hash (the export reads them as values)."""
    return f"{name}@{content_hash[:REF_HASH_CHARS]}"


def current_version(definition):
    return definition.versions.order_by("-created_at", "-id").first()


def removed_terms(old_spec, new_spec):
    """Warnings: guarded terms present in the old wording and absent from the new one."""
    out = []
    for field, terms in GUARDED.items():
        old, new = (old_spec.get(field) or "").lower(), (new_spec.get(field) or "").lower()
        out += [f"{field}: removed {label}" for term, label in terms if term in old and term not in new]
    return out


def edited_spec(definition, base, data):
    """The spec of base with the edited texts, model and effort of data; DefinitionError names the field."""
    spec = dict(base.spec)
    for field in EDITABLE[definition.level]:
        text = (data.get(field) or "").replace("\r\n", "\n").strip()
        if not text:
            raise DefinitionError(field, "must not be empty")
        if len(text) > MAX_TEXT:
            raise DefinitionError(field, f"is longer than {MAX_TEXT} characters")
        spec[field] = text
    model = (data.get("model") or "").strip()
    if not model or len(model) > 100:
        raise DefinitionError("model", "must be a model id of 1 to 100 characters")
    if base.kind == JudgeVersion.Kind.ANTHROPIC:
        anthropic_model_check(model)
    if data.get("effort") not in EFFORTS:
        raise DefinitionError("effort", f"must be one of {', '.join(EFFORTS)}")
    spec["model"], spec["effort"] = model, data["effort"]
    return spec


def anthropic_model_check(model):
    """An Anthropic judge's model: an Anthropic model id the installed SDK lists, or one JUDGE_PRICES prices
    (a model newer than the SDK: pricing it also lets the budget count its calls); DefinitionError otherwise."""
    if not ANTHROPIC_MODEL.fullmatch(model):
        example = settings.JUDGE_MODEL
        raise DefinitionError("model", f"{model!r} is not an Anthropic model id (claude-..., e.g. {example})")
    known = {*llm.sdk_model_ids(), *settings.JUDGE_PRICES, settings.JUDGE_MODEL}
    if model not in known:
        priced = ", ".join(sorted(settings.JUDGE_PRICES))
        raise DefinitionError(
            "model", f"{model!r} is neither listed by the installed anthropic SDK nor priced in JUDGE_PRICES ({priced})"
        )


def definition_save(definition, data, user, *, confirm=False):
    """(version, warnings, minted). Unconfirmed warnings save nothing: (None, warnings, the diff the save would
    make). Wording identical to an existing version returns that version (minted False): the hash names it."""
    with transaction.atomic():
        base = current_version(definition)
        spec = edited_spec(definition, base, data)
        warnings = removed_terms(base.spec, spec)
        if warnings and not confirm:
            return None, warnings, spec_diff(base.spec, spec, definition.level)
        existing = JudgeVersion.objects.filter(content_hash=prompts.spec_hash(spec)).first()
        if existing:
            return existing, warnings, False
        version = JudgeVersion.objects.create(
            content_hash=prompts.spec_hash(spec),
            **_version_fields(definition, spec, base, definition.versions.count() + 1),
        )
        JudgeEdit.objects.create(version=version, user=user, warnings=warnings)
    return version, warnings, True


def version_diff(version):
    """[(field, unified diff lines)] of the edited fields against the previous version."""
    if version.previous is None:
        return []
    return spec_diff(version.previous.spec, version.spec, version.level)


def spec_diff(old_spec, new_spec, level):
    fields = EDITABLE.get(level, ()) + ("model", "effort")
    out = []
    for field in fields:
        old, new = str(old_spec.get(field, "")), str(new_spec.get(field, ""))
        if old != new:
            lines = difflib.unified_diff(old.splitlines(), new.splitlines(), "previous", "this version", lineterm="")
            out.append((field, list(lines)))
    return out


def version_lookup(text):
    """A judge version named by its id, its reference NAME@HASH-PREFIX (version_ref: the gold export's form), a
    definition's name (its current version) or a content-hash prefix of at least MIN_HASH_PREFIX characters;
    None when nothing matches."""
    text = (text or "").strip()
    if (pk := row_id(text)) and (version := JudgeVersion.objects.filter(pk=pk).first()):
        return version
    name, at, prefix = text.rpartition("@")
    if at:
        return _by_hash(prefix, name=name)
    definition = JudgeDefinition.objects.filter(name=text).first()
    if definition is not None:
        return current_version(definition)
    return _by_hash(text)


def _by_hash(prefix, **fields):
    if len(prefix) < MIN_HASH_PREFIX:
        return None
    return JudgeVersion.objects.filter(content_hash__startswith=prefix, **fields).first()
