"""What a run still has to do, and storing what it got. All database access of a run is here and runs
on the coordinating thread only (worker threads do HTTP), so SQLite never sees concurrent writers."""

import time
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Prefetch
from django.utils import timezone

from audit.judge.guard import evidence_guard
from audit.judge.numeric import numeric_guard
from audit.models import (
    Answer,
    Audit,
    AuditAnswer,
    AuditStatus,
    Claim,
    ClaimOrigin,
    JudgeFailure,
    JudgeRun,
    JudgeVerdict,
    Passage,
)
from audit.spans import locate

FLUSH_SECONDS = 1.0  # progress counters reach the run row at most this often
FLUSHED = [
    "status",
    "message",
    "batch_ids",
    "answers_total",
    "answers_done",
    "claims_done",
    "items_failed",
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "cost_usd",
    "uncached_answers",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "active_seconds",
]


class LeaseLost(Exception):
    """Another execution (a resume) took the run over, a cancel or its audit's close took the lease away: this one
    stops without writing anything more (its pending results roll back with the failed heartbeat)."""


@dataclass
class AnswerState:
    id: int
    text: str
    passages: list  # [(external_id, text)] in order
    todo_claims: list = field(default_factory=list)  # [(claim_id, text)] without a verdict of this version
    needs_decompose: bool = False
    failed: set = field(default_factory=set)  # open failures: {(stage, claim_id or None)}
    context: object = None  # the verify system blocks, built once per answer
    pending: int = 0
    waiting: list = field(default_factory=list)  # verify items sent once the first one's response has begun
    cache_known: bool = False  # a billed verify reply showed whether the prefix is cached
    claim_texts: dict = field(default_factory=dict)  # {claim_id: text} of the claims sent to verify

    def passage_text(self, external_id):
        return next((t for pid, t in self.passages if pid == external_id), None)


def scope(run):
    """The run's answers as a queryset: an audit's sample, explicit answers, or a whole dataset."""
    if run.audit_id:
        return Answer.objects.filter(audit_items__audit_id=run.audit_id)
    if run.answer_ids:
        return Answer.objects.filter(id__in=run.answer_ids)
    return Answer.objects.filter(dataset_id=run.dataset_id)


def scope_answer_ids(run):
    return list(scope(run).order_by("id").values_list("id", flat=True))


def load_states(run, answer_ids, *, retry_failed=False):
    """Answers that already have claims (imported or from an earlier run) are never decomposed again, nor those
    sampled by a closed audit (frozen); claims that already have a verdict of this version are never verified
    again (a closed audit's claims may be: the judge lab scores versions on them)."""
    answers = (
        Answer.objects.filter(id__in=answer_ids)
        .order_by("id")
        .prefetch_related(
            Prefetch("passages", queryset=Passage.objects.order_by("position"), to_attr="plist"),
            Prefetch("claims", queryset=Claim.objects.order_by("position"), to_attr="clist"),
        )
    )
    stored = dict(
        JudgeVerdict.objects.filter(judge_version_id=run.judge_version_id, claim__answer_id__in=answer_ids).values_list(
            "claim_id", "run_id"
        )
    )
    open_failures = {}
    for stage, answer_id, claim_id in JudgeFailure.objects.filter(
        run=run, resolved=False, answer_id__in=answer_ids
    ).values_list("stage", "answer_id", "claim_id"):
        open_failures.setdefault(answer_id, set()).add((stage, claim_id))
    frozen = set(frozen_answer_ids(answer_ids))
    states = []
    for a in answers:
        passages = [(p.external_id, p.text) for p in a.plist]
        st = AnswerState(a.id, a.text, passages, failed=open_failures.get(a.id, set()))
        if not a.clist and a.id not in frozen:
            st.needs_decompose = retry_failed or ("decompose", None) not in st.failed
        st.todo_claims = [
            (c.id, c.text)
            for c in a.clist
            if c.id not in stored and (retry_failed or ("verify", c.id) not in st.failed)
        ]
        # An answer this run already has a verdict on was counted (run.uncached_answers) when it was stored:
        # a resumed execution does not count it again.
        st.cache_known = any(stored.get(c.id) == run.pk for c in a.clist)
        states.append(st)
    return states


def frozen_answer_ids(answer_ids):
    """The answers among answer_ids sampled by a closed audit: claims cut from one now would enter an audit whose
    gold is frozen, as claims without gold (a dataset run, or the lab's, reaching an answer without claims)."""
    closed = AuditAnswer.objects.filter(answer_id__in=answer_ids, audit__status=AuditStatus.CLOSED)
    return list(closed.values_list("answer_id", flat=True))


def closed_audit_locked(answer_id):
    """Whether an audit sampling the answer is closed, read under a share lock on those audits' rows that the caller's
    transaction keeps until it commits. The close locks its audit's row for update (annotations' audit_close): a close
    that began first makes this wait and then read it closed; one that comes later waits for these claims to commit
    and counts them (claims without gold: it is refused). Without the lock a close could commit between this check
    and the insert. SQLite needs none: its transactions begin IMMEDIATE, so one writer at a time."""
    audits = Audit.objects.filter(pk__in=AuditAnswer.objects.filter(answer_id=answer_id).values("audit_id"))
    statuses = audits.order_by("pk").values_list("status", flat=True)
    if connection.vendor != "postgresql":
        return AuditStatus.CLOSED in statuses
    sql, params = statuses.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} FOR SHARE", params)  # shared: stores of concurrent runs do not wait for each other
        return any(status == AuditStatus.CLOSED for (status,) in cursor.fetchall())


def one_hour_write_price(prices):
    """The 1-hour cache write price: JUDGE_PRICES' own, else the documented 2x input (older settings)."""
    return prices.get("cache_write_1h", 2 * prices["input"])


def usage_usd(usage, prices):
    """Dollars of one call's usage at list prices. Of the tokens written to the cache (cache_write), those
    written for an hour (cache_write_1h) cost the 1-hour price (2x input), the rest the 5-minute one."""
    one_hour = usage.get("cache_write_1h", 0)
    return (
        usage["input"] * prices["input"]
        + usage["output"] * prices["output"]
        + (usage["cache_write"] - one_hour) * prices["cache_write"]
        + one_hour * one_hour_write_price(prices)
        + usage["cache_read"] * prices["cache_read"]
    ) / 1e6


class Recorder:
    """Counters, usage and cost on the run row, and the writes of results and failures."""

    def __init__(self, run, *, discount=1.0):
        self.run = run
        self.prices = settings.JUDGE_PRICES.get(run.judge_version.model) if run.backend == "anthropic" else None
        self.discount = discount
        self.last_flush = 0.0
        self.began, self.active_before = None, None  # set when this execution takes the lease

    def start(self, answer_ids):
        r = self.run
        r.answers_total, r.answers_done = len(answer_ids), 0
        # A subquery, not the id list: SQLite caps the number of query parameters.
        r.claims_done = JudgeVerdict.objects.filter(
            judge_version_id=r.judge_version_id, claim__answer__in=scope(r).values("id")
        ).count()
        r.items_failed = JudgeFailure.objects.filter(run=r, resolved=False).count()
        self.flush(force=True)

    def cost(self, usage):
        if not self.prices:
            return 0.0
        return usage_usd(usage, self.prices) * self.discount

    def add_usage(self, usage):
        r = self.run
        r.input_tokens += usage["input"]
        r.output_tokens += usage["output"]
        r.cache_write_tokens += usage["cache_write"]
        r.cache_read_tokens += usage["cache_read"]
        r.cost_usd += self.cost(usage)

    @property
    def tokens_used(self):
        r = self.run
        return r.input_tokens + r.output_tokens + r.cache_write_tokens + r.cache_read_tokens

    def store_claims(self, st, texts):
        """texts: claim strings, or (text, start, end) when the decomposer knows the span (the offline
        judge folds list lead-ins into items, so their text is not verbatim in the answer).
        Returns the new claims as [(id, text)]; [] when the answer got claims meanwhile."""
        if closed_audit_locked(st.id) or Claim.objects.filter(answer_id=st.id).exists():  # or closed meanwhile
            return []
        rows, cursor = [], 0
        for i, item in enumerate(texts):
            text, start, end = item if isinstance(item, tuple) else (item, *locate(st.text, item, cursor))
            cursor = end if end is not None else cursor
            rows.append(
                Claim(
                    answer_id=st.id,
                    position=i,
                    text=text,
                    span_start=start,
                    span_end=end,
                    origin=ClaimOrigin.JUDGE,
                    judge_version_id=self.run.judge_version_id,
                )
            )
        try:
            with transaction.atomic():
                Claim.objects.bulk_create(rows)
        except IntegrityError:  # another process decomposed this answer at the same moment
            return []
        self.resolve(st, "decompose", None)
        return [(c.id, c.text) for c in rows]

    def store_verdicts(self, items):
        """items: [(state, claim_id, data)] with data as the verify schema. Applies the evidence guard."""
        rows = []
        texts = {c: st.claim_texts.get(c) for st, c, _ in items}
        missing = [c for c, text in texts.items() if text is None]  # a batch run's results
        if missing:
            texts.update(Claim.objects.filter(id__in=missing).values_list("id", "text"))
        for st, claim_id, data in items:
            passage = st.passage_text(data["passage_id"]) if data["passage_id"] else None
            scored, passed = evidence_guard(data["verdict"], data["evidence"], passage)
            numeric = numeric_guard(scored, texts.get(claim_id, ""), data["evidence"])
            rows.append(
                JudgeVerdict(
                    claim_id=claim_id,
                    judge_version_id=self.run.judge_version_id,
                    run=self.run,
                    raw_verdict=data["verdict"],
                    verdict=scored,
                    evidence=data["evidence"],
                    passage_external_id=data["passage_id"],
                    reason=data["reason"][:2000],
                    guard_passed=passed,
                    numeric_passed=numeric,
                )
            )
            self.resolve(st, "verify", claim_id)
        JudgeVerdict.objects.bulk_create(rows, ignore_conflicts=True)  # a concurrent run may have stored one
        self.run.claims_done += len(rows)

    def store_failure(self, st, stage, claim_id, outcome):
        """One open failure per item: a retry that fails again updates it."""
        fields = {"error": outcome.error[:5000], "raw": outcome.raw[:100_000]}
        if (stage, claim_id) in st.failed:
            JudgeFailure.objects.filter(
                run=self.run, answer_id=st.id, stage=stage, claim_id=claim_id, resolved=False
            ).update(**fields)
            return
        JudgeFailure.objects.create(run=self.run, answer_id=st.id, stage=stage, claim_id=claim_id, **fields)
        st.failed.add((stage, claim_id))
        self.run.items_failed += 1

    def resolve(self, st, stage, claim_id):
        if (stage, claim_id) in st.failed:
            JudgeFailure.objects.filter(
                run=self.run, answer_id=st.id, stage=stage, claim_id=claim_id, resolved=False
            ).update(resolved=True)
            st.failed.discard((stage, claim_id))
            self.run.items_failed -= 1

    def take_lease(self):
        """This execution now owns the run; an older one still alive stops at its next heartbeat."""
        r = self.run
        r.lease, r.heartbeat_at = uuid.uuid4().hex, timezone.now()
        self.began, self.active_before = r.heartbeat_at, r.active_seconds  # None: a run from before it was recorded
        live = _open(JudgeRun.objects.filter(pk=r.pk).exclude(status=JudgeRun.Status.CANCELLED))
        if not live.update(lease=r.lease, heartbeat_at=r.heartbeat_at):  # cancelled while queued: never starts
            raise LeaseLost(f"judge run {r.pk} was cancelled or its audit closed")

    def flush(self, force=False):
        """Counters and the heartbeat, written only while this execution holds the lease (one UPDATE
        with the lease in its WHERE, so a taken-over execution can never overwrite its successor)."""
        now = time.monotonic()
        if force or now - self.last_flush >= FLUSH_SECONDS:
            r = self.run
            r.heartbeat_at = timezone.now()
            if self.active_before is not None:  # this execution's time so far on top of the earlier ones'
                r.active_seconds = self.active_before + (r.heartbeat_at - self.began).total_seconds()
            held = _open(JudgeRun.objects.filter(pk=r.pk, lease=r.lease))
            if not held.update(**{f: getattr(r, f) for f in FLUSHED}):
                raise LeaseLost(f"judge run {r.pk} was taken over by another execution, cancelled, or its audit closed")
            self.last_flush = now


def _open(runs):
    """The runs whose audit (if any) is not closed: a run never writes into a closed audit, whatever raced it."""
    return runs.exclude(audit__status=AuditStatus.CLOSED)
