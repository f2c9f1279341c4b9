"""Executing an answer-level (rubric) run: one call per answer, the same pool, budget, heartbeat, lease
and failure records as the claim-level runner (runner.py); resumable the same way: answers that already
have a verdict of this version, or an open failure (unless retrying), are never asked for again."""

from collections import deque

from audit.judge import runner as r  # the pool, budget and result queue of the claim-level runner
from audit.judge.store import AnswerState
from audit.models import Answer, AnswerVerdict, JudgeFailure

STAGE = "rubric"


def load_rubric_states(run, answer_ids, *, retry_failed=False):
    """(states still to judge, number already done) for one chunk of answer ids."""
    done = set(
        AnswerVerdict.objects.filter(judge_version_id=run.judge_version_id, answer_id__in=answer_ids).values_list(
            "answer_id", flat=True
        )
    )
    failed = set(
        JudgeFailure.objects.filter(run=run, resolved=False, stage=STAGE, answer_id__in=answer_ids).values_list(
            "answer_id", flat=True
        )
    )
    todo = [i for i in answer_ids if i not in done and (retry_failed or i not in failed)]
    states = []
    for a in Answer.objects.filter(id__in=todo).order_by("id").prefetch_related("passages"):
        passages = [(p.external_id, p.text) for p in sorted(a.passages.all(), key=lambda p: p.position)]
        st = AnswerState(a.id, a.text, passages, failed={(STAGE, None)} if a.id in failed else set())
        st.question = a.question
        states.append(st)
    return states, len(done)


def store_rubric_verdicts(rec, items):
    """items: [(state, data)] with data as the rubric schema."""
    AnswerVerdict.objects.bulk_create(
        [
            AnswerVerdict(
                answer_id=st.id,
                judge_version_id=rec.run.judge_version_id,
                run=rec.run,
                score=d["score"],
                reason=d["reason"][:2000],
            )  # fmt: skip
            for st, d in items
        ],
        ignore_conflicts=True,  # a concurrent run may have stored one
    )
    for st, _ in items:
        rec.resolve(st, STAGE, None)


def run_rubric(run, judge, rec, answer_ids, progress, retry_failed):
    """Answer level: one rubric call per answer, through the runner's shared call loop."""
    chunks = deque(answer_ids[i : i + r.CHUNK] for i in range(0, len(answer_ids), r.CHUNK))
    queue = deque()

    def next_item():
        while not queue and chunks:
            states, done = load_rubric_states(run, chunks.popleft(), retry_failed=retry_failed)
            run.answers_done += done
            queue.extend(
                r.Item(STAGE, st, None, judge.rubric_params(st.question, st.passages, st.text)) for st in states
            )
        return queue.popleft() if queue else None

    def store(results):
        verdicts = []
        for item, outcome in results:
            if outcome.ok:
                verdicts.append((item.state, outcome.data))
            else:
                rec.store_failure(item.state, STAGE, None, outcome)
            run.answers_done += outcome.ok
        store_rubric_verdicts(rec, verdicts)

    return r.drive(run, judge, rec, next_item, queue.appendleft, store, progress)
