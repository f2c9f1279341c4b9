"""Reads of the judge: runs for the pages, versions and per-answer verdicts for sampling and reports."""

from django.db.models import Count

from audit.models import JudgeFailure, JudgeRun, JudgeVerdict, JudgeVersion

# When the claims of one answer disagree, the answer takes the worst verdict (DESIGN rule 6).
SEVERITY = ["contradicted", "unsupported", "supported", "non_assertive"]


def judge_runs():
    return JudgeRun.objects.select_related("judge_version", "dataset", "audit", "created_by")


def judge_run(run_id):
    return judge_runs().get(pk=run_id)


def run_failures(run, limit=50):
    return list(JudgeFailure.objects.filter(run=run, resolved=False).select_related("answer", "claim")
                .order_by("id")[:limit])


def latest_judge_version(answers=None, kinds=None):
    """The version of the most recent verdict on these answers (a queryset or ids), or None."""
    qs = JudgeVerdict.objects.all()
    if answers is not None:
        qs = qs.filter(claim__answer__in=answers)
    if kinds:
        qs = qs.filter(judge_version__kind__in=kinds)
    version_id = qs.order_by("-created_at", "-id").values_list("judge_version_id", flat=True).first()
    return JudgeVersion.objects.filter(pk=version_id).first() if version_id else None


def judge_versions_for(answers=None):
    """Versions with verdicts on these answers, newest first, each with n_verdicts: a report's version filter."""
    qs = JudgeVersion.objects.all()
    if answers is not None:
        qs = qs.filter(verdicts__claim__answer__in=answers)
    return list(qs.annotate(n_verdicts=Count("verdicts")).order_by("-created_at", "-id"))


def answer_judge_verdicts(answer_ids, judge_version):
    """{answer_id: worst scored verdict of its claims} under one version; answers without verdicts absent."""
    out = {}
    rows = JudgeVerdict.objects.filter(judge_version=judge_version, claim__answer_id__in=answer_ids)
    for answer_id, verdict in rows.values_list("claim__answer_id", "verdict"):
        current = out.get(answer_id)
        if current is None or SEVERITY.index(verdict) < SEVERITY.index(current):
            out[answer_id] = verdict
    return out
