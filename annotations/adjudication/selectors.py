"""Reads of the adjudication area. Each function runs a fixed number of queries, whatever the size."""

from django.db.models import CharField, Count, Exists, OuterRef, Prefetch, Q, StringAgg, Subquery, Value
from django.db.models.functions import Cast, Concat

from annotations.adjudication.rules import adjudication_refusal, may_adjudicate_own
from annotations.models import Assignment, GoldLabel, Label
from audit import history
from audit.models import Audit, AuditAnswer, AuditStatus, Claim, HistoryEvent, JudgeVerdict, Passage
from audit.spans import evidence_span, layers, segments

OPEN = (AuditStatus.LABELLING, AuditStatus.ADJUDICATION)
SUBMITTED = Assignment.Status.SUBMITTED


def latest_judge_verdicts(claims_filter, fields=("claim_id", "verdict")):
    """{claim_id: row} of the verdict by the newest judge version for each claim (one query)."""
    rows = (
        JudgeVerdict.objects.filter(**claims_filter)
        .order_by("claim_id", "-judge_version__created_at", "-judge_version_id")
        .values(*fields)
    )
    out = {}
    for row in rows:
        out.setdefault(row["claim_id"], row)
    return out


def _complete_items(assignment_rows, user):
    """{item_id: {"A": row, "B": row}} for the items user may adjudicate (rules.adjudication_refusal)."""
    items = {}
    for row in assignment_rows:
        items.setdefault(row["audit_answer_id"], {})[row["slot"]] = row
    mine = {}  # answer id -> (item id, status) of the user's own assignments on it, in any audit
    for item_id, answer_id, status in Assignment.objects.filter(annotator_id=user.id).values_list(
        "audit_answer_id", "audit_answer__answer_id", "status"
    ):
        mine.setdefault(answer_id, []).append((item_id, status))
    complete = {}
    for item_id, slots in items.items():
        rows = [(r["annotator_id"], r["status"]) for r in slots.values()]
        answer_id = next(iter(slots.values()))["audit_answer__answer_id"]
        if adjudication_refusal(user.id, item_id, rows, mine.get(answer_id, [])) is None:
            complete[item_id] = slots
    return complete


def _labels_and_gold(audits, user):
    """(assignment rows, complete items, {(item, claim): {slot: verdict}}, {(audit, claim): gold row}) of the
    audits, as the queue sees them for user (five queries). Shared by the queue, the adjudication page's
    next/previous links and the home page, so all three follow the same rules. Every claim of a complete item is
    a key, those without a label ({}) too: claims cut after both annotators submitted (_queued)."""
    assignment_rows = list(
        Assignment.objects.filter(audit_answer__audit__in=audits).values(
            "audit_answer_id",
            "slot",
            "status",
            "annotator_id",
            "is_demo",
            "audit_answer__audit_id",
            "audit_answer__position",
            "audit_answer__answer__external_id",
            "audit_answer__answer_id",
        )
    )
    complete = _complete_items(assignment_rows, user)
    verdicts = {}
    labels = Label.objects.filter(assignment__status=SUBMITTED, assignment__audit_answer__audit__in=audits)
    for row in labels.values("claim_id", "verdict", "assignment__slot", "assignment__audit_answer_id"):
        key = (row["assignment__audit_answer_id"], row["claim_id"])
        if key[0] in complete:
            verdicts.setdefault(key, {})[row["assignment__slot"]] = row["verdict"]
    _add_unlabelled(verdicts, complete, {a.id for a in audits if not a.is_calibration})
    gold = {
        (g["audit_id"], g["claim_id"]): g
        for g in GoldLabel.objects.filter(audit__in=audits).values(
            "audit_id", "claim_id", "verdict", "source", "recheck"
        )
    }
    return assignment_rows, complete, verdicts, gold


def _add_unlabelled(verdicts, complete, plain):
    """Key every claim of the complete items of the plain audits (a calibration sample's claims are fixed at its
    draw, and labelled) in verdicts, with no label ({}) when neither annotator labelled it (one query)."""
    items = {}
    for item_id, slots in complete.items():
        row = slots["A"]
        if row["audit_answer__audit_id"] in plain:
            items.setdefault(row["audit_answer__answer_id"], []).append(item_id)
    for claim_id, answer_id in Claim.objects.filter(answer_id__in=list(items)).values_list("id", "answer_id"):
        for item_id in items[answer_id]:
            verdicts.setdefault((item_id, claim_id), {})


def adjudication_queue(user):
    """Per open audit: disputed claims grouped by answer, counts, and the judge-review list."""
    audits = list(Audit.objects.filter(status__in=OPEN).order_by("-created_at", "-id"))
    assignment_rows, complete, verdicts, gold = _labels_and_gold(audits, user)
    judge = latest_judge_verdicts({"claim__answer__audit_items__audit__in": audits})
    claims = {
        c["id"]: c for c in Claim.objects.filter(answer__audit_items__audit__in=audits).values("id", "position", "text")
    }
    by_audit = {
        a.id: {"audit": a, "answers": {}, "judge_review": [], "disputed": 0, "resolved": 0, "hidden_own": 0}
        for a in audits
    }
    for (item_id, claim_id), v in sorted(
        verdicts.items(),
        key=lambda kv: (complete[kv[0][0]]["A"]["audit_answer__position"], claims[kv[0][1]]["position"]),
    ):
        slot_a = complete[item_id]["A"]
        entry = by_audit[slot_a["audit_answer__audit_id"]]
        g = gold.get((entry["audit"].id, claim_id))
        row = {
            "claim": claims[claim_id],
            "a": v.get("A"),
            "b": v.get("B"),
            "gold": g,
            "item_id": item_id,
            "external_id": slot_a["audit_answer__answer__external_id"],
            "is_demo": slot_a["is_demo"] or complete[item_id]["B"]["is_demo"],
            "unlabelled": not (v.get("A") or v.get("B")),
        }
        if _queued(row["a"], row["b"], g):
            entry["disputed"] += 1
            entry["resolved"] += not _open(g)
            entry["answers"].setdefault(item_id, []).append(row)
        elif claim_id in judge and judge[claim_id]["verdict"] != row["a"]:
            row["judge"] = judge[claim_id]["verdict"]
            entry["judge_review"].append(row)
    _count_hidden(by_audit, assignment_rows, user)
    return list(by_audit.values())


def filter_queue(entries, status="", q=""):
    """The queue's disputed claims narrowed to a status ("open": no gold yet, or gold marked for re-check;
    "resolved") and to claims whose text or answer id contains q (case-insensitive), the judge-error review
    to q as well; counts stay those of the whole audit."""
    q = q.casefold()

    def matches(r):
        return q in r["claim"]["text"].casefold() or q in r["external_id"].casefold()

    for entry in entries:
        kept = {}
        for item_id, rows in entry["answers"].items():
            rows = [r for r in rows if (not status or _open(r["gold"]) == (status == "open")) and matches(r)]
            if rows:
                kept[item_id] = rows
        entry["answers"], entry["filtered"] = kept, bool(status or q)
        entry["judge_review"] = [r for r in entry["judge_review"] if matches(r)]
    return entries


def _queued(a, b, gold):
    """Whether a claim is the adjudicator's: its two labels differ, neither annotator labelled it (cut from the
    answer after both submitted: it needs labels, by reopening the answer to its annotators, or a gold verdict;
    until then it is an open dispute of the report and blocks the close), or its gold is marked for a re-check
    (listed even when the labels agree)."""
    return a != b or not (a or b) or bool(gold and gold["recheck"])


def _open(gold):
    """Whether a queued claim is still to decide: no gold yet, or gold marked for a re-check."""
    return gold is None or bool(gold["recheck"])


def adjudication_neighbours(user, audit, item):
    """{prev_item, next_item, earlier_open} around item, in the queue's order (answer position) and by its
    rules, links as {"id", "external_id"} or None. Next: the first later answer with an unresolved dispute
    (never wrapping round to the start: earlier_open counts the earlier answers still open, so the page
    can say so). Previous: the last earlier answer with an unresolved dispute, else the last earlier one
    with any dispute (to look back at what was settled). Four queries."""
    _rows, complete, verdicts, gold = _labels_and_gold([audit], user)
    open_ = {}  # item id -> whether some disputed claim of it has no gold yet
    for (item_id, claim_id), v in verdicts.items():
        g = gold.get((audit.id, claim_id))
        if _queued(v.get("A"), v.get("B"), g):
            open_[item_id] = open_.get(item_id, False) or _open(g)
    position = {i: complete[i]["A"]["audit_answer__position"] for i in open_ if i != item.id}
    before = sorted((i for i in position if position[i] < item.position), key=position.get)
    after = sorted((i for i in position if position[i] > item.position), key=position.get)
    nxt = next((i for i in after if open_[i]), None)
    prev = next((i for i in reversed(before) if open_[i]), before[-1] if before else None)

    def link(i):
        return i and {"id": i, "external_id": complete[i]["A"]["audit_answer__answer__external_id"]}

    return {"prev_item": link(prev), "next_item": link(nxt), "earlier_open": sum(open_[i] for i in before)}


def adjudicator_home(user):
    """Per open audit with work for user: disputed claims left and total, the first unresolved answer and
    claim, and the judge-review count (the queue's fixed number of queries)."""
    out = []
    for entry in adjudication_queue(user):
        left = entry["disputed"] - entry["resolved"]
        if not left and not entry["judge_review"]:
            continue
        first = next(
            (
                (item_id, row["claim"]["id"])
                for item_id, rows in entry["answers"].items()
                for row in rows
                if row["gold"] is None or row["gold"]["recheck"]
            ),
            (None, None),
        )
        out.append(
            {
                "audit": entry["audit"],
                "disputed": entry["disputed"],
                "resolved": entry["resolved"],
                "left": left,
                "judge_review": len(entry["judge_review"]),
                "next_item_id": first[0],
                "next_claim_id": first[1],
            }
        )
    return out


def _count_hidden(by_audit, assignment_rows, user):
    if may_adjudicate_own():
        return
    own = {(r["audit_answer__audit_id"], r["audit_answer_id"]) for r in assignment_rows if r["annotator_id"] == user.id}
    for audit_id, _item in own:
        by_audit[audit_id]["hidden_own"] += 1


def adjudication_item(audit_id, item_id):
    """One audit answer with everything the adjudication view shows; raises AuditAnswer.DoesNotExist."""
    labels = Label.objects.select_related("evidence_passage").order_by()
    assignments = (
        Assignment.objects.select_related("annotator")
        .order_by("slot")
        .prefetch_related(Prefetch("labels", queryset=labels, to_attr="label_list"))
    )
    item = (
        AuditAnswer.objects.select_related("audit", "answer")
        .prefetch_related(
            Prefetch("answer__passages", queryset=Passage.objects.order_by("position"), to_attr="passage_list"),
            Prefetch("answer__claims", queryset=Claim.objects.order_by("position"), to_attr="claim_list"),
            Prefetch("assignments", queryset=assignments, to_attr="assignment_list"),
        )
        .get(audit_id=audit_id, pk=item_id)
    )
    if item.audit.is_calibration:  # a calibration sample adjudicates its sampled claims only
        sampled = set(item.audit.claims().filter(answer_id=item.answer_id).values_list("id", flat=True))
        item.answer.claim_list = [c for c in item.answer.claim_list if c.id in sampled]
    item.gold_by_claim = {
        g.claim_id: g
        for g in GoldLabel.objects.select_related("adjudicator", "evidence_passage").filter(
            audit_id=audit_id, claim__answer_id=item.answer_id
        )
    }
    item.judge_by_claim = {}
    for v in (
        JudgeVerdict.objects.select_related("judge_version")
        .filter(claim__answer_id=item.answer_id)
        .order_by("claim_id", "-judge_version__created_at", "-judge_version_id")
    ):
        item.judge_by_claim.setdefault(v.claim_id, v)
    return item


def answer_history(audit_id, item_id):
    """(item, events) for the history page: every event on the answer in this audit, and the audit's own
    events (assign, status, close, reopen with its reason: recorded without an answer), oldest first; each
    with old_text/new_text (history.describe, a passage named by its number: the item query carries them)."""
    item = (
        AuditAnswer.objects.select_related("audit", "answer")
        .annotate(passage_numbers=Subquery(_passage_numbers()))
        .get(audit_id=audit_id, pk=item_id)
    )
    events = (
        HistoryEvent.objects.filter(Q(answer_id=item.answer_id) | Q(answer__isnull=True), audit_id=audit_id)
        .select_related("user", "claim")
        .order_by("created_at", "id")
    )
    events = list(events)
    passages = _numbers_by_id(item.passage_numbers)
    for e in events:
        e.old_text, e.new_text = (history.describe(v, passages) if v is not None else "" for v in (e.old, e.new))
    return item, events


def _passage_numbers():
    """The item's passages as "id:position,..." in one text (a subquery of the item's own query)."""
    pair = Concat(Cast("id", CharField()), Value(":"), Cast("position", CharField()))
    return (
        Passage.objects.filter(answer_id=OuterRef("answer_id"))
        .order_by()
        .values("answer_id")
        .annotate(pairs=StringAgg(pair, delimiter=Value(",")))
        .values("pairs")
    )


def _numbers_by_id(pairs):
    """{passage id: its 1-based number} from _passage_numbers' text."""
    return {int(i): int(p) + 1 for i, p in (pair.split(":") for pair in (pairs or "").split(",") if pair)}


def audit_gold_progress(audit):
    """{claims, gold, missing, waiting_labels, disputed, recheck, unsubmitted, blocked} for the audit page's close
    control (four queries). Of the claims missing gold, disputed belong to an answer both annotators submitted
    (agreed claims got their gold then): they wait for adjudication; the others, waiting_labels, wait for an
    assignment to be submitted (or made: a draft audit is not assigned yet)."""
    claims = audit.claims().count()
    gold = GoldLabel.objects.filter(audit=audit).aggregate(n=Count("pk"), recheck=Count("pk", filter=Q(recheck=True)))
    open_work = Assignment.objects.filter(audit_answer__audit=audit).exclude(status=SUBMITTED)
    unsubmitted = open_work.count()
    missing = max(claims - gold["n"], 0)
    both_in = (
        Assignment.objects.filter(audit_answer__audit=audit, status=SUBMITTED)
        .values("audit_answer__answer_id")
        .annotate(n=Count("pk"))
        .filter(n__gte=2)
        .values("audit_answer__answer_id")
    )
    disputed = (
        audit.claims()
        .filter(answer_id__in=both_in)
        .exclude(Exists(GoldLabel.objects.filter(audit=audit, claim=OuterRef("pk"))))
        .count()
    )
    return {
        "claims": claims,
        "gold": gold["n"],
        "missing": missing,
        "waiting_labels": max(missing - disputed, 0),
        "disputed": disputed,
        "recheck": gold["recheck"],
        "unsubmitted": unsubmitted,
        "blocked": bool(missing or gold["recheck"] or unsubmitted),
    }


def claim_rows(item):
    """Per claim of the item: both labels, the judge's latest verdict, the gold, and its kind:
    "disputed" (the labels differ), "judge_review" (they agree, the judge differs) or "agreed"."""
    labels = {a.slot: {lb.claim_id: lb for lb in a.label_list} for a in item.assignment_list}
    rows = []
    for claim in item.answer.claim_list:
        la, lb = labels.get("A", {}).get(claim.id), labels.get("B", {}).get(claim.id)
        judge = item.judge_by_claim.get(claim.id)
        va, vb = (la.verdict if la else ""), (lb.verdict if lb else "")
        gold = item.gold_by_claim.get(claim.id)
        # A re-check, and a claim neither annotator labelled (_queued), is resolved like a dispute.
        disputed = va != vb or not (va or vb) or (gold is not None and gold.recheck)
        kind = "disputed" if disputed else "judge_review" if judge and judge.verdict != va else "agreed"
        row = {
            "claim": claim,
            "a": la,
            "b": lb,
            "judge": judge,
            "gold": gold,
            "kind": kind,
            "unlabelled": not (va or vb),
        }
        rows.append(with_form(row))
    return rows


def with_form(row, sent=None):
    """Set row["form"]: the gold form's values, from what was sent (a refused save) or the stored gold."""
    gold = row["gold"]
    if sent is not None:
        form = {k: sent.get(k, "") for k in ("verdict", "evidence", "passage", "start", "end", "reason")}
        form["quote"] = ""
    else:
        span = gold and gold.evidence_passage_id
        form = {
            "verdict": gold.verdict if gold else "",
            "evidence": evidence_choice(gold, row["a"], row["b"]),
            "passage": gold.evidence_passage_id if span else "",
            "start": gold.evidence_start if span else "",
            "end": gold.evidence_end if span else "",
            "reason": "",
            "quote": gold.evidence_text if gold else "",
        }
    form["version"] = gold.version if gold else 0
    row["form"] = form
    return row


def _span(x):
    return (x.evidence_passage_id, x.evidence_start, x.evidence_end, x.evidence_text)


def evidence_choice(gold, la, lb):
    """Which control the gold's evidence corresponds to: "a", "b", "new" (its own span) or "none"."""
    if gold is None or not (gold.evidence_text or gold.evidence_passage_id):
        return "none"
    for slot, label in (("a", la), ("b", lb)):
        if label is not None and _span(label) == _span(gold):
            return slot
    return "new"


def answer_segments(answer):
    return segments(answer.text, [(c.span_start, c.span_end, c) for c in answer.claim_list])


EVIDENCE_KINDS = (("a", "ev-a", "A"), ("b", "ev-b", "B"), ("gold", "gold", "gold"))


def passage_segments(passages, row):
    """[(passage, [(piece, classes, title)])] with A's, B's, the judge's and the gold evidence of one claim
    row marked; overlapping spans are cut at every boundary so each piece names every span over it."""
    spans = {}
    for key, css, name in EVIDENCE_KINDS:
        label = row and row[key]
        if label and label.evidence_passage_id:
            span = (label.evidence_start, label.evidence_end, (css, name))
            spans.setdefault(label.evidence_passage_id, []).append(span)
    judge = row and row["judge"]
    out = []
    for p in passages:
        marks = list(spans.get(p.id, []))
        if judge and judge.evidence and judge.passage_external_id == p.external_id:
            span = evidence_span(p.text, judge.evidence)  # the judge quotes text; it gives no offsets
            if span:
                marks.append((*span, ("judge", "judge")))
        pieces = [
            (piece, " ".join(c for c, _ in tags), ", ".join(n for _, n in tags))
            for piece, tags in layers(p.text, marks)
        ]
        out.append((p, pieces))
    return out
