"""Recall at scale predicted while each file is read: no score samples stay in memory, and a file whose exact
bytes were predicted before (same code, method and sizes) is neither decoded nor fitted again."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import evaluator.result
import leaderboard.analysis.predictions as predictions
from leaderboard.analysis.predictions import Predictor, predict_result
from leaderboard.submissions.load import load_results, read_loaded
from leaderboard.submissions.verify import Judgments
from leaderboard.web.build import build_site
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "data"))
from make_synthetic_results import golden_lookup, write_scaled_results  # noqa: E402

METRICS = ("nDCG@10", "R@10", "R@100", "RR@10")


@pytest.fixture
def board(tmp_path, monkeypatch) -> Path:
    """2 datasets x 3 models x 12 queries: depth-100 rankings and score samples as evaluate writes them, qrels
    under data/, and a cache of its own."""
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    assert write_scaled_results(tmp_path / "results", 3, 2, 12, METRICS, 100, tmp_path / "data") == 6
    return tmp_path


@pytest.fixture
def counted(monkeypatch) -> dict:
    """How often score samples and rankings are decoded, and predictions fitted."""
    counts = {"samples": 0, "runs": 0, "fitted": 0}
    decode, make_run, fit = evaluator.result.decode_score_samples, evaluator.result.Run.__init__, \
        predictions.predict_result

    def decoded(*args, **kwargs):
        counts["samples"] += 1
        return decode(*args, **kwargs)

    def run_made(*args, **kwargs):
        counts["runs"] += 1
        make_run(*args, **kwargs)

    def fitted(*args, **kwargs):
        counts["fitted"] += 1
        return fit(*args, **kwargs)

    monkeypatch.setattr(evaluator.result, "decode_score_samples", decoded)
    monkeypatch.setattr(evaluator.result.Run, "__init__", run_made)
    monkeypatch.setattr(predictions, "predict_result", fitted)
    return counts


def _load(board: Path, workers: int = 1):
    report = load_results(board / "results", is_verified=Judgments(data_root=board / "data"), predictor=Predictor(),
                          workers=workers)
    assert report.problems == []
    return report.results


def _same(first, second) -> bool:
    fields = ("model_id", "dataset_id", "num_docs", "sizes", "ks", "reason", "measured", "mode", "tail", "queries",
              "dropped")
    return all(getattr(first, name) == getattr(second, name) for name in fields) and \
        first.recall.keys() == second.recall.keys() and \
        all(np.array_equal(first.recall[g], second.recall[g], equal_nan=True) for g in first.recall)


def _entries(board: Path) -> list[Path]:
    return sorted((board / "cache" / "predicted").rglob("*.json"))


def test_predicted_while_read_and_the_samples_dropped(board):
    results = _load(board)
    assert len(results) == 6 and all(r.verified for r in results)
    for result in results:
        assert result.score_samples is None and result.prediction.reason is None
        fresh = predict_result(read_loaded(Path(result.path)))  # the samples kept, predicted afterwards
        assert _same(result.prediction, fresh)


def test_a_second_load_decodes_no_samples_and_fits_nothing(board, counted):
    first = _load(board)
    assert counted == {"samples": 6, "runs": 6, "fitted": 6} and len(_entries(board)) == 6
    second = _load(board)
    assert counted == {"samples": 6, "runs": 6, "fitted": 6}  # nothing more: both caches answer
    assert all(_same(a.prediction, b.prediction) for a, b in zip(first, second, strict=True))


def test_each_cache_alone_decodes_what_the_other_needs(board, counted):
    import shutil

    _load(board)
    shutil.rmtree(board / "cache" / "predicted")
    _load(board)  # verification cached: rankings stay encoded, samples are decoded to predict
    assert counted == {"samples": 12, "runs": 6, "fitted": 12}
    shutil.rmtree(board / "cache" / "verified")
    _load(board)  # prediction cached: re-scoring decodes the ranking and checks the samples against it
    assert counted == {"samples": 18, "runs": 12, "fitted": 12}


def test_an_entry_for_other_code_or_another_method_is_ignored(board, counted, edit_code):
    _load(board)
    edit_code("leaderboard.analysis.scale")  # the score model the prediction imports, nothing bumped by hand
    _load(board)
    assert counted["fitted"] == 12
    results = load_results(board / "results", predictor=Predictor(mode="rank")).results
    assert counted["fitted"] == 18 and all(r.prediction.mode == "rank" for r in results)


@pytest.mark.parametrize("damage", [
    lambda text: "",
    lambda text: text[:-5],
    lambda text: text.replace('"file_sha256": "', '"file_sha256": "0'),  # an entry for other bytes
    lambda text: json.dumps({**json.loads(text), "recall": {"uniform": [[0.5]]}}),  # the wrong shape
    lambda text: json.dumps({**json.loads(text), "queries": "many"}),
])
def test_a_corrupt_entry_is_ignored_and_rewritten(board, counted, damage):
    first = _load(board)
    for entry in _entries(board):
        entry.write_text(damage(entry.read_text()))
    second = _load(board)
    assert counted["fitted"] == 12 and all(_same(a.prediction, b.prediction) for a, b in zip(first, second, strict=True))
    _load(board)
    assert counted["fitted"] == 12  # rewritten by the second load


def test_two_processes_predict_the_same(board, monkeypatch):
    from leaderboard.submissions import load

    monkeypatch.setattr(load, "WORKER_CHUNK", 1)
    serial, parallel = _load(board), _load(board, workers=2)
    assert all(_same(a.prediction, b.prediction) for a, b in zip(serial, parallel, strict=True))


def test_a_build_from_cached_predictions_is_the_same_site(board, counted):
    def build(out):
        build_site(board / "results", board / out, is_verified=Judgments(data_root=board / "data"),
                   lookup=golden_lookup)
        return {path.relative_to(board / out): path.read_bytes() for path in (board / out).rglob("*")
                if path.is_file()}

    first = build("site-cold")
    assert counted["fitted"] == 6
    second = build("site-warm")
    # each ranking is decoded once by the cold build (its TREC download is written from that decoding) and by the
    # warm one not at all
    assert counted == {"samples": 6, "runs": 6, "fitted": 6} and first == second
    pages = [text for name, text in first.items() if name.parts[0] == "datasets" and name.suffix == ".html"]
    assert len(pages) == 2 and all(b"Predicted R@100 @10M docs" in text for text in pages)  # shown, from the cache
