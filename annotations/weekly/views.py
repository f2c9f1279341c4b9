from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render

from annotations.weekly import services
from audit.models import Audit
from audit.roles import lead_required
from audit.sampling.services import SEED_MAX


class LikeForm(forms.Form):
    week = forms.RegexField(
        r"^\d{4}-W\d{2}$",
        required=False,
        max_length=8,
        help_text="ISO week, e.g. 2026-W50",
        error_messages={"invalid": "expected an ISO week like 2026-W50, got “%(value)s”"},
    )
    name = forms.CharField(required=False, max_length=100)
    seed = forms.IntegerField(required=False, min_value=0, max_value=SEED_MAX)


@lead_required
def audit_like(request, audit_id):
    """GET: the preview of next week's audit (?week=, ?name=, ?seed=). POST: create it as previewed (the seed the
    preview showed draws the same sample, drawn once); a refused POST shows the preview again with the reason."""
    source = get_object_or_404(Audit.objects.select_related("dataset"), pk=audit_id)
    form = LikeForm(request.POST if request.method == "POST" else request.GET)
    if not form.is_valid():
        error = "; ".join(f"{f}: {' '.join(e)}" for f, e in form.errors.items())
        ctx = {"source": source, "plan": None, "error": error, "sent_week": form.data.get("week", "")}
        return render(request, "weekly/like.html", ctx, status=400)
    d = form.cleaned_data
    args = {"week": d["week"] or None, "name": d["name"], "seed": d["seed"]}
    plan, error = None, None
    try:
        if request.method == "POST":
            return _create(request, source, args)
    except (ValidationError, ValueError) as e:
        error = _text(e)
    try:
        plan = services.like_plan(source, **args)
    except (ValidationError, ValueError) as e:
        error = error or _text(e)
    status = 400 if error else 200
    ctx = {"source": source, "plan": plan, "error": error, "sent_week": d["week"]}
    return render(request, "weekly/like.html", ctx, status=status)


def _create(request, source, args):
    plan = services.like_plan(source, **args, preview=False)
    if Audit.objects.filter(name=plan["name"]).exists():
        raise ValidationError(f"name: an audit named {plan['name']!r} exists already")
    audit, run = services.like_create(plan, request.user)
    messages.success(
        request,
        f"Audit {audit.name} created ({audit.items.count()} answers, seed {audit.seed}); its sample is "
        f"being judged, then it is assigned to {', '.join(u.username for u in plan['annotators'])}.",
    )
    return redirect("judge_run", run.pk)


def _text(exc):
    return " ".join(getattr(exc, "messages", [str(exc)]))
