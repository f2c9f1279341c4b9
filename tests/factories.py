"""Small builders for tests and benchmarks. Plain functions, real rows."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone

from audit import roles
from audit.models import Answer, Audit, AuditAnswer, Claim, ClaimOrigin, Dataset, Passage

PASSWORD = "pw-for-tests-only"


def make_user(username, *role_short_names):
    user = get_user_model().objects.create_user(username, password=PASSWORD)
    for short in role_short_names:
        group, _ = Group.objects.get_or_create(name=roles.BY_SHORT_NAME[short])
        user.groups.add(group)
    return user


def make_dataset(name="ds"):
    return Dataset.objects.get_or_create(name=name)[0]


def make_answer(
    dataset=None,
    *,
    external_id=None,
    n_claims=3,
    n_passages=3,
    meta=None,
    question="What is the capital of France?",
    text=None,
    created_at=None,
):
    dataset = dataset or make_dataset()
    claims = [f"Claim number {i} says Paris is the capital." for i in range(n_claims)]
    text = text if text is not None else " ".join(claims)
    answer = Answer.objects.create(
        dataset=dataset,
        external_id=external_id or f"answer.{Answer.objects.count() + 1}",  # a dot: never inside a CSRF token or nonce
        question=question,
        text=text,
        created_at=created_at or timezone.now(),
        meta=meta or {},
        content_hash="x" * 64,
        length=len(text),
    )
    Passage.objects.bulk_create(
        Passage(
            answer=answer,
            position=i,
            external_id=f"passage {i + 1}",
            source="test",
            text=f"Passage {i + 1}: Paris is the capital of France. Claim number {i} says Paris is the capital.",
        )
        for i in range(n_passages)
    )
    pos = 0
    rows = []
    for i, c in enumerate(claims):
        start = text.find(c, pos) if text else -1
        rows.append(
            Claim(
                answer=answer,
                position=i,
                text=c,
                origin=ClaimOrigin.IMPORTED,
                span_start=start if start >= 0 else None,
                span_end=start + len(c) if start >= 0 else None,
            )
        )
        pos = max(pos, start + len(c)) if start >= 0 else pos
    Claim.objects.bulk_create(rows)
    return answer


def make_audit(answers, *, name="2026-W48", dataset=None, status="labelling", **kwargs):
    """An audit over the given answers as a simple random sample of them."""
    dataset = dataset or answers[0].dataset
    audit = Audit.objects.create(
        name=name, dataset=dataset, status=status, seed=1, size=len(answers), population_size=len(answers), **kwargs
    )
    n = len(answers)
    AuditAnswer.objects.bulk_create(
        AuditAnswer(
            audit=audit,
            answer=a,
            position=i,
            stratum="all",
            stratum_population=n,
            stratum_sample=n,
            inclusion_probability=1.0,
            weight=1.0,
        )
        for i, a in enumerate(answers)
    )
    return audit
