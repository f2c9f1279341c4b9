"""Executing a judge run: bounded concurrency, resumable, within budget.

HTTP calls run on worker threads (at most JUDGE_CONCURRENCY at once) that do nothing else; this
coordinating thread owns every database write (store.py). Decompose and verify
calls share the pool, verify first, so it stays full across answers and answers finish in turn.
Killed at any point, a rerun loads what is stored and calls the API only for the rest (store.load_states).
A call holds its slot until its result is committed, so a kill loses at most JUDGE_CONCURRENCY paid calls
(running, or answered and not yet stored); each result is stored as soon as the coordinator sees it.
Each execution holds a lease on the run row and beats (store.Recorder.flush) while it works, even while
calls are slow; a resume takes the lease over and the older execution, if still alive, stops at its next beat."""

import json
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from queue import Empty, SimpleQueue

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.judge import prompts
from audit.judge.offline import OfflineJudge
from audit.judge.outcome import FatalJudgeError
from audit.judge.rubric import OfflineRubricJudge
from audit.judge.store import AnswerState, LeaseLost, Recorder, load_states, one_hour_write_price, scope_answer_ids
from audit.models import JudgeRun

CHUNK = 200  # answers loaded per query round
OFFLINE_WINDOW = 64  # offline results stored per transaction
OVERHEAD_TOKENS = 64  # the message framing the API adds to every request
HEARTBEAT_SECONDS = 10.0  # longest wait for a result before beating anyway (slow calls, retries with backoff)


@dataclass
class Item:
    stage: str  # decompose | verify
    state: AnswerState
    claim_id: int | None
    params: dict


class CallPool:
    """At most `concurrency` calls at once on worker threads that do HTTP only."""

    def __init__(self, judge, concurrency):
        self.judge, self.pool = judge, ThreadPoolExecutor(concurrency, thread_name_prefix="judge-http")

    def submit(self, stage, params):
        return self.pool.submit(self.judge.call, stage, params)

    def shutdown(self):
        # Calls still running when the run stops (killed, fatal error) finish on their own; nothing waits.
        self.pool.shutdown(wait=False, cancel_futures=True)


class InlineExecutor:
    """The offline judge needs no threads: run the call now, hand back a finished future."""

    def __init__(self, judge):
        self.judge = judge

    def submit(self, stage, params):
        future = Future()
        try:
            future.set_result(self.judge.call(stage, params))
        except BaseException as exc:
            future.set_exception(exc)
        return future

    def shutdown(self):
        pass


class Finished:
    """Futures as they complete (add_done_callback feeds it): take() blocks for one, then drains the rest.
    Unlike concurrent.futures.wait, its cost does not grow with the number of futures in flight."""

    def __init__(self):
        self.queue = SimpleQueue()

    def put(self, future):
        self.queue.put(future)

    def take(self, timeout=None):
        """The finished futures, or [] when none finished within timeout seconds."""
        try:
            done = [self.queue.get(timeout=timeout)]
        except Empty:
            return []
        while not self.queue.empty():
            done.append(self.queue.get_nowait())
        return done


class Budget:
    """Stops before a call that could take spending past the limit: spent + the worst case of every call
    in flight + this call's worst case. Worst case: one token per byte of the request (a token is at least
    one byte of text; the JSON also counts the schema the API turns into instructions), all of it at the
    cache write price of the ttl it asks for, plus max_tokens of output. A call whose bill is unknown (it
    timed out after the request went out) keeps its worst case reserved for the rest of the execution."""

    def __init__(self, run, recorder):
        self.run, self.rec = run, recorder
        self.reserved_tokens, self.reserved_usd = 0, 0.0

    def estimate(self, item):
        if self.run.backend != "anthropic":
            return 0, 0.0
        return call_worst_case(item.params, self.rec.prices, self.rec.discount)

    def allows(self, est):
        tokens, usd = est
        r = self.run
        if r.budget_tokens is not None and self.rec.tokens_used + self.reserved_tokens + tokens > r.budget_tokens:
            return False
        return r.budget_usd is None or r.cost_usd + self.reserved_usd + usd <= r.budget_usd

    def reserve(self, est, sign=1):
        self.reserved_tokens += sign * est[0]
        self.reserved_usd += sign * est[1]

    def settle(self, est, outcome):
        if not outcome.bill_unknown:
            self.reserve(est, -1)


def call_worst_case(params, prices, discount=1.0):
    """(tokens, dollars) one call could cost at most: the Budget's reservation, and the lab's worst case."""
    prices = prices or {"input": 0, "output": 0, "cache_write": 0}
    tokens_in = len(json.dumps(params).encode()) + OVERHEAD_TOKENS
    tokens_out = params["max_tokens"]
    write = one_hour_write_price(prices) if prompts.cache_ttl(params) == "1h" else prices["cache_write"]
    usd = (tokens_in * max(prices["input"], write) + tokens_out * prices["output"]) / 1e6
    return tokens_in + tokens_out, usd * discount


def make_judge(run):
    if run.backend == "offline":
        return OfflineRubricJudge() if run.judge_version.level == "answer" else OfflineJudge()
    from audit.judge.llm import LLMJudge  # the SDK is loaded only when the LLM backend is used

    return LLMJudge(run.judge_version.spec)


def items_for(judge, st):
    if st.needs_decompose:
        st.pending = 1
        return [Item("decompose", st, None, judge.decompose_params(st.text))]
    return verify_items(judge, st, st.todo_claims)


def verify_items(judge, st, claims, lead=True):
    """One answer's verify calls. They share a cached prefix (instructions and passages) that the API
    can read only once the first response writing it has begun: with lead, one call goes now and the
    others wait for its reply (release), unless the prefix is surely too short to cache."""
    if claims and st.context is None:
        st.context = judge.verify_context(st.passages)
    st.pending += len(claims)
    st.claim_texts.update(claims)
    items = [Item("verify", st, cid, judge.verify_params(st.context, text)) for cid, text in claims]
    if lead and len(items) > 1 and judge.cacheable(st.context):
        st.waiting, items = items[1:], items[:1]
    return items


def release(run, st, outcome, verify_q):
    """After a verify reply: the answer's waiting calls go first in the queue (after an error, which
    cached nothing, only the next one). The first billed reply of an answer that neither wrote nor
    read the cache says its prefix is too short for the model to cache."""
    u = outcome.usage
    billed = bool(u["input"] or u["output"])
    if billed and not st.cache_known:
        st.cache_known = True
        run.uncached_answers += not (u["cache_write"] or u["cache_read"])
    go = st.waiting if billed else st.waiting[:1]
    st.waiting = st.waiting[len(go) :]
    verify_q.extendleft(reversed(go))


def handle(judge, rec, item, outcome, verdicts, verify_q):
    """Store one outcome (inside the caller's transaction); returns True when its answer is finished."""
    st = item.state
    if not outcome.ok:
        rec.store_failure(st, item.stage, item.claim_id, outcome)
    elif item.stage == "decompose":
        verify_q.extend(verify_items(judge, st, rec.store_claims(st, outcome.data)))
    else:
        verdicts.append((st, item.claim_id, outcome.data))
    if item.stage == "verify":
        release(rec.run, st, outcome, verify_q)
    st.pending -= 1
    return st.pending == 0


def drive(run, judge, rec, next_item, put_back, store, progress):
    """The call loop every direct runner shares: up to JUDGE_CONCURRENCY calls in flight within the budget
    (a call that does not fit waits for those in flight; none left: over budget), results stored as they
    land with the usage they paid for, a heartbeat, progress. next_item() -> Item or None; put_back(item)
    returns a refused one; store([(item, outcome)]) runs inside the results' transaction. Returns over budget?"""
    budget = Budget(run, rec)
    concurrency = max(1, settings.JUDGE_CONCURRENCY)
    pool = CallPool(judge, concurrency) if judge.priced else InlineExecutor(judge)
    window = concurrency if judge.priced else OFFLINE_WINDOW
    in_flight, over_budget, finished = {}, False, Finished()
    try:
        while True:
            rec.flush()  # the heartbeat; raises LeaseLost once a resume has taken the run over
            while len(in_flight) < window and (item := next_item()):
                est = budget.estimate(item)
                if not budget.allows(est):
                    put_back(item)
                    over_budget = not in_flight
                    break
                budget.reserve(est)
                future = pool.submit(item.stage, item.params)
                in_flight[future] = (item, est)
                future.add_done_callback(finished.put)
            if not in_flight:
                break
            done = finished.take(HEARTBEAT_SECONDS)
            if done:
                results = []
                with transaction.atomic():
                    for future in done:
                        item, est = in_flight.pop(future)
                        outcome = future.result()  # FatalJudgeError propagates
                        budget.settle(est, outcome)
                        rec.add_usage(outcome.usage)
                        results.append((item, outcome))
                    store(results)
                    rec.flush(force=True)  # the usage is committed with the results it paid for
            if progress:
                progress(run)  # as results land, and at every quiet heartbeat
    finally:
        pool.shutdown()
    return over_budget


def run_sync(run, judge, rec, answer_ids, progress, retry_failed):
    """Claim level: decompose, then verify each claim (an answer's siblings after its first reply)."""
    chunks = deque(answer_ids[i : i + CHUNK] for i in range(0, len(answer_ids), CHUNK))
    decompose_q, verify_q = deque(), deque()

    def next_item():
        while not verify_q and not decompose_q and chunks:
            for st in load_states(run, chunks.popleft(), retry_failed=retry_failed):
                todo = items_for(judge, st)
                (decompose_q if st.needs_decompose else verify_q).extend(todo)
                run.answers_done += not todo
        for queue in (verify_q, decompose_q):
            if queue:
                return queue.popleft()
        return None

    def put_back(item):
        (verify_q if item.stage == "verify" else decompose_q).appendleft(item)

    def store(results):
        verdicts = []
        for item, outcome in results:
            run.answers_done += handle(judge, rec, item, outcome, verdicts, verify_q)
        rec.store_verdicts(verdicts)

    return drive(run, judge, rec, next_item, put_back, store, progress)


def execute(run, runner, *, discount=1.0, progress=None, retry_failed=False):
    """Take the run's lease and drive it with `runner` (run_sync, or a batch or rubric runner built on it)."""
    rec = Recorder(run, discount=discount)
    try:
        rec.take_lease()  # a cancel (audit/jobs) takes the lease away: the run stops at its next heartbeat
        run.status, run.message, run.finished_at = JudgeRun.Status.RUNNING, "", None
        run.started_at = run.started_at or timezone.now()
        return _execute(run, rec, runner, progress, retry_failed)
    except LeaseLost as exc:
        run.message = f"Stopped: {exc}."  # not saved: the row belongs to the execution that took it over
        return run


def _execute(run, rec, runner, progress, retry_failed):
    answer_ids = scope_answer_ids(run)
    rec.start(answer_ids)
    try:
        over_budget = runner(run, make_judge(run), rec, answer_ids, progress, retry_failed)
    except FatalJudgeError as exc:
        return finish(run, rec, JudgeRun.Status.FAILED, f"Stopped: {exc}")
    except LeaseLost:
        raise
    except BaseException as exc:
        with suppress(LeaseLost):  # taken over meanwhile: the row is the new execution's to write
            finish(
                run, rec, JudgeRun.Status.FAILED, f"Interrupted ({type(exc).__name__}: {exc}). Run it again to resume."
            )
        raise
    status = JudgeRun.Status.BUDGET if over_budget else JudgeRun.Status.DONE
    return finish(run, rec, status, summary(run, over_budget))


def summary(run, over_budget):
    text = (
        f"{run.answers_done} of {run.answers_total} answers done, {run.claims_done} claims judged, "
        f"{run.items_failed} failed item{'s' if run.items_failed != 1 else ''}"
    )
    if run.items_failed:
        text += " (see the failures; they can be retried)"
    if over_budget:
        text += ". Stopped before the budget would be exceeded: raise it and resume to finish"
    return text + "."


def finish(run, rec, status, message):
    run.status, run.message, run.finished_at = status, message, timezone.now()
    rec.flush(force=True)
    return run
