"""A hand-made gold set for the judge lab: a closed audit of 3 answers x 3 claims, both annotators'
labels, gold, and judge versions with known verdicts.

Gold (answer: claims 0, 1, 2): ans0 S S U, ans1 S C S, ans2 S S S. Annotator B says S on ans0 claim 2
(adjudicated U); otherwise both annotators give the gold. Version A (claim level): ans0 S S S, ans1 S C U,
ans2 S S S (7 of 9 right). Version C (claim level): the gold on every claim. Version R (answer level):
score 0 on every answer. ans0 has sampling weight 2 (stratum alone, N 2, n 1), the others 1 (rest, N 2, n 2)."""

from annotations.models import GoldLabel, Label
from audit.judge import prompts, rubric
from audit.models import AnswerVerdict, AuditAnswer, Claim, JudgeLevel, JudgeVerdict
from tests.factories import make_gold, make_judge_version, make_labelled_audit

S, C, U = "supported", "contradicted", "unsupported"
GOLD = {0: [S, S, U], 1: [S, C, S], 2: [S, S, S]}
JUDGE_A = {0: [S, S, S], 1: [S, C, U], 2: [S, S, S]}


def labels(i, position, slot):
    return S if (i, position, slot) == (0, 2, "B") else GOLD[i][position]


def version(name, level=JudgeLevel.CLAIM, kind="anthropic"):
    spec = rubric.build_spec() if level == JudgeLevel.ANSWER else prompts.build_spec()
    return make_judge_version(name, kind=kind, level=level, content_hash=name[0] * 64, model=spec["model"], spec=spec)


def build_gold_set(ann_a, ann_b, adjudicator):
    audit = make_labelled_audit(ann_a, ann_b, n_answers=3, n_claims=3, verdicts=labels, name="gold-week")
    make_gold(audit)
    claim = Claim.objects.get(answer__external_id="gold-week-ans0", position=2)
    GoldLabel.objects.create(audit=audit, claim=claim, verdict=U, source="adjudicated", adjudicator=adjudicator)
    # ans0 stands alone for 2 answers of the population (weight 2), ans1 and ans2 for 2 (weight 1 each).
    AuditAnswer.objects.filter(audit=audit).update(stratum="rest", stratum_population=2, stratum_sample=2, weight=1.0)
    AuditAnswer.objects.filter(audit=audit, position=0).update(stratum="alone", stratum_sample=1, weight=2.0)
    audit.status = "closed"
    audit.save()
    claims = {(int(c.answer.external_id[-1]), c.position): c for c in Claim.objects.select_related("answer")}
    a, c, r = version("A-claims"), version("C-claims"), version("R-rubric", JudgeLevel.ANSWER)
    rows = []
    for (i, p), claim in claims.items():
        rows.append(JudgeVerdict(claim=claim, judge_version=a, raw_verdict=JUDGE_A[i][p], verdict=JUDGE_A[i][p]))
        rows.append(JudgeVerdict(claim=claim, judge_version=c, raw_verdict=GOLD[i][p], verdict=GOLD[i][p]))
    JudgeVerdict.objects.bulk_create(rows)
    answers = {i: claims[(i, 0)].answer for i in range(3)}
    AnswerVerdict.objects.bulk_create(AnswerVerdict(answer=ans, judge_version=r, score=0) for ans in answers.values())
    assert Label.objects.filter(assignment__audit_answer__audit=audit).count() == 18
    return audit, {"A": a, "C": c, "R": r}, claims, answers
