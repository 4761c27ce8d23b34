"""Names a dialogue's flags for the staff who review it."""

import re

from django import template
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def flag_names(flags: list[str]) -> str:
    """`paste:r1` and `near_duplicate:SLUG:r2` (see services.rounds) in words; a flag of
    another kind shows as it is."""
    names = []
    for flag in flags or []:
        if found := re.fullmatch(r"paste:r(\d)", flag):
            names.append(_("Pasted text in round %(round)s") % {"round": found[1]})
        elif found := re.fullmatch(r"near_duplicate:(.+):r(\d)", flag):
            names.append(
                _("Round %(round)s is close to an answer of %(source)s")
                % {"round": found[2], "source": found[1]}
            )
        else:
            names.append(flag)
    return "; ".join(names)
