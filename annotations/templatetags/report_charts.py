"""{% forest_chart rows title %} and {% trend_chart points %}: the report's SVG charts."""

from django import template

from annotations.report import charts

register = template.Library()


@register.simple_tag
def forest_chart(rows, title):
    return charts.forest_chart(rows, title)


@register.simple_tag
def trend_chart(points):
    return charts.trend_chart(points)
