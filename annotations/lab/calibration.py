"""Figures of a claim-level calibration sample: the judge's verdict against gold on the sampled claims,
as sampled and weighted by inverse inclusion probability (a stratified sample by the judge's verdict
over-represents the rare, hard verdicts: raw agreement is not the population's)."""

from collections import Counter

import numpy as np
from django.conf import settings

from annotations.lab import scoring, stats
from annotations.models import GoldLabel
from annotations.report.stats_faithfulness import uncovered
from annotations.report.stats_judge import domain_weights
from audit.models import AuditClaim, JudgeVerdict


def calibration_figures(rows):
    """rows: [(judge verdict, gold verdict, weight)] -> the confusion matrix counted and weighted, and the
    classification figures of each (rows of the matrices: judge; columns: gold)."""
    judge, gold, weights = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
    labels = scoring.VERDICTS
    counted, weighted = stats.confusion(judge, gold, labels), stats.confusion(judge, gold, labels, weights)
    return {
        "labels": labels,
        "n": len(rows),
        "matrix": counted.astype(int).tolist(),
        "matrix_weighted": weighted.tolist(),
        "table": [
            {
                "judge": j,
                "cells": [{"count": int(counted[i, k]), "weighted": float(weighted[i, k])} for k in range(len(labels))],
            }
            for i, j in enumerate(labels)
        ],
        "sampled": stats.classification(counted, labels, scoring.BAD),
        "weighted": stats.classification(weighted, labels, scoring.BAD),
    }


def calibration_rows(design, audit):
    """[(claim id, judge verdict, gold verdict, weight)] of the sampled claims (design: {claim id: (stratum, N_h)})
    with gold and a verdict of the audit's judge. The weight is N_h / (the stratum's claims among these rows), not
    the one stored at drawing: a stratum with claims still without gold keeps its whole share of the population."""
    gold = dict(GoldLabel.objects.filter(audit=audit, claim_id__in=list(design)).values_list("claim_id", "verdict"))
    judge = dict(
        JudgeVerdict.objects.filter(
            judge_version_id=audit.calibration_judge_id, claim__calibration_items__audit=audit
        ).values_list("claim_id", "verdict")
    )
    ids = [c for c in sorted(design) if c in gold and c in judge]
    strata = [design[c][0] for c in ids]
    weights = domain_weights(strata, dict(design.values()), Counter(strata))
    return [(c, judge[c], gold[c], w) for c, w in zip(ids, weights, strict=True)]


def uncovered_why(design, rows_ids, min_share):
    """Why the weighted figures are not computable: a judge-verdict stratum above min_share of the population has
    no claim with gold and a verdict yet (the other strata alone would read as the population), or None."""
    population, covered = {h: N for h, N in design.values()}, {design[c][0] for c in rows_ids}
    groups = [(h, N, int(h in covered)) for h, N in sorted(population.items())]
    return uncovered(groups, min_share, "claim with gold and a verdict")


def calibration_report(audit):
    if not audit.is_calibration:
        return None
    rows = AuditClaim.objects.filter(audit=audit).values_list("claim_id", "stratum", "stratum_population")
    design = {c: (h, N) for c, h, N in rows}
    scored = calibration_rows(design, audit)
    out = calibration_figures([r[1:] for r in scored])
    why = uncovered_why(design, [r[0] for r in scored], settings.REPORT_MIN_STRATUM_SHARE)
    if why:  # every weighted figure goes, the matrix's weighted cells too: they are the same estimate, cell by cell
        out["weighted"] = stats.classification(
            np.zeros((len(out["labels"]),) * 2), out["labels"], scoring.BAD, empty=why
        )
        out["matrix_weighted"] = None
        for row in out["table"]:
            for cell in row["cells"]:
                cell["weighted"] = None
    out["weighted_why"] = f"not computable: {why}" if why else None
    return out | {"judge": str(audit.calibration_judge), "claims_sampled": len(design)}
