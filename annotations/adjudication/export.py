"""Gold-label export: claim-level and answer-level tables as CSV, JSONL or Parquet bytes.

Reproducible by construction: fixed column order and types, rows ordered by (answer position, claim
position), no timestamps anywhere, so the same audit exported twice gives identical bytes. A table is
built with six queries whatever its size (seven for a calibration sample). Annotators and adjudicators
appear under pseudonymous ids unless names are asked for: "ann-" + the first 10 hex digits of
sha256(salt:user id), stable across exports."""

import csv
import hashlib
import io
import json
import re

from django.conf import settings

from annotations.adjudication.selectors import latest_judge_verdicts
from annotations.models import Assignment, GoldLabel, Label
from audit.judge.definitions import ref_of
from audit.lazy import lazy_module
from audit.models import SCORED_VERDICTS, AuditAnswer, AuditClaim, Claim, Verdict
from audit.selectors import plain_rows

parquet = lazy_module("annotations.adjudication.parquet")  # pyarrow is loaded by a Parquet export only

LEVELS = ("claim", "answer")
FORMATS = ("csv", "jsonl", "parquet")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}
S, INT, F, B = "string", "int64", "float64", "bool_"  # pyarrow type names
CLAIM_COLUMNS = [
    ("audit", S),
    ("answer_id", S),
    ("claim_id", INT),
    ("position", INT),
    ("claim_text", S),
    ("gold_verdict", S),
    ("gold_evidence", S),
    ("gold_passage_id", S),
    ("gold_source", S),
    ("adjudicator", S),
    ("reason", S),
    ("annotator_a_id", S),
    ("annotator_a_verdict", S),
    ("annotator_a_evidence", S),
    ("annotator_a_flags", S),
    ("annotator_a_note", S),
    ("annotator_b_id", S),
    ("annotator_b_verdict", S),
    ("annotator_b_evidence", S),
    ("annotator_b_flags", S),
    ("annotator_b_note", S),
    ("judge_verdict", S),
    ("judge_raw_verdict", S),
    ("judge_evidence", S),
    ("judge_passage_id", S),
    ("judge_guard_passed", B),
    ("judge_version", S),
    ("stratum", S),
    ("inclusion_probability", F),
    ("weight", F),
    ("provisional", B),
    ("claim_meta", S),  # the imported claim's unknown fields, as JSON (sorted keys); empty when none
    ("gold_status", S),  # GOLD_STATUSES: why gold_verdict is empty, or that the gold awaits a re-check
]
ANSWER_COLUMNS = [
    ("audit", S),
    ("answer_id", S),
    ("question", S),
    ("stratum", S),
    ("weight", F),
    ("inclusion_probability", F),
    ("gold_pass", B),
    ("gold_pass_strict", B),  # the same verdicts under both policies (audit.policy); gold_pass follows the audit's
    ("gold_pass_lenient", B),
    ("policy", S),
    ("claims", INT),
    ("supported", INT),
    ("contradicted", INT),
    ("unsupported", INT),
    ("non_assertive", INT),
    ("no_gold", INT),
    ("faithfulness_ratio", F),  # supported / scored, only when every claim has gold (gold_complete); else empty
    ("omission", B),
    ("annotator_a_note", S),
    ("annotator_b_note", S),
    ("provisional", B),
    ("gold_complete", B),  # every claim of the answer has gold
    ("open_disputes", INT),  # claims without gold that both annotators labelled: waiting for the adjudicator
    ("awaiting_labels", INT),  # claims without gold whose answer is not labelled by both annotators yet
    ("gold_recheck", INT),  # adjudicated gold whose labels changed since (counted as gold until decided again)
    ("created_at", S),  # the answer's time, ISO 8601
    ("answer_meta", S),  # the answer's metadata (model, product area, ...) as JSON (sorted keys); empty when none
    ("annotator_a_id", S),
    ("annotator_b_id", S),
]
# A claim's gold_status: its gold, or why it has none yet, from how many of the answer's two annotators submitted.
GOLD, RECHECK = "gold", "gold, re-check"
PENDING = {2: "open dispute", 1: "awaiting one label", 0: "no labels yet"}
GOLD_STATUSES = (GOLD, RECHECK, *PENDING.values())
FLAGS = Label.FLAGS
NO_LABEL, NO_GOLD = (None,) * 4, (None,) * 6
SUBMITTED = Assignment.Status.SUBMITTED


def _meta_json(text):
    """The claim's stored meta (JSON text) with sorted keys, or None when it is empty."""
    if text in (None, "{}", "null"):
        return None
    meta = json.loads(text)
    return json.dumps(meta, sort_keys=True, ensure_ascii=False) if meta else None


def pseudonym(user_id):
    salt = settings.EXPORT_PSEUDONYM_SALT
    return "ann-" + hashlib.sha256(f"{salt}:{user_id}".encode()).hexdigest()[:10]


def _parts(audit, names, every_claim=False):
    """every_claim: all claims of the audit's answers, not only a calibration sample's sampled ones (an answer's
    pass or fail needs every claim: the other claims of a sampled answer have no gold, so it stays undecided)."""
    items = list(
        AuditAnswer.objects.filter(audit=audit)
        .order_by("position")
        .values(
            "id",
            "answer_id",
            "answer__external_id",
            "answer__question",
            "answer__created_at",
            "answer__meta",
            "stratum",
            "inclusion_probability",
            "weight",
        )
    )
    # A calibration sample exports its sampled claims, each with its own stratum, probability and weight.
    design = {}
    if audit.is_calibration:
        rows = AuditClaim.objects.filter(audit=audit).values("claim_id", "stratum", "inclusion_probability", "weight")
        design = {r.pop("claim_id"): r for r in rows}
    claims = {}
    for cid, answer_id, position, text, meta in plain_rows(
        (Claim.objects.filter(answer__audit_items__audit=audit) if every_claim else audit.claims())
        .order_by("position")
        .values_list("id", "answer_id", "position", "text", "meta")
    ):
        c = {"id": cid, "position": position, "text": text, "meta": meta}
        claims.setdefault(answer_id, []).append(c | design.get(cid, {}))
    who = {}  # user id -> what the export calls them: one hash per person, not per row

    def named(user_id, username):
        if user_id not in who:
            who[user_id] = username if names else user_id and pseudonym(user_id)
        return who[user_id]

    gold = {
        claim_id: (verdict, evidence, passage, source, named(adjudicator, username), reason, recheck)
        for claim_id, verdict, evidence, passage, source, adjudicator, username, reason, recheck in plain_rows(
            GoldLabel.objects.filter(audit=audit).values_list(
                "claim_id",
                "verdict",
                "evidence_text",
                "evidence_passage__external_id",
                "source",
                "adjudicator_id",
                "adjudicator__username",
                "reason",
                "recheck",
            )
        )
    }
    people = {}
    for a in Assignment.objects.filter(audit_answer__audit=audit).values(
        "audit_answer_id", "slot", "annotator_id", "annotator__username", "status", "omission", "note"
    ):
        a["who"] = named(a["annotator_id"], a["annotator__username"])
        people[(a["audit_answer_id"], a["slot"])] = a
    submitted = Label.objects.filter(assignment__audit_answer__audit=audit, assignment__status="submitted")
    labels = {
        (item_id, slot, claim_id): (
            verdict,
            evidence,
            " ".join(f for f, on in zip(FLAGS, flags, strict=True) if on),
            note,
        )
        for item_id, slot, claim_id, verdict, evidence, note, *flags in plain_rows(
            submitted.values_list(
                "assignment__audit_answer_id",
                "assignment__slot",
                "claim_id",
                "verdict",
                "evidence_text",
                "note",
                *(f"flag_{f}" for f in FLAGS),
            )
        )
    }
    judge = latest_judge_verdicts(
        {"claim__answer__audit_items__audit": audit},
        fields=(
            "claim_id",
            "verdict",
            "raw_verdict",
            "evidence",
            "passage_external_id",
            "guard_passed",
            "judge_version__name",
            "judge_version__content_hash",
        ),
    )
    return items, claims, gold, people, labels, judge


def _submitted(people, item_id):
    """How many of the answer's two annotators have submitted it."""
    return sum(people.get((item_id, slot), {}).get("status") == SUBMITTED for slot in "AB")


def gold_status(gold_row, submitted):
    """A claim's gold_status: gold (or gold awaiting a re-check), or why it has none: an open dispute once both
    annotators submitted (agreed claims become gold then), else one or both labels still missing."""
    if gold_row is not None:
        return RECHECK if gold_row[6] else GOLD
    return PENDING[submitted]


def claim_rows(audit, *, names=False):
    items, claims, gold, people, labels, judge = _parts(audit, names)
    provisional, out = not audit.is_closed, []
    for it in items:
        for c in claims.get(it["answer_id"], []):
            j = judge.get(c["id"], {})
            row = [audit.name, it["answer__external_id"], c["id"], c["position"], c["text"]]
            row += gold.get(c["id"], NO_GOLD)[:6]  # verdict, evidence, passage, source, adjudicator, reason
            for slot in "AB":
                who = people.get((it["id"], slot), {}).get("who")
                row += [who, *labels.get((it["id"], slot, c["id"]), NO_LABEL)]  # verdict, evidence, flags, note
            version = ref_of(j["judge_version__name"], j["judge_version__content_hash"]) if j else None
            row += [
                j.get("verdict"),
                j.get("raw_verdict"),
                j.get("evidence"),
                j.get("passage_external_id"),
                j.get("guard_passed"),
                version,
                c.get("stratum", it["stratum"]),
                c.get("inclusion_probability", it["inclusion_probability"]),
                c.get("weight", it["weight"]),
                provisional,
                _meta_json(c["meta"]),
                gold_status(gold.get(c["id"]), _submitted(people, it["id"])),
            ]
            out.append(row)
    return out


def answer_rows(audit, *, names=False):
    items, claims, gold, people, _labels, _judge = _parts(audit, names, every_claim=True)
    provisional, out = not audit.is_closed, []
    for it in items:
        verdicts = [gold[c["id"]][0] for c in claims.get(it["answer_id"], []) if c["id"] in gold]
        counts = {v: verdicts.count(v) for v in Verdict.values}
        n_claims = len(claims.get(it["answer_id"], []))
        no_gold, bad = n_claims - len(verdicts), counts["unsupported"] + counts["contradicted"]
        pending = _pending(audit, claims.get(it["answer_id"], []), gold, _submitted(people, it["id"]))
        scored = sum(counts[v] for v in SCORED_VERDICTS)
        # Undecided while a claim still lacks gold and none is bad yet; no scored claim at all passes.
        strict = False if bad else (None if no_gold else True)
        lenient = False if counts["contradicted"] else (None if no_gold else True)
        gold_pass = lenient if audit.policy == "lenient" else strict
        omission = any(people.get((it["id"], s), {}).get("omission") for s in "AB")
        out.append(
            [
                audit.name,
                it["answer__external_id"],
                it["answer__question"],
                it["stratum"],
                it["weight"],
                it["inclusion_probability"],
                gold_pass,
                strict,
                lenient,
                audit.policy,
                n_claims,
                counts["supported"],
                counts["contradicted"],
                counts["unsupported"],
                counts["non_assertive"],
                no_gold,
                # Over the claims with gold only, a ratio would pass an incomplete answer off as a finished one.
                counts["supported"] / scored if scored and not no_gold else None,
                omission,
                people.get((it["id"], "A"), {}).get("note"),
                people.get((it["id"], "B"), {}).get("note"),
                provisional,
                not no_gold,
                *pending,
                it["answer__created_at"].isoformat(),
                json.dumps(it["answer__meta"], sort_keys=True, ensure_ascii=False) if it["answer__meta"] else None,
                people.get((it["id"], "A"), {}).get("who"),
                people.get((it["id"], "B"), {}).get("who"),
            ]
        )
    return out


def _pending(audit, claims, gold, submitted):
    """(open disputes, claims awaiting labels, gold marked for re-check) of one answer's claims. A calibration
    sample's answers also hold claims outside the sample (no "stratum" of their own): never labelled, never gold,
    they count in no_gold only."""
    sampled = [c for c in claims if not audit.is_calibration or "stratum" in c]
    statuses = [gold_status(gold.get(c["id"]), submitted) for c in sampled]
    waiting = statuses.count(PENDING[1]) + statuses.count(PENDING[0])
    return statuses.count(PENDING[2]), waiting, statuses.count(RECHECK)


# A spreadsheet runs a cell as a formula when it starts with = + - @ (also after leading whitespace, and in
# their fullwidth forms, which some spreadsheets fold), or treats a leading tab, CR or LF as a field break.
_FORMULA = re.compile(r"^(?:[\t\r\n]|\s*[=+\-@\uff1d\uff0b\uff0d\uff20])")


def _csv_cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value  # a spreadsheet would execute it
    return value


def to_csv(rows, columns):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow([name for name, _ in columns])
    w.writerows([_csv_cell(v) for v in row] for row in rows)
    return buf.getvalue().encode("utf-8")


def to_jsonl(rows, columns):
    names = [name for name, _ in columns]
    return "".join(
        json.dumps(dict(zip(names, row, strict=True)), ensure_ascii=False, allow_nan=False) + "\n" for row in rows
    ).encode("utf-8")


def to_parquet(rows, columns):
    return parquet.to_parquet(rows, columns)


WRITERS = {"csv": to_csv, "jsonl": to_jsonl, "parquet": to_parquet}


def export_bytes(audit, *, level="claim", fmt="csv", names=False):
    rows, columns = (
        (claim_rows(audit, names=names), CLAIM_COLUMNS)
        if level == "claim"
        else (answer_rows(audit, names=names), ANSWER_COLUMNS)
    )
    return WRITERS[fmt](rows, columns)


def file_name(audit, level, fmt):
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", audit.name).strip("-") or f"audit-{audit.pk}"
    return f"gold-{slug}-{level}{'' if audit.is_closed else '-provisional'}.{fmt}"
