"""`{{ value|readable }}`: a trail value or an imported metadata value as readable text (see history.describe)."""

from django import template

from audit.history import describe

register = template.Library()


@register.filter
def readable(value):
    return describe(value)
