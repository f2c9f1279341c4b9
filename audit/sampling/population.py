"""The population of an audit and its strata, as SQL expressions over Answer (nothing loaded into Python).

A metadata key is a dotted path into the answer's meta: `meta.model`, or `meta.additional_metadata.topic` for
a field nested in objects (as DeepEval's additional_metadata or LangSmith's extra.metadata keep it), up to
META_DEPTH keys of letters, digits, '_' and '-'.
"""

import datetime as dt
import hashlib
import re

from django.db.models import BigIntegerField, Case, Exists, ExpressionWrapper, F, OuterRef, Q, Subquery, TextField
from django.db.models.aggregates import Count
from django.db.models.expressions import Value, When
from django.db.models.fields.json import HasKey, KeyTextTransform, KeyTransform
from django.db.models.functions import Cast, Coalesce
from django.db.models.query_utils import FilteredRelation

from audit.models import Answer, AnswerJudgement, AuditAnswer, JudgeVerdict, JudgeVersion

# One key of a metadata path; not one int() reads ("12", "1_0"), which the JSON lookups would take as a list index.
META_FIELD = re.compile(r"(?!\d+(?:_\d+)*$)[A-Za-z0-9_][A-Za-z0-9_\-]{0,63}")
META_DEPTH = 4  # keys in a metadata path at most: meta.a.b.c.d
META_LISTED = 50  # metadata paths named at most (in the preview, and when a key is refused)
META_SCANNED = 1000  # distinct paths collected at most while looking for them
NONE_LABEL = "(none)"
LENGTH_BUCKETS = ((300, "<300"), (801, "300-800"))  # upper bounds (exclusive); the rest is ">800"
LENGTH_LAST = ">800"

# The order key is a polynomial hash of (answer id, seed) modulo the prime 2^31 - 1, computed in SQL with
# integer arithmetic only: every intermediate stays below 2^63, so SQLite and PostgreSQL agree exactly.
P = 2_147_483_647
A1 = 1_103_515_245 % P


class StrataError(ValueError):
    pass


def parse_strata_keys(raw):
    """'judge, meta.model' or a list -> ['judge', 'meta.model']; clear errors for anything else."""
    keys = [k.strip() for k in (raw.split(",") if isinstance(raw, str) else raw) if k and k.strip()]
    for k in keys:
        if k in ("judge", "length"):
            continue
        if not (k.startswith("meta.") and meta_path_ok(k[5:])):
            raise StrataError(
                f"unknown stratification key {k!r}: use judge, length or meta.FIELD (meta.FIELD.KEY: nested)"
            )
    if len(set(keys)) != len(keys):
        raise StrataError("a stratification key is repeated")
    return keys


def meta_path_ok(path):
    """Whether `path` is a metadata path: 1 to META_DEPTH keys joined by '.'."""
    keys = path.split(".")
    return len(keys) <= META_DEPTH and all(META_FIELD.fullmatch(k) for k in keys)


def meta_fields(qs, limit=1000):
    """The metadata paths found on (up to limit of) the population's answers, nested ones included (a.b), sorted:
    at most META_LISTED, the shallower first."""
    found = set()
    for meta in qs.order_by().values_list("meta", flat=True)[:limit]:
        _collect_paths(meta, "", found)
        if len(found) >= META_SCANNED:
            break
    return sorted(sorted(found, key=lambda p: (p.count("."), p))[:META_LISTED])


def _collect_paths(value, prefix, found):
    if not isinstance(value, dict) or prefix.count(".") >= META_DEPTH:
        return
    for key, item in value.items():
        if META_FIELD.fullmatch(key) and len(found) < META_SCANNED:
            found.add(prefix + key)
            _collect_paths(item, f"{prefix}{key}.", found)


def check_meta_keys(qs, keys):
    """Refuse a meta.FIELD stratification key no answer of the population has (a misspelling would make one
    "(none)" stratum of everything), naming the fields that exist."""
    for key in keys:
        if key.startswith("meta.") and not qs.filter(meta_has(key[5:])).exists():
            listed = meta_fields(qs)
            fields = ", ".join(f"meta.{f}" for f in listed) + (", ..." if len(listed) == META_LISTED else "")
            raise StrataError(
                f"no answer in the population has metadata field {key[5:]!r}; available: {fields or 'none'}"
            )


def meta_json(path, field="meta"):
    """The JSON value at a metadata path (a.b: field -> a -> b), decoded: None where it is missing."""
    expr = field
    for key in path.split("."):
        expr = KeyTransform(key, expr)
    return expr


def meta_has(path):
    """The condition: the metadata holds the path (even holding null)."""
    *parents, last = path.split(".")
    return HasKey(meta_json(".".join(parents)) if parents else F("meta"), last)


def meta_text(path):
    # Compare and group metadata as text so numbers behave the same on SQLite and PostgreSQL.
    *parents, last = path.split(".")
    return Cast(KeyTextTransform(last, meta_json(".".join(parents)) if parents else "meta"), TextField())


def default_judge_version(dataset):
    """The most recently created judge version having verdicts on answers of this dataset."""
    has = JudgeVerdict.objects.filter(judge_version=OuterRef("pk"), claim__answer__dataset=dataset)
    return JudgeVersion.objects.filter(Exists(has)).order_by("-created_at", "-id").first()


def stratum_expression(key, judge_version_id=None, judge_joined=True):
    """SQL expression of one stratification key. 'judge' reads AnswerJudgement (kept in step by
    judgements_sync; no row means unjudged): through the join added by strata(), or as a subquery."""
    if key.startswith("meta."):
        return Coalesce(meta_text(key[5:]), Value(NONE_LABEL), output_field=TextField())
    if key == "length":
        whens = [When(length__lt=bound, then=Value(label)) for bound, label in LENGTH_BUCKETS]
        return Case(*whens, default=Value(LENGTH_LAST), output_field=TextField())
    if key == "judge":
        if judge_version_id is None:
            return Value("unjudged", output_field=TextField())
        outcome = (
            F("_judgement__outcome")
            if judge_joined
            else Subquery(
                AnswerJudgement.objects.filter(judge_version_id=judge_version_id, answer=OuterRef("pk")).values(
                    "outcome"
                )
            )
        )
        return Coalesce(outcome, Value("unjudged"), output_field=TextField())
    raise StrataError(f"unknown stratification key {key!r}")


JUDGE_OUTCOMES = ("fail", "pass", "unjudged")


def judge_outcome_counts():
    """One COUNT per judge outcome (columns in JUDGE_OUTCOMES order), over a queryset from strata()."""
    return {
        "_nfail": Count("pk", filter=Q(_judgement__outcome="fail")),
        "_npass": Count("pk", filter=Q(_judgement__outcome="pass")),
        "_nunjudged": Count("pk", filter=Q(_judgement__outcome__isnull=True)),
    }


def strata(qs, keys, judge_version_id=None, few_rows=False):
    """(queryset, {alias: expression}) for grouping or drawing by these keys. Counting every row, the
    judge key is one LEFT JOIN on AnswerJudgement (unique per version and answer), not subqueries per
    answer. few_rows (the draw, whose order-key filter keeps ~0.1% of rows): a lookup per kept row,
    rather than a join PostgreSQL would answer by hashing the whole version's table."""
    if "judge" in keys and judge_version_id is not None and not few_rows:
        qs = qs.alias(
            _judgement=FilteredRelation("judgements", condition=Q(judgements__judge_version_id=judge_version_id))
        )
    return qs, {f"_s{i}": stratum_expression(k, judge_version_id, not few_rows) for i, k in enumerate(keys)}


def order_key(seed):
    """Deterministic pseudo-random key in [0, P) from (id, seed): a degree-4 polynomial in id mod P."""
    digest = hashlib.sha256(str(int(seed)).encode()).digest()
    s1, s2, s3 = (int.from_bytes(digest[i : i + 8], "big") % P for i in (0, 8, 16))
    x = F("id") % P
    h1 = (x * A1 + s1) % P
    h2 = (h1 * h1 + x * (s2 or 1)) % P
    return ExpressionWrapper((h2 * h2 + h1 * (s3 or 1)) % P, output_field=BigIntegerField())


def _day(value):
    return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))


def population(dataset, population_filter=None):
    """Answer queryset of the population: dataset, created_at range (dates, inclusive), metadata
    equalities, and optionally answers not yet in any audit."""
    f = population_filter or {}
    qs = Answer.objects.filter(dataset=dataset)
    if f.get("created_from"):
        qs = qs.filter(created_at__gte=dt.datetime.combine(_day(f["created_from"]), dt.time(), dt.UTC))
    if f.get("created_to"):
        end = _day(f["created_to"]) + dt.timedelta(days=1)
        qs = qs.filter(created_at__lt=dt.datetime.combine(end, dt.time(), dt.UTC))
    for i, (field, value) in enumerate(sorted((f.get("meta") or {}).items())):
        if not meta_path_ok(field):
            raise StrataError(f"invalid metadata field name {field!r}")
        qs = qs.alias(**{f"_m{i}": meta_text(field)}).filter(**{f"_m{i}": str(value)})
    if f.get("exclude_audited"):
        qs = qs.filter(~Exists(AuditAnswer.objects.filter(answer=OuterRef("pk"))))
    return qs


def stratum_label(keys, values):
    return " | ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True)) if keys else "all"
