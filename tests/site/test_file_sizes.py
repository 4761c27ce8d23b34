"""No source file of the project grows past MAX_LINES: a file that long holds several
concepts, and a reader looking for one has to wade through the others. Split it by
concept (a package whose `__init__` re-exports the public names keeps callers unchanged).
Migrations (generated) and tests are not counted."""

from pathlib import Path

from tests.fixtures.services import REPO

MAX_LINES = 400
PACKAGES = [
    "annotation",
    "dialogues",
    "collection",
    "writing",
    "panels",
    "judges",
    "common",
    "chatanime_site",
]


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def counted_files(root: Path, packages: list[str]) -> list[Path]:
    """Python files of the packages, without migrations and tests."""
    files = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).parts
            if "migrations" in parts or "tests" in parts or path.name.startswith("test_"):
                continue
            files.append(path)
    return files


def oversized(root: Path, packages: list[str], limit: int = MAX_LINES) -> dict[str, int]:
    """Relative path -> line count of every counted file over `limit` lines."""
    found = {}
    for path in counted_files(root, packages):
        lines = line_count(path)
        if lines > limit:
            found[path.relative_to(root).as_posix()] = lines
    return found


def test_no_source_file_is_longer_than_the_limit():
    too_long = oversized(REPO, PACKAGES)
    assert too_long == {}, f"over {MAX_LINES} lines: {too_long}; split these files by concept"


def test_the_check_sees_a_long_file_and_skips_migrations_and_tests(tmp_path):
    app = tmp_path / "app"
    (app / "migrations").mkdir(parents=True)
    (app / "tests").mkdir()
    long_text = "x = 1\n" * (MAX_LINES + 1)
    for name in ("views.py", "migrations/0001_initial.py", "tests/test_views.py", "test_x.py"):
        (app / name).write_text(long_text)
    (app / "models.py").write_text("x = 1\n" * MAX_LINES)

    assert oversized(tmp_path, ["app"]) == {"app/views.py": MAX_LINES + 1}
