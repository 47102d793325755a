"""Every case of the hostile-submission report (issue 13), replayed through the commands the workflows run.

A metric the stored ranking cannot determine is accepted but shown unverified, and its result is not ranked;
anything else wrong is exit 1 with one line naming the file. Results come from `irboard evaluate --run` on
beir/scifact or from the repository's own results, each with one hostile change; judgments are the official ones
(IRBOARD_MIRROR, tests/conftest.py).
"""

import base64
import json
import math
import os
import resource
import signal
import subprocess
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from evaluator.columns import encode_array
from evaluator.result import dump_result, expand_result, parse_result, read_result, result_path
from evaluator.trust import CLAIMED, SELF_REPORTED, tier_sentence
from tests.conftest import SCIFACT, make_scifact_result
from tests.leaderboard.test_hostile import IRBOARD, NEW_MODEL, assert_one_line_rejection, irboard

pytestmark = pytest.mark.slow  # subprocesses of irboard: left to `make test`

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_file(tmp_path_factory) -> Path:
    """A TREC run on beir/scifact: every judged document near the top, then 150 unjudged ones per query."""
    rng = np.random.default_rng(13)
    judged: dict[str, list[str]] = {}
    for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, _ = line.split("\t")
        judged.setdefault(query_id, []).append(doc_id)
    lines = []
    for query_id, docs in judged.items():
        scored = [(doc, 5 + rng.random()) for doc in docs] + [(f"u{query_id}-{i}", 6 * rng.random()) for i in range(150)]
        scored.sort(key=lambda item: -item[1])
        lines += [f"{query_id} Q0 {doc} {rank} {score:.6f} run\n" for rank, (doc, score) in enumerate(scored, 1)]
    path = tmp_path_factory.mktemp("run") / "run.txt"
    path.write_text("".join(lines))
    return path


def evaluated(folder: Path, run: Path, metrics: str) -> dict:
    """`irboard evaluate --run` on beir/scifact (official judgments), in the expanded form."""
    out = folder / "evaluated.json"
    done = irboard("evaluate", "--run", run, "--model-id", NEW_MODEL, "--dataset-id", "beir/scifact", "--out", out,
                   "--metrics", metrics, "--quiet", "--depth", "1000",  # as if asked for 1,000: every metric kept
                   "--stored-depth", "100")  # the ranks below 100 as claims (the whole would fit and verify)
    assert done.returncode == 0, done.stderr
    return expand_result(read_result(out))


def submit(root: Path, expanded: dict) -> Path:
    """The given result under root, with the untouched evaluation as the bm25 baseline beside it (same
    settings); returns the given result's path."""
    baseline = expand_result(read_result(root.parent / "evaluated.json"))
    baseline["model"]["id"] = "bm25"
    for data in (baseline, expanded):
        path = result_path(data["model"]["id"], "beir/scifact", root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_result(parse_result(data)))
    return path


def cut_ranking(expanded: dict, depth: int) -> None:
    """The ranking stored to `depth` and nothing below it (no `run.below`)."""
    expanded["run"].pop("below", None)
    expanded["run"]["depth"] = depth
    expanded["run"]["rankings"] = {q: ranking[:depth] for q, ranking in expanded["run"]["rankings"].items()}


def inflate(expanded: dict, metric: str) -> None:
    values = expanded["per_query"][metric]
    for query_id in values:
        values[query_id] = min(1.0, values[query_id] + 0.3)
    expanded["metrics"][metric] = math.fsum(values.values()) / len(values)


@pytest.mark.parametrize(("metrics", "depth", "undetermined"), [
    ("nDCG@10,P@5", 5, "nDCG@10"),  # nDCG@10 from a ranking stored to depth 5
    ("nDCG@10,R@100,AP,R@1000", 100, "AP, R@1000"),  # metrics beyond a depth-100 ranking
])
def test_metrics_the_stored_ranking_does_not_determine_are_shown_unverified(tmp_path, run_file, metrics, depth,
                                                                            undetermined):
    expanded = evaluated(tmp_path, run_file, metrics)
    assert expanded["settings"]["top_k"] > depth  # the rankings are longer than what stays stored
    cut_ranking(expanded, depth)
    names = undetermined.split(", ")
    for name in names:
        inflate(expanded, name)  # made-up values: nothing stored can contradict them
    path = submit(tmp_path / "results", expanded)
    done = irboard("validate", "--results", tmp_path / "results")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"{path}: trust: {tier_sentence(SELF_REPORTED, names)}" in done.stdout
    done_build = irboard("build", "--strict", "--results", tmp_path / "results", "--out", tmp_path / "_site")
    assert done_build.returncode == 0, done_build.stderr
    assert f"{path}: trust: {tier_sentence(SELF_REPORTED, names)}" in done_build.stdout  # the same words
    table = json.loads((tmp_path / "_site" / "downloads" / "datasets" / "beir__scifact.json").read_text())
    rows = {row["model_id"]: row for row in table["rows"]}
    new, bm25 = rows[NEW_MODEL], rows["bm25"]
    page = (tmp_path / "_site" / "datasets" / "beir__scifact.html").read_text()
    if depth == 100:
        # the baseline, evaluated from a run file to depth 150 with AP and R@1000, keeps its ranks below 100 but
        # no score samples to check them: those two rest on claimed ranks (tests/leaderboard/test_deep_claims.py).
        # Trust is per metric (issue 44): both are ranked on nDCG@10, re-scored exactly; the made-up AP and R@1000
        # are marked * and rank nothing, the baseline's claimed ones †.
        baseline = result_path("bm25", "beir/scifact", tmp_path / "results")
        assert f"{baseline}: trust: {tier_sentence(CLAIMED, names)}" in done.stdout
        assert "2 result file(s) not re-scored on every metric but ranked" in done.stdout
        assert "0 verified by re-scoring every metric" in done.stdout
        assert bm25["verified"] is True and new["verified"] is True and {bm25["rank_best"], new["rank_best"]} == {1}
        assert (bm25["claimed"], bm25["unverified"]) == (" ".join(sorted(names, key=table["columns"].index)), "")
        assert (new["unverified"], new["claimed"]) == (bm25["claimed"], "")
        assert page.count("(rests on claimed ranks)") == len(names)  # the baseline's two values, marked †
        assert page.count("(not re-scored)") == len(names)  # the new model's made-up two, marked *
        assert '<tbody class="unranked">' not in page
        return
    assert "1 verified by re-scoring" in done.stdout  # the baseline only
    assert [row["model_id"] for row in table["rows"]] == ["bm25", NEW_MODEL]  # unranked after ranked
    assert (new["verified"], new["rank_best"], new["best_set"], new["trust"]) == (False, None, False, SELF_REPORTED)
    assert new["unverified"] == " ".join(name for name in [m for m in table["columns"] if m in names])
    assert (bm25["verified"], bm25["rank_best"], bm25["unverified"]) == (True, 1, "")
    model = json.loads((tmp_path / "_site" / "downloads" / "models" / "org__new-model.json").read_text())
    assert model["rows"][0]["unverified"] == " ".join(sorted(names, key=model["columns"].index))
    unranked = page[page.index('<tbody class="unranked">'):page.index("</tbody>", page.index('"unranked"'))]
    assert NEW_MODEL in unranked and "Not re-scored: not ranked" in unranked
    assert unranked.count('class="unv"') == len(names)  # each made-up value marked


def test_a_second_spelling_of_a_metric_is_rejected(tmp_path, run_file):
    expanded = evaluated(tmp_path, run_file, "nDCG@10,P@5")
    path = submit(tmp_path / "results", expanded)
    # an invented second nDCG@10 column, stored the way the reader decodes columns (sorted names)
    data = json.loads(path.read_text())
    invented = dict.fromkeys(expanded["per_query"]["nDCG@10"], 1.0)
    columns = {**expanded["per_query"], "nDCG@10\n": invented}
    data["metrics"]["nDCG@10\n"] = 1.0
    data["per_query"]["values"] = encode_array(np.concatenate(
        [np.array([columns[name][q] for q in sorted(invented)]) for name in sorted(columns)]), "<f8")
    path.write_text(json.dumps(data))
    for argv in (["validate", "--results", tmp_path / "results"],
                 ["build", "--strict", "--results", tmp_path / "results", "--out", tmp_path / "_site"]):
        assert_one_line_rejection(irboard(*argv), path, "'nDCG@10\\n'")
    assert not (tmp_path / "_site").exists()


def _repository_result_with_samples() -> Path:
    found = [path for path in sorted(ROOT.glob("results/*/beir__scifact.json"))
             if read_result(path).score_samples is not None]
    assert found, "the repository has no beir/scifact result with score samples"
    return found[-1]


def _lower_nonrelevant(sample):
    return replace(sample, nonrelevant=sample.nonrelevant - 1000.0)


def _raise_relevant(sample):
    return replace(sample, relevant=sample.relevant + 1000.0)


@pytest.mark.parametrize("change", [_lower_nonrelevant, _raise_relevant])
def test_invented_score_samples_are_rejected(tmp_path, change):
    source = _repository_result_with_samples()
    expanded = expand_result(read_result(source))
    samples = expanded["score_samples"]
    expanded["score_samples"] = replace(samples, queries={q: change(s) for q, s in samples.queries.items()})
    root = tmp_path / "results"
    path = result_path(expanded["model"]["id"], "beir/scifact", root)
    path.parent.mkdir(parents=True)
    path.write_text(dump_result(parse_result(expanded)))
    assert_one_line_rejection(irboard("validate", "--results", root), path, "score_samples of query")
    build = irboard("build", "--strict", "--results", root, "--out", tmp_path / "_site")
    assert_one_line_rejection(build, path, "score_samples of query")
    assert not (tmp_path / "_site").exists()
    # the unchanged file passes: the checks reject the invention, not the result
    path.write_text(source.read_text())
    assert irboard("validate", "--results", root).returncode == 0


def test_a_model_id_with_a_newline_in_its_own_folder_is_rejected(tmp_path):
    data = json.loads(make_scifact_result(NEW_MODEL, 2, "dense"))
    data["model"]["id"] = "bm25\n"
    root = tmp_path / "results"
    path = root / "bm25\n" / "beir__scifact.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    for argv in (["validate", "--results", root], ["build", "--strict", "--results", root, "--out", tmp_path / "s"]):
        done = irboard(*argv)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        lines = [line for line in done.stderr.splitlines() if "not a valid id" in line]
        assert len(lines) == 1 and "'bm25\\n'" in lines[0], done.stderr  # the newline shown, not obeyed
    assert not (tmp_path / "s").exists()


def test_deep_nesting_is_one_line(tmp_path):
    root = tmp_path / "results"
    path = result_path(NEW_MODEL, "beir/scifact", root)
    path.parent.mkdir(parents=True)
    path.write_text('{"schema_version": 1, "model": ' + "[" * 100_000 + "]" * 100_000 + "}")
    for argv in (["validate", "--results", root], ["build", "--strict", "--results", root, "--out", tmp_path / "s"]):
        assert_one_line_rejection(irboard(*argv), path, str(path))


def _limited_memory() -> None:
    limit = 1536 * 2**20  # far below what inflating the bombs would take
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _bomb(size: int) -> str:
    """`size` zero bytes, deflated (about 1 KB a MB), without holding them in memory."""
    deflate, chunk = zlib.compressobj(9), bytes(2**24)
    parts = [deflate.compress(chunk[:min(2**24, size - start)]) for start in range(0, size, 2**24)]
    return base64.b64encode(b"".join(parts) + deflate.flush()).decode()


def _score_sample_bomb(document: dict) -> None:
    """Counts that claim 10**6 samples a query, and 600 MB of zeros that inflate to them."""
    samples = document["score_samples"]
    document["dataset"]["num_docs"] = samples["num_docs"] = 10**11
    samples["samples_per_query"] = samples["samples_requested"] = 10**6
    samples["codes"] = _bomb(2 * 10**6 * document["dataset"]["num_queries"])


def _ranking_bomb(document: dict) -> None:
    """Rankings that claim 10**6 documents a query, and 1.2 GB of zeros for their document numbers."""
    n = document["dataset"]["num_queries"]
    document["settings"]["top_k"] = document["run"]["depth"] = 10**6
    document["run"]["lengths"] = encode_array(np.full(n, 10**6), "<u4")
    document["run"]["docs"] = _bomb(4 * 10**6 * n)


@pytest.mark.parametrize(("plant", "expected"), [(_score_sample_bomb, "score_samples: its counts"),
                                                 (_ranking_bomb, "run.lengths: claim")])
def test_zlib_bombs_are_refused_before_they_inflate(tmp_path, plant, expected):
    source = _repository_result_with_samples()
    document = json.loads(source.read_text())
    plant(document)
    root = tmp_path / "results"
    path = result_path(document["model"]["id"], "beir/scifact", root)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document))
    assert path.stat().st_size < source.stat().st_size + 2_000_000  # within the file-size cap of 300 queries
    # with 1.5 GB of address space: inflating would fail with MemoryError (or take minutes), refusing does not
    done = subprocess.run([IRBOARD, "validate", "--results", root], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited_memory)
    assert_one_line_rejection(done, path, expected)


KILLED_EVALUATE = """
import os, signal, sys
from leaderboard.cli import main
def killed(fd):  # the temporary file is written: die before it is renamed into place
    os.kill(os.getpid(), signal.SIGKILL)
os.fsync = killed
main(sys.argv[1:])
"""


def test_a_killed_evaluate_leaves_nothing_build_trips_on(tmp_path, run_file):
    root = tmp_path / "results"
    submit(root, evaluated(tmp_path, run_file, "nDCG@10"))
    done = subprocess.run([sys.executable, "-c", KILLED_EVALUATE, "evaluate", "--run", str(run_file), "--model-id",
                           "org/killed", "--dataset-id", "beir/scifact", "--results-dir", str(root), "--quiet"],
                          capture_output=True, text=True, timeout=120, env=os.environ)
    assert done.returncode == -signal.SIGKILL
    left = list((root / "org__killed").iterdir())
    assert len(left) == 1 and left[0].name.startswith(".beir__scifact.json.") and left[0].suffix == ".tmp"
    assert irboard("validate", "--results", root).returncode == 0
    build = irboard("build", "--strict", "--results", root, "--out", tmp_path / "_site")
    assert build.returncode == 0 and build.stderr == "", build.stderr
