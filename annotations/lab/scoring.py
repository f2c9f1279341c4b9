"""Scoring a judge version against adjudicated gold, from plain rows (no ORM): claim level, answer level,
the human noise floor, two versions side by side, and the disagreements. Figures are given as sampled
and population-weighted (domain_weights: each stratum of each audit stands for its population N_h with the units
the figure has data on)."""

from annotations.lab import stats
from annotations.report.stats_common import BAD, VERDICTS
from audit.policy import FAILING

PASS_FAIL = ["fail", "pass"]


NO_CLAIMS = "no gold claim judged by this version"
NO_ANSWERS = "no answer with complete gold judged by this version"


def _both(pred, gold, weights, labels, bad, **words):
    """words: classification's `empty` and `bad_name`, the reasons its figures give."""
    return {
        "sampled": stats.classification(stats.confusion(pred, gold, labels), labels, bad, **words),
        "weighted": stats.classification(stats.confusion(pred, gold, labels, weights), labels, bad, **words),
        "matrix": stats.confusion(pred, gold, labels).astype(int).tolist(),
        "labels": labels,
    }


def domain_weights(rows, claimless=()):
    """Per row, N_h / n_h: n_h the distinct units (r["unit"]) of its audit's stratum h among rows and claimless (the
    sampled answers without a claim, selectors.claimless_answers: no missing data, as in the report). The weight
    stored at drawing, N_h / (n_h drawn), would shrink a stratum of which a version judged only some units, and tilt
    the pooled figure towards the strata it covered. rows: dicts with audit_id, stratum, population (N_h) and unit."""
    seen = {}
    for r in [*rows, *claimless]:
        seen.setdefault((r["audit_id"], r["stratum"]), set()).add(r["unit"])
    return [r["population"] / len(seen[(r["audit_id"], r["stratum"])]) for r in rows]


def claim_level(items, verdicts, numeric=None, claimless=()):
    """items: gold rows (selectors.gold_items); verdicts: {claim_id: (verdict, numeric_passed)}.
    numeric="flagged" keeps only verdicts the numeric guard flagged, "unflagged" the others."""
    rows = [r for r in items if r["claim_id"] in verdicts and _numeric_ok(verdicts[r["claim_id"]][1], numeric)]
    out = _both(
        [verdicts[r["claim_id"]][0] for r in rows], [r["verdict"] for r in rows], domain_weights(rows, claimless),
        VERDICTS, BAD, empty=NO_CLAIMS, bad_name="bad claim",
    )  # fmt: skip
    return out | {"judged": len(rows), "not_judged": sum(r["claim_id"] not in verdicts for r in items)}


def _numeric_ok(flag, numeric):
    return numeric is None or (flag is False) == (numeric == "flagged")


def gold_answers(items, claim_counts, policy, claimless=()):
    """{(audit_id, answer_id): (fails, design)} for answers whose every claim has gold, and the answers without a claim
    (claimless: selectors.claimless_answers), which pass; design: the answer's stratum and population
    (domain_weights' row)."""
    seen, failing = {}, FAILING[policy]
    for r in items:
        key = (r["audit_id"], r["answer_id"])
        design = {
            "audit_id": key[0],
            "unit": key[1],
            "stratum": r["answer_stratum"],
            "population": r["answer_population"],
        }
        n, fails, d = seen.get(key, (0, False, design))
        seen[key] = (n + 1, fails or r["verdict"] in failing, d)
    gold = {k: (f, d) for k, (n, f, d) in seen.items() if n >= claim_counts.get(k, 0)}
    for r in claimless:
        design = {
            "audit_id": r["audit_id"],
            "unit": r["answer_id"],
            "stratum": r["stratum"],
            "population": r["population"],
        }
        gold[(r["audit_id"], r["answer_id"])] = (False, design)
    return gold


def judged_answers(fails, level, claimless=()):
    """fails ({answer_id: fails}, selectors.answer_verdicts) with what a claim-level version says of the answers without
    a claim: it has nothing to verify there, and an answer with no scored claim passes (the report's rule). An
    answer-level version scores such an answer itself: only its own verdicts count."""
    if level != "claim":
        return fails
    return {r["answer_id"]: False for r in claimless} | fails


def answer_level(gold, judge_fails):
    """gold from gold_answers; judge_fails: {answer_id: fails} (either kind of judge)."""
    keys = [k for k in gold if k[1] in judge_fails]
    label = {True: "fail", False: "pass"}
    out = _both(
        [label[judge_fails[k[1]]] for k in keys], [label[gold[k][0]] for k in keys],
        domain_weights([gold[k][1] for k in keys]),
        PASS_FAIL, ("fail",), empty=NO_ANSWERS, bad_name="failing answer",
    )  # fmt: skip
    return out | {"judged": len(keys), "not_judged": len(gold) - len(keys)}


def noise_floor(items, labels, verdicts):
    """On the gold claims both annotators labelled and the judge judged: judge vs gold next to A vs B
    (`why`: the reason the comparison is not computable, None when it is)."""
    rows = [r for r in items if r["claim_id"] in verdicts and len(labels.get((r["audit_id"], r["claim_id"]), {})) == 2]
    judge = [verdicts[r["claim_id"]][0] for r in rows]
    a = [labels[(r["audit_id"], r["claim_id"])]["A"] for r in rows]
    b = [labels[(r["audit_id"], r["claim_id"])]["B"] for r in rows]
    gold = [r["verdict"] for r in rows]

    def pair(x, y):
        t = stats.confusion(x, y, VERDICTS)
        (k, k_why), (ac1, ac1_why) = stats.kappa(t), stats.ac1(t)
        return {"agree": int(t.trace()), "accuracy": stats.classification(t, VERDICTS)["accuracy"],
                "kappa": k, "ac1": ac1, "why": {"kappa": k_why, "ac1": ac1_why}}  # fmt: skip

    why = None if rows else "not computable: no gold claim both annotators labelled was judged by this version"
    return {"n": len(rows), "judge": pair(judge, gold), "annotators": pair(a, b), "why": why}


def compare(items, verdicts_a, verdicts_b, *, resamples=2000, seed=0):
    """Two claim-level versions on the gold claims both judged: McNemar exact on right / wrong, and the
    paired cluster bootstrap (answers resampled) of the accuracy difference a - b."""
    rows = [r for r in items if r["claim_id"] in verdicts_a and r["claim_id"] in verdicts_b]
    ra = [verdicts_a[r["claim_id"]][0] == r["verdict"] for r in rows]
    rb = [verdicts_b[r["claim_id"]][0] == r["verdict"] for r in rows]
    return _paired([(r["audit_id"], r["answer_id"]) for r in rows], ra, rb, resamples, seed)


def compare_answers(gold, fails_a, fails_b, *, resamples=2000, seed=0):
    """Two versions of any kind on the answers with complete gold that both judged."""
    keys = [k for k in gold if k[1] in fails_a and k[1] in fails_b]
    ra = [fails_a[k[1]] == gold[k][0] for k in keys]
    rb = [fails_b[k[1]] == gold[k][0] for k in keys]
    return _paired(keys, ra, rb, resamples, seed, "answers")


def _paired(clusters, ra, rb, resamples, seed, items="claims"):
    only_a = sum(a and not b for a, b in zip(ra, rb, strict=True))
    only_b = sum(b and not a for a, b in zip(ra, rb, strict=True))
    diff, ci = stats.paired_cluster_bootstrap(
        [f"{c[0]}:{c[1]}" for c in clusters], ra, rb, resamples=resamples, seed=seed
    )
    p = stats.mcnemar_exact(only_a, only_b)
    return {
        "n": len(ra),
        "right_a": sum(ra),
        "right_b": sum(rb),
        "only_a": only_a,
        "only_b": only_b,
        "mcnemar_p": p,
        "difference": diff,
        "ci": ci,
        "why": _paired_why(len(ra), p, ci, items, single=len(set(clusters)) < 2),
    }


def _paired_why(n, p, ci, items, single=False):
    """The reason of each paired figure that is None (every one of them when no item is shared); single: the items
    are of one answer (else an interval is missing because every resample gave the same difference)."""
    if not n:
        none = f"not computable: no shared {items}"
        return {"mcnemar_p": none, "difference": none, "ci": none}
    return {
        "mcnemar_p": None
        if p is not None
        else f"not computable: no discordant pair (the two versions are right on the same {items})",
        "difference": None,
        "ci": None
        if ci is not None
        else "not computable: a single answer (the bootstrap resamples answers)"
        if single
        else "not computable: every resample of answers gives the same difference (no spread)",
    }


def disagreements(items, verdicts, *, pair=None, numeric=None):
    """Gold claims on which the version's verdict differs from gold; pair="judge:gold" keeps one cell."""
    out = []
    for r in items:
        v = verdicts.get(r["claim_id"])
        if v is None or v[0] == r["verdict"] or not _numeric_ok(v[1], numeric):
            continue
        if pair and pair != f"{v[0]}:{r['verdict']}":
            continue
        out.append(r | {"judge": v[0], "numeric_flagged": v[1] is False})
    return out
