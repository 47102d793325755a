"""The packages of `leaderboard/` import one way only (docs/layout.md): each group imports only the groups listed
for it here; the command line (`cli.py` and `commands/`) may import every group and nothing imports it; only the
command line parses arguments."""

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
CLI_LAYER = "commands"  # with cli.py: argument parsing, printing and exit codes


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


def group_of(path: Path) -> str:
    """The group a module belongs to: the first folder below leaderboard/ (web/views/home.py is in web)."""
    return path.relative_to(PACKAGE).parts[0]


# every module of a group, in its subpackages too (web/views/)
MODULES = sorted(path for path in PACKAGE.glob("*/**/*.py") if group_of(path) in ALLOWED)


CLI_MODULES = sorted([PACKAGE / "cli.py", *(PACKAGE / CLI_LAYER).glob("*.py")])


def test_every_module_is_in_a_group():
    loose = sorted(path.name for path in PACKAGE.glob("*.py") if path.name not in {"__init__.py", "cli.py"})
    assert loose == []
    groups = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert groups == set(ALLOWED) | {CLI_LAYER}
    assert {group_of(path) for path in MODULES} == set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.relative_to(PACKAGE).as_posix())
def test_imports_flow_one_way(path):
    group = group_of(path)
    imported = leaderboard_imports(path) - {group}
    assert imported <= ALLOWED[group], f"{group}/{path.name} imports {sorted(imported - ALLOWED[group])}"


@pytest.mark.parametrize("path", CLI_MODULES, ids=lambda path: path.relative_to(PACKAGE).as_posix())
def test_the_command_line_imports_only_leaderboard_groups(path):
    imported = leaderboard_imports(path) - {CLI_LAYER, "cli"}
    assert imported <= set(ALLOWED), f"{path.name} imports {sorted(imported - set(ALLOWED))}"


def argument_parsing(path: Path) -> list[str]:
    """Where a module imports argparse or names `argparse.Namespace` / `ArgumentParser` (in a hint or a call)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(alias.name == "argparse" for alias in node.names):
            found.append(f"line {node.lineno}: import argparse")
        elif isinstance(node, ast.ImportFrom) and node.module == "argparse":
            found.append(f"line {node.lineno}: from argparse import")
        elif isinstance(node, (ast.Attribute, ast.Name)) and \
                (node.attr if isinstance(node, ast.Attribute) else node.id) in {"Namespace", "ArgumentParser"}:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                ("Namespace" in node.value or "ArgumentParser" in node.value) and len(node.value) < 80:
            found.append(f"line {node.lineno}: {node.value!r}")  # a string annotation
    return found


API_MODULES = sorted((PACKAGE.parent / "irboard").glob("*.py"))  # the Python API sits on the library too


@pytest.mark.parametrize("path", MODULES + API_MODULES, ids=lambda path: path.relative_to(PACKAGE.parent).as_posix())
def test_only_the_command_line_parses_arguments(path):
    assert argument_parsing(path) == []


def test_the_argument_check_sees_a_namespace(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from __future__ import annotations\nimport argparse\n\n\n"
                      "def run(args: argparse.Namespace) -> int:\n    return 0\n\n\n"
                      "def other(args: 'Namespace') -> int:\n    return 0\n")
    assert argument_parsing(module) == ["line 2: import argparse", "line 5: argparse.Namespace",
                                        "line 9: 'Namespace'"]
    assert argument_parsing(PACKAGE / "commands" / "validate.py") != []


def test_the_checker_sees_a_wrong_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from leaderboard.web import pages\n    from leaderboard import cli\n")
    assert leaderboard_imports(module) == {"web", "cli"}
