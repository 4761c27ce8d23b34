"""What a process keeps of a read for a few seconds, instead of asking the database on
every request: metric definitions, item blocks, a study's staffing and open work, an
annotator's estimate of what is left.

Each copy is kept for its own time and dropped whole when there are too many, so a
process never grows without bound. Everything kept here can be forgotten in one call
(`forget_all`), which tests do before each test: no test sees another's copies.
"""

import time
from collections.abc import Callable, Hashable

_every: list["Kept"] = []


class Kept[V]:
    """Values by key, each fresh for `seconds` after it was kept (or as long as `keep` is
    told), at most `most` of them."""

    def __init__(self, seconds: float, *, most: int = 1000):
        self.seconds = seconds
        self.most = most
        self._values: dict[Hashable, tuple[float, V]] = {}
        _every.append(self)

    def get(self, key: Hashable) -> V | None:
        """The value kept under `key` while it is fresh, else None."""
        found = self._values.get(key)
        if found is not None and time.monotonic() < found[0]:
            return found[1]
        return None

    def keep(self, key: Hashable, value: V, *, seconds: float | None = None) -> V:
        if len(self._values) >= self.most and key not in self._values:
            self._values.clear()
        fresh_for = self.seconds if seconds is None else seconds
        self._values[key] = (time.monotonic() + fresh_for, value)
        return value

    def read(self, key: Hashable, read: Callable[[], V]) -> V:
        """The fresh value under `key`, or `read()`, kept."""
        found = self._values.get(key)
        if found is not None and time.monotonic() < found[0]:
            return found[1]
        return self.keep(key, read())

    def forget(self, key: Hashable | None = None) -> None:
        """Forget one key, or everything when none is given."""
        if key is None:
            self._values.clear()
        else:
            self._values.pop(key, None)

    def __len__(self) -> int:
        return len(self._values)


def forget_all() -> None:
    """Forget every process copy kept anywhere (tests, before each test)."""
    for kept in _every:
        kept.forget()
