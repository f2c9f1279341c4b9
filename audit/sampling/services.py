"""Writes for audits: draw the sample, assign it, reassign, add an annotator."""

import secrets

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations import history
from annotations.models import Assignment
from audit import roles
from audit.models import Audit, AuditAnswer, AuditStatus
from audit.sampling import allocation, pairing, selectors
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


def audit_preview(
    *,
    dataset,
    population_filter=None,
    strata_keys=(),
    allocation_method="proportional",
    size=150,
    min_per_stratum=0,
    expected_fail_rates=None,
):
    """The design without saving anything: {population_size, design: [rows], judge_version_id, strata}."""
    f = dict(population_filter or {})
    keys = pop.parse_strata_keys(strata_keys)
    jv = _judge_version_synced(dataset, keys, f)
    strata = strata_counts(pop.population(dataset, f), keys, jv)
    labelled = [(label, N) for label, _, N in strata]
    rates = allocation.resolve_fail_rates([lb for lb, _ in labelled], expected_fail_rates)
    sizes = allocation.allocate(labelled, size, allocation_method, min_per_stratum=min_per_stratum, fail_rates=rates)
    table = allocation.design_table(labelled, sizes, rates if allocation_method == allocation.NEYMAN else None)
    return {
        "population_size": sum(N for _, N in labelled),
        "sample_size": sum(sizes),
        "design": table,
        "judge_version_id": jv,
        "strata": strata,
        "sizes": sizes,
        "keys": keys,
        "filter": f,
    }


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
):
    """Draw the sample and save the audit (status draft). The AuditAnswer rows are the frozen snapshot."""
    if Audit.objects.filter(name=name).exists():
        raise ValidationError(f"An audit named {name!r} already exists.")
    seed = secrets.randbelow(RANDOM_SEED_MAX) if seed is None else int(seed)
    p = audit_preview(
        dataset=dataset,
        population_filter=population_filter,
        strata_keys=strata_keys,
        allocation_method=allocation_method,
        size=size,
        min_per_stratum=min_per_stratum,
        expected_fail_rates=expected_fail_rates,
    )
    f = {**p["filter"], "judge_version": p["judge_version_id"]} if "judge" in p["keys"] else p["filter"]
    picked = draw(pop.population(dataset, p["filter"]), p["keys"], p["strata"], p["sizes"], seed, p["judge_version_id"])
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
    )
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
            inclusion_probability=rows[label]["sample"] / rows[label]["population"],
            weight=rows[label]["population"] / rows[label]["sample"],
        )
        for i, (_, pk, label) in enumerate(sampled)
    )
    history.record(
        audit,
        kind="audit",
        action="create",
        user=user,
        new={"size": len(sampled), "seed": seed, "strata": p["keys"], "allocation": allocation_method},
    )
    return audit


def _check_annotators(users):
    User = get_user_model()
    ids = [u.pk for u in users]
    ok = set(User.objects.filter(pk__in=ids, is_active=True, groups__name=roles.ANNOTATOR).values_list("pk", flat=True))
    missing = [u.get_username() for u in users if u.pk not in ok]
    if missing:
        raise ValidationError(f"Not in the annotators group: {', '.join(missing)}.")


@transaction.atomic
def audit_assign(audit, annotators, user=None):
    """Give every sampled answer to two distinct annotators (slots A, B); the audit moves to labelling."""
    audit = Audit.objects.select_for_update().get(pk=audit.pk)
    annotators = list({u.pk: u for u in annotators}.values())
    if audit.status != AuditStatus.DRAFT or Assignment.objects.filter(audit_answer__audit=audit).exists():
        raise ValidationError("This audit is already assigned; reassign or add an annotator instead.")
    if len(annotators) < 2:
        raise ValidationError("Choose at least two annotators: every answer is labelled by two people.")
    _check_annotators(annotators)
    missing = selectors.items_without_claims(audit)
    if missing:
        raise ValidationError(
            f"{missing} sampled answer(s) have no claims: claims must exist before annotation "
            "starts (run the judge on the sample, or import claims)."
        )
    items = list(audit.items.order_by("position").values_list("pk", flat=True))
    plan = pairing.plan_pairs(len(items), [u.pk for u in annotators])
    Assignment.objects.bulk_create(
        Assignment(audit_answer_id=item, annotator_id=who, slot=slot, is_demo=audit.is_demo)
        for item, pair in zip(items, plan, strict=True)
        for slot, who in zip("AB", pair, strict=True)
    )
    audit.status = AuditStatus.LABELLING
    audit.save(update_fields=["status"])
    history.record(
        audit,
        kind="assignment",
        action="assign",
        user=user,
        new={"annotators": [u.get_username() for u in annotators], "assignments": 2 * len(items)},
    )
    history.record(
        audit,
        kind="audit",
        action="status",
        user=user,
        old={"status": AuditStatus.DRAFT},
        new={"status": AuditStatus.LABELLING},
    )
    return audit


@transaction.atomic
def assignment_reassign(assignment, annotator, user=None):
    """Move an unstarted assignment to another annotator (never the other annotator of the same answer)."""
    a = (
        Assignment.objects.select_for_update()
        .select_related("audit_answer__audit", "audit_answer__answer", "annotator")
        .get(pk=assignment.pk)
    )
    if a.status != Assignment.Status.ASSIGNED:
        raise ValidationError("Only an assignment that has not been started can be reassigned.")
    if a.audit_answer.audit.is_closed:
        raise ValidationError("The audit is closed.")
    if annotator.pk == a.annotator_id:
        raise ValidationError(f"{annotator.get_username()} already has this assignment.")
    if Assignment.objects.filter(audit_answer_id=a.audit_answer_id, annotator=annotator).exists():
        raise ValidationError(
            f"{annotator.get_username()} already labels this answer: the two annotators of an answer must differ."
        )
    _check_annotators([annotator])
    old = a.annotator.get_username()
    a.annotator = annotator
    a.save(update_fields=["annotator"])
    history.record(
        a.audit_answer.audit,
        kind="assignment",
        action="reassign",
        user=user,
        answer=a.audit_answer.answer,
        old={"annotator": old, "slot": a.slot},
        new={"annotator": annotator.get_username(), "slot": a.slot},
    )
    return a


@transaction.atomic
def audit_add_annotator(audit, annotator, user=None):
    """Bring a new annotator into a running audit: move unstarted assignments to them until loads are level."""
    audit = Audit.objects.select_for_update().get(pk=audit.pk)
    if audit.status != AuditStatus.LABELLING:
        raise ValidationError("Annotators can be added while the audit is in labelling.")
    _check_annotators([annotator])
    rows = list(
        Assignment.objects.filter(audit_answer__audit=audit).values_list(
            "pk", "audit_answer_id", "annotator_id", "status"
        )
    )
    by_item, loads = {}, {}
    for _pk, item, who, _status in rows:
        by_item.setdefault(item, []).append(who)
        loads[who] = loads.get(who, 0) + 1
    plan = pairing.plan_rebalance(
        [
            (pk, item, who, next((o for o in by_item[item] if o != who), None), status == Assignment.Status.ASSIGNED)
            for pk, item, who, status in rows
        ],
        annotator.pk,
        loads,
    )
    moved = Assignment.objects.filter(pk__in=[pk for pk, _ in plan], status=Assignment.Status.ASSIGNED)
    count = moved.update(annotator=annotator)
    history.record(
        audit,
        kind="assignment",
        action="add_annotator",
        user=user,
        new={
            "annotator": annotator.get_username(),
            "moved": [{"assignment": pk, "from_user_id": donor} for pk, donor in plan],
        },
    )
    return count
