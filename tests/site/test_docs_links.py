"""The README and bench/README.md link only to files that exist, and to headings those files
have: MkDocs checks the links inside docs/ (`make docs`, run by `make test`), but not these
two, which live outside it. The README stays a short front door; the rest is in docs/."""

import re
from pathlib import Path

from tests.fixtures.services import REPO

README_MAX_LINES = 250
CHECKED = ["README.md", "bench/README.md"]

# [text](target) and <target>, outside code spans and fenced blocks.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def prose(markdown: str) -> str:
    """The text with fenced blocks and code spans taken out: a link shown as code is not one."""
    return CODE_SPAN.sub("", FENCE.sub("", markdown))


def links(markdown: str) -> list[str]:
    return LINK.findall(prose(markdown))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and MkDocs make it for plain headings: lower case,
    punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    return {slug(heading) for heading in HEADING.findall(FENCE.sub("", markdown))}


def broken_links(root: Path, name: str) -> list[str]:
    """Every relative link of `name` whose file, or whose #anchor in that file, is missing."""
    source = root / name
    broken = []
    for target in links(source.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        linked = (source.parent / path_part).resolve() if path_part else source
        if not linked.exists():
            broken.append(f"{name}: {target} (no such file)")
            continue
        is_markdown = linked.is_file() and linked.suffix == ".md"
        if anchor and is_markdown and anchor not in anchors(linked.read_text(encoding="utf-8")):
            broken.append(f"{name}: {target} (no such heading)")
    return broken


def test_every_relative_link_of_the_readmes_points_to_an_existing_file_and_heading():
    broken = [problem for name in CHECKED for problem in broken_links(REPO, name)]
    assert broken == []


def test_the_readme_links_to_every_docs_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    linked = {(REPO / target.partition("#")[0]).resolve() for target in links(readme)}
    pages = {path.resolve() for path in (REPO / "docs").rglob("*.md")}
    assert sorted(str(p.relative_to(REPO)) for p in pages - linked) == []


def test_the_readme_is_short():
    lines = len((REPO / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines < README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/"


def test_the_readme_names_the_two_commands():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make run" in readme
    assert "make test" in readme


def test_the_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## Signing up\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "[ok](docs/guide.md#signing-up) [gone](docs/nope.md) [bad](docs/guide.md#log-in)\n"
        "[web](https://example.com) `[code](docs/nope.md)`\n\n"
        "```\n[fenced](docs/nope.md)\n```\n",
        encoding="utf-8",
    )

    assert broken_links(tmp_path, "README.md") == [
        "README.md: docs/nope.md (no such file)",
        "README.md: docs/guide.md#log-in (no such heading)",
    ]


def test_anchors_are_made_as_mkdocs_and_github_make_them():
    assert slug("Signing up and screening") == "signing-up-and-screening"
    assert slug("For staff: writing runs and review") == "for-staff-writing-runs-and-review"
    assert slug("`make run`") == "make-run"
