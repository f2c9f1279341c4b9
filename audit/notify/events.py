"""What is announced, to whom: email to the people concerned (unless they turned email off) and, for an
audit's events, its webhook. Everything goes out after the surrounding transaction commits."""

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mass_mail
from django.db import IntegrityError, transaction
from django.urls import reverse

from audit import roles
from audit.models import NotificationSent, NotificationSettings
from audit.notify.webhooks import webhook_queue

logger = logging.getLogger(__name__)


def _link(name, *args):
    return settings.SITE_URL.rstrip("/") + reverse(name, args=args)


def _recipients(users):
    users = [u for u in users if u is not None and u.is_active and u.email]
    off = set(
        NotificationSettings.objects.filter(user__in=users, email_enabled=False).values_list("user_id", flat=True)
    )
    return sorted({u.email for u in users if u.pk not in off})


def _send(mails):
    try:
        send_mass_mail(mails)
    except OSError:  # SMTP down: the work itself succeeded; the pages show the outcome anyway
        logger.exception("notification email not sent")


def notify(event, *, subject, body, users=(), audit=None, data=None):
    """Email `users` and POST the audit's webhook (when it has one). data: the event's JSON fields."""
    addresses = _recipients(list(users))
    if addresses:
        mails = [(f"[Claim Audit] {subject}", body, None, [a]) for a in addresses]
        transaction.on_commit(lambda: _send(mails))
    if audit is not None:
        payload = {"event": event, "subject": subject, "audit": audit.name, **(data or {})}
        webhook_queue(audit, event, payload)


def notify_once(key, event, **kwargs):
    """notify(), unless a notification with this key went out already (a stall seen again)."""
    try:
        with transaction.atomic():
            NotificationSent.objects.create(key=key[:200])
    except IntegrityError:
        return False
    notify(event, **kwargs)
    return True


def notify_judge_run(run):
    where = f"audit {run.audit.name}" if run.audit else (run.dataset.name if run.dataset else "answers")
    link = _link("judge_run", run.pk)
    notify(
        f"judge_run.{run.status}",
        subject=f"Judge run #{run.pk} on {where}: {run.get_status_display().lower()}",
        body=f"{run.message}\n\n{link}\n",
        users=[run.created_by],
        audit=run.audit,
        data={"run": run.pk, "status": run.status, "message": run.message, "url": link},
    )


def notify_import(batch):
    link = _link("import_batch", batch.pk)
    errors = "".join(f"\n- line {e['line']}, {e['field'] or 'file'}: {e['message']}" for e in batch.errors[:10])
    errors += "".join(f"\n{note}" for note in batch.notes)  # answers kept as stored, and why
    notify(
        f"import.{batch.status}",
        subject=f"Import of {batch.file_name} into {batch.dataset_name}: {batch.get_status_display().lower()}",
        body=f"{batch.created} created, {batch.updated} updated, {batch.unchanged} unchanged.{errors}\n\n{link}\n",
        users=[batch.user],
    )


def notify_stalled_run(run):
    since = (run.heartbeat_at or run.created_at).isoformat()
    link = _link("judge_run", run.pk)
    return notify_once(
        f"judge_run:{run.pk}:stalled:{since}",
        "judge_run.stalled",
        subject=f"Judge run #{run.pk} is stalled (no progress for {run.stalled_minutes} minutes)",
        body=f"Is the task worker running? Start it with: {settings.WORKER_COMMAND}\nThen resume the run: {link}\n",
        users=[run.created_by],
        audit=run.audit,
        data={"run": run.pk, "status": "stalled", "url": link},
    )


def notify_stalled_import(batch):
    link = _link("import_batch", batch.pk)
    return notify_once(
        f"import:{batch.pk}:stalled:{(batch.started_at or batch.created_at).isoformat()}",
        "import.stalled",
        subject=f"Import of {batch.file_name} is stalled (no progress for {batch.stalled_minutes} minutes)",
        body=f"Is the task worker running? Start it with: {settings.WORKER_COMMAND}\nThen retry it: {link}\n",
        users=[batch.user],
    )


def notify_audit_assigned(audit, annotators, user=None):
    link = _link("audit_detail", audit.pk)
    notify(
        "audit.assigned",
        subject=f"Audit {audit.name} is assigned: labelling starts",
        body=f"Every answer of {audit.name} now has two annotators. Label yours from your home page: {_link('home')}\n",
        users=list(annotators) + ([user] if user else []),
        audit=audit,
        data={"annotators": sorted(u.get_username() for u in annotators), "url": link},
    )


def notify_disputes_ready(audit, disputes):
    adjudicators = get_user_model().objects.filter(is_active=True, groups__name=roles.ADJUDICATOR)
    link = _link("adjudication_queue")
    notify(
        "audit.disputes_ready",
        subject=f"Audit {audit.name}: {disputes} disputed claim{'s' if disputes != 1 else ''} ready for adjudication",
        body=f"Every assignment of {audit.name} is submitted. The adjudication queue: {link}\n",
        users=list(adjudicators) + ([audit.created_by] if audit.created_by_id else []),
        audit=audit,
        data={"disputes": disputes, "url": link},
    )


def notify_answer_reopened(assignment, reason):
    """The annotator of a reopened answer hears why, with the link to it (the workspace shows the reason too)."""
    item, link = assignment.audit_answer, _link("workspace", assignment.pk)
    notify(
        "answer.reopened",
        subject=f"{item.audit.name}: answer {item.answer.external_id} is reopened for you",
        body=f"The audit lead reopened an answer you submitted.\nWhy: {reason}\nOpen it: {link}\n",
        users=[assignment.annotator],
        audit=item.audit,
        data={"answer": item.answer.external_id, "annotator": assignment.annotator.get_username(), "url": link},
    )
