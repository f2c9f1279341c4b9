from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from audit.judge import selectors, services
from audit.judge.estimate import estimate
from audit.judge.forms import EstimateForm, ResumeForm, StartRunForm
from audit.judge.tasks import judge_run_enqueue
from audit.models import Answer, JudgeRun
from audit.roles import lead_required

HTMX_STOP_POLLING = 286  # htmx swaps this response, then stops polling


@lead_required
def runs(request):
    if request.htmx and request.method == "GET" and "dataset" in request.GET:
        return _estimate(request)
    form = StartRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            run = services.judge_run_create(user=request.user, **form.cleaned_data)
        except services.JudgeRunError as exc:
            form.add_error(None, str(exc))
        else:
            judge_run_enqueue(run)
            return redirect("judge_run", run_id=run.pk)
    page = Paginator(selectors.judge_runs(), 50).get_page(request.GET.get("page"))
    return render(request, "judge/runs.html", {"form": form, "page": page}, status=400 if form.errors else 200)


def _estimate(request):
    """The bill before the run for the start form's current choices (its #estimate fragment)."""
    form = EstimateForm(request.GET)
    if not form.is_valid():
        ctx = {"estimate_errors": form.errors}
        return render(request, "judge/runs.html#estimate", ctx, status=400)
    d = form.cleaned_data
    est = estimate(Answer.objects.filter(dataset=d["dataset"]), backend=d["backend"], use_batch=d["use_batch"])
    return render(request, "judge/runs.html#estimate", {"estimate": est})


@lead_required
def run_detail(request, run_id):
    run = _run_or_404(run_id)
    ctx = {"run": run, "failures": selectors.run_failures(run), "form": ResumeForm()}
    if request.htmx:  # polled while active, slower when stalled (the resume form is hx-preserve'd meanwhile)
        return render(request, "judge/run.html#progress", ctx, status=200 if run.is_active else HTMX_STOP_POLLING)
    return render(request, "judge/run.html", ctx)


@lead_required
@require_POST
def run_resume(request, run_id):
    run = _run_or_404(run_id)
    form = ResumeForm(request.POST)
    if run.is_active and not run.is_stalled:
        messages.error(request, f"Run {run.pk} is {run.get_status_display().lower()}: wait for it to stop.")
    elif form.is_valid():
        d = form.cleaned_data
        services.judge_run_update_budget(run, budget_usd=d["budget_usd"], budget_tokens=d["budget_tokens"])
        if judge_run_enqueue(run, retry_failed=d["retry_failed"]) is None:
            messages.error(request, run.message)
    else:
        refused = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        messages.error(request, f"Not resumed: {refused}")
    return redirect("judge_run", run_id=run.pk)


def _run_or_404(run_id):
    try:
        return selectors.judge_run(run_id)
    except JudgeRun.DoesNotExist:
        raise Http404 from None
