# Temporary: replaced by each feature's real views as they land.
from django.http import HttpResponse


def placeholder(request, *args, **kwargs):
    return HttpResponse("Not built yet.")
