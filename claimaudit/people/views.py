"""People pages (leads only): the team, a person, creating one with a set-password link. The
set-password page itself is public: the link's token is the credential."""

from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils import timezone
from django.views.decorators.http import require_POST

from audit import history
from audit.roles import lead_required
from claimaudit.people import selectors, services
from claimaudit.people.forms import DeactivateForm, PersonForm, ReassignForm, RolesForm


@lead_required
def people(request):
    form = PersonForm(request.POST or None)
    if request.method == "POST":
        if not form.is_valid():
            return render(request, "people/people.html", {"people": selectors.people(), "form": form}, status=400)
        user = services.person_create(**_fields(form), by=request.user)
        link, mailed = services.set_password_link(user, request, by=request.user)
        ctx = {"person": user, "link": link, "mailed": mailed, "created": True, **_link_expiry()}
        return render(request, "people/link.html", ctx)
    return render(request, "people/people.html", {"people": selectors.people(), "form": form})


def _link_expiry():
    """{issued, expires}: a set-password link made now stops working after PASSWORD_RESET_TIMEOUT."""
    now = timezone.now()
    return {"issued": now, "expires": now + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT)}


def _fields(form):
    d = form.cleaned_data
    return {"username": d["username"], "email": d["email"], "role_names": d["roles"]}


def _person_or_404(user_id):
    try:
        return selectors.person(user_id)
    except get_user_model().DoesNotExist:
        raise Http404("No such person.") from None


@lead_required
def person(request, user_id, *, form=None, reassign_form=None, status=200):
    user, open_assignments, events = _person_or_404(user_id)
    roles_now = services.short_roles(user)
    ctx = {
        "person": user,
        "open_assignments": open_assignments,
        "events": events,
        "form": form or RolesForm(initial={"roles": roles_now}),
        "reassign_form": reassign_form or ReassignForm(person=user),
        "labels": user.is_active and "annotator" in roles_now,  # may still label their open assignments
    }
    return render(request, "people/person.html", ctx, status=status)


def _open_work_warning(request, user, why):
    """After a change that leaves the person unable to label: how much open work waits for someone else."""
    n = selectors.open_assignments(user).count()
    if n:
        messages.warning(
            request,
            f"{user.username} {why} but still holds {n} open assignment{'s' if n != 1 else ''}, which nobody "
            "labels now: reassign them below, under Open assignments.",
        )


@require_POST
@lead_required
def person_roles(request, user_id):
    user = _person_or_404(user_id)[0]
    form = RolesForm(request.POST)
    if not form.is_valid():
        return person(request, user_id, form=form, status=400)
    was_annotator = "annotator" in services.short_roles(user)
    try:
        if services.person_roles_set(user, form.cleaned_data["roles"], by=request.user):
            messages.success(request, f"Roles of {user.username}: {', '.join(form.cleaned_data['roles']) or 'none'}.")
            if was_annotator and "annotator" not in form.cleaned_data["roles"]:
                _open_work_warning(request, user, "no longer has the annotator role")
    except services.Refused as e:
        messages.error(request, str(e))
    return _back_to(user)


def _back_to(user):
    return redirect("person", user.pk)


@require_POST
@lead_required
def person_active(request, user_id):
    user = _person_or_404(user_id)[0]
    form = DeactivateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Reason: " + " ".join(form.errors["reason"]))
        return person(request, user_id, status=400)
    try:
        if request.POST.get("active") == "0":
            services.person_deactivate(user, by=request.user, reason=form.cleaned_data["reason"])
            messages.success(request, f"{user.username} is deactivated; their labels stay.")
            _open_work_warning(request, user, "is deactivated")
        else:
            services.person_reactivate(user, by=request.user)
            messages.success(request, f"{user.username} can log in again.")
    except services.Refused as e:
        messages.error(request, str(e))
    return _back_to(user)


@require_POST
@lead_required
def person_reassign(request, user_id):
    """Hand every unstarted open assignment of the person to one annotator."""
    user = _person_or_404(user_id)[0]
    form = ReassignForm(request.POST, person=user)
    if not form.is_valid():
        return person(request, user_id, reassign_form=form, status=400)
    to = form.cleaned_data["to"]
    try:
        moved, kept = services.person_work_reassign(user, to, by=request.user)
    except services.Refused as e:
        messages.error(request, str(e))
        return _back_to(user)
    messages.success(request, f"{moved} open assignment{'s' if moved != 1 else ''} of {user.username} moved to {to}.")
    if kept:
        messages.warning(request, _kept_text(user, kept))
    return _back_to(user)


def _kept_text(user, kept):
    """How many assignments stay with the person, and how many for each reason when there are several."""
    why = Counter(reason.rstrip(".") for _, reason in kept)
    if len(why) == 1:
        return f"{len(kept)} stay with {user.username} ({next(iter(why))})."
    parts = ", ".join(f"{n} ({reason})" for reason, n in sorted(why.items(), key=lambda x: (-x[1], x[0])))
    return f"{len(kept)} stay with {user.username}: {parts}."


@require_POST
@lead_required
def person_link(request, user_id):
    user = _person_or_404(user_id)[0]
    if not user.is_active:
        messages.error(request, f"{user.username} is deactivated: reactivate them first.")
        return redirect("person", user.pk)
    link, mailed = services.set_password_link(user, request, by=request.user)
    ctx = {"person": user, "link": link, "mailed": mailed, "created": False, **_link_expiry()}
    return render(request, "people/link.html", ctx)


class PasswordSetView(auth_views.PasswordResetConfirmView):
    """The one-time link: choose a password (the validators apply), then be logged in."""

    template_name = "registration/password_set.html"
    post_reset_login = True
    post_reset_login_backend = "claimaudit.auth.RoleBackend"
    success_url = reverse_lazy("home")

    def get_user(self, uidb64):
        user = super().get_user(uidb64)
        return user if user is not None and user.is_active else None

    def form_valid(self, form):
        response = super().form_valid(form)
        history.record(None, kind="person", action="password_set", user=form.user, person=form.user)
        return response


password_set = login_not_required(PasswordSetView.as_view())
