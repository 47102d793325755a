"""Shared fixtures: paths to the shared test data and result files shaped like real SciFact results.

The shared data (real datasets, official judgments, a SPLADE checkpoint) is the folder ``$IRBOARD_SHARED``, by
default ``../shared`` next to the repository; ``make shared-data`` fetches it from its upstream. A run without it
stops at once saying so: no test is skipped for want of data. The metric conformance fixtures are in the
repository (tests/conformance/shared/).
"""

import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("IRBOARD_SHARED") or ROOT.parent / "shared").resolve()
SCIFACT = SHARED / "data" / "beir" / "scifact"
OFFICIAL = SHARED / "data" / "official"
CONFORMANCE = ROOT / "tests" / "conformance" / "shared"
# What the tests read from SHARED (each folder is installed whole by `make shared-data`).
NEEDED = ("data/beir/scifact", "data/beir/nfcorpus", "data/classic/cranfield", "data/classic/cisi",
          "data/classic/cacm", "data/official", "models/splade-tiny")


def pytest_sessionstart(session):
    missing = [name for name in NEEDED if not (SHARED / name).exists()]
    if missing:
        pytest.exit(f"test data missing under {SHARED}: {', '.join(missing)}; run `make shared-data` "
                    "(or set IRBOARD_SHARED to the folder holding it)", returncode=1)


# Files whose tests cost far more than their count says (CPU seconds measured at the last profile, benchmarks/
# README.md "The test suite's time"): weights for splitting the suite into shards of about equal time.
HEAVY_FILES = {"tests/leaderboard/submissions/test_full_runs.py": 100,
               "tests/leaderboard/analysis/test_predictive_simulation.py": 60,
               "tests/leaderboard/web/test_first_screen.py": 45, "tests/leaderboard/web/test_big_board_browser.py": 30,
               # the Ray files, in units of an ordinary test (about 0.4 s): their clean-clone CI time was about
               # 700 s of the suite's 1,750, and at 3 a test their shard ran 1,221 s against the other's 533 s
               "tests/evaluator/engines/test_distributed.py": 1100, "tests/evaluator/engines/test_multinode.py": 250,
               "tests/evaluator/engines/test_multinode_faults.py": 250}
# Files that must share one process: the Ray tests share one cluster (tests/evaluator/engines/conftest.py).
TOGETHER = ("tests/evaluator/engines/",)


def shard_files(weights: dict[str, float], shards: int) -> list[set[str]]:
    """The test files split into `shards` sets of about equal weight (heaviest first, each to the lightest
    shard), each group of TOGETHER kept whole; every file in exactly one set, the same split in every process."""
    units: dict[str, list[str]] = {}
    for name in sorted(weights):
        units.setdefault(next((group for group in TOGETHER if name.startswith(group)), name), []).append(name)
    loads, split = [0.0] * shards, [set() for _ in range(shards)]
    for unit in sorted(units, key=lambda u: (-sum(weights[n] for n in units[u]), u)):
        lightest = loads.index(min(loads))
        split[lightest].update(units[unit])
        loads[lightest] += sum(weights[n] for n in units[unit])
    return split


def _keep_shard(config, items) -> None:
    """IRBOARD_TEST_SHARD=i/n (as `make test` sets it) keeps the files of shard i of n (shard_files); the n
    processes together run every collected test once."""
    setting = os.environ.get("IRBOARD_TEST_SHARD")
    if not setting:
        return
    try:
        index, shards = map(int, setting.split("/"))
        assert 0 <= index < shards
    except (ValueError, AssertionError):
        pytest.exit(f"error: IRBOARD_TEST_SHARD={setting!r}: expected i/n with 0 <= i < n, e.g. 0/2",
                    returncode=1)
    weights: dict[str, float] = {}
    for item in items:
        name = item.nodeid.split("::")[0]
        # a page in Chromium or a Ray job costs a few times an ordinary test
        weights[name] = weights.get(name, 0.0) + (3.0 if item.get_closest_marker("browser")
                                                  or item.get_closest_marker("ray") else 1.0)
    for name in weights:
        weights[name] = max(weights[name], HEAVY_FILES.get(name, 0.0))
    keep = shard_files(weights, shards)[index]
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid.split("::")[0] not in keep])
    items[:] = [item for item in items if item.nodeid.split("::")[0] in keep]


def pytest_collection_modifyitems(session, config, items):
    """Browser tests without a browser stop the run at once with one line saying how to get one."""
    from tests.chromium import HOW, find_chromium

    _keep_shard(config, items)
    if any(item.get_closest_marker("browser") for item in items) and find_chromium() is None:
        pytest.exit(f"error: {HOW}", returncode=1)


@pytest.fixture(autouse=True, scope="session")
def offline_judgments(tmp_path_factory):
    """Official judgments come from the shared copy through IRBOARD_MIRROR into a fresh cache: validation and
    builds in tests never reach the internet."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRBOARD_MIRROR", str(OFFICIAL))
        patch.setenv("IRBOARD_CACHE", str(tmp_path_factory.mktemp("irboard-cache")))
        # declarations of one's own collections (`evaluate --declare`) are written here, never into the repository
        patch.setenv("IRBOARD_DATASETS", str(tmp_path_factory.mktemp("irboard-datasets")))
        yield


def write_scifact_slice(folder: Path, num_queries: int, num_docs: int):
    """A BEIR-layout SciFact slice in `folder`: the first `num_queries` test queries (by id), their judged
    documents, then other documents in corpus order up to `num_docs` in all.
    Returns (qrels, documents as BEIR rows, query texts by id)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, score = line.split("\t")
        qrels.setdefault(query_id, {})[doc_id] = int(score)
    keep = sorted(qrels)[:num_queries]
    judged = {d for q in keep for d in qrels[q]}
    corpus = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").read_text().splitlines()]
    docs = [d for d in corpus if d["_id"] in judged]
    docs += [d for d in corpus if d["_id"] not in judged][: num_docs - len(docs)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [json.loads(line) for line in (SCIFACT / "queries.jsonl").read_text().splitlines()]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries if q["_id"] in keep))
    (folder / "qrels").mkdir()
    rows = [f"{q}\t{d}\t{s}" for q in keep for d, s in qrels[q].items()]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    return {q: qrels[q] for q in keep}, docs, {q["_id"]: q["text"] for q in queries}


@lru_cache(maxsize=8)
def make_scifact_result(model_id: str, seed: int, model_type: str = "dense", compact: bool = False) -> str:
    """Result text for beir/scifact from a synthetic ranking: judged documents by label plus noise, some
    queries missing, two unjudged documents per query. Real query ids, so it validates against the spec.
    In the expanded JSON form (easy to edit in a test) unless `compact` asks for the stored form."""
    from evaluator.assemble import RunMetadata, assemble_result
    from evaluator.metrics import parse_measures, rank_run
    from evaluator.result import dump_result, expand_result
    from evaluator.trec import read_qrels

    qrels = read_qrels(SCIFACT / "qrels" / "test.tsv")
    rng = np.random.default_rng(seed)
    run = {}
    for query_id, judged in zip(qrels.query_ids, qrels.judgments, strict=True):
        if rng.random() < 0.1:
            continue
        ranking = {doc: float(label) * rng.random() + float(rng.random()) for doc, label in judged.items()}
        ranking.update({f"x{query_id}a": 0.5, f"x{query_id}b": 0.25})
        run[query_id] = ranking
    top = {q: sorted(r.items(), key=lambda item: -item[1]) for q, r in run.items()}
    meta = RunMetadata(model={"id": model_id, "type": model_type, "license": "mit"}, dataset_id="beir/scifact",
                       num_docs=5183, command="irboard evaluate --run x")
    result = assemble_result(rank_run(run, qrels), qrels, parse_measures("nDCG@10,R@100,AP,RR@10,P@5"), top, meta)
    if compact:
        return dump_result(result)
    expanded = expand_result(result)
    del expanded["score_samples"]
    return json.dumps(expanded, indent=1, sort_keys=True) + "\n"


@pytest.fixture
def scifact_like_results(tmp_path) -> tuple[Path, Path]:
    """(baseline result, new model's result), written under tmp_path/results."""
    from evaluator.result import result_path

    paths = []
    for model_id, seed, kind in [("bm25", 1, "lexical"), ("org/new-model", 2, "dense")]:
        path = result_path(model_id, "beir/scifact", tmp_path / "fixture-results")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make_scifact_result(model_id, seed, kind))
        paths.append(path)
    return paths[0], paths[1]


@dataclass
class Served:
    """What the HTTP server on 127.0.0.1 hands out (path -> bytes, or folders under URL prefixes) and what it was asked for."""

    files: dict[str, bytes] = field(default_factory=dict)
    folders: dict[str, Path] = field(default_factory=dict)  # URL prefix -> folder whose files are served under it
    truncate: bool = False  # announce the full length, send half, close
    requests: list[str] = field(default_factory=list)
    base_url: str = ""
    stop: Callable[[], None] = lambda: None  # shut the server down before the test ends


def _handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            served.requests.append(self.path)
            body = served.files.get(self.path)
            for prefix, folder in served.folders.items():
                relative = self.path.removeprefix(prefix)
                if body is None and relative != self.path and ".." not in relative and (folder / relative).is_file():
                    body = (folder / relative).read_bytes()
            if body is None:
                self.send_error(404, "no such file")
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if served.truncate:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # keep test output clean
            pass

    return Handler


@pytest.fixture
def server() -> Iterator[Served]:
    served = Served()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    served.base_url = f"http://127.0.0.1:{httpd.server_address[1]}"

    def stop() -> None:
        if thread.is_alive():
            httpd.shutdown()
            httpd.server_close()
            thread.join()

    served.stop = stop
    try:
        yield served
    finally:
        stop()
