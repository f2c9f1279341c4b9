"""Reads of the judge: runs and their failures for the pages."""

from audit.models import JudgeFailure, JudgeRun


def judge_runs():
    return JudgeRun.objects.select_related("judge_version", "dataset", "audit", "created_by")


def judge_run(run_id):
    return judge_runs().get(pk=run_id)


def run_failures(run, limit=50):
    return list(
        JudgeFailure.objects.filter(run=run, resolved=False).select_related("answer", "claim").order_by("id")[:limit]
    )
