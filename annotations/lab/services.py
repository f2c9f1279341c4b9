"""Writes of the judge lab: "run this version on the gold items" judges only the gold answers the version
has not judged yet, within a budget set to the worst case of the estimate shown before starting."""

from django.conf import settings
from django.db.models import Exists, OuterRef, Prefetch, Q

from audit.judge import prompts, rubric
from audit.judge.runner import call_worst_case
from audit.judge.services import judge_run_create
from audit.judge.tasks import judge_run_enqueue
from audit.models import Answer, AnswerVerdict, Claim, JudgeVerdict, JudgeVersion, Passage

EXPECTED_OUTPUT_TOKENS = 120  # a verdict or a score with a one-sentence reason
CHARS_PER_TOKEN = 3  # the runner's budget counts the same way (conservative)


def answers_to_judge(version, audits):
    """The gold answers of the audits still without this version's verdict (claim level: any of its claims). An
    answer-level version also scores the sampled answers without a claim (they are gold too: they pass)."""
    gold = Q(claims__gold_labels__audit__in=audits)
    if version.level == "answer":
        gold |= Q(claims__isnull=True)
    qs = Answer.objects.filter(gold, audit_items__audit__in=audits).distinct()
    if version.level == "answer":
        done = AnswerVerdict.objects.filter(judge_version=version, answer=OuterRef("pk"))
        return qs.exclude(Exists(done))
    missing = Claim.objects.filter(answer=OuterRef("pk")).exclude(
        Exists(JudgeVerdict.objects.filter(judge_version=version, claim=OuterRef("pk")))
    )
    return qs.filter(Exists(missing))


def _calls(version, answer):
    """The request dicts the version would send for one answer (only the claims it has not judged)."""
    passages = [(p.external_id, p.text) for p in answer.plist]
    if version.level == "answer":
        return [rubric.rubric_params(version.spec, answer.question, passages, answer.text)]
    blocks = prompts.verify_system_blocks(version.spec, passages)
    return [prompts.verify_params(version.spec, blocks, c.text) for c in answer.todo]


def run_estimate(version, audits):
    """{answers, calls, tokens, usd, usd_worst}: what running the version on the missing gold items costs."""
    todo = Claim.objects.exclude(Exists(JudgeVerdict.objects.filter(judge_version=version, claim=OuterRef("pk"))))
    answers = list(
        answers_to_judge(version, audits).prefetch_related(
            Prefetch("passages", Passage.objects.order_by("position"), to_attr="plist"),
            Prefetch("claims", todo.order_by("position"), to_attr="todo"),
        )
    )
    out = {"answers": len(answers), "calls": 0, "tokens": 0, "usd": 0.0, "usd_worst": 0.0}
    if version.kind != JudgeVersion.Kind.ANTHROPIC:
        out["calls"] = sum(1 if version.level == "answer" else len(a.todo) for a in answers)
        return out
    prices = settings.JUDGE_PRICES.get(version.model) or {"input": 0, "output": 0, "cache_write": 0, "cache_read": 0}
    for a in answers:
        for i, params in enumerate(_calls(version, a)):
            cached = len(params["system"][-1]["text"]) // CHARS_PER_TOKEN
            plain = (len(params["system"][0]["text"]) + len(params["messages"][0]["content"])) // CHARS_PER_TOKEN + 10
            cache_price = prices["cache_write"] if i == 0 else prices["cache_read"]
            base = plain * prices["input"] + cached * cache_price
            out["calls"] += 1
            out["tokens"] += plain + cached + EXPECTED_OUTPUT_TOKENS
            out["usd"] += (base + EXPECTED_OUTPUT_TOKENS * prices["output"]) / 1e6
            out["usd_worst"] += call_worst_case(params, prices)[1]
    return out


def lab_run_start(version, audits, user):
    """A queued run over the missing gold answers, budgeted to the estimate's worst case; None when none is missing."""
    ids = list(answers_to_judge(version, audits).values_list("id", flat=True))
    if not ids:
        return None
    worst = run_estimate(version, audits)["usd_worst"] if version.kind == JudgeVersion.Kind.ANTHROPIC else 0
    # The runner reserves each call's worst case by the same rule: a small margin for float rounding only.
    run = judge_run_create(version=version, answers=ids, user=user, budget_usd=worst * 1.0001 + 1e-6 if worst else None)
    judge_run_enqueue(run)
    return run
