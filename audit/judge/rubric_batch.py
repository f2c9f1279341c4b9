"""Batch mode for answer-level (rubric) runs: every rubric request of the run goes as one batch through the
Message Batches API (about half price). The batch id is saved on the run the moment the batch exists, so a
restarted run polls and collects it instead of submitting again; collecting skips answers already judged."""

import time

from django.conf import settings
from django.db import transaction

from audit.judge import runner as r  # the budget and work items of the direct runner
from audit.judge.rubric_run import STAGE, load_rubric_states, store_rubric_verdicts
from audit.models import AnswerVerdict, JudgeRun


def run_rubric_batches(run, judge, rec, answer_ids, progress, retry_failed):
    """Same signature and result (over budget?) as runner.run_sync."""
    for entry in run.batch_ids:
        if entry["stage"] == STAGE and not entry["collected"]:
            collect(run, judge, rec, entry, progress)
    budget, requests, over_budget = r.Budget(run, rec), [], False
    for i in range(0, len(answer_ids), r.CHUNK):
        states, _ = load_rubric_states(run, answer_ids[i : i + r.CHUNK], retry_failed=retry_failed)
        for st in states:
            item = r.Item(STAGE, st, None, judge.rubric_params(st.question, st.passages, st.text))
            est = budget.estimate(item)
            over_budget = over_budget or not budget.allows(est)
            if not over_budget:
                budget.reserve(est)
                requests.append((f"r-{st.id}", item.params))
    if requests:
        entry = {"id": judge.batch_submit(requests), "stage": STAGE, "requests": len(requests), "collected": False}
        run.batch_ids = [*run.batch_ids, entry]
        rec.flush(force=True)  # the id is on the run before anything else can go wrong
        collect(run, judge, rec, entry, progress)
    run.answers_done = AnswerVerdict.objects.filter(
        judge_version_id=run.judge_version_id, answer_id__in=answer_ids
    ).count()
    return over_budget


def collect(run, judge, rec, entry, progress):
    run.status = JudgeRun.Status.BATCH_SUBMITTED
    run.message = f"Waiting for batch {entry['id']} ({entry['stage']}, {entry['requests']} requests)."
    rec.flush(force=True)
    while not judge.batch_ended(entry["id"]):
        rec.flush()  # the heartbeat; stops here if a resume took the run over
        if progress:
            progress(run)
        time.sleep(float(settings.JUDGE_BATCH_POLL_SECONDS))
    results = [
        (int(cid.split("-", 1)[1]), outcome) for cid, outcome in judge.batch_results(entry["id"], lambda _: STAGE)
    ]
    states, _ = load_rubric_states(run, sorted({a for a, _ in results}), retry_failed=True)
    states = {st.id: st for st in states}
    verdicts = []
    with transaction.atomic():
        for answer_id, outcome in results:
            st = states.get(answer_id)
            if st is None:
                continue  # judged by an earlier collection of this batch, or the answer is gone
            rec.add_usage(outcome.usage)
            if outcome.ok:
                verdicts.append((st, outcome.data))
            else:
                rec.store_failure(st, STAGE, None, outcome)
        store_rubric_verdicts(rec, verdicts)
        entry["collected"] = True
        run.status, run.message = JudgeRun.Status.RUNNING, ""
        rec.flush(force=True)  # in the results' transaction: an execution that lost its lease stores nothing
    if progress:
        progress(run)
