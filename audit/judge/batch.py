"""Batch mode: the same work through the Message Batches API (billed at about half price).

All decompose requests go as one batch; once it is collected, the verify requests of every claim go
as a second one. Each batch id is saved on the run the moment the batch exists, so a restarted run
polls and collects the batches it has instead of submitting again; collecting skips results already
stored. Storage and the evidence guard are the same as in the direct mode (store.py).

Caching in batches: the documentation promises cache hits only on a best-effort basis (requests of a
batch run in any order and concurrently, over up to 24 hours), so no call waits for another, and it
suggests the 1-hour cache duration for batches with shared context. The verify requests of an answer with
three or more of them and a cacheable prefix ask for the 1-hour cache; an answer with fewer gets no
breakpoint at all (cache_ttl, which gives the arithmetic). Collecting counts the answers whose
prefix the API did not cache."""

import time
from collections import Counter
from dataclasses import replace

from django.conf import settings
from django.db import transaction

from audit.judge.runner import CHUNK, Budget, Item, verify_items
from audit.judge.store import load_states
from audit.models import Claim, JudgeRun

BATCH_DISCOUNT = 0.5
BATCH_TTL = "1h"
MIN_CACHED_CALLS = 3  # verify requests of one answer that get a breakpoint: where the 1-hour entry pays


def cache_ttl(calls, cacheable):
    """The cache breakpoint of an answer's verify requests in a batch: BATCH_TTL when its prefix is
    cacheable (LLMJudge.cacheable) and the batch holds at least MIN_CACHED_CALLS of them, else None (none).

    Why: a batch's requests run in any order, possibly hours apart, so a 5-minute entry may be gone before
    a sibling runs (which then writes it again at 1.25x input); a 1-hour entry (2x input to write, 0.1x to
    read) outlives most batches. A lone request would write an entry nobody reads (2x instead of 1x): no
    breakpoint. Against sending the prefix uncached (1x per request), n requests sharing a 1-hour entry cost
    2 + 0.1 (n - 1) times the prefix: 0.1x more than uncached at n = 2 even when the sibling reads it, so
    only from n = 3 (2.2x against 3x) does the breakpoint pay."""
    return BATCH_TTL if cacheable and calls >= MIN_CACHED_CALLS else None


def verify_context(judge, st, calls):
    """The answer's verify system blocks for `calls` of its requests, with the breakpoint cache_ttl chooses."""
    ttl = cache_ttl(calls, judge.cacheable(judge.verify_context(st.passages)))
    return judge.verify_context(st.passages, ttl)


def admitted(budget, items):
    """The items the budget lets through, in order, up to the first it refuses (reserved for)."""
    out = []
    for item in items:
        est = budget.estimate(item)
        if not budget.allows(est):
            break
        budget.reserve(est)
        out.append(item)
    return out


def count_uncached(run, judge, states, calls, usages):
    """calls: {answer id: its verify requests in the batch}; usages: {answer id: [usage of each result
    stored now]}. Like the direct mode (runner.release), an answer counts as too short to cache when it
    was billed and nothing was written or read although a breakpoint was sent, or its prefix is surely
    under the minimum; a lone request sent without a breakpoint says nothing."""
    for answer_id, used in usages.items():
        if states[answer_id].cache_known:  # counted already (store.load_states)
            continue
        states[answer_id].cache_known = True
        billed = any(u["input"] or u["output"] for u in used)
        cached = any(u["cache_write"] or u["cache_read"] for u in used)
        surely_short = not judge.cacheable(judge.verify_context(states[answer_id].passages))
        if billed and not cached and (calls[answer_id] >= MIN_CACHED_CALLS or surely_short):
            run.uncached_answers += 1


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
            if over_budget:  # nothing more is sent, in this stage or the next
                break
            for st in load_states(run, answer_ids[i : i + CHUNK], retry_failed=retry_failed):
                if stage == "decompose":
                    items = [Item(stage, st, None, judge.decompose_params(st.text))] if st.needs_decompose else []
                else:
                    st.context = verify_context(judge, st, len(st.todo_claims)) if st.todo_claims else None
                    items = verify_items(judge, st, st.todo_claims, lead=False)
                fitting = admitted(budget, items)
                over_budget = len(fitting) < len(items)
                if stage == "verify" and fitting and over_budget:  # the part sent gets its own breakpoint, if any
                    st.context = verify_context(judge, st, len(fitting))
                    fitting = [
                        replace(it, params=judge.verify_params(st.context, st.claim_texts[it.claim_id]))
                        for it in fitting
                    ]
                requests += [(custom_id(item), item.params) for item in fitting]
                if over_budget:
                    break
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
    # BATCH_TTL: the only ttl a request of these batches asks for (a request without a breakpoint writes nothing)
    results = list(judge.batch_results(entry["id"], stage_of, BATCH_TTL))
    ids = [int(cid.split("-", 1)[1]) for cid, _ in results]
    if entry["stage"] == "decompose":
        answer_of = {i: i for i in ids}
    else:
        answer_of = dict(Claim.objects.filter(id__in=ids).values_list("id", "answer_id"))
    states = {st.id: st for st in load_states(run, sorted(set(answer_of.values())), retry_failed=True)}
    calls = Counter(answer_of.get(key) for key in ids)
    verdicts, usages = [], {}
    with transaction.atomic():
        for (_cid, outcome), key in zip(results, ids, strict=True):
            st = states.get(answer_of.get(key))
            if st is None or not (
                st.needs_decompose if entry["stage"] == "decompose" else any(c == key for c, _ in st.todo_claims)
            ):
                continue  # stored by an earlier collection of this batch, or the answer is gone
            rec.add_usage(outcome.usage)
            if entry["stage"] == "verify":
                usages.setdefault(st.id, []).append(outcome.usage)
            if not outcome.ok:
                rec.store_failure(st, entry["stage"], None if entry["stage"] == "decompose" else key, outcome)
            elif entry["stage"] == "decompose":
                rec.store_claims(st, outcome.data)
            else:
                verdicts.append((st, key, outcome.data))
        rec.store_verdicts(verdicts)
        count_uncached(run, judge, states, calls, usages)
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
