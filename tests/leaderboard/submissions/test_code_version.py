"""The code version that keys every cache of derived state (leaderboard/submissions/cache.py): computed from the
source of a stage's modules and everything they import, so an edit anywhere in that code gives another version,
the same code the same one, and code the stage does not import leaves it alone."""

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from leaderboard.submissions import cache
from leaderboard.submissions.cache import ContentCache, code_version


@pytest.fixture
def package(tmp_path) -> Path:
    """pkg/: `stage` imports `helper` at the top and `deep.inner` inside a function; `helper` loads a compiled
    extension; `other` is imported by nobody."""
    root = tmp_path / "src"
    (root / "pkg" / "deep").mkdir(parents=True)
    files = {
        "pkg/__init__.py": "",
        "pkg/stage.py": "from pkg import helper\n\ndef run():\n    from pkg.deep.inner import (\n        value,\n    )\n",
        "pkg/helper.py": "import json\nfrom pkg import _native  # compiled\n",
        "pkg/deep/__init__.py": "",
        "pkg/deep/inner.py": "value = 1\n",
        "pkg/other.py": "value = 2\n",
        "pkg/notes.py": '"""Once read:\n    from pkg.gone import x\n(no longer a module)."""\nfrom pkg import stage\n',
    }
    for name, text in files.items():
        (root / name).write_text(text)
    (root / "pkg" / f"_native{EXTENSION_SUFFIXES[0]}").write_bytes(b"\x7fELF compiled")
    return root


def _version(root: Path) -> str:
    cache.code_version.cache_clear()  # as a new process would compute it
    return code_version("pkg.stage", root=root, packages=("pkg",))


@pytest.mark.parametrize(("name", "changes"), [
    ("pkg/stage.py", True),
    ("pkg/helper.py", True),
    ("pkg/deep/inner.py", True),  # imported inside a function, over several lines
    ("pkg/deep/__init__.py", True),  # runs when pkg.deep.inner is imported
    (f"pkg/_native{EXTENSION_SUFFIXES[0]}", True),  # by its bytes
    ("pkg/other.py", False),  # not imported by the stage
])
def test_an_edit_to_the_stage_code_changes_the_version(package, name, changes):
    before = _version(package)
    assert _version(package) == before  # the same code, the same version
    path = package / name
    path.write_bytes(path.read_bytes() + b"\n# edited\n")
    assert (_version(package) != before) is changes
    cache.code_version.cache_clear()


def test_a_copy_of_the_same_code_elsewhere_has_the_same_version(package, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(package, copy)
    assert _version(copy) == _version(package)
    cache.code_version.cache_clear()


def test_an_unknown_module_is_refused_but_a_name_in_a_docstring_is_not_one(package):
    with pytest.raises(ValueError, match="pkg.missing: no such module"):
        code_version("pkg.missing", root=package, packages=("pkg",))
    assert code_version("pkg.notes", root=package, packages=("pkg",)) != _version(package)
    cache.code_version.cache_clear()


def test_the_stages_versions_follow_what_they_import(edit_code):
    stages = {"verified": "leaderboard.submissions.verify", "predicted": "leaderboard.analysis.predictions",
              "read": "leaderboard.submissions.load", "checked": "leaderboard.submissions.validate"}
    before = {name: code_version(module) for name, module in stages.items()}
    edit_code("leaderboard.analysis.scale")  # the score model: predictions (and what the build keeps) only
    after = {name: code_version(module) for name, module in stages.items()}
    assert {name for name in stages if after[name] != before[name]} == {"predicted"}
    edit_code("leaderboard.submissions.sample_checks")  # checks of re-scoring: not the predictions
    again = {name: code_version(module) for name, module in stages.items()}
    assert {name for name in stages if again[name] != after[name]} == {"verified", "read", "checked"}


def test_an_entry_is_found_only_by_the_same_code(tmp_path, edit_code):
    ContentCache(tmp_path, code=("leaderboard.submissions.verify",)).put({"file_sha256": "a"}, {"value": 1})
    assert ContentCache(tmp_path, code=("leaderboard.submissions.verify",)).get({"file_sha256": "a"})["value"] == 1
    edit_code("leaderboard.submissions.labels")
    assert ContentCache(tmp_path, code=("leaderboard.submissions.verify",)).get({"file_sha256": "a"}) is None
