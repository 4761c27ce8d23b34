"""Files that another app adds to an export snapshot, without `annotation` (which writes
the snapshot) importing it: the judges' ratings travel beside the human ratings, in their
own file, yet `annotation` knows nothing of judges. The app that adds a file registers a
writer when it starts (`AppConfig.ready`); the snapshot calls every registered writer."""

from collections.abc import Callable
from pathlib import Path

# writer(path, study or None) -> the file's description for the manifest ({"kind", "rows",
# "bytes", "sha256"}), or None when it has nothing to write (and wrote nothing).
Writer = Callable[[Path, object], dict | None]

_registered: dict[str, Writer] = {}


def snapshot_file_add(name: str, writer: Writer) -> None:
    """Write `name` into every snapshot with `writer`; adding it again replaces it."""
    _registered[name] = writer


def snapshot_files() -> list[tuple[str, Writer]]:
    """The registered files, in the order they were added."""
    return list(_registered.items())


# check(snapshot directory) -> {figure family: difference}, each difference with
# `compared`, `points`, `intervals`, `missing`, `differing` and `reproduced` as
# `annotation.reproduce.FamilyDifference` has them.
Check = Callable[[Path], dict]

_checks: dict[str, Check] = {}


def snapshot_check_add(name: str, check: Check) -> None:
    """When a snapshot lists the file `name`, `reproduce` rebuilds its figures with
    `check` as well; adding it again replaces it."""
    _checks[name] = check


def snapshot_checks() -> list[tuple[str, Check]]:
    return list(_checks.items())
