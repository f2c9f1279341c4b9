"""The builders of the tests and benchmarks: plain functions that write real rows and compose.

Rows: make_user, make_dataset, make_answer (one, with passages and claims), make_answers (many, in bulk),
make_audit (a sample over answers), make_assignments, make_labels, make_gold (what submitting writes),
make_judge_version, make_verdicts. Compositions: make_assigned_audit (answers, audit, assignments),
make_labelled_audit (the same, submitted and labelled), judge_audit (a version judging every claim)."""

import datetime as dt

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker

from annotations.adjudication.services import gold_on_submit
from annotations.models import Assignment, Label
from audit import roles
from audit.models import Answer, Audit, AuditAnswer, Claim, ClaimOrigin, Dataset, JudgeVerdict, JudgeVersion, Passage

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


def make_answers(dataset, n, *, meta=lambda i: {}, length=lambda i: 100, claims=1, created_at=None, prefix="b"):
    """n answers (each with `claims` claims, no passages) in a few bulk inserts, ordered by id."""
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


def days_ago(d):
    return timezone.now() - dt.timedelta(days=d)


def make_assignments(audit, *annotators, status=Assignment.Status.ASSIGNED, active_seconds=0):
    """Every answer of the audit to annotators[0] (slot A) and annotators[1] (slot B, if given), in queue order."""
    submitted_at = timezone.now() if status == Assignment.Status.SUBMITTED else None
    return Assignment.objects.bulk_create(
        Assignment(
            audit_answer=item,
            annotator=user,
            slot=slot,
            status=status,
            submitted_at=submitted_at,
            active_seconds=active_seconds,
        )
        for item in audit.items.order_by("position")
        for slot, user in zip("AB", annotators, strict=False)
    )


def default_verdicts(answer_index, position, slot):
    """Every claim supported, except claim 0 of each answer on which B says unsupported (one dispute each)."""
    return "unsupported" if position == 0 and slot == "B" else "supported"


def make_labels(assignments, verdicts=default_verdicts, *, evidence_slots="A"):
    """A label on every claim of each assignment's answer: verdicts(answer position, claim position, slot).
    Supported/contradicted labels of the slots in evidence_slots quote "Paris" in the claim's own passage."""
    for a in assignments:
        item = a.audit_answer
        passages = {p.position: p for p in Passage.objects.filter(answer_id=item.answer_id)}
        labels = []
        for claim in Claim.objects.filter(answer_id=item.answer_id).order_by("position"):
            v = verdicts(item.position, claim.position, a.slot)
            kw = {}
            if a.slot in evidence_slots and v in ("supported", "contradicted"):
                p = passages[claim.position % len(passages)]
                start = p.text.index("Paris")
                kw = {
                    "evidence_passage": p,
                    "evidence_start": start,
                    "evidence_end": start + 5,
                    "evidence_text": "Paris",
                }
            labels.append(Label(assignment=a, claim=claim, verdict=v, **kw))
        Label.objects.bulk_create(labels)


def make_gold(audit):
    """What submitting every answer writes: agreed gold, and disputes for adjudication."""
    for item in AuditAnswer.objects.filter(audit=audit).select_related("audit"):
        gold_on_submit(item)


def make_assigned_audit(
    annotator, other=None, *, n_answers=3, n_claims=3, n_passages=3, name="2026-W48", dataset=None, **audit_kwargs
):
    """An audit over fresh answers; annotator holds slot A of every answer, other (if given) slot B.
    Returns the audit and annotator's assignments in queue order."""
    dataset = dataset or make_dataset(f"ds-{name}")
    answers = [
        make_answer(dataset, external_id=f"{name}-{i}", n_claims=n_claims, n_passages=n_passages)
        for i in range(n_answers)
    ]
    audit = make_audit(answers, name=name, **audit_kwargs)
    make_assignments(audit, *([annotator, other] if other else [annotator]))
    mine = list(
        Assignment.objects.filter(annotator=annotator, audit_answer__audit=audit).order_by("audit_answer__position")
    )
    return audit, mine


def make_labelled_audit(
    ann_a,
    ann_b,
    *,
    n_answers=2,
    n_claims=3,
    verdicts=default_verdicts,
    submitted=True,
    evidence_slots="A",
    name="2026-W48",
    status="labelling",
):
    """An audit whose answers are all assigned to ann_a (slot A) and ann_b (slot B), every claim labelled
    (make_labels), the assignments submitted (or started)."""
    answers = [make_answer(external_id=f"{name}-ans{i}", n_claims=n_claims) for i in range(n_answers)]
    audit = make_audit(answers, name=name, status=status)
    done = Assignment.Status.SUBMITTED if submitted else Assignment.Status.STARTED
    assignments = make_assignments(audit, ann_a, ann_b, status=done, active_seconds=120)
    make_labels(assignments, verdicts, evidence_slots=evidence_slots)
    return audit


def make_judge_version(name="offline", *, kind=JudgeVersion.Kind.OFFLINE, content_hash=None, created=None, **fields):
    v = JudgeVersion.objects.create(kind=kind, name=name, content_hash=content_hash or name.ljust(64, "0"), **fields)
    if created:
        JudgeVersion.objects.filter(pk=v.pk).update(created_at=created)
    return v


def make_verdicts(version, claims, verdict, *, quote=None):
    """A verdict of version on each claim: verdict is a string or verdict(claim). With quote, a supported
    verdict quotes it from "passage 1" and passed the evidence guard."""
    verdict_of = verdict if callable(verdict) else lambda claim: verdict
    rows = []
    for claim in claims:
        v = verdict_of(claim)
        quoted = quote is not None and v == "supported"
        rows.append(
            JudgeVerdict(
                claim=claim,
                judge_version=version,
                raw_verdict=v,
                verdict=v,
                evidence=quote if quoted else "",
                guard_passed=True if quoted else None,
                passage_external_id="passage 1" if quoted else "",
            )
        )
    JudgeVerdict.objects.bulk_create(rows)


def judge_audit(audit, verdict, *, name="judge-v1", content_hash="a" * 64):
    """An Anthropic judge version with a verdict on every claim of the audit (supported ones quote "Paris")."""
    version = make_judge_version(name, kind=JudgeVersion.Kind.ANTHROPIC, content_hash=content_hash)
    make_verdicts(version, audit.claims(), verdict, quote="Paris")
    return version


def make_annotators():
    return make_user("ann", "annotator"), make_user("zed-the-other", "annotator")


def passage_of(assignment, position=0):
    return Passage.objects.get(answer_id=assignment.audit_answer.answer_id, position=position)


def evidence_post(passage, needle):
    """POST data attaching the first occurrence of needle in passage as evidence."""
    start = passage.text.index(needle)
    return {"passage": passage.pk, "start": start, "end": start + len(needle), "text": needle}


def worker_run(task, worker_id, *, claim=True):
    """Run one task row through django-tasks-db's real Worker, in this process; returns it refreshed."""
    if claim:
        task.claim(worker_id)
    Worker(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=1,
        worker_id=worker_id,
        excluded_queue_names=[],
    ).run_task(task)
    task.refresh_from_db()
    return task
