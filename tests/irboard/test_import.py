"""`import irboard` is quick: it loads no numpy, pandas, scipy or torch (each function's modules load when it is
first used), and every public name still resolves. Checked in fresh interpreters (sys.modules), not by time."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

HEAVY = ("numpy", "pandas", "scipy", "torch", "pyarrow", "jinja2", "pydantic")


def loaded_after(code: str) -> set[str]:
    """The heavy modules in sys.modules after running `code` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_irboard_pulls_in_no_heavy_module():
    assert loaded_after("import irboard") == set()
    assert loaded_after("import irboard.errors") == set()


def test_evaluating_dicts_pulls_in_no_pandas_scipy_or_torch():
    loaded = loaded_after("import irboard\nprint(irboard.evaluate({'q': {'d': 1.0}}, {'q': {'d': 1}}, 'AP'))")
    assert "numpy" in loaded and not loaded & {"pandas", "scipy", "torch", "pydantic"}  # nor the result models


def test_every_public_name_resolves_and_others_do_not():
    code = ("import irboard\nfrom irboard import evaluate, compare, Report, Result\n"
            "assert all(getattr(irboard, name) is not None for name in irboard.__all__)\n"
            "assert sorted(irboard.__all__) == dir(irboard)\n"
            "assert evaluate is irboard.evaluate and compare.__module__ == 'irboard.comparison'\n"
            "try:\n    irboard.evaluat\nexcept AttributeError as error:\n    assert 'evaluat' in str(error)\n"
            "else:\n    raise SystemExit('no AttributeError')")
    assert not loaded_after(code) & {"pandas", "scipy", "torch"}  # even the modules they live in load none
