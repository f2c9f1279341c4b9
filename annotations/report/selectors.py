"""Reads for the report: ORM rows -> plain pandas frames. One query per table, never one per claim."""

import pandas as pd
from django.db.models import Count, F, Q
from django.db.models.functions import Substr

from annotations.models import Assignment, GoldLabel, Label
from audit.models import (
    Answer,
    Audit,
    AuditAnswer,
    AuditClaim,
    Claim,
    HistoryEvent,
    JudgeRun,
    JudgeVerdict,
    JudgeVersion,
)


def _frame(qs, columns):
    return pd.DataFrame.from_records(list(qs.values(*columns)), columns=columns)


def judge_versions(audit):
    """Versions with verdicts on this audit's claims, newest first, with their verdict counts."""
    # A calibration sample counts the verdicts on its sampled claims only, not on every claim of their answers.
    on = (
        "verdicts__claim__calibration_items__audit"
        if audit.is_calibration
        else "verdicts__claim__answer__audit_items__audit"
    )
    qs = (
        JudgeVersion.objects.filter(**{on: audit})
        .annotate(n_verdicts=Count("verdicts"))
        .defer("spec")
        .order_by("-created_at", "-id")
    )
    return [
        {
            "id": v.id,
            "label": v.label,
            "kind": v.kind,
            "n_verdicts": v.n_verdicts,
            "offline": v.kind == JudgeVersion.Kind.OFFLINE,
        }
        for v in qs
    ]


def audit_frames(audit, judge_version_id):
    """Everything the report needs about one audit, one query per table."""
    items = _frame(
        AuditAnswer.objects.filter(audit=audit).annotate(external_id=F("answer__external_id")),
        ["id", "answer_id", "external_id", "position", "stratum", "stratum_population", "stratum_sample", "weight"],
    )
    claims = _frame(audit.claims(), ["id", "answer_id", "position"])  # a calibration sample: its sampled claims
    if audit.is_calibration:  # each sampled claim has its own stratum and weight, not its answer's
        design = _frame(AuditClaim.objects.filter(audit=audit), ["claim_id", "stratum", "weight"])
        claims = claims.merge(design.rename(columns={"claim_id": "id"}), on="id", how="left")
    labels = _frame(
        Label.objects.filter(assignment__audit_answer__audit=audit, assignment__status=Assignment.Status.SUBMITTED)
        .exclude(verdict="")
        .annotate(slot=F("assignment__slot")),
        ["claim_id", "slot", "verdict"],
    )
    assignments = _frame(
        Assignment.objects.filter(audit_answer__audit=audit).annotate(name=F("annotator__username")),
        ["audit_answer_id", "slot", "status", "active_seconds", "annotator_id", "name"],
    )
    gold = _frame(GoldLabel.objects.filter(audit=audit), ["claim_id", "verdict", "source", "recheck"])
    judge = (
        _frame(  # the verdicts on the audit's claims (a calibration sample: its sampled ones)
            JudgeVerdict.objects.filter(judge_version_id=judge_version_id, claim__in=audit.claims()),
            ["claim_id", "verdict", "raw_verdict", "guard_passed", "numeric_passed"],
        )
        if judge_version_id
        else None
    )
    return {
        "items": items,
        "claims": claims,
        "labels": labels,
        "assignments": assignments,
        "gold": gold,
        "judge": judge,
        "reopened": reopened_answers(id=audit.id),
    }


def reopened_answers(**audits):
    """(audit_id, answer_id) of the answers, in the audits matching the filter, with an assignment a lead
    reopened that is not submitted again: waiting for its annotator. The audit trail records every reopening
    with the assignment's id; two queries whatever the number of audits."""
    events = HistoryEvent.objects.filter(audit__in=Audit.objects.filter(**audits), kind="assignment", action="reopen")
    ids = {new.get("assignment") for new in events.values_list("new", flat=True) if isinstance(new, dict)}
    qs = Assignment.objects.filter(pk__in=ids - {None}).exclude(status=Assignment.Status.SUBMITTED)
    qs = qs.annotate(audit_id=F("audit_answer__audit_id"), answer_id=F("audit_answer__answer_id"))
    return _frame(qs.order_by().distinct(), ["audit_id", "answer_id"])


def judge_run_behind(audit, version_id):
    """The latest run of the judge version over any of the audit's answers (a run over this audit, over another
    audit sharing an answer, over the whole dataset, or over explicit answers among them), or None."""
    answers = AuditAnswer.objects.filter(audit=audit).values("answer_id")
    sharing = AuditAnswer.objects.filter(answer_id__in=answers).values("audit_id")  # subqueries: a fixed statement
    runs = (
        JudgeRun.objects.filter(judge_version_id=version_id)
        .filter(Q(audit_id__in=sharing) | Q(audit=None, dataset_id=audit.dataset_id) | Q(audit=None, dataset=None))
        .order_by("-created_at", "-id")
    )
    answer_ids = None
    for run in runs.iterator():  # a run over explicit answers counts only if one of them is in this audit
        if not run.answer_ids:
            if run.audit_id or run.dataset_id:
                return run
            continue
        if answer_ids is None:
            answer_ids = set(answers.values_list("answer_id", flat=True))
        if run.audit_id or answer_ids & set(run.answer_ids):
            return run
    return None


def dataset_gold_counts(dataset_id):
    """For every answer audit of a dataset (a calibration sample draws claims, not answers: it has no answer-level
    fail rate): its design, its answers with their claim counts, gold counts per (audit, answer, verdict), and
    its reopened answers. Aggregated in SQL: six queries whatever the number of audits."""
    audits = _frame(
        Audit.objects.filter(dataset_id=dataset_id, kind="answers").order_by("created_at", "id"),
        ["id", "name", "created_at", "status", "design"],
    )
    answers = _frame(
        AuditAnswer.objects.filter(audit__dataset_id=dataset_id, audit__kind="answers")
        .values("audit_id", "answer_id", "stratum", "stratum_population")
        .annotate(n_claims=Count("answer__claims"))
        .order_by(),
        ["audit_id", "answer_id", "stratum", "stratum_population", "n_claims"],
    )
    submitted = _frame(
        Assignment.objects.filter(
            audit_answer__audit__dataset_id=dataset_id,
            audit_answer__audit__kind="answers",
            status=Assignment.Status.SUBMITTED,
        )
        .values(audit_id=F("audit_answer__audit_id"), answer_id=F("audit_answer__answer_id"))
        .annotate(n=Count("id"))
        .order_by(),
        ["audit_id", "answer_id", "n"],
    )
    gold = _frame(
        GoldLabel.objects.filter(audit__dataset_id=dataset_id, audit__kind="answers")
        .values("audit_id", "verdict", answer_id=F("claim__answer_id"))
        .annotate(n=Count("id"))
        .order_by(),
        ["audit_id", "answer_id", "verdict", "n"],
    )
    reopened = reopened_answers(dataset_id=dataset_id, kind="answers")
    return {"audits": audits, "answers": answers, "submitted": submitted, "gold": gold, "reopened": reopened}


EXCERPT = 160  # characters of question/answer shown in drill-down lists


def claim_texts(claim_ids):
    """Claim text with its answer's id, question and text excerpts, for one page of a drill-down list."""
    qs = Claim.objects.filter(id__in=list(claim_ids)).values(
        "id",
        "text",
        external_id=F("answer__external_id"),
        question_start=Substr("answer__question", 1, EXCERPT),
        answer_text=Substr("answer__text", 1, EXCERPT),
    )
    return {r["id"]: r for r in qs}


def answer_texts(answer_ids):
    qs = Answer.objects.filter(id__in=list(answer_ids)).values(
        "id", "external_id", question_start=Substr("question", 1, EXCERPT), answer_text=Substr("text", 1, EXCERPT)
    )
    return {r["id"]: r for r in qs}
