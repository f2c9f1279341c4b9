"""Builders for report tests: an audit with known labels, gold and judge verdicts, as real rows; and the
Korn-Graubard interval written out, for expected values."""

from django.test import TestCase
from scipy.stats import beta, t

from annotations.models import Assignment, GoldLabel, Label
from audit.models import Audit, AuditAnswer, JudgeVerdict, JudgeVersion
from tests.factories import make_answer, make_dataset, make_user

S, C, U, N = "supported", "contradicted", "unsupported", "non_assertive"

# Per answer: stratum, labels A, labels B, gold, judge (None: no verdict; "U!" = guard failed -> unsupported).
KNOWN = [
    ("s1", [S, S, U], [S, S, U], [S, S, U], [S, S, U]),
    ("s1", [S, C, N], [S, U, N], [S, C, N], [S, U, N]),
    ("s1", [S, S, S], [S, S, S], [S, S, S], [S, S, "U!"]),
    ("s2", [S, U, S], [S, S, S], [S, S, S], [S, S, None]),
    ("s2", [N, S, S], [N, S, S], [N, S, S], [S, S, S]),
]
POPULATION = {"s1": 100, "s2": 20}
SECONDS_A = [300, 600, 900, 1200, 1500]
SECONDS_B = [240, 360, 480, 600, 720]


def version(name, kind=JudgeVersion.Kind.ANTHROPIC):
    return JudgeVersion.objects.create(kind=kind, name=name, content_hash=name.ljust(64, "0"))


def make_stratified_audit(answers, strata, *, name, population, dataset=None):
    dataset = dataset or answers[0].dataset
    sample = {s: strata.count(s) for s in set(strata)}
    audit = Audit.objects.create(
        name=name,
        dataset=dataset,
        status="adjudication",
        seed=7,
        size=len(answers),
        population_size=sum(population.values()),
    )
    AuditAnswer.objects.bulk_create(
        AuditAnswer(
            audit=audit,
            answer=a,
            position=i,
            stratum=s,
            stratum_population=population[s],
            stratum_sample=sample[s],
            inclusion_probability=sample[s] / population[s],
            weight=population[s] / sample[s],
        )
        for i, (a, s) in enumerate(zip(answers, strata, strict=True))
    )
    return audit


def label_audit(audit, rows, judge_version, users, seconds=(SECONDS_A, SECONDS_B), baseline=None):
    """rows: like KNOWN. Writes assignments, labels, gold and judge verdicts in bulk."""
    items = list(audit.items.select_related("answer").order_by("position"))
    labels, gold, verdicts = [], [], []
    for i, (item, (_, a, b, g, j)) in enumerate(zip(items, rows, strict=True)):
        claims = list(item.answer.claims.order_by("position"))
        for slot, user, verdict_list, secs in (("A", users[0], a, seconds[0]), ("B", users[1], b, seconds[1])):
            asg = Assignment.objects.create(
                audit_answer=item, annotator=user, slot=slot, status="submitted", active_seconds=secs[i % len(secs)]
            )
            labels += [Label(assignment=asg, claim=c, verdict=v) for c, v in zip(claims, verdict_list, strict=True)]
        for c, va, vb, vg, vj in zip(claims, a, b, g, j, strict=True):
            gold.append(GoldLabel(audit=audit, claim=c, verdict=vg, source="agreed" if va == vb else "adjudicated"))
            if vj is not None:
                failed = vj == "U!"
                verdicts.append(
                    JudgeVerdict(
                        claim=c,
                        judge_version=judge_version,
                        raw_verdict=S if failed else vj,
                        verdict=U if failed else vj,
                        guard_passed=False if failed else (True if vj in (S, C) else None),
                    )
                )
            if baseline is not None:
                verdicts.append(
                    JudgeVerdict(claim=c, judge_version=baseline, raw_verdict=S, verdict=S, guard_passed=True)
                )
    Label.objects.bulk_create(labels)
    GoldLabel.objects.bulk_create(gold)
    JudgeVerdict.objects.bulk_create(verdicts)


def known_audit():
    """The previous audit of the dataset (4 answers, none failing) and the current one (KNOWN)."""
    ds = make_dataset("known")
    users = [make_user("ann1", "annotator"), make_user("ann2", "annotator")]
    prev_rows = [("s1", [S], [S], [S], [S])] * 4
    prev_answers = [make_answer(ds, external_id=f"prev{i}", n_claims=1) for i in range(4)]
    prev = make_stratified_audit(prev_answers, ["s1"] * 4, name="2026-W47", population={"s1": 100})
    baseline = version("offline-baseline", JudgeVersion.Kind.OFFLINE)
    latest = version("prompt-v2")
    label_audit(prev, prev_rows, latest, users)
    answers = [make_answer(ds, external_id=f"known{i}", n_claims=3) for i in range(len(KNOWN))]
    audit = make_stratified_audit(answers, [r[0] for r in KNOWN], name="2026-W48", population=POPULATION)
    label_audit(audit, KNOWN, latest, users, baseline=baseline)
    return {"audit": audit, "previous": prev, "latest": latest, "baseline": baseline, "users": users}


def kg_interval(p, var, n, strata):
    """Korn and Graubard (1998), written out: n* = p(1-p)/v capped at n (n when v = 0), times
    (t_{n-1} / t_{n-H})^2, then Clopper-Pearson with x = p n*."""
    n_star = min(n, p * (1 - p) / var) if var > 0 and 0 < p < 1 else n
    n_star *= (t.ppf(0.975, n - 1) / t.ppf(0.975, max(n - strata, 1))) ** 2
    x = p * n_star
    lo = 0.0 if x == 0 else beta.ppf(0.025, x, n_star - x + 1)
    hi = 1.0 if x == n_star else beta.ppf(0.975, x + 1, n_star - x)
    return lo, hi


class KnownAuditCase(TestCase):
    """The known audit (known_audit()) built once for the class, and its lead logged in; self.url: its report."""

    @classmethod
    def setUpTestData(cls):
        cls.k = known_audit()
        cls.audit = cls.k["audit"]
        cls.lead = make_user("lead", "lead")

    def setUp(self):
        self.client.force_login(self.lead)
        self.url = f"/reports/{self.audit.id}/"
