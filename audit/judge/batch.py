"""Batch mode: the same work through the Message Batches API (billed at about half price).

All decompose requests go as one batch; once it is collected, the verify requests of every claim go
as a second one. Each batch id is saved on the run the moment the batch exists, so a restarted run
polls and collects the batches it has instead of submitting again; collecting skips results already
stored. Storage and the evidence guard are the same as in the direct mode (store.py).

Caching in batches: the documentation promises cache hits only on a best-effort basis (requests of a
batch run in any order and concurrently), so no call waits for another; it suggests the 1-hour cache
duration for batches, which this module does not use yet (a 1-hour write costs 2x input, not 1.25x)."""

import time

from django.conf import settings
from django.db import transaction

from audit.judge.runner import CHUNK, Budget, Item, verify_items
from audit.judge.store import load_states
from audit.models import Claim, JudgeRun

BATCH_DISCOUNT = 0.5


def custom_id(item):
    return f"d-{item.state.id}" if item.stage == "decompose" else f"v-{item.claim_id}"


def stage_of(cid):
    return "decompose" if cid.startswith("d-") else "verify"


def run_batches(run, judge, rec, answer_ids, progress, retry_failed):
    over_budget = False
    for stage in ("decompose", "verify"):
        for entry in run.batch_ids:
            if entry["stage"] == stage and not entry["collected"]:
                collect(run, judge, rec, entry, progress)
        budget, requests = Budget(run, rec), []
        for i in range(0, len(answer_ids), CHUNK):
            for st in load_states(run, answer_ids[i : i + CHUNK], retry_failed=retry_failed):
                if stage == "decompose":
                    items = [Item(stage, st, None, judge.decompose_params(st.text))] if st.needs_decompose else []
                else:
                    items = verify_items(judge, st, st.todo_claims, lead=False)
                for item in items:
                    est = budget.estimate(item)
                    over_budget = over_budget or not budget.allows(est)
                    if not over_budget:
                        budget.reserve(est)
                        requests.append((custom_id(item), item.params))
        if requests:
            entry = {"id": judge.batch_submit(requests), "stage": stage, "requests": len(requests), "collected": False}
            run.batch_ids = [*run.batch_ids, entry]
            rec.flush(force=True)  # the id is on the run before anything else can go wrong
            collect(run, judge, rec, entry, progress)
    run.answers_done = count_done(run, answer_ids)
    return over_budget


def collect(run, judge, rec, entry, progress):
    poll = float(settings.JUDGE_BATCH_POLL_SECONDS)
    run.status = JudgeRun.Status.BATCH_SUBMITTED
    run.message = f"Waiting for batch {entry['id']} ({entry['stage']}, {entry['requests']} requests)."
    rec.flush(force=True)
    while not judge.batch_ended(entry["id"]):
        rec.flush()  # the heartbeat while the batch runs; stops here if a resume took the run over
        if progress:
            progress(run)
        time.sleep(poll)
    results = list(judge.batch_results(entry["id"], stage_of))
    ids = [int(cid.split("-", 1)[1]) for cid, _ in results]
    if entry["stage"] == "decompose":
        answer_of = {i: i for i in ids}
    else:
        answer_of = dict(Claim.objects.filter(id__in=ids).values_list("id", "answer_id"))
    states = {st.id: st for st in load_states(run, sorted(set(answer_of.values())), retry_failed=True)}
    verdicts = []
    with transaction.atomic():
        for (_cid, outcome), key in zip(results, ids, strict=True):
            st = states.get(answer_of.get(key))
            if st is None or not (
                st.needs_decompose if entry["stage"] == "decompose" else any(c == key for c, _ in st.todo_claims)
            ):
                continue  # stored by an earlier collection of this batch, or the answer is gone
            rec.add_usage(outcome.usage)
            if not outcome.ok:
                rec.store_failure(st, entry["stage"], None if entry["stage"] == "decompose" else key, outcome)
            elif entry["stage"] == "decompose":
                rec.store_claims(st, outcome.data)
            else:
                verdicts.append((st, key, outcome.data))
        rec.store_verdicts(verdicts)
        entry["collected"] = True
        run.status, run.message = JudgeRun.Status.RUNNING, ""
        rec.flush(force=True)  # the usage and "collected" are committed with the results
    if progress:
        progress(run)


def count_done(run, answer_ids):
    done = 0
    for i in range(0, len(answer_ids), CHUNK):
        done += sum(not st.needs_decompose and not st.todo_claims for st in load_states(run, answer_ids[i : i + CHUNK]))
    return done
