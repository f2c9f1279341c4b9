"""The headline fail rate under both policies, from the report's per-answer gold counts. Pure, no ORM."""

from statsmodels.stats.proportion import proportion_confint

from annotations.report.stats_faithfulness import COMPLETE, strata_groups, stratified_proportion
from audit.models.audits import Policy

BAD_COUNTS = {Policy.STRICT: ("n_contradicted", "n_unsupported"), Policy.LENIENT: ("n_contradicted",)}


def policy_headlines(answers, chosen, *, min_share=0.05, unsampled=()):
    """answers: one row per sampled answer (complete, the gold counts, stratum, stratum_population); unsampled:
    (stratum, N_h) of the design's strata drawn with no answer. Per policy: fails and n over the answers with
    complete gold (of `sampled`, all the sampled answers: while gold is incomplete these n are a passing-heavy
    subset, and the report carries the headline's provisional warning), the sampled rate with its Wilson 95% CI,
    and the population-weighted rate with the estimator and interval of the report's headline (stratified over
    the strata with data, never over a blocking gap)."""
    out = []
    done = answers["complete"].astype(bool)
    n = int(done.sum())
    for policy in (Policy.STRICT, Policy.LENIENT):
        fail = (answers[list(BAD_COUNTS[policy])].sum(axis=1) > 0).astype(int)
        x = int(fail[done].sum())
        lo, hi = (float(c) for c in proportion_confint(x, n, method="wilson")) if n else (None, None)
        weighted = None
        if n:
            weighted = stratified_proportion(strata_groups(answers, fail, done, unsampled), min_share, COMPLETE)
        out.append(
            {
                "policy": policy.value,
                "label": policy.label,
                "chosen": policy.value == chosen,
                "fails": x,
                "n": n,
                "sampled": len(answers),
                "rate": x / n if n else None,
                "ci": [lo, hi],
                "weighted_rate": weighted["value"] if weighted else None,
                "weighted_ci": weighted["ci"] if weighted else None,
                "weighted_why": weighted["why"] if weighted else f"not computable: no {COMPLETE}",
            }
        )
    return out
