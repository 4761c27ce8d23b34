from django import template

register = template.Library()


@register.filter
def lookup(mapping, key):
    """`posted|lookup:name`: a form value by a computed field name."""
    return mapping.get(key, "") if hasattr(mapping, "get") else ""
