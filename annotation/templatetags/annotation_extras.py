from django import template

register = template.Library()


@register.filter
def lookup(mapping, key):
    """`posted|lookup:name`: a form value by a computed field name."""
    return mapping.get(key, "") if hasattr(mapping, "get") else ""


@register.filter
def pairs(mapping):
    """`event.after|pairs`: a dict's (key, value) pairs. `mapping.items` in a template
    would look up a key named "items" first."""
    return list(mapping.items()) if isinstance(mapping, dict) else []
