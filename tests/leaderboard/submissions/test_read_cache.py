"""What the build keeps of each file, cached by its bytes (leaderboard/submissions/read_cache.py): an unchanged file
is not parsed again, a hit is exactly what reading the file gives, and anything else (changed bytes, other
judgments, other kept metrics, a damaged entry, a rejected file) is read from the file."""

import dataclasses
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from evaluator.result import read_result, write_result
from leaderboard.analysis.predictions import Predictor
from leaderboard.submissions.load import load_results, read_cache
from leaderboard.submissions.verify import Judgments
from leaderboard.web.build import build_site
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "data"))
from make_synthetic_results import golden_lookup, write_scaled_results  # noqa: E402

METRICS = ("nDCG@10", "R@10", "R@100", "RR@10")


@pytest.fixture
def board(tmp_path, monkeypatch) -> Path:
    """2 datasets x 3 models x 12 queries, rankings and score samples, qrels under data/, a cache of its own."""
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    assert write_scaled_results(tmp_path / "results", 3, 2, 12, METRICS, 100, tmp_path / "data") == 6
    return tmp_path


def _load(board: Path, keep=lambda dataset_id: ["nDCG@10"], judged: bool = True, workers=1):
    report = load_results(board / "results", keep_metrics=keep, predictor=Predictor(), reads=read_cache(),
                          is_verified=Judgments(data_root=board / "data") if judged else None, workers=workers)
    assert report.problems == []
    return report.results


def _same(a, b) -> bool:
    """Every field equal; arrays equal in value and type; predictions equal field by field."""
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if field.name == "per_query":
            if x.keys() != y.keys() or not all(x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]) for k in x):
                return False
        elif field.name == "prediction":
            if (x is None) != (y is None):
                return False
            if x is not None and not (
                    all(getattr(x, f.name) == getattr(y, f.name) for f in dataclasses.fields(x) if f.name != "recall")
                    and x.recall.keys() == y.recall.keys()
                    and all(np.array_equal(x.recall[g], y.recall[g]) for g in x.recall)):
                return False
        elif x != y:
            return False
    return True


def test_a_second_read_parses_no_file_and_gives_the_same_results(board, parsed):
    first = _load(board)
    assert len(parsed) == 6 and len(list((board / "cache" / "read").rglob("*.json"))) == 6
    second = _load(board)
    assert len(parsed) == 6  # every file from the cache
    assert all(r.verified and r.prediction.reason is None for r in second)
    assert all(_same(a, b) for a, b in zip(first, second, strict=True))


def test_a_hit_is_what_reading_the_file_gives(board):
    _load(board)
    cached = _load(board)
    shutil.rmtree(board / "cache")
    fresh = load_results(board / "results", keep_metrics=lambda d: ["nDCG@10"], predictor=Predictor(cache=False),
                         is_verified=Judgments(data_root=board / "data", cache=False)).results
    assert all(_same(a, b) for a, b in zip(cached, fresh, strict=True))


def test_forked_readers_share_the_cache(board, parsed, monkeypatch):
    from leaderboard.submissions import load

    monkeypatch.setattr(load, "WORKER_CHUNK", 1)
    first = _load(board, workers=2)  # written by the workers
    second = _load(board)
    assert parsed == [] and all(_same(a, b) for a, b in zip(first, second, strict=True))


def test_a_changed_file_is_read_again(board, parsed):
    _load(board)
    path = sorted((board / "results").rglob("*.json"))[0]
    result = read_result(path)
    header = result.header.model_copy(update={"provenance": result.provenance.model_copy(
        update={"hardware": "another machine"})})
    write_result(dataclasses.replace(result, header=header), path, force=True)
    parsed.clear()
    results = _load(board)
    assert parsed == [str(path)]
    assert next(r for r in results if r.path == str(path)).provenance.hardware == "another machine"


def test_other_judgments_or_other_kept_metrics_read_the_file(board, parsed):
    _load(board)
    (board / "other").mkdir()  # no copy there: the official judgments of these ids, other than the files' own
    report = load_results(board / "results", keep_metrics=lambda d: ["nDCG@10"], predictor=Predictor(),
                          reads=read_cache(), is_verified=Judgments(data_root=board / "other"))
    assert len(report.problems) == 6 and all("qrels_sha256 does not match" in p for p in report.problems)
    assert len(parsed) == 12
    results = _load(board, keep=lambda dataset_id: ["R@100", "RR@10"])
    assert len(parsed) == 18 and all(sorted(r.per_query) == ["R@100", "RR@10"] for r in results)
    assert not any(r.verified for r in _load(board, judged=False))  # without judgments: its own entries
    assert len(parsed) == 24


@pytest.mark.parametrize("damage", [
    lambda entry: "",
    lambda entry: json.dumps(entry)[:-3],
    lambda entry: json.dumps({**entry, "verified": "yes", "per_query": {"nDCG@10": [2.0]}, "model": {"id": 1}}),
    lambda entry: json.dumps({**entry, "prediction": {"recall": "none"}}),
    lambda entry: json.dumps({**entry, "per_query": {"nDCG@10": [0.5]}}),  # fewer values than queries
    lambda entry: json.dumps({**entry, "file_sha256": "0" * 64}),
])
def test_a_damaged_entry_is_a_miss_and_rewritten(board, parsed, damage):
    first = _load(board)
    for entry in (board / "cache" / "read").rglob("*.json"):
        entry.write_text(damage(json.loads(entry.read_text())))
    second = _load(board)
    assert len(parsed) == 12 and all(_same(a, b) for a, b in zip(first, second, strict=True))
    _load(board)
    assert len(parsed) == 12


def test_a_rejected_file_is_never_kept(board, parsed):
    path = sorted((board / "results").rglob("*.json"))[0]
    result = read_result(path)
    name = "nDCG@10"
    values = result.per_query[name].copy()
    values[0] = 1.0 - values[0]  # no longer what its ranking gives
    header = result.header.model_copy(update={"metrics": {**result.metrics, name: float(values.mean())}})
    write_result(dataclasses.replace(result, header=header, per_query={**result.per_query, name: values}), path,
                 force=True)
    parsed.clear()
    for _ in range(2):
        report = load_results(board / "results", keep_metrics=lambda d: [name], predictor=Predictor(),
                              reads=read_cache(), is_verified=Judgments(data_root=board / "data"))
        assert len(report.problems) == 1 and "re-scoring the stored ranking" in report.problems[0]
    assert parsed.count(str(path)) == 2


def test_a_warm_build_is_the_same_site(board, parsed):
    def build(out):
        build_site(board / "results", board / out, is_verified=Judgments(data_root=board / "data"),
                   lookup=golden_lookup)
        return {p.relative_to(board / out): p.read_bytes() for p in (board / out).rglob("*") if p.is_file()}

    cold = build("cold")
    # a cold build reads each file once: its TREC download comes from the ranking decoded then (run_files.py)
    assert len(parsed) == 6 and sorted(set(parsed)) == sorted(parsed)
    assert build("warm") == cold and len(parsed) == 6  # the warm one takes both from the cache
