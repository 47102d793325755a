"""The wheel installs and `irboard build` works from it, away from the repository.

Offline: the wheel is built with the test environment's setuptools (no build isolation), installed with
`--no-index --no-deps` into a fresh virtual environment, and that environment finds the dependencies in the test
environment's site-packages through a .pth file (which adds a path only: the editable install's hook there is
not run, so the source tree stays out of reach).
"""

import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

# What a source distribution holds: everything the wheel is built from.
SOURCES = ["pyproject.toml", "setup.py", "README.md", "evaluator", "leaderboard", "templates", "site"]


def _run(*command, cwd: Path) -> str:
    done = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment with the irboard wheel installed; returns its bin folder."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__", "*.so")}
                                            if (ROOT / name).is_dir() else {}))
    _run(sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-q",
         "-w", root / "dist", source, cwd=root)
    wheels = list((root / "dist").glob("irboard-*.whl"))
    assert len(wheels) == 1
    env = root / "env"
    venv.EnvBuilder(with_pip=True).create(env)
    bin_dir = env / "bin"
    _run(bin_dir / "python", "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheels[0], cwd=root)
    purelib = _run(bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=root)
    (Path(purelib.strip()) / "test-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return bin_dir


def test_the_wheel_evaluates_and_builds_the_site(installed, tmp_path):
    where = _run(installed / "python", "-c", "import leaderboard.web.render as r; print(r.TEMPLATES_DIR); "
                 "print(r.STATIC_DIR)", cwd=tmp_path).split()
    assert all(Path(path).is_relative_to(installed.parent) for path in where), where  # not the repository's
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 2.0 t\nq2 Q0 d2 2 1.0 t\n")
    for model_id in ("bm25", "org/second"):  # bm25 is the default baseline
        _run(installed / "irboard", "evaluate", "--run", "run.txt", "--qrels", "qrels.txt", "--quiet",
             "--model-id", model_id, "--dataset-id", "test/tiny", "--results-dir", "results", "--declare",
             "--depth", "1000",  # the run ranks the whole (two-document) collection
             cwd=tmp_path)
    _run(installed / "irboard", "build", "--strict", "--results", "results", "--out", "_site", cwd=tmp_path)
    site = tmp_path / "_site"
    assert "org/second" in (site / "index.html").read_text()
    assert "test/tiny" in (site / "datasets" / "test__tiny.html").read_text()
    for asset in ("css/site.css", "js/table.js", "js/charts.js"):
        assert (site / asset).read_bytes() == (ROOT / "site" / asset).read_bytes()
    assert (site / "js" / "plotly.min.js").stat().st_size > 100_000
