from django import template

register = template.Library()


@register.filter
def http_url(value):
    """The value when it is an http(s) URL, else "": an imported url never becomes a javascript: link."""
    if isinstance(value, str) and value[:8].lower().startswith(("http://", "https://")) and len(value) <= 2000:
        return value
    return ""
