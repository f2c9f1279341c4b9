"""Writes on the team: create a person, give and take roles, deactivate and reactivate, issue a
one-time set-password link, hand a person's open work to someone else. Every change leaves a HistoryEvent of
kind "person" (no audit)."""

import logging
from smtplib import SMTPException

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotations.assignments.services import assignment_reassign
from annotations.models import Assignment
from audit import history, roles
from claimaudit.people.selectors import open_assignments

logger = logging.getLogger(__name__)
SHORT_OF = {name: short for short, name in roles.BY_SHORT_NAME.items()}


class Refused(Exception):
    """A change that would leave the team without a working lead, or one a lead may not make on themselves."""


def short_roles(user):
    return sorted(SHORT_OF[g.name] for g in user.groups.all() if g.name in SHORT_OF)


def _record(action, *, by, person, old=None, new=None, reason=""):
    history.record(None, kind="person", action=action, user=by, person=person, old=old, new=new, reason=reason)


def _other_active_leads(user):
    User = get_user_model()
    return User.objects.filter(is_active=True, groups__name=roles.LEAD).exclude(pk=user.pk).exists()


def person_create(*, username, email, role_names, by):
    """A new user with no usable password: they choose one through the set-password link."""
    with transaction.atomic():
        user = get_user_model()(username=username, email=email)
        user.set_unusable_password()
        user.save()
        user.groups.set(_groups(role_names))
        _record("created", by=by, person=user, new={"username": username, "email": email, "roles": sorted(role_names)})
    return user


def _groups(role_names):
    return [Group.objects.get_or_create(name=roles.BY_SHORT_NAME[short])[0] for short in role_names]


def person_roles_set(user, role_names, *, by):
    """Give and take roles so that user holds exactly role_names; returns whether anything changed."""
    old, new = short_roles(user), sorted(set(role_names))
    if old == new:
        return False
    if "lead" in old and "lead" not in new and not _other_active_leads(user):
        raise Refused(f"{user.username} is the only active lead: give someone else the lead role first.")
    with transaction.atomic():
        user.groups.set(_groups(new))
        _record("roles", by=by, person=user, old={"roles": old}, new={"roles": new})
    return True


def person_deactivate(user, *, by, reason=""):
    """The person can no longer log in (their sessions end); their labels and gold stay. Returns their open
    assignments, for the lead to reassign."""
    if user.pk == by.pk:
        raise Refused("You cannot deactivate yourself.")
    if roles.LEAD in {g.name for g in user.groups.all()} and not _other_active_leads(user):
        raise Refused(f"{user.username} is the only active lead: give someone else the lead role first.")
    if user.is_active:
        with transaction.atomic():
            get_user_model().objects.filter(pk=user.pk).update(is_active=False)
            user.is_active = False
            _record("deactivated", by=by, person=user, old={"active": True}, new={"active": False}, reason=reason)
    return open_assignments(user)


def person_work_reassign(user, to, *, by):
    """Move every open assignment of `user` that is not started to `to`, each through the assignments' own
    rule (never to the other annotator of the same answer, never in a closed audit; each leaves its audit's
    trail row). Returns (moved, kept): kept is [(assignment, why)] of those that stay with `user`; a started
    one always stays, its labels with it."""
    if to.pk == user.pk:
        raise Refused(f"{user.username} already holds these assignments.")
    moved, kept = 0, []
    with transaction.atomic():
        for a in open_assignments(user).select_related("audit_answer__audit").order_by("pk"):
            why = _reassign_one(a, to, by)
            if why:
                kept.append((a, why))
            else:
                moved += 1
        _record("work_reassigned", by=by, person=user, new={"to": to.username, "moved": moved, "kept": len(kept)})
    return moved, kept


def _reassign_one(assignment, to, by):
    """None when moved, else why not."""
    if assignment.status != Assignment.Status.ASSIGNED:
        return "started: its labels stay with it"
    try:
        assignment_reassign(assignment, to, user=by)
    except ValidationError as e:
        return " ".join(e.messages)
    return None


def person_reactivate(user, *, by):
    if not user.is_active:
        with transaction.atomic():
            get_user_model().objects.filter(pk=user.pk).update(is_active=True)
            user.is_active = True
            _record("reactivated", by=by, person=user, old={"active": False}, new={"active": True})


def set_password_link(user, request, *, by):
    """An absolute one-time link (Django's token generator: it stops working once the password is set,
    and after PASSWORD_RESET_TIMEOUT). Sent by mail when EMAIL_ENABLED and the person has an address.
    Returns (link, mailed). The trail records that a link was issued, never the token."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    link = request.build_absolute_uri(reverse("password_set", args=[uid, default_token_generator.make_token(user)]))
    mailed = bool(settings.EMAIL_ENABLED and user.email)
    if mailed:
        try:
            send_mail(
                "Your Claim Audit account",
                f"Hello {user.username},\n\n{by.username} created or reset your Claim Audit account. Choose your "
                f"password here (the link works once):\n\n{link}\n",
                None,
                [user.email],
            )
        except (OSError, SMTPException):  # the lead still has the link on the page
            logger.warning("could not mail the set-password link to %s", user.email, exc_info=True)
            mailed = False
    _record("link_issued", by=by, person=user, new={"mailed": mailed})
    return link, mailed
