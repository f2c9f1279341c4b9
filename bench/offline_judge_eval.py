"""How the offline baseline judge does against RAGTruth's human hallucination spans (no DB needed).

Runs the pure decompose/verify functions of audit.judge.offline on the demo sample, maps the human spans
onto the produced claims (overlaps a Conflict span -> contradicted, else a Baseless span -> unsupported,
else supported; a claim whose span cannot be located -> supported) and prints claim- and answer-level
agreement. Verdicts go through the evidence guard, as when stored.

    DEBUG=true .venv/bin/python bench/offline_judge_eval.py [--sweep] [--dump]
"""

import json
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
import django

django.setup()

from audit.judge import offline  # noqa: E402
from audit.judge.guard import evidence_guard  # noqa: E402
from audit.spans import locate  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "claimaudit" / "demo_data" / "ragtruth_qa_visible.jsonl"
GOLD = ["supported", "contradicted", "unsupported"]
JUDGED = [*GOLD, "non_assertive"]
BAD = {"contradicted", "unsupported"}
GUARD_FAILED = [0]  # the offline judge's own evidence must always pass the guard


def claims_with_spans(answer):
    """[(text, start, end)]: the decomposer's own spans when it gives them, else located as the store does."""
    if hasattr(offline, "decompose_spans"):
        return offline.decompose_spans(answer)
    out, cursor = [], 0
    for text in offline.decompose(answer):
        start, end = locate(answer, text, cursor)
        cursor = end if end is not None else cursor
        out.append((text, start, end))
    return out


def gold_verdict(start, end, labels):
    if start is None:
        return "supported"
    hit = [lab["label_type"] for lab in labels if lab["start"] < end and start < lab["end"]]
    if any("Conflict" in t for t in hit):
        return "contradicted"
    return "unsupported" if any("Baseless" in t for t in hit) else "supported"


def judge_rows(rows):
    """[(row, [(claim, gold, judged, raw verdict dict)])]."""
    out = []
    for row in rows:
        passages = [(p["id"], p["text"]) for p in row["passages"]]
        texts = dict(passages)
        claims = []
        for text, start, end in claims_with_spans(row["answer"]):
            v = offline.verify(passages, text)
            scored, passed = evidence_guard(v["verdict"], v["evidence"], texts.get(v["passage_id"]))
            GUARD_FAILED[0] += passed is False
            claims.append((text, gold_verdict(start, end, row["human_labels"]), scored, v))
        out.append((row, claims))
    return out


def figures(judged):
    pairs = [(g, j) for _, claims in judged for _, g, j, _ in claims]
    per_answer = [len(claims) for _, claims in judged]
    scored = [(g, j) for g, j in pairs if j != "non_assertive"]
    gold_bad = [(g, j) for g, j in pairs if g in BAD]
    judge_bad = [(g, j) for g, j in pairs if j in BAD]
    human_fail = [bool(row["human_labels"]) for row, _ in judged]
    judge_fail = [any(j in BAD for _, _, j, _ in claims) for _, claims in judged]
    agree = sum(h == j for h, j in zip(human_fail, judge_fail, strict=True))
    return {
        "n_answers": len(judged),
        "n_claims": len(pairs),
        "per_answer": per_answer,
        "matrix": Counter(pairs),
        "accuracy": (sum(g == j for g, j in scored), len(scored)),
        "binary": (sum((g in BAD) == (j in BAD) for g, j in pairs), len(pairs)),
        "bad_recall": (sum(j in BAD for _, j in gold_bad), len(gold_bad)),
        "bad_precision": (sum(g in BAD for g, _ in judge_bad), len(judge_bad)),
        "judge_fail": sum(judge_fail),
        "human_fail": sum(human_fail),
        "answer_agree": agree,
        "both_fail": sum(h and j for h, j in zip(human_fail, judge_fail, strict=True)),
    }


def pct(a, b):
    return f"{a}/{b} = {a / b:.1%}" if b else f"{a}/0"


def report(f):
    n, per = f["n_answers"], sorted(f["per_answer"])
    print(f"judge {offline.NAME} threshold {offline.THRESHOLD}")
    print(
        f"claims: {f['n_claims']} over {n} answers, per answer mean {f['n_claims'] / n:.2f}, "
        f"median {per[n // 2]}, min {per[0]}, max {per[-1]}"
    )
    print("claim confusion (rows human-derived, columns judge after guard):")
    print(f"  {'':>13}" + "".join(f"{c:>14}" for c in JUDGED))
    for g in GOLD:
        print(f"  {g:>13}" + "".join(f"{f['matrix'][(g, j)]:>14}" for j in JUDGED))
    print(f"claim accuracy (3 verdicts, scored claims): {pct(*f['accuracy'])}")
    print(f"claim accuracy (bad vs not bad, all claims): {pct(*f['binary'])}")
    print(f"recall of bad claims: {pct(*f['bad_recall'])}; precision of bad claims: {pct(*f['bad_precision'])}")
    print(
        f"answer fail rate: judge {pct(f['judge_fail'], n)}, human {pct(f['human_fail'], n)}; "
        f"both fail {f['both_fail']}"
    )
    print(f"answer-level agreement: {pct(f['answer_agree'], n)}")
    print(f"verdicts failing the evidence guard: {GUARD_FAILED[0]}")


def sweep(rows):
    """Claim and answer figures per threshold; balanced accuracy = mean of bad-claim recall and
    good-claim specificity, the figure the threshold is chosen on (bad claims are 7% of claims)."""
    print("threshold  claims  acc3    bal-acc  bad-recall  bad-prec  judge-fail  caught  answer-agree")
    for t in (0.4, 0.45, 0.5, 0.525, 0.55, 0.575, 0.6, 0.65, 0.7, 0.75, 0.8):
        offline.THRESHOLD = t
        f = figures(judge_rows(rows))
        r = f["bad_recall"][0] / max(1, f["bad_recall"][1])
        p = f["bad_precision"][0] / max(1, f["bad_precision"][1])
        good = [(g, j) for (g, j), n in f["matrix"].items() for _ in range(n) if g not in BAD]
        specificity = sum(j not in BAD for _, j in good) / max(1, len(good))
        print(
            f"{t:>9}  {f['n_claims']:>6}  {f['accuracy'][0] / f['accuracy'][1]:.3f}   {(r + specificity) / 2:.3f}"
            f"    {r:.3f}       {p:.3f}     {f['judge_fail']:>4}/{f['n_answers']}   "
            f"{f['both_fail']:>2}/{f['human_fail']}   {f['answer_agree']}/{f['n_answers']}"
        )


def dump(judged):
    for row, claims in judged:
        print(f"\n== {row['id']} human_fail={bool(row['human_labels'])}")
        for text, g, j, v in claims:
            mark = "  " if g == j or (j == "non_assertive" and g == "supported") else "!!"
            print(f"{mark} gold={g:<12} judge={j:<13} {text!r}  [{v['reason']}]")


def main():
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    if "--sweep" in sys.argv:
        sweep(rows)
        return
    judged = judge_rows(rows)
    if "--dump" in sys.argv:
        dump(judged)
    report(figures(judged))


if __name__ == "__main__":
    main()
