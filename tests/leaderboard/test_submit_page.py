"""The Submit page's commands, run as written in a fresh virtual environment, and the one line a missing extra gives.

The environment is test_packaging's: the wheel built offline and installed without its dependencies, which it
finds in the test environment through a .pth file. The page's `pip install` line is checked for the extra it
names (the wheel stands in for the install), and every `irboard` line is run as the page prints it, in a folder
holding a copy of the repository's results (as a clone has) and a run file: the stored ranking of the repository's
BM25 (k1=1.5, b=0.75) SciFact result, written as a TREC run.
"""

import html
import re
import shlex
import shutil
import subprocess

import pytest

from tests.conftest import ROOT, SCIFACT
from tests.leaderboard.test_packaging import installed  # noqa: F401 (the fixture)
from tests.leaderboard.test_submit_path import write_trec

pytestmark = pytest.mark.slow


def page_commands() -> list[str]:
    """Every command line in the page's code blocks (a line continuing with `&&` split into its commands)."""
    text = (ROOT / "templates" / "submit.html").read_text()
    blocks = [html.unescape(block) for block in re.findall(r"<pre><code>(.*?)</code></pre>", text, flags=re.S)]
    return [part.strip() for block in blocks for line in block.splitlines() for part in line.split("&&")]


def test_the_pages_commands_run_as_written_in_a_fresh_environment(installed, tmp_path):  # noqa: F811
    commands = page_commands()
    install = [c for c in commands if "pip install" in c]
    assert install == ["python -m pip install -e '.[models]'"]  # --model needs torch and PyStemmer: the extra
    shutil.copytree(ROOT / "results", tmp_path / "results")
    write_trec(ROOT / "results" / "bm25-k1-1.5-b-0.75" / "beir__scifact.json", tmp_path / "run.trec")
    ran = []
    for command in commands:
        argv = shlex.split(command)
        if argv[0] != "irboard" or argv[1] == "serve" or "--model" in argv:  # serve waits; --model needs the hub
            continue
        done = subprocess.run([str(installed / "irboard"), *argv[1:]], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        ran.append(argv[1])
    assert ran == ["evaluate", "validate", "build"]
    assert (tmp_path / "_site" / "models" / "org__model.html").is_file()


def test_a_missing_extra_is_one_line_naming_it(installed, tmp_path):  # noqa: F811
    """PyStemmer absent (a module that cannot be found stands first on the path): one line, no traceback."""
    blocker = tmp_path / "without"
    (blocker / "Stemmer").mkdir(parents=True)
    (blocker / "Stemmer" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'Stemmer'\", name='Stemmer')\n")
    done = subprocess.run([str(installed / "irboard"), "evaluate", "--model", "bm25", "--dataset", "beir/scifact",
                           "--data-dir", str(SCIFACT), "--results-dir", "results", "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, env={"PYTHONPATH": str(blocker), "PATH": ""})
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: this needs the Python module 'Stemmer', which the 'models' extra installs: pip install "
        "'irboard[models]' (from a clone: pip install -e '.[models]')"], done.stderr
    assert not (tmp_path / "results").exists()
