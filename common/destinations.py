"""Places where one app's page sends a person to another app's page, without importing
it: when a panel participant's batch is over, the rating page (in `annotation`, which
knows nothing of panels) sends them to the panel's own page. The app that owns the
destination registers a lookup when it starts (`AppConfig.ready`); the page asks
`destination_for` and redirects there if an address comes back.

Names in use:
- "work-stop": asked before a new item is leased; an address means "no more work for
  this person: go there instead".
- "work-done": asked when there is nothing left to rate; an address replaces the "nothing
  to rate right now" page.
- "work-leave": asked when the rating page is shown whole; an address is where this
  person can leave their work for good (a panel participant's "Leave this study")."""

from collections.abc import Callable

Lookup = Callable[[object], str | None]

_registered: dict[str, list[Lookup]] = {}


def destination_add(name: str, lookup: Lookup) -> None:
    """Ask `lookup(user)` for `name`; adding the same lookup twice (a reloaded app) keeps
    one."""
    lookups = _registered.setdefault(name, [])
    if lookup not in lookups:
        lookups.append(lookup)


def destination_for(name: str, user) -> str | None:
    """The first address a registered lookup gives for `user`, or None."""
    for lookup in _registered.get(name, []):
        address = lookup(user)
        if address:
            return address
    return None
