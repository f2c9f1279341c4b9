"""Keep AnswerJudgement (the judge's pass/fail per answer and version) in step with JudgeVerdict.

Sampling calls judgements_sync before reading the table, so every writer of verdicts (the judge, imports,
tests, the shell) is covered without hooks. A stamp (count and largest id of the version's verdicts)
says what the rows were derived from. Verdicts are only ever inserted or deleted (never updated):
- same stamp: nothing to do (one COUNT/MAX over the version's verdicts);
- only newer verdicts added: recompute the answers those verdicts belong to (a judge run: ~150 answers);
- anything else (deletions, e.g. a re-import dropping claims; a late commit of an older id): rebuild.
"""

from django.db import connection, transaction
from django.db.models import Count, Max

from audit.models import AnswerJudgement, AnswerJudgementSync, Claim, JudgeVerdict
from audit.models.answers import BAD_VERDICTS

# fail if any claim of the answer has a bad verdict under the version, pass if it has any verdict.
# Table names come from the models; the version, ids and verdict values are bound parameters.
_DERIVE = """
    INSERT INTO {aj} (judge_version_id, answer_id, outcome)
    SELECT v.judge_version_id, c.answer_id,
           CASE MAX(CASE WHEN v.verdict IN (%s, %s) THEN 1 ELSE 0 END) WHEN 1 THEN 'fail' ELSE 'pass' END
    FROM {verdict} v INNER JOIN {claim} c ON c.id = v.claim_id
    WHERE v.judge_version_id = %s {scope}
    GROUP BY v.judge_version_id, c.answer_id
"""
# Answers having a verdict of the version newer than the stamp.
_NEW_ANSWERS = (
    "SELECT c2.answer_id FROM {verdict} v2 INNER JOIN {claim} c2 ON c2.id = v2.claim_id "
    "WHERE v2.judge_version_id = %s AND v2.id > %s"
)


def _sql(template, **extra):
    tables = {
        "aj": AnswerJudgement._meta.db_table,
        "verdict": JudgeVerdict._meta.db_table,
        "claim": Claim._meta.db_table,
    }
    return template.format(**tables, **{k: v.format(**tables) for k, v in extra.items()})


def _stamp(judge_version_id, after=0):
    agg = JudgeVerdict.objects.filter(judge_version_id=judge_version_id, id__gt=after).aggregate(
        n=Count("id"), last=Max("id")
    )
    return agg["n"], agg["last"] or 0


@transaction.atomic
def judgements_sync(judge_version_id):
    """Bring the version's AnswerJudgement rows up to date with its verdicts; returns 'fresh',
    'incremental' or 'rebuilt'."""
    AnswerJudgementSync.objects.get_or_create(judge_version_id=judge_version_id)
    sync = AnswerJudgementSync.objects.select_for_update().get(judge_version_id=judge_version_id)  # one at a time
    n, last = _stamp(judge_version_id)
    if (n, last) == (sync.verdicts, sync.last_verdict_id):
        return "fresh"
    new = _stamp(judge_version_id, after=sync.last_verdict_id)[0] if sync.verdicts else None
    rows = AnswerJudgement.objects.filter(judge_version_id=judge_version_id)
    params = [*BAD_VERDICTS, judge_version_id]
    with connection.cursor() as cur:
        if new is not None and n == sync.verdicts + new:
            scope = [judge_version_id, sync.last_verdict_id]
            rows.filter(
                answer_id__in=Claim.objects.filter(
                    judge_verdicts__judge_version_id=judge_version_id, judge_verdicts__id__gt=sync.last_verdict_id
                ).values("answer_id")
            ).delete()
            cur.execute(_sql(_DERIVE, scope="AND c.answer_id IN (" + _NEW_ANSWERS + ")"), [*params, *scope])
            outcome = "incremental"
        else:
            rows.delete()
            cur.execute(_sql(_DERIVE, scope=""), params)
            if connection.vendor == "postgresql":  # fresh statistics, or the planner guesses a tiny table
                cur.execute(_sql("ANALYZE {aj}"))
            outcome = "rebuilt"
    sync.verdicts, sync.last_verdict_id = n, last
    sync.save()
    return outcome
