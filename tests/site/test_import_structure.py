"""The shape of the code that `lint-imports` cannot check: no import cycle anywhere, an
import inside a function included, and no module borrowing another's private name."""

import ast
import re
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotation", "dialogues", "collection", "writing", "panels", "common")


def cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in imports[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_the_cycle_finder_finds_a_cycle_through_three_modules():
    imports = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(imports) == [["a", "b", "c"]]


def test_no_module_of_any_app_imports_itself_back_even_from_inside_a_function():
    # grimp reads every import statement, those inside functions included.
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    assert cycles(imports) == []


def test_no_module_imports_a_private_name_of_another():
    borrowed = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    borrowed += [
                        f"{path.relative_to(ROOT)}:{node.lineno} {alias.name}"
                        for alias in node.names
                        if alias.name.startswith("_") and not alias.name.startswith("__")
                    ]
    assert borrowed == []


TEMPLATE_LIBRARIES_OF = {
    "annotation": {"annotation_extras"},
    "staff": {"annotation_extras"},
    "collection": set(),
    "writing": {"writing_staff"},
    "panels": set(),
}


# Django's own libraries, which every app may load (humanize: grouped large counts).
DJANGOS_OWN = {"i18n", "l10n", "static", "tz", "partials", "humanize"}


def test_each_apps_templates_load_only_their_own_template_tags():
    """A template loading another app's tags is an import the linter cannot see."""
    borrowed = []
    for folder, own in TEMPLATE_LIBRARIES_OF.items():
        for path in (ROOT / "templates" / folder).rglob("*.html"):
            for load in re.findall(r"{%\s*load\s+([^%]+)%}", path.read_text(encoding="utf-8")):
                libraries = set(load.split()) - DJANGOS_OWN
                borrowed += [f"{path.relative_to(ROOT)}: {name}" for name in libraries - own]
    assert borrowed == []
