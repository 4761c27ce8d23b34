from django import template

from dialogues.selectors import source_shown_name

register = template.Library()


@register.filter
def source_name(display_name: str) -> str:
    """`source.display_name|source_name`: the name a page shows for a source, the human
    fans' in the page's language (see `source_shown_name`)."""
    return source_shown_name(display_name)
