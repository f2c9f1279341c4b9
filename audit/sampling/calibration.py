"""The claim-level calibration sample: claims drawn stratified by a judge version's verdict (supported,
contradicted, unsupported; optionally crossed with a metadata field), equal allocation (capped at a
stratum's size, the rest spread over the others), reproducible from the seed. Each claim keeps its
inclusion probability n_h / N_h and weight N_h / n_h; its answers enter the audit so that annotators see
the whole answer, and label only the sampled claims."""

import random
import secrets

from django.core.exceptions import ValidationError
from django.db import transaction

from audit.models import SCORED_VERDICTS, Audit, AuditAnswer, AuditClaim, JudgeVerdict
from audit.sampling.allocation import design_table
from audit.sampling.population import StrataError, check_meta_keys, meta_json, meta_path_ok
from audit.sampling.population import population as answer_population

VERDICTS = SCORED_VERDICTS
DEFAULT_SIZE = 200


def population(dataset, version, meta_field=None):
    """{stratum: [claim ids]} of the dataset's claims the version judged with one of the three verdicts."""
    fields = ["claim_id", "verdict"] + (["_meta"] if meta_field else [])
    rows = JudgeVerdict.objects.filter(judge_version=version, claim__answer__dataset=dataset, verdict__in=VERDICTS)
    if meta_field:  # a path into nested metadata: a.b
        rows = rows.annotate(_meta=meta_json(meta_field, "claim__answer__meta"))
    out = {}
    for row in rows.values_list(*fields).order_by("claim_id"):
        stratum = row[1] if not meta_field else f"{row[1]} | meta.{meta_field}={row[2]}"
        out.setdefault(stratum, []).append(row[0])
    return out


def allocate_equal(sizes, n):
    """{stratum: n_h}: n split equally, no stratum above its size, the remainder spread over the others."""
    alloc, open_ = dict.fromkeys(sizes, 0), sorted(sizes)
    left = min(n, sum(sizes.values()))
    while left and open_:
        share, extra = divmod(left, len(open_))
        for i, s in enumerate(open_):
            alloc[s] += min(share + (i < extra), sizes[s] - alloc[s])
        left = min(n, sum(sizes.values())) - sum(alloc.values())
        open_ = [s for s in open_ if alloc[s] < sizes[s]]
    return alloc


def draw(strata, alloc, seed):
    """{stratum: sorted sampled claim ids}: each stratum drawn with its own seeded generator."""
    return {s: sorted(random.Random(f"{seed}:{s}").sample(ids, alloc[s])) for s, ids in strata.items() if alloc[s]}


def design_rows(strata, alloc):
    """The design table (Audit.design), one row per stratum in label order, as audits of answers have it."""
    labels = sorted(strata)
    return design_table([(s, len(strata[s])) for s in labels], [alloc[s] for s in labels])


def calibration_audit_create(*, name, dataset, version, size=DEFAULT_SIZE, seed=None, meta_field=None, user=None):
    if version.level != "claim":
        raise ValidationError("A calibration sample needs a claim-level judge version.")
    if meta_field and not meta_path_ok(meta_field):
        raise ValidationError(f"Metadata field {meta_field!r}: use letters, digits, '_' or '-' (a.b: nested).")
    if Audit.objects.filter(name=name).exists():
        raise ValidationError({"name": f"an audit named {name!r} already exists"})
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    strata = population(dataset, version, meta_field)
    if not strata:
        raise ValidationError(
            {"judge_version": f"{version.label} has no verdicts on the claims of {dataset.name}: judge the dataset "
             "with this version first, or choose a version that judged it"}
        )  # fmt: skip
    if meta_field:
        try:  # a misspelt field would make one "meta.x=None" stratum of every claim of a verdict
            check_meta_keys(answer_population(dataset), [f"meta.{meta_field}"])
        except StrataError as e:
            raise ValidationError({"meta_field": str(e)}) from None
    if len(strata) > size:  # equal shares of less than one claim: the first strata by name would take them all
        raise ValidationError(
            {"size": f"{len(strata)} strata share {size} claims: raise the size to {len(strata)} or stratify by "
             "fewer values"}
        )  # fmt: skip
    alloc = allocate_equal({s: len(ids) for s, ids in strata.items()}, size)
    picked = draw(strata, alloc, seed)
    design = design_rows(strata, alloc)
    rows = {r["stratum"]: r for r in design}
    with transaction.atomic():
        audit = Audit.objects.create(
            name=name, dataset=dataset, kind="claims", calibration_judge=version, size=size, seed=seed,
            allocation=Audit.Allocation.EQUAL,
            population_size=sum(len(ids) for ids in strata.values()), strata_keys=["judge_verdict"] + (
                [f"meta.{meta_field}"] if meta_field else []),
            design=design,
            created_by=user,
        )  # fmt: skip
        AuditClaim.objects.bulk_create(
            AuditClaim(
                audit=audit,
                claim_id=cid,
                stratum=s,
                stratum_population=rows[s]["population"],
                stratum_sample=rows[s]["sample"],
                inclusion_probability=rows[s]["inclusion_probability"],
                weight=rows[s]["weight"],
            )
            for s, ids in picked.items()
            for cid in ids
        )
        answers = sorted(set(audit.claims().values_list("answer_id", flat=True)))
        AuditAnswer.objects.bulk_create(
            AuditAnswer(
                audit=audit,
                answer_id=a,
                position=i,
                stratum="calibration",
                stratum_population=len(answers),
                stratum_sample=len(answers),
                inclusion_probability=1.0,
                weight=1.0,
            )  # fmt: skip
            for i, a in enumerate(answers)
        )
    return audit
