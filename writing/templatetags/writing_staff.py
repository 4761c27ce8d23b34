"""Lets the staff screening page show writer applications without `annotation` knowing
about fan writing."""

from django import template

from ..selectors import pending_applications

register = template.Library()


@register.inclusion_tag("writing/_applications.html", takes_context=True)
def writer_applications(context):
    return {"applications": pending_applications(), "request": context["request"]}
