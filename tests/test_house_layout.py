"""The house's layout: no import circles in evaluator/ (leaderboard/ has its own one-way groups,
tests/leaderboard/test_layout.py), irboard/ is the only package that imports both, and docs/layout.md names every
module, so that it cannot drift from the code."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("evaluator", "leaderboard", "irboard")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The project modules `path` imports, at the top or inside functions (`from a import b` counts a.b when
    that is a module, else a)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                     for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found |= {name for name in names if name in known}
    return found


def graph(package: str) -> dict[str, set[str]]:
    paths = {module_name(p): p for p in (ROOT / package).rglob("*.py")}
    known = set(paths)
    # a package's __init__ re-exports its modules: importing a module of a package also runs the package's
    # __init__, which is not an import of the package's other modules by the importer
    return {name: imported_modules(path, known) - {name} for name, path in paths.items()
            if not path.name == "__init__.py"}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles_in_either_package():
    for package in ("evaluator", "leaderboard"):
        assert cycles(graph(package)) == [], package


def test_the_checker_sees_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_evaluator_imports_nothing_above_it():
    for path in (ROOT / "evaluator").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) (leaderboard|irboard)\b", text, re.M), path


def test_docs_layout_names_every_module():
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([A-Za-z_][\w./]*)`", text))
    missing = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "__init__.py" or path.name.startswith("_"):
                continue
            stem = path.stem
            if stem not in named and path.relative_to(ROOT).as_posix() not in named:
                missing.append(path.relative_to(ROOT).as_posix())
    assert missing == [], f"docs/layout.md does not name: {', '.join(missing)}"
