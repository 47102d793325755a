"""Deep metrics verified from run files (issue 44 item 2): a ranking that fits the size cap is stored whole and
re-scores every metric from the file alone (real Touché and TREC-COVID BM25 runs, depth 1,000); one that does not
(10,000 queries x 1,000) is stored to depth 100 with the judged documents below, and names its run file
(`irboard split RESULT --run RUN`), which validate fetches from a real HTTP server on 127.0.0.1, checks by sha256,
and re-scores every metric from."""

import gzip
import hashlib
import itertools
import json
import lzma

import numpy as np
import pytest
import pytrec_eval

from evaluator.result import read_result, result_path, size_limit
from evaluator.trec import read_qrels
from leaderboard.cli import main
from leaderboard.submissions.full import ALLOWED_HOSTS, _full_urls, allowed_url
from leaderboard.submissions.verify import verify_result
from tests.conftest import OFFICIAL, ROOT

RUNS = ROOT / "tests" / "data" / "runs"
QRELS = OFFICIAL / "qrels"
# irboard metric -> pytrec_eval measure
PYTREC = {"R@1000": "recall_1000", "AP": "map", "nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "RR": "recip_rank",
          "AP@100": "map_cut_100", "nDCG@1000": "ndcg_cut_1000"}


def _oracle(run_text: str, qrels_path, names=PYTREC):
    """pytrec_eval's values of `names` for a TREC run given as text (whitespace-separated, as pytrec_eval reads)."""
    run: dict[str, dict[str, float]] = {}
    for line in run_text.splitlines():
        query_id, _, doc, _, score, *_ = line.split()
        run.setdefault(query_id, {})[doc] = float(score)
    qrels = read_qrels(qrels_path).to_dict()
    measures = {"recall.100,1000", "map", "map_cut.100", "ndcg_cut.10,1000", "recip_rank"}
    return pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in run if q in qrels}, measures).evaluate(run)


@pytest.mark.parametrize("metrics", [[], ["--metrics", "AP,RR,nDCG@1000,R@1000,nDCG@10"]], ids=["default", "deep"])
@pytest.mark.parametrize("run_name, dataset, qrels_name", [
    ("touche2020-bm25-multifield", "beir/webis-touche2020", "qrels.beir-v1.0.0-webis-touche2020.test.txt"),
    ("trec-covid-bm25-flat", "beir/trec-covid", "qrels.beir-v1.0.0-trec-covid.test.txt"),
])
def test_a_depth_1000_run_of_a_small_dataset_is_stored_whole_and_verifies_every_metric(
        tmp_path, capsys, run_name, dataset, qrels_name, metrics):
    run_path = RUNS / f"{run_name}.trec.xz"
    results = tmp_path / "results"
    assert main(["evaluate", "--run", str(run_path), "--model-id", "org/bm25", "--dataset-id", dataset,
                 "--results-dir", str(results), "--quiet", *metrics]) == 0
    path = result_path("org/bm25", dataset, results)
    result = read_result(path)
    assert result.run.below is None and result.run.depth == result.settings.top_k >= 1000
    assert int(result.run.lengths.max()) == result.settings.top_k  # every document of the run, none cut
    assert path.stat().st_size <= size_limit(result.dataset.num_queries)
    oracle = _oracle(lzma.open(run_path, "rt").read(), QRELS / qrels_name)
    assert "R@1000" in result.metrics
    for name, measure in PYTREC.items():
        if name not in result.metrics:
            continue
        assert result.values(name) == pytest.approx(
            {q: oracle.get(q, {}).get(measure, 0.0) for q in result.query_ids}, abs=1e-9), name
    capsys.readouterr()
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "irboard: 1 result file(s) valid, 1 verified by re-scoring every metric"
    assert "claimed" not in out
    outcome = verify_result(result, read_qrels(QRELS / qrels_name))
    assert outcome.verified == set(result.metrics) and outcome.claimed == frozenset()


# ---------------------------------------------------------------------------------------------- beyond the cap

QUORA = QRELS / "qrels.beir-v1.0.0-quora.test.txt"
DEEP = "AP,R@1000,nDCG@1000,nDCG@10"


def _big_run(path, seed=44) -> None:
    """10,000 queries (Quora's judged ones) x 1,000 documents, gzipped: made-up documents (increasing random ids, so
    that none repeats within a query), each query's judged documents at random ranks (a third of them below 100),
    integer scores falling by random steps."""
    qrels = read_qrels(QUORA)
    rng = np.random.default_rng(seed)
    shape = (len(qrels.query_ids), 1000)
    docs = (rng.integers(0, 10**6, shape[0])[:, None] + np.cumsum(rng.integers(1, 100, shape), axis=1)).tolist()
    scores = (10**7 - np.cumsum(rng.integers(1, 1000, shape), axis=1)).tolist()
    ranks = range(1, 1001)
    with gzip.open(path, "wt", compresslevel=1) as stream:
        for query_id, judged, ids, values in zip(qrels.query_ids, qrels.judgments, docs, scores, strict=True):
            names = [f"x{d}" for d in ids]
            for doc in judged:
                names[int(rng.integers(100, 1000)) if rng.random() < 0.33 else int(rng.integers(0, 100))] = doc
            stream.write("".join([f"{query_id} Q0 {doc} {rank} {score} t\n"
                                  for doc, rank, score in zip(names, ranks, values, strict=True)]))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """(the result file, its run file): the 10,000 x 1,000 run evaluated as beir/quora with deep metrics."""
    folder = tmp_path_factory.mktemp("big")
    run = folder / "run.trec.gz"
    _big_run(run)
    results = folder / "results"
    assert main(["evaluate", "--run", str(run), "--model-id", "org/deep", "--dataset-id", "beir/quora",
                 "--metrics", DEEP, "--results-dir", str(results), "--quiet"]) == 0
    return result_path("org/deep", "beir/quora", results), run


@pytest.fixture(scope="module")
def split_once(big, tmp_path_factory):
    """(the big result with its run recorded by `split --run`, the folder holding <sha256>.run for upload)."""
    folder = tmp_path_factory.mktemp("split")
    path = folder / "results" / "org__deep" / "beir__quora.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(big[0].read_bytes())
    upload = folder / "upload"
    assert main(["split", str(path), "--run", str(big[1]), "--url-base", "https://huggingface.co/datasets/org/runs/"
                 "resolve/0123456789abcdef0123456789abcdef01234567", "--out-dir", str(upload)]) == 0
    return path, upload


@pytest.fixture
def recorded(split_once, tmp_path, server, monkeypatch):
    """A copy of the recorded result, its run served as the store (the mirror CI sets), a fresh cache."""
    path = tmp_path / "results" / "org__deep" / "beir__quora.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(split_once[0].read_bytes())
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("IRBOARD_FULL_MIRROR", f"{server.base_url}/full")
    server.folders["/full/"] = split_once[1]
    return path


def test_a_run_over_the_cap_falls_back_to_depth_100_and_rests_on_claims_alone(big, capsys):
    path, _ = big
    result = read_result(path)
    assert result.run.depth == 100 and result.run.below is not None and result.run.full is None
    assert int(result.run.below.totals.min()) == 1000 and int(result.run.below.counts.sum()) > 1000
    assert path.stat().st_size <= size_limit(10_000)
    capsys.readouterr()
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0 verified" in out and "rest on claimed ranks" in out


def test_its_run_recorded_in_the_result_verifies_every_metric_from_the_runs_bytes(recorded, big, server, capsys):
    result = read_result(recorded)
    data = big[1].read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    assert result.run.full.sha256 == sha256 and result.run.full.bytes == len(data)
    assert result.run.full.url.endswith(f"/{sha256}.run") and result.run.depth == 100
    capsys.readouterr()
    assert main(["validate", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["irboard: 1 result file(s) valid, 1 verified by re-scoring every metric"]
    assert server.requests == [f"/full/{sha256}.run"]
    # the values it re-scored are pytrec_eval's (checked on a slice of the queries: the whole run is 10M entries)
    with gzip.open(big[1], "rt") as stream:
        oracle = _oracle("".join(itertools.islice(stream, 200_000)), QUORA)
    for name in ("AP", "R@1000", "nDCG@10"):
        values = result.values(name)
        assert {q: values[q] for q in oracle} == pytest.approx({q: v[PYTREC[name]] for q, v in oracle.items()},
                                                               abs=1e-9)


def test_a_run_file_whose_bytes_differ_from_its_sha256_is_refused_in_one_line(recorded, server, capsys):
    sha256 = read_result(recorded).run.full.sha256
    good = (server.folders["/full/"] / f"{sha256}.run").read_bytes()
    server.files[f"/full/{sha256}.run"] = good[:-1] + bytes([good[-1] ^ 1])  # one bit changed
    capsys.readouterr()
    assert main(["validate", str(recorded)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith(f"{recorded}: run.full: ") and f"expected {sha256}" in err[0]


def test_another_run_under_its_own_sha256_is_refused_as_not_the_results(recorded, server, capsys):
    other = RUNS / "touche2020-bm25-multifield.trec.xz"  # a run, but not this result's (and 1,001 deep)
    data = other.read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    server.files[f"/full/{sha256}.run"] = data
    document = json.loads(recorded.read_text())
    document["run"]["full"] = {**document["run"]["full"], "sha256": sha256, "bytes": len(data)}
    recorded.write_text(json.dumps(document, indent=1, sort_keys=True))
    capsys.readouterr()
    assert main(["validate", str(recorded)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith(f"{recorded}: run.full https://huggingface.co/")
    assert "ranks 1001 documents for a query, more than settings.top_k 1000" in err[0] and "irboard split" in err[0]


def test_a_run_that_cannot_be_fetched_leaves_the_stored_ranking_to_re_score(recorded, server, capsys):
    server.folders.clear()
    capsys.readouterr()
    assert main(["validate", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "not verified: its full file cannot be fetched (run.full: " in out and "0 verified" in out


def test_split_refuses_a_run_that_is_not_the_results(big, tmp_path, capsys):
    path = tmp_path / "results" / "org__deep" / "beir__quora.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(big[0].read_bytes())
    other = tmp_path / "other.trec.gz"
    text = gzip.decompress(big[1].read_bytes())
    other.write_bytes(gzip.compress(text[:text.rindex(b"\n", 0, len(text) - 1) + 1], 1))  # the last line left out
    assert main(["split", str(path), "--run", str(other), "--out-dir", str(tmp_path / "up")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not the run of this result" in err
    assert path.read_bytes() == big[0].read_bytes() and not (tmp_path / "up").exists()


@pytest.mark.parametrize("url, allowed", [
    ("https://huggingface.co/datasets/org/runs/resolve/abc/x.run", True),
    ("https://github.com/org/repo/releases/download/v1/x.run", True),
    ("https://objects.githubusercontent.com/x.run", True),
    ("https://zenodo.org/records/1/files/x.run", True),
    ("http://huggingface.co/x.run", False),  # not https
    ("https://huggingface.co:8443/x.run", False),  # another port
    ("https://user@huggingface.co/x.run", False),
    ("https://huggingface.co.example.org/x.run", False),
    ("https://example.org/x.run", False),
    ("https://127.0.0.1/x.run", False),
])
def test_only_an_address_on_the_allowed_hosts_is_fetched_besides_the_store(url, allowed, monkeypatch):
    from evaluator.result import FullAddress

    assert len(ALLOWED_HOSTS) == 4 and allowed_url(url) == allowed
    monkeypatch.setenv("IRBOARD_FULL_MIRROR", "https://mirror.example/full")
    address = FullAddress(url=url, sha256="a" * 64, bytes=10)
    store = "https://mirror.example/full/" + "a" * 64 + ".run"
    assert _full_urls(address, suffix=".run") == ([store, url] if allowed else [store])
    assert _full_urls(address, any_url=True, suffix=".run") == [url]
