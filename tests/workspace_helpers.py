"""Builders for the workspace tests and bench: an audit whose answers each have two assignments."""

from annotations.models import Assignment
from audit.models import Passage
from tests.factories import make_answer, make_audit, make_dataset, make_user


def make_assigned_audit(
    annotator, other=None, *, n_answers=3, n_claims=3, n_passages=3, name="2026-W48", dataset=None, **audit_kwargs
):
    """An audit over fresh answers; annotator holds slot A of every answer, other (if given) slot B."""
    dataset = dataset or make_dataset(f"ds-{name}")
    answers = [
        make_answer(dataset, external_id=f"{name}-{i}", n_claims=n_claims, n_passages=n_passages)
        for i in range(n_answers)
    ]
    audit = make_audit(answers, name=name, **audit_kwargs)
    rows = []
    for item in audit.items.order_by("position"):
        rows.append(Assignment(audit_answer=item, annotator=annotator, slot="A"))
        if other:
            rows.append(Assignment(audit_answer=item, annotator=other, slot="B"))
    Assignment.objects.bulk_create(rows)
    mine = list(
        Assignment.objects.filter(annotator=annotator, audit_answer__audit=audit).order_by("audit_answer__position")
    )
    return audit, mine


def annotators():
    return make_user("ann", "annotator"), make_user("zed-the-other", "annotator")


def passage_of(assignment, position=0):
    return Passage.objects.get(answer_id=assignment.audit_answer.answer_id, position=position)


def evidence_post(passage, needle):
    """POST data attaching the first occurrence of needle in passage as evidence."""
    start = passage.text.index(needle)
    return {"passage": passage.pk, "start": start, "end": start + len(needle), "text": needle}
