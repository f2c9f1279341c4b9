"""Reads shared across the audit domain."""

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, Subquery
from django.db.models.functions import Coalesce

from audit.models import Answer, Claim, Dataset, JudgeVerdict, Passage
from audit.sampling.population import meta_path_ok, meta_text


def _count(qs):
    """A correlated COUNT(*) subquery over qs (already filtered on the outer dataset)."""
    counted = qs.order_by().values("answer__dataset" if qs.model is Claim else "dataset")
    return Coalesce(Subquery(counted.annotate(n=Count("pk")).values("n"), output_field=IntegerField()), 0)


def plain_rows(values_list):
    """The rows of a values_list queryset as the database driver returns them, without Django's per-value
    converters: for bulk reads (exports) of text, numbers and booleans, where converting costs a third of the
    read. A JSONField comes back as its JSON text (both backends load jsonb as text)."""
    try:
        sql, params = values_list.query.get_compiler(using=values_list.db).as_sql()
    except EmptyResultSet:  # a filter that can match nothing (pk__in=[])
        return []
    with connections[values_list.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def dataset_counts():
    """Datasets with their answers, claims and claims not located in their answer's text: one query."""
    claims = Claim.objects.filter(answer__dataset=OuterRef("pk"))
    return Dataset.objects.annotate(
        n_answers=_count(Answer.objects.filter(dataset=OuterRef("pk"))),
        n_claims=_count(claims),
        n_unlocated=_count(claims.filter(span_start__isnull=True)),
    ).order_by("name")


def answer_search(*, q="", dataset_id=None, meta_key="", meta_value=""):
    qs = Answer.objects.select_related("dataset").order_by("-id")
    if dataset_id:
        qs = qs.filter(dataset_id=dataset_id)
    if q:
        qs = qs.filter(Q(question__icontains=q) | Q(text__icontains=q) | Q(external_id=q))
    if meta_key and meta_path_ok(meta_key):  # a field or a nested path (a.b), compared as text like the strata
        qs = qs.alias(_meta=meta_text(meta_key)).filter(_meta=meta_value)
    return qs


def answer_with_parts(answer_id, *, judge_version_id=None):
    """One answer with passages, claims and each claim's judge verdicts: a fixed number of queries."""
    verdicts = JudgeVerdict.objects.select_related("judge_version").order_by("-created_at")
    if judge_version_id:
        verdicts = verdicts.filter(judge_version_id=judge_version_id)
    claims = Claim.objects.order_by("position").prefetch_related(
        Prefetch("judge_verdicts", queryset=verdicts, to_attr="verdicts")
    )
    return (
        Answer.objects.select_related("dataset")
        .prefetch_related(
            Prefetch("passages", queryset=Passage.objects.order_by("position"), to_attr="passage_list"),
            Prefetch("claims", queryset=claims, to_attr="claim_list"),
        )
        .get(pk=answer_id)
    )
