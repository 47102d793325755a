"""Each result's stored ranking is downloadable from its model page as a TREC run: the repository's real BM25 run of
SciFact scores, by pytrec_eval against the official judgments, what the result file states; every run linked from a
model page of the synthetic site exists and holds that result's ranking, rank by rank; the bytes do not change
between builds (gzip without a time stamp)."""

from __future__ import annotations

import gzip
import re

import pytest
import pytrec_eval

from evaluator.result import read_result, slugify
from evaluator.trec import read_qrels
from leaderboard.web.run_files import trec_run_gz
from tests.conftest import SCIFACT
from tests.leaderboard.conftest import ROOT


def _parse(data: bytes) -> list[list[str]]:
    return [line.split() for line in gzip.decompress(data).decode("utf-8").splitlines()]


def test_the_repositorys_bm25_run_scores_what_its_result_states():
    path = ROOT / "results" / "bm25" / "beir__scifact.json"
    data = trec_run_gz(str(path), "bm25")
    assert data == trec_run_gz(str(path), "bm25") and data[4:8] == b"\0\0\0\0"  # no time stamp: the same bytes
    lines = _parse(data)
    assert all(len(fields) == 6 and fields[1] == "Q0" and fields[5] == "bm25" for fields in lines)
    run: dict[str, dict[str, float]] = {}
    for query_id, _, doc_id, _, score, _ in lines:
        run.setdefault(query_id, {})[doc_id] = float(score)
    qrels = read_qrels(SCIFACT / "qrels" / "test.tsv")
    judged = {q: dict(labels) for q, labels in qrels.to_dict().items()}
    result = read_result(path)
    # trec_eval scores a judged query the run lacks as 0, and the result's query set is the judged one
    per_query = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"}).evaluate(run)
    ndcg = sum(values["ndcg_cut_10"] for values in per_query.values()) / len(judged)
    assert ndcg == pytest.approx(result.metrics["nDCG@10"], abs=1e-4)
    ranks = [int(fields[3]) for fields in lines if fields[0] == lines[0][0]]
    assert ranks == list(range(1, len(ranks) + 1))


def test_every_linked_run_holds_its_results_ranking(built_site, synth):
    linked = 0
    for page in sorted((built_site / "models").glob("*.html")):
        html = page.read_text()
        for href, dataset_id in re.findall(r'<a href="\.\./(downloads/runs/[^"]+)" download>([^<]+)</a>', html):
            model_slug = page.stem
            assert href == f"downloads/runs/{model_slug}/{slugify(dataset_id)}.trec.gz"
            lines = _parse((built_site / href).read_bytes())
            source = next(path for path in synth.GOLDEN_RESULTS.rglob("*.json")
                          if path.parent.name == model_slug and path.stem == slugify(dataset_id))
            expected = [(q, d, rank) for q, ranking in read_result(source).rankings().items()
                        for rank, (d, _) in enumerate(ranking, 1)]
            assert [(f[0], f[2], int(f[3])) for f in lines] == expected
            linked += 1
    assert linked == len([p for p in synth.GOLDEN_RESULTS.rglob("*.json") if read_result(p).run is not None])


def test_a_cold_build_parses_each_result_once(tmp_path, monkeypatch, synth, parsed):
    """The run files come from the rankings the read step decoded: no result is read a second time for them."""
    from leaderboard.web.build import build_site

    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))  # cold: nothing read before
    build_site(synth.GOLDEN_RESULTS, tmp_path / "_site", is_verified=synth.golden_verification,
               lookup=synth.golden_lookup)
    files = sorted(str(path) for path in synth.GOLDEN_RESULTS.glob("*/*.json"))
    assert sorted(parsed) == files
    assert sum(1 for _ in (tmp_path / "_site" / "downloads" / "runs").rglob("*.trec.gz")) == sum(
        read_result(path).run is not None for path in files)


def test_a_kept_run_file_is_found_by_streaming_and_not_written_again(tmp_path, monkeypatch, synth):
    """A warm build finds a run file by the sha256 of the result's bytes, hashed block by block (the result is not
    read whole), and the read step's decoding does not write a run file that is already kept."""
    import hashlib

    from leaderboard.web import run_files

    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    path = next(str(p) for p in sorted(synth.GOLDEN_RESULTS.glob("*/*.json")) if read_result(p).run is not None)
    result = read_result(path)
    tag = slugify(result.model.id)
    made = trec_run_gz(path, tag)  # cold: decoded and kept

    def refuse(*args, **kwargs):
        raise AssertionError("read or written again")

    monkeypatch.setattr(run_files, "read_result_bytes", refuse)
    monkeypatch.setattr(run_files, "write_atomic", refuse)
    assert trec_run_gz(path, tag) == made
    with open(path, "rb") as file:
        run_files.keep_decoded(hashlib.sha256(file.read()).hexdigest(), result)
    assert _parse(made) == _parse(run_files._trec_gz(result, tag))
