"""The audit report, built by section: each section builder (faithfulness, agreement, judge, trend,
effort) returns its final, JSON-safe shape with the links behind its counts. The page, the JSON download
and the htmx judge fragment use the same builders; the fragment builds only the judge section."""

from dataclasses import dataclass
from functools import cached_property

import pandas as pd
from django.conf import settings

from annotations.lab.calibration import calibration_report
from annotations.lab.policy import policy_headlines
from annotations.report import selectors
from annotations.report.frames import audit_unsampled, pick_version, tables
from annotations.report.links import Links
from annotations.report.sections import agreement, effort, faithfulness, judge, trend
from annotations.report.stats_bootstrap import RESAMPLES, Resampler

METHODS = [
    "An answer fails when any gold claim is unsupported or contradicted; non_assertive claims are not scored; "
    "an answer with no scored claim passes. Complete-gold figures count answers whose every claim has gold.",
    "While gold is incomplete the headline is provisional: over every answer labelled by both annotators, the "
    "fail rate if every open dispute resolves as pass and as fail, and each annotator's own fail rate.",
    "Fail-rate CIs: Wilson 95% for sample rates. Population-weighted fail rate: stratified estimator sum W_h p_h "
    "over the strata with data (W_h = N_h / N covered), design-based variance with finite population correction, "
    "Korn-Graubard 95% interval (Clopper-Pearson on the effective sample size, Korn and Graubard 1998) with the "
    "design effect. Strata without data are listed; if one holds more than REPORT_MIN_STRATUM_SHARE of the "
    "population the estimate is not computable.",
    "Week over week: z-test on the population-weighted rates with their design-based variances (the pooled "
    "two-proportion z-test when both audits are self-weighting); when an expected "
    "count is below 10, a permutation test on the 0/1 fail indicator (exact for self-weighting designs, within "
    "strata otherwise). Provisional audits never raise a regression.",
    f"Agreement CIs: percentile bootstrap resampling answers (clusters), not claims, {RESAMPLES} resamples; the "
    "Monte-Carlo error of each bound is printed with it. Kappa and AC1 are not informative when a rater used "
    "a single verdict.",
    "Judge statistics use claims with both gold and a judge verdict (after the evidence guard); a claim "
    "without a verdict appears in the matrix row 'none'. Population-weighted figures weight each claim by "
    "its answer's sampling weight. The noise floor compares the judge with each annotator against gold on the "
    "same claims; the gap to the better annotator has a paired cluster-bootstrap interval. No conclusion is drawn "
    "while no gold on those claims is adjudicated (each annotator then agrees with gold by construction) or while "
    "disputes are open (the claims the annotators disagree on are missing).",
]


@dataclass
class Inputs:
    audit: object
    versions: list
    version: dict | None
    f: dict
    cl: pd.DataFrame
    answers: pd.DataFrame
    subm: pd.DataFrame
    links: Links
    seed: int
    resamples: int = RESAMPLES

    @cached_property
    def unsampled(self):
        """The design's strata drawn with no answer."""
        return audit_unsampled(self.audit, set(self.answers["stratum"]))

    @cached_property
    def resampler(self):
        """One set of bootstrap resamples of the audit's answers, shared by every figure of the report."""
        return Resampler(self.answers["answer_id"], self.resamples, self.seed)


def inputs(audit, judge_version_id, *, judged=True):
    versions = selectors.judge_versions(audit) if judged else []
    version = pick_version(versions, judge_version_id)
    f, cl, answers, subm = tables(audit, version)
    return Inputs(audit, versions, version, f, cl, answers, subm, Links(audit.id, version), int(audit.seed) % 2**32)


def _audit(audit):
    return {
        "id": audit.id,
        "name": audit.name,
        "status": audit.status,
        "size": audit.size,
        "population_size": audit.population_size,
        "created_at": audit.created_at.isoformat(),
    }


def _coverage(x):
    cl = x.cl
    return {
        "answers": len(x.answers),
        "answers_complete_gold": int(x.answers["complete"].sum()),
        "claims": len(cl),
        "claims_with_gold": int(cl["gold"].notna().sum()),
        "claims_labelled_twice": int((cl["A"].notna() & cl["B"].notna()).sum()),
        # Adjudicated gold whose labels changed since (a reopened answer): it counts until decided again.
        "gold_recheck": int(x.f["gold"]["recheck"].astype(bool).sum()),
    }


def build_report(audit, judge_version_id=None):
    x = inputs(audit, judge_version_id)
    return {
        "audit": _audit(audit),
        "coverage": _coverage(x),
        "faithfulness": faithfulness.build(x),
        # Answer-level fail rates, which a calibration sample (claims drawn) does not support: see faithfulness.
        "policies": []
        if audit.is_calibration
        else policy_headlines(
            x.answers, audit.policy, min_share=settings.REPORT_MIN_STRATUM_SHARE, unsampled=x.unsampled
        ),
        "calibration": calibration_report(audit),
        "agreement": agreement.build(x),
        "judge": judge.build(x),
        "trend": trend.build(x),
        "effort": effort.build(x),
        "methods": METHODS,
    }


def build_judge(audit, judge_version_id=None):
    """Only the judge section (the htmx version switch)."""
    return {"judge": judge.build(inputs(audit, judge_version_id))}


MINE_WHILE_OPEN = ("annotator", "name", "claims", "answers", "median_minutes")


def build_mine(audit, user_id):
    """One annotator's own figures (no judge data, no other annotator's figures). While the audit is open only
    the effort: agreement with gold or with the other annotator would move as the other's labels come in, and
    tell, answer by answer, how they labelled (labels stay blind until the audit closes)."""
    rows, pairs = effort.annotators(inputs(audit, None, judged=False), only=user_id)
    if not audit.is_closed:
        return {"annotators": [{k: r[k] for k in MINE_WHILE_OPEN} for r in rows], "pairs": [], "blind": True}
    return {"annotators": rows, "pairs": [p | {"names": ["you", "another annotator"]} for p in pairs]}
