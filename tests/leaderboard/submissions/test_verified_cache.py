"""The verification cache: a result file's exact bytes, verified against the exact judgments by this code,
are not decoded or re-scored again; anything else (a changed byte, other judgments, a corrupt entry) is."""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import evaluator.result
import leaderboard.submissions.verify as verify
from evaluator.datasets.official import MIRROR_ENV, RAW_BASE_ENV
from evaluator.result import read_result
from evaluator.trec import read_qrels
from leaderboard.cli import main
from leaderboard.submissions.load import load_results
from leaderboard.submissions.validate import validate_paths
from leaderboard.submissions.verify import Judgments, VerifiedCache
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "data"))
from make_synthetic_results import write_scaled_results  # noqa: E402

METRICS = ("nDCG@10", "R@20", "RR@10", "AP@20", "P@5")


@pytest.fixture
def board(tmp_path, monkeypatch) -> Path:
    """2 datasets x 3 models x 12 queries with depth-20 rankings that re-score to their values, synthetic
    qrels under data/, and a cache of its own."""
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    assert write_scaled_results(tmp_path / "results", 3, 2, 12, METRICS, 20, tmp_path / "data") == 6
    return tmp_path


@pytest.fixture
def counted(monkeypatch) -> dict:
    """How often rankings are decoded (a Run built by the reader) and re-scored."""
    counts = {"decoded": 0, "rescored": 0}
    make_run, rescore = evaluator.result.Run.__init__, verify.verify_result

    def decoded(*args, **kwargs):
        counts["decoded"] += 1
        make_run(*args, **kwargs)

    def rescored(*args, **kwargs):
        counts["rescored"] += 1
        return rescore(*args, **kwargs)

    monkeypatch.setattr(evaluator.result.Run, "__init__", decoded)
    monkeypatch.setattr(verify, "verify_result", rescored)
    return counts


def _load(board: Path):
    report = load_results(board / "results", is_verified=Judgments(data_root=board / "data"))
    assert report.problems == []
    return report.results


def _entries(board: Path) -> list[Path]:
    return sorted((board / "cache" / "verified").rglob("*.json"))


def test_a_second_load_neither_decodes_nor_rescores(board, counted):
    first = _load(board)
    assert counted == {"decoded": 6, "rescored": 6} and all(r.verified for r in first)
    assert len(_entries(board)) == 6
    second = _load(board)
    assert counted == {"decoded": 6, "rescored": 6}  # nothing more
    assert [(r.path, r.verified, r.verified_metrics, r.has_run) for r in second] == \
        [(r.path, r.verified, r.verified_metrics, r.has_run) for r in first]
    assert all(r.verified_metrics == frozenset(METRICS) for r in second)


def test_a_changed_byte_misses_and_a_tampered_file_is_still_rejected(board, counted):
    _load(board)
    path = sorted((board / "results").glob("*/*.json"))[0]
    data = json.loads(path.read_bytes())
    data["provenance"]["hardware"] += " "  # one byte more, nothing that verification looks at
    path.write_text(json.dumps(data))
    _load(board)
    assert counted == {"decoded": 7, "rescored": 7}
    # a ranking that finds something, reversed (scores left in place): re-scoring disagrees, cache or not
    result = read_result(path)
    run = result.run
    row = int(result.per_query["nDCG@10"].argmax())
    assert result.per_query["nDCG@10"][row] > 0
    docs = run.docs.copy()
    start, end = run.offsets[row], run.offsets[row + 1]
    docs[start:end] = docs[start:end][::-1].copy()
    tampered = evaluator.result.build_result(result.header, result.query_ids, result.per_query,
                                             evaluator.result.Run(run.depth, run.doc_ids, run.lengths, docs,
                                                                  run.scores))
    path.write_text(evaluator.result.dump_result(tampered))
    report = load_results(board / "results", is_verified=Judgments(data_root=board / "data"))
    assert len(report.problems) == 1 and report.problems[0].startswith(f"{path}: per_query[")
    assert "re-scoring the stored ranking gives" in report.problems[0]
    assert len(_entries(board)) == 7  # a rejected file leaves no entry
    assert validate_paths([path], board / "results", data_root=board / "data").problems[0].startswith(f"{path}: ")


def test_other_judgments_miss(board, counted):
    _load(board)
    cache = VerifiedCache(board / "cache" / "verified")
    path = sorted((board / "results").glob("*/*.json"))[0]
    result = read_result(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    qrels = read_qrels(board / "data" / result.dataset.id / "qrels" / "test.tsv")
    assert cache.get(digest, qrels.sha256(), result.metrics).complete
    assert cache.get(digest, "0" * 64, result.metrics) is None
    # judgments changed on disk (one more judged document): the result no longer matches them, so it is re-checked
    qrels_file = board / "data" / result.dataset.id / "qrels" / "test.tsv"
    qrels_file.write_text(qrels_file.read_text() + f"{result.query_ids[0]}\tD9999999\t0\n")
    report = load_results(board / "results", is_verified=Judgments(data_root=board / "data"))
    assert counted["rescored"] == 6 + 3 and len(report.problems) == 3  # the dataset's three results
    assert all("qrels_sha256 does not match" in problem for problem in report.problems)


def test_an_entry_for_other_code_is_ignored(board, counted, edit_code):
    _load(board)
    _load(board)
    assert counted == {"decoded": 6, "rescored": 6}  # the same code: every entry found
    edit_code("leaderboard.submissions.labels")  # code the verification imports, nothing bumped by hand
    _load(board)
    assert counted == {"decoded": 12, "rescored": 12}


@pytest.mark.parametrize("damage", [
    lambda text: "",
    lambda text: text[:-5],
    lambda text: text.replace('"verified": [', '"verified": ["RR@100", '),  # claims a metric the file lacks
    lambda text: text.replace('"file_sha256": "', '"file_sha256": "0'),  # an entry for other bytes
    lambda text: json.dumps({**json.loads(text), "verified": [1, 2]}),
])
def test_a_corrupt_entry_is_ignored_and_rewritten(board, counted, damage):
    _load(board)
    for entry in _entries(board):
        entry.write_text(damage(entry.read_text()))
    results = _load(board)
    assert counted == {"decoded": 12, "rescored": 12} and all(r.verified for r in results)
    _load(board)
    assert counted == {"decoded": 12, "rescored": 12}  # rewritten by the second load


def test_validate_and_build_share_the_cache(board, counted):
    def validate():  # the synthetic queries are those of the judgments given (data_root), so no problem
        report = validate_paths([], board / "results", data_root=board / "data")
        assert report.problems == []
        return report.verified

    assert len(validate()) == 6
    assert counted == {"decoded": 6, "rescored": 6} and len(_entries(board)) == 6
    args = ["--results", str(board / "results"), "--data-dir", str(board / "data")]
    assert main(["build", *args, "--out", str(board / "site")]) == 0
    assert counted == {"decoded": 6, "rescored": 6}  # validate decoded each ranking once; the build none
    assert len(validate()) == 6
    assert counted == {"decoded": 6, "rescored": 6}  # files checked clean before: decoded and re-scored no more


def test_a_read_only_cache_folder_does_not_fail_the_build(board, counted):
    (board / "cache").mkdir()
    (board / "cache" / "verified").write_text("not a folder")
    assert all(r.verified for r in _load(board))
    assert all(r.verified for r in _load(board))
    assert counted["rescored"] == 12


def test_reading_in_two_processes_gives_the_same_report(board, monkeypatch):
    """Forked workers read, decode and verify: the same results, problems and missing judgments, and their
    verifications reach the cache."""
    import shutil

    from leaderboard.submissions import load

    monkeypatch.setattr(load, "WORKER_CHUNK", 1)
    monkeypatch.delenv(MIRROR_ENV, raising=False)  # official judgments cannot be fetched
    monkeypatch.setenv(RAW_BASE_ENV, "http://127.0.0.1:9")
    shutil.rmtree(board / "data" / "beir" / "trec-covid")  # its results stay unverified, and that is said once
    broken = sorted((board / "results").glob("*/*.json"))[-1]
    broken.write_text("{")

    def load_with(workers):
        judgments = Judgments(data_root=board / "data")
        report = load_results(board / "results", is_verified=judgments, workers=workers)
        return report, judgments.errors

    (serial, serial_errors), (parallel, parallel_errors) = load_with(1), load_with(2)
    assert parallel.problems == serial.problems and len(serial.problems) == 1 and "invalid JSON" in serial.problems[0]
    assert parallel_errors == serial_errors and len(serial_errors) == 1 and "beir/trec-covid" in serial_errors[0]
    assert [(r.path, r.verified, r.verified_metrics, r.query_ids, r.per_query["nDCG@10"].tolist())
            for r in parallel.results] == \
        [(r.path, r.verified, r.verified_metrics, r.query_ids, r.per_query["nDCG@10"].tolist())
         for r in serial.results]
    assert sum(r.verified for r in serial.results) == 3 and len(serial.results) == 5  # nfcorpus ones


def test_validating_in_two_processes_gives_the_same_report(board, monkeypatch):
    """`irboard validate` checks files in forked workers: the same problems in the same order, the same verified,
    partly verified and valid files, and judgments that cannot be had said once."""
    import shutil

    monkeypatch.delenv(MIRROR_ENV, raising=False)
    monkeypatch.setenv(RAW_BASE_ENV, "http://127.0.0.1:9")
    shutil.rmtree(board / "data" / "beir" / "trec-covid")
    broken = sorted((board / "results").glob("*/*.json"))[-1]
    broken.write_text("{")
    serial, parallel = (validate_paths([], board / "results", data_root=board / "data", workers=workers)
                        for workers in (1, 2))
    assert parallel.problems == serial.problems
    assert sum("invalid JSON" in p for p in serial.problems) == 1
    assert sum(p.startswith("beir/trec-covid: official qrels not available") for p in serial.problems) == 1
    assert (parallel.valid, parallel.verified, parallel.partly_verified, parallel.unfetched) == \
        (serial.valid, serial.verified, serial.partly_verified, serial.unfetched)
    assert len(serial.valid) == 5 and len(serial.verified) == 3


def test_entries_are_written_whole_and_a_failed_write_leaves_nothing(tmp_path):
    """Every content cache (verified, predicted, read, checked) writes through ContentCache.put."""
    from leaderboard.submissions.cache import ContentCache

    cache = ContentCache(tmp_path / "cache", code=("leaderboard.submissions.cache",))
    cache.put({"key": "a"}, {"value": [1, 2.5]})  # its folders are made on the first write
    assert cache.get({"key": "a"}) == {"code": cache.code, "key": "a", "value": [1, 2.5]}
    assert cache.get({"key": "b"}) is None
    blocked = {"key": "b"}
    Path(cache._path(blocked)).mkdir(parents=True)  # the entry's place is taken: replacing it fails
    cache.put(blocked, {"value": 1})
    assert cache.get(blocked) is None
    assert [path.name for path in (tmp_path / "cache").rglob("*") if path.is_file()] == \
        [Path(cache._path({"key": "a"})).name]  # no temporary file left behind


def test_validate_checks_and_the_build_after_it_predicts_without_decoding_rankings(board, counted, monkeypatch):
    """`make site` and the deploy run validate, then build: validate only checks (it keeps each file's
    verification, and predicts nothing); the build after it decodes no ranking and predicts each file once."""
    import leaderboard.analysis.predictions as predictions

    counts = {"samples": 0, "predicted": 0}
    decode, predict = evaluator.result.decode_score_samples, predictions.predict_result

    def decoded(*args, **kwargs):
        counts["samples"] += 1
        return decode(*args, **kwargs)

    def predicted(*args, **kwargs):
        counts["predicted"] += 1
        return predict(*args, **kwargs)

    monkeypatch.setattr(evaluator.result, "decode_score_samples", decoded)
    monkeypatch.setattr(predictions, "predict_result", predicted)
    # the command as make site runs it (in worker processes)
    assert main(["validate", "--results", str(board / "results"), "--data-dir", str(board / "data")]) == 0
    assert len(_entries(board)) == 6 and not (board / "cache" / "predicted").exists()
    args = ["--results", str(board / "results"), "--data-dir", str(board / "data")]
    assert main(["build", *args, "--out", str(board / "site")]) == 0
    assert counts == {"samples": 6, "predicted": 6} and counted == {"decoded": 0, "rescored": 0}
    alone = board / "alone"  # the same build from an empty cache decodes and predicts every file itself
    monkeypatch.setenv("IRBOARD_CACHE", str(board / "cache-alone"))
    assert main(["build", *args, "--out", str(alone)]) == 0
    assert counts == {"samples": 12, "predicted": 12} and counted == {"decoded": 6, "rescored": 6}
    assert sorted(p.relative_to(alone) for p in alone.rglob("*")) == \
        sorted(p.relative_to(board / "site") for p in (board / "site").rglob("*"))
    assert all((board / "site" / p.relative_to(alone)).read_bytes() == p.read_bytes()
               for p in alone.rglob("*") if p.is_file())


def test_the_verify_stage_keeps_judged_and_hole_bounds_and_the_cache_gives_them_back(board, counted):
    from evaluator.metrics.holes import hole_bounds, judged_at
    from leaderboard.submissions.labels import ranked_from_result

    first = _load(board)
    second = _load(board)
    assert counted["rescored"] == 6  # the second load took them from the cache
    for loaded, again in zip(first, second, strict=True):
        holes, cached = loaded.holes, again.holes
        assert holes is not None and holes.metric == "nDCG@10"
        assert holes.low.dtype == np.float32 and holes.high.shape == (len(loaded.query_ids),)
        assert sorted(holes.bounds) == sorted(METRICS)
        assert cached.judged == holes.judged and np.array_equal(cached.high, holes.high)
        assert cached.bounds == holes.bounds
        # the oracle: evaluator.metrics.holes on the stored ranking against the same judgments
        result = read_result(loaded.path)
        qrels = read_qrels(board / "data" / result.dataset.id / "qrels" / "test.tsv")
        ranked = ranked_from_result(result, qrels)
        main = hole_bounds(ranked, qrels, "nDCG@10", result.settings.relevance_level)
        assert np.allclose(holes.high, main.high, atol=1e-6) and np.allclose(holes.low, main.low, atol=1e-6)
        assert holes.judged == pytest.approx(float(judged_at(ranked, 10).mean()))
        r_bounds = hole_bounds(ranked, qrels, "R@20", result.settings.relevance_level).mean()
        assert holes.bounds["R@20"] == pytest.approx(r_bounds)
    assert any((r.holes.high > r.per_query["nDCG@10"] + 1e-6).any() for r in first)  # the rankings have holes
