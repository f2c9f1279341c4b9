"""Fast builders for sampling tests: many answers in a few bulk inserts."""

import datetime as dt

from django.utils import timezone

from audit.models import Answer, Claim, ClaimOrigin, JudgeVerdict, JudgeVersion


def bulk_answers(dataset, n, *, meta=lambda i: {}, length=lambda i: 100, claims=1, created_at=None, prefix="b"):
    start = Answer.objects.filter(dataset=dataset).count()
    when = created_at or timezone.now()
    rows = Answer.objects.bulk_create(
        Answer(
            dataset=dataset,
            external_id=f"{prefix}{start + i}",
            question="q?",
            text="x" * length(i),
            created_at=when(i) if callable(when) else when,
            meta=meta(i),
            content_hash="h" * 64,
            length=length(i),
        )
        for i in range(n)
    )
    if claims:
        rows = list(Answer.objects.filter(dataset=dataset, external_id__in=[a.external_id for a in rows]))
        Claim.objects.bulk_create(
            Claim(answer=a, position=p, text=f"claim {p}", origin=ClaimOrigin.IMPORTED)
            for a in rows
            for p in range(claims)
        )
    return list(Answer.objects.filter(dataset=dataset, external_id__in=[a.external_id for a in rows]).order_by("id"))


def judge_version(name="offline", created=None):
    v = JudgeVersion.objects.create(kind="offline", name=name, content_hash=name.ljust(64, "0"))
    if created:
        JudgeVersion.objects.filter(pk=v.pk).update(created_at=created)
    return v


def give_verdicts(version, answers, verdict):
    claims = Claim.objects.filter(answer__in=answers)
    JudgeVerdict.objects.bulk_create(
        JudgeVerdict(claim=c, judge_version=version, raw_verdict=verdict, verdict=verdict) for c in claims
    )


def days_ago(d):
    return timezone.now() - dt.timedelta(days=d)
