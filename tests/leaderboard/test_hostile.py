"""Hostile submissions through the commands the workflows run: exit 1 with one line per problem, no traceback.

Each case starts from a real-shaped SciFact result (tests/conftest.py) with one change, as a contributor could
submit it, and runs the command line in-process; the interrupted-write case runs the installed `irboard` console
script as CI does, for the process boundary.
"""

import contextlib
import io
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.result import result_path
from leaderboard.cli import main
from leaderboard.web.render import format_bytes, format_parameters
from tests.conftest import SHARED, make_scifact_result

pytestmark = pytest.mark.slow  # subprocesses of irboard: left to `make test`

IRBOARD = str(Path(sys.executable).parent / "irboard")
NEW_MODEL = "org/new-model"


def write_results(root: Path, edit=None) -> Path:
    """A bm25 baseline and a new model's result on beir/scifact under `root`; `edit(data)` changes the new one
    (the JSON as a dict). Returns the new model's file."""
    for model_id, seed, kind in [("bm25", 1, "lexical"), (NEW_MODEL, 2, "dense")]:
        path = result_path(model_id, "beir/scifact", root)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = make_scifact_result(model_id, seed, kind)
        if edit is not None and model_id == NEW_MODEL:
            data = json.loads(text)
            edit(data)
            text = json.dumps(data)
        path.write_text(text)
    return result_path(NEW_MODEL, "beir/scifact", root)


def irboard_process(*args) -> subprocess.CompletedProcess:
    """The installed console script, as CI runs it (kept for the process boundary: exit code, stderr)."""
    return subprocess.run([IRBOARD, *map(str, args)], capture_output=True, text=True, timeout=300)


def irboard(*args) -> subprocess.CompletedProcess:
    """The command line in-process (no interpreter start per call): its exit code, stdout, and stderr with what it
    logs. An exception it lets through fails the test as a traceback would."""
    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:]
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("irboard: %(message)s"))
    root.handlers = [handler]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(arg) for arg in args])
    finally:
        root.handlers = saved
    return subprocess.CompletedProcess(["irboard", *map(str, args)], code, out.getvalue(), err.getvalue())


def assert_one_line_rejection(done: subprocess.CompletedProcess, path: Path, expected: str) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if str(path) in line]
    assert len(lines) == 1 and expected in lines[0], done.stderr


def _rejected_by_every_command(tmp_path: Path, edit, expected: str) -> None:
    path = write_results(tmp_path / "results", edit)
    assert_one_line_rejection(irboard("validate", "--results", tmp_path / "results", "--data-dir", SHARED / "data"),
                              path, expected)
    build = irboard("build", "--strict", "--results", tmp_path / "results", "--out", tmp_path / "_site")
    assert_one_line_rejection(build, path, expected)
    assert not (tmp_path / "_site").exists()


def _rename_metric(old: str, new: str):
    def edit(data):
        data["metrics"][new] = data["metrics"].pop(old)
        data["per_query"][new] = data["per_query"].pop(old)

    return edit


@pytest.mark.parametrize(("spelling", "canonical"), [("P@05", "P@5"), ("P@5\n", "P@5"), (" P@5", "P@5")])
def test_metric_key_in_another_spelling_is_rejected(tmp_path, spelling, canonical):
    # Was a KeyError while re-scoring: the key parsed as P@5 but was stored under another spelling.
    _rejected_by_every_command(tmp_path, _rename_metric("P@5", spelling), f"write '{canonical}'")


def _huge_parameters(data):
    data["model"]["parameters"] = 10**400


@pytest.mark.parametrize(("count", "expected"), [(10**400, "number is infinity"), (10**15, "model.parameters")])
def test_absurd_parameter_count_is_rejected(tmp_path, count, expected):
    # 10**400 is beyond any JSON reader's numbers; 10**15 is a number, but beyond the schema's bound
    _rejected_by_every_command(tmp_path, lambda data: data["model"].update(parameters=count), expected)


def test_absurd_numbers_never_crash_the_build(tmp_path):
    # 10**400 / 1e12 was an OverflowError while formatting; whatever the schema allows must render.
    assert format_parameters(10**400) == "1.00e+400"
    assert format_bytes(10**400) == "1.00e+400 B"
    assert (format_parameters(22_700_000), format_parameters(999), format_bytes(3 * 2**30)) == ("22.7M", "999",
                                                                                                 "3.0 GiB")
    write_results(tmp_path / "results", _huge_parameters)
    done = irboard("build", "--results", tmp_path / "results", "--out", tmp_path / "_site")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr


def _huge_arp(data):
    values = {query_id: 1e308 for query_id in data["per_query"]["P@5"]}
    data["per_query"]["ARP"] = values
    data["metrics"]["ARP"] = 1e308


def test_absurd_average_rank_is_rejected(tmp_path):
    # The mean check sums 300 values of 1e308: OverflowError instead of a problem line.
    _rejected_by_every_command(tmp_path, _huge_arp, "ARP")


def test_interrupted_write_is_ignored(tmp_path):
    """A killed `irboard evaluate` leaves `.<name>.<random>.tmp` beside its output; nothing trips on it."""
    path = write_results(tmp_path / "results")
    (path.parent / f".{path.name}.k2j4h1x_.tmp").write_text('{"schema_version": 2, "mod')
    validate = irboard_process("validate", "--results", tmp_path / "results")
    # what it says is only the metadata these synthetic files leave unstated, never the temporary file
    assert validate.returncode == 0 and ".tmp" not in validate.stderr and "error" not in validate.stderr, \
        validate.stderr
    build = irboard_process("build", "--strict", "--results", tmp_path / "results", "--out", tmp_path / "_site")
    assert build.returncode == 0 and ".tmp" not in build.stderr and "error" not in build.stderr, build.stderr
    assert "2 results" in build.stdout
    # Any other stray file still gets its warning, which --strict turns into a failure.
    (path.parent / "notes.txt").write_text("hi")
    build = irboard_process("build", "--strict", "--results", tmp_path / "results", "--out", tmp_path / "_site")
    assert build.returncode == 1 and "notes.txt: ignored" in build.stderr


def test_line_breaks_in_field_names_stay_on_one_line(tmp_path):
    # The schema names the unknown field; raw, "\r\n" or U+2028 in its name split the problem over two lines.
    def edit(data):
        data["model"]["evil\r\nfield\u2028"] = 1

    _rejected_by_every_command(tmp_path, edit, "evil\\r\\nfield\\u2028")


@pytest.mark.parametrize("artifact", [5, [], "bm25", True])
def test_an_artifact_that_is_not_an_object_is_one_line(tmp_path, artifact):
    """Found by the ledger reader's property test (tests/leaderboard/submissions/test_reproductions_fuzz.py): the
    artifact's kind was read from an object's attributes, and a number had none."""
    _rejected_by_every_command(tmp_path, lambda data: data["model"].update(artifact=artifact),
                               "model.artifact.spec: Input should be a valid dictionary")
