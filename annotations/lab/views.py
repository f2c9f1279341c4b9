from django.shortcuts import render

from audit.roles import lead_required


@lead_required
def lab(request):
    return render(request, "lab/lab.html", {})
