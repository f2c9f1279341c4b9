"""Writes for audits: draw the sample and save the frozen snapshot."""

import secrets

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from audit import history
from audit.guidelines.services import guidelines_inherit
from audit.models import Audit, AuditAnswer
from audit.sampling import allocation
from audit.sampling import population as pop
from audit.sampling.draw import draw, strata_counts
from audit.sampling.judgements import judgements_sync

SEED_MAX = 2**62  # largest seed accepted; random seeds stay short enough to read out
RANDOM_SEED_MAX = 2**31


def _judge_version_id(dataset, keys, population_filter):
    if "judge" not in keys:
        return None
    if population_filter.get("judge_version"):
        return int(population_filter["judge_version"])
    version = pop.default_judge_version(dataset)
    return version.id if version else None


def _judge_version_synced(dataset, keys, population_filter):
    """The judge version to stratify by, with its per-answer outcomes brought up to date."""
    jv = _judge_version_id(dataset, keys, population_filter)
    if jv is not None:
        judgements_sync(jv)
    return jv


def check_inputs(population_filter, size, min_per_stratum):
    """Refuse contradictory design inputs, naming the field: a date window that ends before it starts (it
    selects nothing), a minimum per stratum larger than the whole sample."""
    f = population_filter or {}
    if f.get("created_from") and f.get("created_to") and str(f["created_from"]) > str(f["created_to"]):
        start, end = f["created_from"], f["created_to"]
        raise ValidationError({"created_to": f"ends ({end}) before the window starts ({start}): it holds no answer"})
    if min_per_stratum > size:
        raise ValidationError(
            {"min_per_stratum": f"at least {min_per_stratum} per stratum cannot fit in a sample of {size}"}
        )


def audit_preview(
    *,
    dataset,
    population_filter=None,
    strata_keys=(),
    allocation_method="proportional",
    size=150,
    min_per_stratum=0,
    expected_fail_rates=None,
    seed=0,
):
    """The design without saving anything: {population_size, design: [rows], judge_version_id, strata,
    notes: [{field, message}] (see design_notes)}. ValidationError naming the field for contradictory inputs.
    seed orders ties in the allocation's rounding (the audit's own seed when it is created)."""
    f = dict(population_filter or {})
    check_inputs(f, size, min_per_stratum)
    keys = pop.parse_strata_keys(strata_keys)
    pop.check_meta_keys(pop.population(dataset, f), keys)
    fields = pop.meta_fields(pop.population(dataset, f))
    jv = _judge_version_synced(dataset, keys, f)
    strata = strata_counts(pop.population(dataset, f), keys, jv)
    labelled = [(label, N) for label, _, N in strata]
    rates = allocation.resolve_fail_rates([lb for lb, _ in labelled], expected_fail_rates)
    sizes = allocation.allocate(
        labelled, size, allocation_method, min_per_stratum=min_per_stratum, fail_rates=rates, seed=seed
    )
    neyman_rates = rates if allocation_method == allocation.NEYMAN else None
    table = allocation.design_table(labelled, sizes, neyman_rates)
    notes = allocation.design_notes(labelled, sizes, size, min_per_stratum, neyman_rates)
    if not sum(N for _, N in labelled):
        notes.insert(0, allocation.note(emptied_by(f), EMPTY_POPULATION))
    elif "judge" in keys and jv is None:
        notes.insert(0, allocation.note("strata", NO_JUDGE))
    unused = allocation.unmatched_rates([lb for lb, _ in labelled], expected_fail_rates) if neyman_rates else []
    if unused and any(N for _, N in labelled):
        message = f"no stratum matches {', '.join(repr(k) for k in unused)}: the default rate applies instead"
        notes.append(allocation.note("fail_rates", message))
    return {
        "population_size": sum(N for _, N in labelled),
        "sample_size": sum(sizes),
        "design": table,
        "judge_version_id": jv,
        "strata": strata,
        "sizes": sizes,
        "keys": keys,
        "filter": f,
        "meta_fields": fields,
        "notes": notes,
    }


NO_JUDGE = (
    "no judge version has verdicts on this dataset, so the judge key puts every answer in judge=unjudged: "
    "run the judge on the dataset first, or stratify by other keys"
)
EMPTY_POPULATION = "no answer of the dataset is in this population: nothing to sample (widen the filter)"


def emptied_by(population_filter):
    """The field most likely to have emptied the population: the metadata filter, else the date window, else
    the exclusion of audited answers, else the dataset itself."""
    f = population_filter or {}
    if f.get("meta"):
        return "meta_filters"
    if f.get("created_from") or f.get("created_to"):
        return "created_from"
    return "exclude_audited" if f.get("exclude_audited") else "dataset"


@transaction.atomic
def audit_create(
    *,
    name,
    dataset,
    population_filter=None,
    strata_keys=(),
    allocation_method="proportional",
    size=150,
    min_per_stratum=0,
    expected_fail_rates=None,
    seed=None,
    user=None,
    is_demo=False,
    evidence_required=True,
    policy="strict",
):
    """Draw the sample and save the audit (status draft). The AuditAnswer rows are the frozen snapshot. The
    returned audit carries design_notes (not saved): the preview's notes on what the inputs did not say."""
    if Audit.objects.filter(name=name).exists():
        raise ValidationError({"name": f"an audit named {name!r} already exists"})
    seed = secrets.randbelow(RANDOM_SEED_MAX) if seed is None else int(seed)
    p = audit_preview(
        dataset=dataset,
        population_filter=population_filter,
        strata_keys=strata_keys,
        allocation_method=allocation_method,
        size=size,
        min_per_stratum=min_per_stratum,
        expected_fail_rates=expected_fail_rates,
        seed=seed,
    )
    if not p["population_size"]:
        raise ValidationError({emptied_by(p["filter"]): EMPTY_POPULATION})
    strata = sum(1 for row in p["design"] if row["population"])
    if strata > p["sample_size"]:  # most strata would get nothing: refused rather than drawn with zeros
        left = sum(1 for row in p["design"] if row["population"] and not row["sample"])
        raise ValidationError({"strata": allocation.too_many_strata(strata, p["sample_size"], left)})
    f = {**p["filter"], "judge_version": p["judge_version_id"]} if "judge" in p["keys"] else p["filter"]
    picked = draw(pop.population(dataset, p["filter"]), p["keys"], p["strata"], p["sizes"], seed, p["judge_version_id"])
    try:
        with transaction.atomic():  # a savepoint: the name's unique index decides a race the check above lost
            audit = Audit.objects.create(
                name=name,
                dataset=dataset,
                population_filter=f,
                strata_keys=p["keys"],
                allocation=allocation_method,
                expected_fail_rates=expected_fail_rates or {},
                size=size,
                min_per_stratum=min_per_stratum,
                seed=seed,
                population_size=p["population_size"],
                design=p["design"],
                is_demo=is_demo,
                created_by=user,
                evidence_required=evidence_required,
                policy=policy,
            )
    except IntegrityError:
        if not Audit.objects.filter(name=name).exists():
            raise
        raise ValidationError({"name": f"an audit named {name!r} already exists"}) from None
    rows = {r["stratum"]: r for r in p["design"]}
    sampled = sorted((k, pk, label) for label, items in picked.items() for k, pk in items)
    AuditAnswer.objects.bulk_create(
        AuditAnswer(
            audit=audit,
            answer_id=pk,
            position=i,
            stratum=label,
            stratum_population=rows[label]["population"],
            stratum_sample=rows[label]["sample"],
            inclusion_probability=rows[label]["inclusion_probability"],
            weight=rows[label]["weight"],
        )
        for i, (_, pk, label) in enumerate(sampled)
    )
    audit.design_notes = p["notes"]
    guidelines_inherit(audit, user)  # a new audit starts from the previous audit's guidelines
    history.record(
        audit,
        kind="audit",
        action="create",
        user=user,
        new={"size": len(sampled), "seed": seed, "strata": p["keys"], "allocation": allocation_method},
    )
    return audit
