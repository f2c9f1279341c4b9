"""Every state an audit goes through in a week, as real rows (tests/test_every_state.py walks the app in each).

People: a lead, annotators A (`alice-a`) and B (`bob-b`), an adjudicator, an outsider with no role. Every
label A writes carries the note NOTE-BY-A, every label of B NOTE-BY-B, every judge verdict the reason
JUDGE-SAYS: a page shown to one annotator must carry neither the other's marker nor the judge's."""

from django.test import TestCase
from django.utils import timezone

from annotations.adjudication.services import audit_close, audit_reopen, gold_adjudicate
from annotations.assignments.services import audit_assign
from annotations.models import Assignment, Label
from annotations.workspace.services import assignment_reopen, assignment_submit
from audit.models import Audit, AuditAnswer, Claim, JudgeRun, JudgeVerdict
from audit.sampling.calibration import calibration_audit_create
from tests.factories import (
    default_verdicts,
    judge_audit,
    make_answer,
    make_assignments,
    make_audit,
    make_dataset,
    make_gold,
    make_judge_version,
    make_labels,
    make_user,
    make_verdicts,
)
from tests.report_helpers import make_stratified_audit

MARK = {"A": "NOTE-BY-A", "B": "NOTE-BY-B", "judge": "JUDGE-SAYS"}
SUBMITTED, STARTED = Assignment.Status.SUBMITTED, Assignment.Status.STARTED


def people():
    return {
        "lead": make_user("lead", "lead"),
        "A": make_user("alice-a", "annotator"),
        "B": make_user("bob-b", "annotator"),
        "adj": make_user("adj", "adjudicator"),
        "outsider": make_user("olga"),
    }


def _answers(name, n, n_claims=3):
    ds = make_dataset(f"ds-{name}")
    return [make_answer(ds, external_id=f"{name}-{i}", n_claims=n_claims) for i in range(n)]


def _label(audit, slots_status, verdicts=None):
    """slots_status: {item position: {slot: status}}: those assignments labelled (with the slot's marker)
    and set to the status; submitted answers get their gold as submitting writes it."""
    for pos, slots in slots_status.items():
        for slot, status in slots.items():
            a = Assignment.objects.get(audit_answer__audit=audit, audit_answer__position=pos, slot=slot)
            make_labels([a], verdicts or default_verdicts, evidence_slots="AB")
            Label.objects.filter(assignment=a).update(note=MARK[slot])
            Assignment.objects.filter(pk=a.pk).update(status=status, submitted_at=timezone.now(), active_seconds=90)
    make_gold(audit)


def _judge(audit, name):
    version = judge_audit(audit, "supported", name=name, content_hash=name.ljust(64, "j"))
    JudgeVerdict.objects.filter(judge_version=version).update(reason=MARK["judge"])
    return version


def _run(audit, version, status, **kw):
    return JudgeRun.objects.create(judge_version=version, backend="anthropic", audit=audit, status=status, **kw)


def _adjudicate(p, audit, positions):
    for item in AuditAnswer.objects.filter(audit=audit, position__in=positions):
        for claim in Claim.objects.filter(answer=item.answer).exclude(gold_labels__audit=audit):
            gold_adjudicate(
                audit, claim, user=p["adj"], verdict="supported", reason="passage 1 says so", expected_version=0
            )


def labelled(p, name, n=3, status="labelling"):
    audit = make_audit(_answers(name, n), name=name, status=status)
    make_assignments(audit, p["A"], p["B"])
    return audit


def states(p):
    """{state name: audit}: draft; assigned (nobody started); half (answer 0 by both, answer 1 by A, B started);
    one_done (A submitted all, B not started); disputes (all submitted); adj_half (one answer adjudicated); closed;
    reopened (closed, reopened, B's answer 0 reopened: its agreed gold withdrawn); recheck (the same, B resubmitted
    a different label: adjudicated gold marked for re-check); judge_running / _failed / _done (a run in that state,
    answer 0 labelled by both); strata; calibration; stratified and simple (one dataset, two designs, closed).
    Answers have 3 claims on which B disputes claim 0 unless said otherwise."""
    s = {"draft": make_audit(_answers("draft", 3), name="draft", status="draft")}
    s["assigned"] = labelled(p, "assigned")
    s["half"] = labelled(p, "half")
    _label(s["half"], {0: {"A": SUBMITTED, "B": SUBMITTED}, 1: {"A": SUBMITTED, "B": STARTED}})
    s["one_done"] = labelled(p, "one-done")
    _label(s["one_done"], {i: {"A": SUBMITTED} for i in range(3)})
    for name in ("disputes", "adj_half", "closed", "reopened", "recheck"):
        s[name] = labelled(p, name.replace("_", "-"))
        _label(s[name], {i: {"A": SUBMITTED, "B": SUBMITTED} for i in range(3)})
    _adjudicate(p, s["adj_half"], [0])
    for name in ("closed", "reopened", "recheck"):
        _adjudicate(p, s[name], [0, 1, 2])
        audit_close(s[name], p["lead"])
    for name in ("reopened", "recheck"):
        audit_reopen(s[name], p["lead"], "gold of answer 0 looked wrong")
        b0 = Assignment.objects.get(audit_answer__audit=s[name], audit_answer__position=0, slot="B")
        assignment_reopen(b0, p["lead"], "claim 0 was misread")
    b0 = Assignment.objects.get(audit_answer__audit=s["recheck"], audit_answer__position=0, slot="B")
    Label.objects.filter(assignment=b0, claim__position=0).update(verdict="non_assertive")
    assignment_submit(b0, p["B"])  # differs from the labels the adjudication rested on: re-check
    for name, status in (("judge_running", "running"), ("judge_failed", "failed"), ("judge_done", "done")):
        s[name] = labelled(p, name.replace("_", "-"))
        _label(s[name], {0: {"A": SUBMITTED, "B": SUBMITTED}, 1: {"A": STARTED}})
        version = _judge(s[name], f"judge-{status}")
        _run(s[name], version, status, answers_total=3, answers_done=1 if status != "done" else 3,
             message="the API returned 529 three times" if status == "failed" else "")  # fmt: skip
    s["strata"] = strata_audit(p)
    s["calibration"] = calibration(p)
    s["simple"], s["stratified"] = two_designs(p)
    return {name: Audit.objects.get(pk=audit.pk) for name, audit in s.items()}  # as the services left them


def strata_audit(p):
    """Stratum big (N=100, 3 sampled) labelled; stratum none (N=40, 2 sampled) not labelled at all; stratum
    tiny (N=11, 2 sampled) labelled, no fails; stratum empty (N=30) drawn with 0 answers."""
    answers = _answers("strata", 7)
    strata = ["big"] * 3 + ["none"] * 2 + ["tiny"] * 2
    pop = {"big": 100, "none": 40, "tiny": 11}
    audit = make_stratified_audit(answers, strata, name="strata", population=pop)
    design = [{"stratum": k, "population": v, "sample": strata.count(k)} for k, v in pop.items()]
    audit.design = [*design, {"stratum": "empty", "population": 30, "sample": 0}]
    audit.status, audit.population_size, audit.strata_keys = "labelling", 181, ["meta.kind"]
    audit.save()
    make_assignments(audit, p["A"], p["B"])
    both = {"A": SUBMITTED, "B": SUBMITTED}
    _label(audit, {0: both, 1: both, 2: both, 5: both, 6: both}, verdicts=_agree_tiny)
    return audit


def _agree_tiny(answer_index, position, slot):
    """Answers 0-2 (stratum big): B disputes claim 0; answers 5-6 (stratum tiny): both say supported."""
    return "unsupported" if answer_index < 3 and position == 0 and slot == "B" else "supported"


def calibration(p):
    ds = make_dataset("ds-calibration")
    answers = [make_answer(ds, external_id=f"cal-{i}", n_claims=3) for i in range(4)]
    version = make_judge_version("cal-judge", kind="anthropic", content_hash="c" * 64)
    claims = list(Claim.objects.filter(answer__in=answers).order_by("id"))
    make_verdicts(version, claims, lambda c: "unsupported" if c.position == 0 else "supported")
    JudgeVerdict.objects.filter(judge_version=version).update(reason=MARK["judge"])
    audit = calibration_audit_create(name="calibration", dataset=ds, version=version, size=6, seed=3)
    audit_assign(audit, [p["A"], p["B"]])
    return audit


def two_designs(p):
    """One dataset, two closed audits: stratified (s1 N=100 x 4, s2 N=20 x 2) then simple random (n=3)."""
    ds = make_dataset("ds-designs")
    first = [make_answer(ds, external_id=f"st-{i}", n_claims=1) for i in range(6)]
    stratified = make_stratified_audit(first, ["s1"] * 4 + ["s2"] * 2, name="designs-stratified",
                                       population={"s1": 100, "s2": 20})  # fmt: skip
    second = [make_answer(ds, external_id=f"sr-{i}", n_claims=1) for i in range(3)]
    simple = make_audit(second, name="designs-simple", dataset=ds, status="labelling")
    AuditAnswer.objects.filter(audit=simple).update(stratum_population=120, inclusion_probability=3 / 120, weight=40)
    simple.population_size = 120
    simple.save()
    for audit, bad in ((stratified, {4, 5}), (simple, {0})):
        audit.status = "labelling"
        audit.save()
        make_assignments(audit, p["A"], p["B"])
        _label(audit, {i: {"A": SUBMITTED, "B": SUBMITTED} for i in range(audit.items.count())},
               verdicts=lambda i, pos, slot, bad=bad: "unsupported" if i in bad else "supported")  # fmt: skip
        audit_close(audit, p["lead"])
    return simple, stratified


class StatesCase(TestCase):
    """The people and the audits in every state (states()), built once for the test class."""

    @classmethod
    def setUpTestData(cls):
        cls.p = people()
        cls.s = states(cls.p)
