"""The packages of `leaderboard/` import one way only (docs/layout.md): each group imports only the groups listed
for it here, and nothing imports the command line."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "leaderboard"
ALLOWED = {  # group -> the leaderboard groups its modules may import (besides its own)
    "submissions": set(),
    "analysis": {"submissions"},
    "review": {"submissions", "analysis"},
    "web": {"submissions", "analysis", "rounds"},
    "rounds": set(),
}


def leaderboard_imports(path: Path) -> set[str]:
    """The `leaderboard.<group>` names a module imports, at the top or inside functions."""
    groups = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "leaderboard" and len(parts) > 1:
                groups.add(parts[1])
    return groups


MODULES = sorted(path for path in PACKAGE.glob("*/*.py") if path.parent.name in ALLOWED)


def test_every_module_is_in_a_group():
    loose = sorted(path.name for path in PACKAGE.glob("*.py") if path.name not in {"__init__.py", "cli.py"})
    assert loose == []
    assert {path.parent.name for path in MODULES} == set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_imports_flow_one_way(path):
    group = path.parent.name
    imported = leaderboard_imports(path) - {group}
    assert imported <= ALLOWED[group], f"{group}/{path.name} imports {sorted(imported - ALLOWED[group])}"


def test_the_checker_sees_a_wrong_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from leaderboard.web import pages\n    from leaderboard import cli\n")
    assert leaderboard_imports(module) == {"web", "cli"}
