"""Blind double assignment: two distinct annotators per answer, balanced; reassign; add an annotator."""

from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.test import TestCase

from annotations.assignments.services import (
    assignment_reassign,
    assignment_restart,
    audit_add_annotator,
    audit_assign,
)
from annotations.models import Assignment
from annotations.workspace.services import claim_label_save
from audit.models import Claim, HistoryEvent
from audit.sampling.services import audit_create
from tests.factories import make_answers, make_dataset, make_user


def _audit(n=150, name="w48", claims=1):
    ds = make_dataset("pool")
    make_answers(ds, n, claims=claims, prefix=name)
    return audit_create(name=name, dataset=ds, size=n, seed=1)


class AssignTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.team = [make_user(f"ann{i}", "annotator") for i in range(1, 6)]

    def test_it_gives_every_answer_two_distinct_annotators_with_balanced_load(self):
        audit = _audit(150)
        audit_assign(audit, self.team, user=self.lead)
        audit.refresh_from_db()
        assert audit.status == "labelling"
        rows = list(
            Assignment.objects.filter(audit_answer__audit=audit).values_list("audit_answer_id", "annotator_id", "slot")
        )
        assert len(rows) == 300
        per_item = {}
        for item, who, slot in rows:
            per_item.setdefault(item, []).append((who, slot))
        assert len(per_item) == 150
        assert all(len({w for w, _ in v}) == 2 and sorted(s for _, s in v) == ["A", "B"] for v in per_item.values())
        assert sorted(Counter(who for _, who, _ in rows).values()) == [60] * 5
        pairs = Counter(frozenset(w for w, _ in v) for v in per_item.values())
        assert sorted(pairs.values()) == [15] * 10  # every pair of the five equally often
        assert HistoryEvent.objects.filter(audit=audit, kind="assignment", action="assign", user=self.lead).exists()

    def test_it_gives_every_answer_to_both_when_there_are_two(self):
        audit = _audit(9)
        audit_assign(audit, self.team[:2])
        per_user = Counter(Assignment.objects.values_list("annotator_id", flat=True))
        assert per_user == {self.team[0].id: 9, self.team[1].id: 9}

    def test_it_refuses_to_assign_an_audit_with_an_empty_sample(self):
        audit = _audit(6)
        audit.items.all().delete()  # as a calibration sample drawn from a version with no verdicts once was
        with pytest.raises(ValidationError, match="nothing to label"):
            audit_assign(audit, self.team)
        audit.refresh_from_db()
        assert audit.status == "draft"

    def test_it_refuses_to_assign_while_an_answer_has_no_claims(self):
        audit = _audit(6)
        Claim.objects.filter(answer=audit.items.first().answer).delete()
        with pytest.raises(ValidationError, match="claims must exist"):
            audit_assign(audit, self.team)
        assert not Assignment.objects.exists()
        audit.refresh_from_db()
        assert audit.status == "draft"

    def test_it_refuses_people_outside_the_annotators_group_and_fewer_than_two(self):
        audit = _audit(4)
        with pytest.raises(ValidationError, match="annotators group"):
            audit_assign(audit, [self.team[0], self.lead])
        with pytest.raises(ValidationError, match="at least two"):
            audit_assign(audit, [self.team[0], self.team[0]])

    def test_it_refuses_to_assign_twice(self):
        audit = _audit(4)
        audit_assign(audit, self.team[:3])
        with pytest.raises(ValidationError, match="already assigned"):
            audit_assign(audit, self.team[:3])


class ReassignTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.team = [make_user(f"ann{i}", "annotator") for i in range(1, 5)]
        self.audit = _audit(12)
        audit_assign(self.audit, self.team[:3])

    def test_it_reassigns_an_unstarted_assignment(self):
        a = Assignment.objects.filter(audit_answer__audit=self.audit).first()
        other = a.audit_answer.assignments.exclude(pk=a.pk).get().annotator
        target = next(u for u in self.team if u.pk not in (a.annotator_id, other.pk))
        assignment_reassign(a, target, user=self.lead)
        a.refresh_from_db()
        assert a.annotator_id == target.pk
        ev = HistoryEvent.objects.get(audit=self.audit, action="reassign")
        assert ev.new["annotator"] == target.username and ev.answer_id == a.audit_answer.answer_id

    def test_it_refuses_started_work_and_the_other_annotator(self):
        a = Assignment.objects.filter(audit_answer__audit=self.audit).first()
        other = a.audit_answer.assignments.exclude(pk=a.pk).get().annotator
        with pytest.raises(ValidationError, match="must differ"):
            assignment_reassign(a, other)
        with pytest.raises(ValidationError, match="annotators group"):
            assignment_reassign(a, self.lead)
        Assignment.objects.filter(pk=a.pk).update(status="started")
        free = next(u for u in self.team if u.pk not in (a.annotator_id, other.pk))
        with pytest.raises(ValidationError, match="not been started"):
            assignment_reassign(a, free)

    def test_it_adds_an_annotator_mid_audit_moving_unstarted_work(self):
        qs = Assignment.objects.filter(audit_answer__audit=self.audit)
        started = set(qs.filter(audit_answer__position__lt=3).values_list("pk", flat=True))
        qs.filter(pk__in=started).update(status="started")
        moved = audit_add_annotator(self.audit, self.team[3], user=self.lead)
        loads = Counter(qs.values_list("annotator_id", flat=True))
        assert moved == 6 and loads[self.team[3].pk] == 6  # 24 assignments over 4 people
        assert max(loads.values()) - min(loads.values()) <= 1
        assert not started & set(qs.filter(annotator=self.team[3]).values_list("pk", flat=True))
        for item in self.audit.items.all():
            assert len({a.annotator_id for a in item.assignments.all()}) == 2
        assert HistoryEvent.objects.filter(audit=self.audit, action="add_annotator").count() == 1

    def test_adding_an_annotator_takes_the_unstarted_work_of_a_leaver_first(self):
        """A lead adds someone because an annotator left (deactivated) or lost the role: their unstarted work is
        what nobody will label, so it all goes to the newcomer; taking it from active annotators instead left it
        stranded (the demo moved 8 from the active ann1 and only 8 of the deactivated ann2's 16)."""
        audit = _audit(8, name="w49")
        audit_assign(audit, self.team[:2])  # every answer to ann1 and ann2
        qs = Assignment.objects.filter(audit_answer__audit=audit)
        leaver, stayer, newcomer = self.team[1], self.team[0], self.team[3]
        qs.filter(audit_answer__position__lt=2).update(status="submitted")
        leaver.is_active = False
        leaver.save()
        moved = audit_add_annotator(audit, newcomer, user=self.lead)
        assert moved == 6
        assert not qs.filter(annotator=leaver, status="assigned").exists()
        assert qs.filter(annotator=stayer, status="assigned").count() == 6  # the active annotator keeps theirs
        assert qs.filter(annotator=newcomer).count() == 6
        for item in audit.items.all():
            assert len({a.annotator_id for a in item.assignments.all()}) == 2


class RestartTests(TestCase):
    """Started work keeps its annotator and labels; when that annotator can no longer label (deactivated, or the
    role taken), nobody could finish it and the audit could never close, short of reactivating a leaver."""

    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.team = [make_user(f"ann{i}", "annotator") for i in range(1, 4)]
        self.audit = _audit(4, name="rs")
        audit_assign(self.audit, self.team[:2])
        self.a = Assignment.objects.filter(audit_answer__audit=self.audit, annotator=self.team[1]).first()
        claim = Claim.objects.filter(answer=self.a.audit_answer.answer).first()
        claim_label_save(self.a, claim, user=self.team[1], verdict="unsupported")
        self.a.refresh_from_db()
        assert self.a.status == "started"

    def test_it_restarts_the_started_work_of_a_leaver_with_another_annotator(self):
        self.team[1].is_active = False
        self.team[1].save()
        with pytest.raises(ValidationError, match="must differ"):
            assignment_restart(self.a, self.team[0], user=self.lead)
        assignment_restart(self.a, self.team[2], user=self.lead)
        self.a.refresh_from_db()
        assert (self.a.annotator_id, self.a.status, self.a.started_at, self.a.active_seconds) == (
            self.team[2].pk,
            "assigned",
            None,
            0,
        )
        assert not self.a.labels.exists()
        ev = HistoryEvent.objects.get(audit=self.audit, action="restart")
        assert ev.old == {"annotator": "ann2", "slot": self.a.slot, "labels": 1}
        assert ev.new == {"annotator": "ann3", "slot": self.a.slot}

    def test_it_refuses_to_restart_the_work_of_someone_who_can_still_label(self):
        with pytest.raises(ValidationError, match="can still label"):
            assignment_restart(self.a, self.team[2], user=self.lead)
        assert self.a.labels.exists()
