"""The "API tokens" page: every user creates, names and revokes their own personal API tokens."""

from django import forms
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from claimaudit import services
from claimaudit.models import ApiToken


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, label="Token name", help_text="e.g. nightly import job")


def tokens(request):
    form, raw, status = TokenForm(request.POST or None), None, 200
    if request.method == "POST":
        if form.is_valid():
            try:
                _, raw = services.api_token_create(request.user, form.cleaned_data["name"])
            except services.TokenError as e:
                form.add_error("name", str(e))
        status = 400 if form.errors else 201
        form = TokenForm() if raw else form
    rows = ApiToken.objects.filter(user=request.user)
    return render(request, "claimaudit/tokens.html", {"form": form, "raw": raw, "tokens": rows}, status=status)


@require_POST
def token_revoke(request, token_id):
    if not services.api_token_revoke(request.user, token_id):
        raise Http404("No such token of yours.")
    return redirect("api_tokens")
