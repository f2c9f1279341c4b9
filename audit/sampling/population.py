"""The population of an audit and its strata, as SQL expressions over Answer (nothing loaded into Python)."""

import datetime as dt
import hashlib
import re

from django.db.models import BigIntegerField, Case, Exists, ExpressionWrapper, F, OuterRef, Q, Subquery, TextField
from django.db.models.aggregates import Count
from django.db.models.expressions import Value, When
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce
from django.db.models.query_utils import FilteredRelation

from audit.models import Answer, AnswerJudgement, AuditAnswer, JudgeVerdict, JudgeVersion

META_FIELD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]{0,63}")
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
        if not (k.startswith("meta.") and META_FIELD.fullmatch(k[5:])):
            raise StrataError(f"unknown stratification key {k!r}: use judge, length or meta.FIELD")
    if len(set(keys)) != len(keys):
        raise StrataError("a stratification key is repeated")
    return keys


def meta_fields(qs, limit=1000):
    """The metadata fields found on (up to limit of) the population's answers, sorted."""
    found = set()
    for meta in qs.order_by().values_list("meta", flat=True)[:limit]:
        found.update(meta if isinstance(meta, dict) else {})
    return sorted(found)


def check_meta_keys(qs, keys):
    """Refuse a meta.FIELD stratification key no answer of the population has (a misspelling would make one
    "(none)" stratum of everything), naming the fields that exist."""
    for key in keys:
        if key.startswith("meta.") and not qs.filter(meta__has_key=key[5:]).exists():
            fields = ", ".join(f"meta.{f}" for f in meta_fields(qs)) or "none"
            raise StrataError(f"no answer in the population has metadata field {key[5:]!r}; available: {fields}")


def meta_text(field):
    # Compare and group metadata as text so numbers behave the same on SQLite and PostgreSQL.
    return Cast(KeyTextTransform(field, "meta"), TextField())


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
        if not META_FIELD.fullmatch(field):
            raise StrataError(f"invalid metadata field name {field!r}")
        qs = qs.alias(**{f"_m{i}": meta_text(field)}).filter(**{f"_m{i}": str(value)})
    if f.get("exclude_audited"):
        qs = qs.filter(~Exists(AuditAnswer.objects.filter(answer=OuterRef("pk"))))
    return qs


def stratum_label(keys, values):
    return " | ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True)) if keys else "all"
