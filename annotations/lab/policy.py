"""The headline fail rate under both policies, from the report's per-answer gold counts. Pure, no ORM."""

from statsmodels.stats.proportion import proportion_confint

from audit.models.audits import Policy

BAD_COUNTS = {Policy.STRICT: ("n_contradicted", "n_unsupported"), Policy.LENIENT: ("n_contradicted",)}


def policy_headlines(answers, chosen):
    """answers: one row per answer with complete gold (n_contradicted, n_unsupported, weight).
    Per policy: fails, n, the sampled rate with its Wilson 95% CI, and the weighted rate sum(w fail) / sum(w)."""
    out = []
    n = len(answers)
    for policy in (Policy.STRICT, Policy.LENIENT):
        fail = (answers[list(BAD_COUNTS[policy])].sum(axis=1) > 0).to_numpy() if n else []
        x = int(sum(fail))
        lo, hi = (float(c) for c in proportion_confint(x, n, method="wilson")) if n else (None, None)
        w = answers["weight"].astype(float).to_numpy() if n else None
        weighted = float((w * fail).sum() / w.sum()) if n and w.sum() > 0 else None
        out.append(
            {
                "policy": policy.value,
                "label": policy.label,
                "chosen": policy.value == chosen,
                "fails": x,
                "n": n,
                "rate": x / n if n else None,
                "ci": [lo, hi],
                "weighted_rate": weighted,
            }
        )
    return out
