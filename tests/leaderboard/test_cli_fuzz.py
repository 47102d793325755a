"""Every command the workflows run, fuzzed: whatever the input, exit 0 or 1, no traceback, one line per problem.

Inputs come from the public API: a real-shaped SciFact result (tests/conftest.py) whose readable fields (model,
dataset, settings, metrics, provenance) are mutated, the same result in its stored version-3 form with its binary
columns cut, replaced or swapped and its counts made to disagree with them, raw bytes in place of a result file,
and TREC run files for `irboard evaluate --run`. Commands run in-process through `leaderboard.cli.main`, so an exception fails the test
with its traceback.
"""

from __future__ import annotations

import base64
import json
import shutil
import zlib
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator.result import read_result
from tests.conftest import make_scifact_result
from tests.leaderboard.test_hostile import NEW_MODEL, irboard, write_results

pytestmark = pytest.mark.slow  # excluded from `make check`

ROOT = Path(__file__).resolve().parents[2]

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SECTIONS = ("model", "dataset", "settings", "metrics", "provenance")
HOSTILE_TEXT = ["", " ", "<b>x</b>", "</script><script>alert(1)</script>", '=HYPERLINK("http://x","y")', "+1",
                "-1", "@SUM(1)", "\t=1", "\r\n", "bm25\n", "bm25", "org/new-model", "beir/scifact", "../../etc",
                "\u2028", "\x00", "nDCG@10", "nDCG@10\n", "P@05", "%{x}", "ﬁ", "x" * 3000]
HOSTILE_NUMBERS = [0, -1, 1, 2, 300, 2**63, 10**400, 1e308, -1e308, 1e-320, -0.0, 0.5, 1.5]


def _json_values():
    leaves = (st.sampled_from(HOSTILE_TEXT) | st.sampled_from(HOSTILE_NUMBERS) | st.text(max_size=10)
              | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.booleans() | st.none())
    return st.recursive(leaves, lambda children: st.lists(children, max_size=3)
                        | st.dictionaries(st.sampled_from(HOSTILE_TEXT) | st.text(max_size=5), children, max_size=3),
                        max_leaves=6)


@st.composite
def field_mutations(draw) -> tuple:
    """(section, action, key, value, compact): one readable field of a result set, added, removed or replaced,
    in the expanded form or the stored (compact) one."""
    section = draw(st.sampled_from(SECTIONS))
    action = draw(st.sampled_from(["set", "add", "delete", "replace"]))
    key = draw(st.sampled_from(HOSTILE_TEXT) | st.text(max_size=8)) if action == "add" else draw(st.integers(0, 20))
    return section, action, key, None if action == "delete" else draw(_json_values()), draw(st.booleans())


def mutated_result(section: str, action: str, key, value, compact: bool = False) -> str:
    """The new model's real-shaped result with the mutation applied (an integer key picks an existing field)."""
    data = json.loads(compact_document() if compact else make_scifact_result(NEW_MODEL, 2, "dense"))
    block = data[section]
    if isinstance(key, int):
        key = sorted(block)[key % len(block)] if block else "x"
    if action == "replace":
        data[section] = value
    elif action == "delete":
        block.pop(key, None)
    else:
        block[key] = value
    return json.dumps(data)


@st.composite
def raw_results(draw) -> bytes:
    """Bytes where a result file should be: random, a truncated result, or a result with bytes overwritten."""
    real = (compact_document() if draw(st.booleans()) else make_scifact_result(NEW_MODEL, 2, "dense")).encode()
    kind = draw(st.sampled_from(["random", "truncated", "overwritten"]))
    if kind == "random":
        return draw(st.binary(max_size=300))
    if kind == "truncated":
        return real[: draw(st.integers(0, len(real) - 1))]
    start = draw(st.integers(0, len(real) - 1))
    return real[:start] + draw(st.binary(min_size=1, max_size=8)) + real[start + 8:]


def run_cli(*argv) -> tuple[int, list[str]]:
    """`irboard ARGV` in-process: (exit code, stderr lines, logging included)."""
    done = irboard(*argv)
    return done.returncode, done.stderr.splitlines()


def _assert_clean(code: int, lines: list[str], root: Path) -> None:
    assert code in (0, 1), lines
    assert not any("Traceback" in line for line in lines), lines
    starts = ("error: ", "warning: ", "irboard: ", str(root), f"  {root}")
    for line in lines:  # a summary, or one problem naming its file
        assert line.startswith(starts), line
    if code == 1:
        assert lines, "exit 1 without saying why"


def _check_every_command(folder: Path, content: str | bytes) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    path = write_results(folder / "results")
    path.write_bytes(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)
    results, site = folder / "results", folder / "_site"
    for argv in (["validate", "--results", results], ["validate", path],
                 ["build", "--strict", "--results", results, "--out", site],
                 ["compare", "--results", results, path]):
        code, lines = run_cli(*argv)
        _assert_clean(code, lines, folder)
        if argv[0] == "build" and code == 1:
            assert not site.exists()  # nothing published


@FUZZ
@given(mutation=field_mutations())
def test_commands_survive_mutated_readable_fields(tmp_path_factory, mutation):
    _check_every_command(tmp_path_factory.mktemp("fuzz-fields"), mutated_result(*mutation))


@FUZZ
@given(content=raw_results())
def test_commands_survive_raw_bytes(tmp_path_factory, content):
    _check_every_command(tmp_path_factory.mktemp("fuzz-bytes"), content)


QUERY_IDS = ["q1", "q2", "<b>x</b>", "P@05", "q1\u2028", "é", "9" * 300]
TOKENS = st.sampled_from(["Q0", "0", "1", "-1", "2.5", "nan", "inf", "1e400", "-0", "d1", "d2", "x", "", "\x00"])


@st.composite
def trec_lines(draw, columns: int) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        tokens = [draw(st.sampled_from(QUERY_IDS))] + [draw(TOKENS | st.text(max_size=4))
                                                        for _ in range(draw(st.integers(columns - 2, columns + 1)))]
        lines.append(" ".join(tokens))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))


@FUZZ
@given(run=trec_lines(6) | st.binary(max_size=200), qrels=trec_lines(4) | st.just("q1 0 d1 1\nq2 0 d2 2\n"),
       metrics=st.none() | st.sampled_from(HOSTILE_TEXT + ["nDCG@10,R@5", "ARP", "AP@0"]),
       model_id=st.sampled_from(["org/model", *HOSTILE_TEXT]))
def test_evaluate_run_survives_any_run_file(tmp_path_factory, run, qrels, metrics, model_id):
    folder = tmp_path_factory.mktemp("fuzz-evaluate")
    (folder / "run.txt").write_bytes(run if isinstance(run, bytes) else run.encode("utf-8", "surrogatepass"))
    (folder / "qrels.txt").write_text(qrels, encoding="utf-8", errors="surrogatepass")
    out = folder / "out.json"
    argv = ["evaluate", "--run", folder / "run.txt", "--qrels", folder / "qrels.txt", f"--model-id={model_id}",
            "--dataset-id=test/data", "--out", out, "--quiet", "--declare"]
    code, lines = run_cli(*argv, *([f"--metrics={metrics}"] if metrics is not None else []))
    assert code in (0, 1) and not any("Traceback" in line for line in lines), lines
    assert all(line.startswith(("error: ", "irboard: ")) for line in lines), lines
    if code == 0:
        read_result(out)  # what evaluate writes reads back
    else:
        assert lines and not out.exists() and list(folder.glob(".*")) == []  # no output, no leftovers


# --- the compact version-3 document: its binary columns and the counts in its readable part ---------------------

COLUMNS = ["per_query.query_ids", "per_query.values", "run.doc_ids", "run.lengths", "run.docs", "run.scores",
           *(f"score_samples.{name}" for name in ("n_relevant", "relevant", "lo", "hi", "codes"))]
COUNTS = ["dataset.num_queries", "dataset.num_docs", "run.depth", "settings.top_k", "score_samples.num_docs",
          "score_samples.samples_per_query", "score_samples.samples_requested", "score_samples.levels",
          "score_samples.relevance_level"]


@lru_cache(maxsize=1)
def compact_document() -> str:
    """The new model's result in the stored form, with score samples (from a repository result that has them)."""
    document = json.loads(make_scifact_result(NEW_MODEL, 2, "dense", compact=True))
    for path in sorted(ROOT.glob("results/*/beir__scifact.json")):
        source = json.loads(path.read_text())
        if source.get("score_samples") and source["dataset"]["qrels_sha256"] == document["dataset"]["qrels_sha256"]:
            document["score_samples"] = source["score_samples"]
            document["dataset"]["num_docs"] = source["dataset"]["num_docs"]
            return json.dumps(document)
    raise AssertionError("the repository has no beir/scifact result with score samples")


def _zlib_base64(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data)).decode()


@st.composite
def column_mutations(draw) -> tuple[str, str, object]:
    """(field, action, argument): a column cut, replaced or swapped, or a count made to disagree with the columns."""
    if draw(st.booleans()):
        field = draw(st.sampled_from(COLUMNS))
        action = draw(st.sampled_from(["truncate", "random base64", "random zlib", "swap", "empty", "not text"]))
        argument = {"truncate": st.integers(0, 400), "random base64": st.binary(max_size=64),
                    "random zlib": st.binary(max_size=4096), "swap": st.sampled_from(COLUMNS),
                    "empty": st.none(), "not text": st.sampled_from([None, 0, [], {}, "é", "A" * 5])}[action]
        return field, action, draw(argument)
    field = draw(st.sampled_from(COUNTS + ["metrics"]))
    action = draw(st.sampled_from(["shift", "set"]))
    argument = draw(st.integers(-3, 3)) if action == "shift" else draw(st.sampled_from(HOSTILE_NUMBERS))
    return field, action, argument


def mutated_columns(field: str, action: str, argument) -> str:
    document = json.loads(compact_document())
    block, name = field.split(".") if "." in field else (field, None)
    part = document[block]
    if field == "metrics":  # a mean more or fewer than the per-query columns hold
        if action == "shift" and argument > 0:
            part["P@10"] = 0.1
        elif part:
            part.pop(sorted(part)[abs(int(argument)) % len(part)] if isinstance(argument, int) else "P@5", None)
    elif action == "truncate":
        part[name] = part[name][:argument]
    elif action == "random base64":
        part[name] = base64.b64encode(argument).decode()
    elif action == "random zlib":
        part[name] = _zlib_base64(argument)
    elif action == "swap":
        other_block, other = argument.split(".")
        part[name], document[other_block][other] = document[other_block][other], part[name]
    elif action == "empty":
        part[name] = ""
    elif action == "not text":
        part[name] = argument
    elif action == "shift":
        part[name] = (part[name] or 0) + argument
    else:
        part[name] = argument
    return json.dumps(document)


def test_the_compact_document_is_valid_before_it_is_mutated(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(compact_document())
    assert read_result(path).score_samples is not None


@FUZZ
@given(mutation=column_mutations())
def test_commands_survive_mutated_columns_and_counts(tmp_path_factory, mutation):
    _check_every_command(tmp_path_factory.mktemp("fuzz-columns"), mutated_columns(*mutation))
