"""'New audit like this one': preview next week's audit, create it, judge its sample, then assign it."""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.assignments.services import audit_assign
from annotations.models import Assignment, PendingAssignment
from annotations.weekly.design import like_design
from audit import roles
from audit.guidelines.services import guidelines_inherit
from audit.judge.services import judge_run_create
from audit.judge.tasks import judge_run_enqueue
from audit.models import Audit, AuditStatus, JudgeRun
from audit.sampling.selectors import drawn_overlap
from audit.sampling.services import RANDOM_SEED_MAX, audit_create, audit_preview


def like_annotators(source):
    """The source audit's annotators who still are (active, in the annotators group), by username."""
    ids = Assignment.objects.filter(audit_answer__audit=source).values("annotator_id")
    return list(
        get_user_model()
        .objects.filter(pk__in=ids, is_active=True, groups__name=roles.ANNOTATOR)
        .distinct()
        .order_by("username")
    )


def like_backend(source):
    """The judge for the new sample: the LLM when the source's last run used it and a key is set."""
    last = JudgeRun.objects.filter(audit=source).order_by("-created_at").values_list("backend", flat=True).first()
    return "anthropic" if last == "anthropic" and settings.ANTHROPIC_API_KEY else "offline"


def like_plan(source, *, week=None, name=None, seed=None, preview=True):
    """Everything the preview shows, nothing saved. seed: given to reproduce a draw, else a new random one.
    overlap: how many of the answers this seed draws are already in the source audit or any audit (a source
    without a date window draws from the same answers again); windowless: the source has no date window.
    preview=False: the plan only, for like_create, whose audit_create sizes the strata and draws (once)."""
    if source.is_calibration:
        raise ValidationError(
            f"{source.name} is a calibration sample (claims drawn by the judge's verdict), not an audit of answers: "
            "draw the next one as a new calibration sample."
        )
    design = like_design(source, week)
    plan = {
        **design,
        "source": source,
        "name": (name or "").strip() or design["name"],
        "seed": secrets.randbelow(RANDOM_SEED_MAX) if seed is None else int(seed),
        "annotators": like_annotators(source),
        "backend": like_backend(source),
    }
    if not preview:
        return plan
    plan["preview"] = audit_preview(**design["kwargs"], seed=plan["seed"])  # ties ordered as the draw will
    plan["overlap"] = drawn_overlap(source.dataset, plan["preview"], plan["seed"], source)
    plan["windowless"] = not any(source.population_filter.get(k) for k in ("created_from", "created_to"))
    return plan


@transaction.atomic
def like_create(plan, user=None, *, enqueue=True):
    """Create the audit (same design, the plan's seed), copy the source's guidelines and webhook, start a judge
    run on its sample; the audit is assigned to the plan's annotators when that run is done (annotations/receivers.py).
    enqueue=False: the caller executes the run itself (the command)."""
    source = plan["source"]
    if len(plan["annotators"]) < 2:
        raise ValidationError(f"{source.name} has fewer than two active annotators: assign the new audit by hand.")
    audit = audit_create(name=plan["name"], seed=plan["seed"], user=user, **plan["kwargs"])
    guidelines_inherit(audit, user, source=source)
    if source.webhook_url:
        Audit.objects.filter(pk=audit.pk).update(webhook_url=source.webhook_url, webhook_secret=source.webhook_secret)
        audit.webhook_url, audit.webhook_secret = source.webhook_url, source.webhook_secret
    run = judge_run_create(backend=plan["backend"], audit=audit, user=user)
    PendingAssignment.objects.create(
        audit=audit, run=run, annotator_ids=[u.pk for u in plan["annotators"]], created_by=user
    )
    if enqueue:
        transaction.on_commit(lambda: judge_run_enqueue(run))
    return audit, run


def pending_assign(run):
    """A judge run on a new audit's sample ended. Done: assign the audit as planned, or say why not. Failed, cancelled
    or stopped by its budget: the audit keeps waiting, saying so, and the run that ends done later (a resume of this
    one, or another run over the audit) assigns it. One assigned by hand meanwhile is left as it is."""
    pending = (
        PendingAssignment.objects.select_related("audit", "created_by")
        .filter(audit_id=run.audit_id, status=PendingAssignment.Status.PENDING)
        .first()
    )
    if pending is None:
        return None
    pending.run = run
    if run.status != JudgeRun.Status.DONE:
        status = run.get_status_display().lower()
        pending.message = f"Judge run #{run.pk} ended {status}: resume it; the audit is assigned once it is done."
    elif pending.audit.status != AuditStatus.DRAFT:
        pending.status = PendingAssignment.Status.DONE
        pending.message = f"Already assigned when judge run #{run.pk} ended: nothing left to do."
    else:
        users = list(get_user_model().objects.filter(pk__in=pending.annotator_ids).order_by("username"))
        try:
            audit_assign(pending.audit, users, user=pending.created_by)
        except ValidationError as e:
            pending.status, pending.message = PendingAssignment.Status.FAILED, " ".join(e.messages)
        else:
            pending.status = PendingAssignment.Status.DONE
            pending.message = f"Assigned to {', '.join(u.get_username() for u in users)} after judge run #{run.pk}."
    pending.save(update_fields=["run", "status", "message"])
    return pending
