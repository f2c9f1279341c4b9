"""{% worker_command %}: the command that starts the task worker in this setup (settings.WORKER_COMMAND)."""

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def worker_command():
    return settings.WORKER_COMMAND


@register.simple_tag
def stalled_poll():
    return settings.JOB_STALLED_POLL_SECONDS
