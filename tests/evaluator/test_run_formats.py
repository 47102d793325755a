"""`evaluate --run` on runs as toolkits write them, and coverage said out loud: a real BM25 run over SciFact
(made by the project at depth 1,000), compressed, with extra columns, as MS MARCO and JSON runs, and cut down
to 153 of the 300 judged queries plus 394 queries without judgments. Values are compared to pytrec_eval."""

import bz2
import gzip
import json
import lzma
import re
import zipfile

import numpy as np
import pytest
import pytrec_eval

from evaluator.datasets import load_dataset
from evaluator.models import load_model
from evaluator.pipeline import model_overrides, retrieve
from evaluator.result import read_result
from evaluator.trec import read_qrels, write_run
from leaderboard.cli import main
from tests.conftest import SCIFACT

pytestmark = pytest.mark.slow  # subprocesses of irboard: left to `make test`

QRELS = SCIFACT / "qrels" / "test.tsv"
METRICS = "nDCG@10,R@100,R@1000,AP,RR"
ORACLE = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "R@1000": "recall_1000", "AP": "map", "RR": "recip_rank"}


@pytest.fixture(scope="module")
def bm25_rankings() -> dict[str, list[tuple[str, float]]]:
    """BM25's depth-1,000 rankings of SciFact's 300 test and 809 train queries, in rank order (the project's own
    retrieval on the shared data; train queries have no test judgments)."""
    dataset = load_dataset("beir/scifact", data_dir=SCIFACT)
    model = load_model("bm25", **model_overrides("bm25", dataset.spec, None))
    queries = {q["_id"]: q["text"] for q in map(json.loads, (SCIFACT / "queries.jsonl").read_text().splitlines())}
    docs = list(zip(dataset.corpus.titles, dataset.corpus.texts, strict=True))
    scores, positions, _, _ = retrieve(model, docs, list(queries.values()), 1000, {})
    ids = dataset.corpus.ids
    return {query_id: [(ids[p], float(s)) for p, s in zip(positions[i], scores[i], strict=True) if p >= 0]
            for i, query_id in enumerate(queries)}


@pytest.fixture(scope="module")
def judged() -> dict[str, dict[str, int]]:
    return read_qrels(QRELS).to_dict()


def oracle(rankings: dict[str, list[tuple[str, float]]], judged: dict) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values for the judged queries the run has, with a hit on the query's own id
    dropped (SciFact's rule, as BEIR's evaluator does)."""
    run = {q: {d: s for d, s in ranking if d != q} for q, ranking in rankings.items() if q in judged}
    return pytrec_eval.RelevanceEvaluator(judged, set(ORACLE.values())).evaluate(run)


def evaluate(tmp_path, run, *extra: str, out: str = "out.json") -> tuple[int, object]:
    path = tmp_path / out
    code = main(["evaluate", "--run", str(run), "--model-id", "test/bm25", "--dataset-id", "beir/scifact",
                 "--out", str(path), "--metrics", METRICS, "--force", *extra])
    return code, path


def assert_matches_oracle(result, expected: dict[str, dict[str, float]], judged: dict) -> None:
    for metric, name in ORACLE.items():
        values = result.values(metric)
        assert set(values) == set(judged)
        for query_id, value in values.items():
            assert value == pytest.approx(expected[query_id][name] if query_id in expected else 0.0, abs=1e-9), \
                (metric, query_id)


@pytest.mark.slow
def test_trec_run_and_its_compressed_copies_read_alike(tmp_path, bm25_rankings, judged, capsys):
    test_rankings = {q: r for q, r in bm25_rankings.items() if q in judged}
    write_run(tmp_path / "bm25.run", test_rankings, "bm25")
    text = (tmp_path / "bm25.run").read_bytes()
    code, plain = evaluate(tmp_path, tmp_path / "bm25.run")
    assert code == 0
    reference = read_result(plain)
    assert_matches_oracle(reference, oracle(test_rankings, judged), judged)
    assert reference.provenance.run_format == "trec"
    assert len(text) > 8 << 20  # inflated a megabyte at a time: many reads, lines across their bounds
    # each format at its fastest level (the level changes no byte read back), compressed once for both names
    for suffix, compressed, name in [(".gz", gzip.compress(text, compresslevel=1), "gzip"),
                                     (".bz2", bz2.compress(text, compresslevel=1), "bzip2"),
                                     (".xz", lzma.compress(text, preset=0), "xz")]:
        # named without the suffix too: the first bytes decide, not the name
        for file_name in (f"bm25.run{suffix}", f"bm25-{name}.txt"):
            (tmp_path / file_name).write_bytes(compressed)
            code, out = evaluate(tmp_path, tmp_path / file_name, out=f"{file_name}.json")
            result = read_result(out)
            assert code == 0 and result.provenance.run_format == f"trec ({name})"
            for metric in ORACLE:
                np.testing.assert_array_equal(result.per_query[metric], reference.per_query[metric])
    capsys.readouterr()


def said(capsys, caplog) -> str:
    """What a command printed (stderr) and logged (warnings; pytest captures the log apart from stderr)."""
    text = capsys.readouterr().err + caplog.text
    caplog.clear()
    return text


def test_extra_trailing_columns_are_ignored_and_said_once(tmp_path, bm25_rankings, judged, capsys, caplog):
    test_rankings = {q: r for q, r in bm25_rankings.items() if q in judged}
    write_run(tmp_path / "bm25.run", test_rankings, "bm25")
    lines = (tmp_path / "bm25.run").read_text().splitlines()
    # Anserini-style runs with extra fields after the tag, on every line but the first
    (tmp_path / "wide.run").write_text(lines[0] + "\n" + "".join(f"{line} 0.5 extra\n" for line in lines[1:]))
    said(capsys, caplog)
    code, out = evaluate(tmp_path, tmp_path / "wide.run")
    err = said(capsys, caplog)
    assert code == 0
    assert len(re.findall("columns after the sixth", err)) == 1, err
    assert f"{len(lines) - 1:,} lines have columns after the sixth (the first is line 2)" in err
    result = read_result(out)
    assert_matches_oracle(result, oracle(test_rankings, judged), judged)
    assert result.provenance.run_format == f"trec; {len(lines) - 1:,} lines with columns after the sixth (ignored)"


def test_msmarco_run_is_scored_from_its_ranks(tmp_path, bm25_rankings, judged, capsys, caplog):
    test_rankings = {q: r for q, r in bm25_rankings.items() if q in judged}
    text = "".join(f"{q}\t{d}\t{rank}\n" for q, ranking in test_rankings.items()
                   for rank, (d, _) in enumerate(ranking, 1))
    (tmp_path / "run.msmarco.tsv.gz").write_bytes(gzip.compress(text.encode()))
    said(capsys, caplog)
    code, out = evaluate(tmp_path, tmp_path / "run.msmarco.tsv.gz")
    assert code == 0 and "read as an MS MARCO run; scores from ranks" in said(capsys, caplog)
    result = read_result(out)
    by_rank = {q: [(d, -float(rank)) for rank, (d, _) in enumerate(ranking, 1)] for q, ranking in test_rankings.items()}
    assert_matches_oracle(result, oracle(by_rank, judged), judged)
    assert result.provenance.run_format.startswith("msmarco (gzip); scores from ranks")
    first = result.query_ids.index(next(iter(test_rankings)))
    assert [score for _, score in result.run.ranking(first)[:3]] == [-1.0, -2.0, -3.0]


@pytest.mark.parametrize("saved_by", ["json.dump", "ranx-style (orjson, ints)"])
def test_json_run_dictionary_reads_like_the_trec_run(tmp_path, bm25_rankings, judged, saved_by):
    test_rankings = {q: r for q, r in bm25_rankings.items() if q in judged}
    as_dict = {q: dict(ranking) for q, ranking in test_rankings.items()}
    if saved_by.startswith("ranx"):
        as_dict = {q: {d: int(s * 1000) for d, s in ranking.items()} for q, ranking in as_dict.items()}
    (tmp_path / "results.json").write_text(json.dumps(as_dict))
    code, out = evaluate(tmp_path, tmp_path / "results.json")
    assert code == 0
    result = read_result(out)
    expected = {q: sorted(ranking.items(), key=lambda item: -item[1]) for q, ranking in as_dict.items()}
    assert_matches_oracle(result, oracle(expected, judged), judged)
    assert result.provenance.run_format == "json"


def test_partial_run_coverage_is_said_and_recorded(tmp_path, bm25_rankings, judged, capsys, caplog):
    """153 of the 300 judged queries, plus 394 train queries that have no test judgments."""
    covered = sorted(judged)[:153]
    unjudged = [q for q in bm25_rankings if q not in judged][:394]
    rankings = {q: bm25_rankings[q][: 10 + 7 * k] for k, q in enumerate(covered)}  # depths 10 .. 1,000
    rankings.update({q: bm25_rankings[q] for q in unjudged})
    write_run(tmp_path / "partial.run", rankings, "bm25")
    said(capsys, caplog)
    code, out = evaluate(tmp_path, tmp_path / "partial.run")
    err = said(capsys, caplog)
    assert code == 0
    result = read_result(out)
    coverage = result.provenance.coverage
    expected = oracle(rankings, judged)
    depths = [len([d for d, _ in rankings[q] if d != q]) for q in covered]
    assert (coverage.judged_queries, coverage.covered_queries, coverage.unjudged_run_queries) == (300, 153, 394)
    assert (coverage.depth_min, coverage.depth_median, coverage.depth_max) == (
        min(depths), float(np.median(depths)), max(depths))
    assert "the run covers 153 of 300 judged queries; 394 run queries have no judgments (ignored)" in err
    official = sum(expected[q]["ndcg_cut_10"] for q in covered) / 300
    over_covered = sum(expected[q]["ndcg_cut_10"] for q in covered) / 153
    assert result.metrics["nDCG@10"] == pytest.approx(official, abs=1e-9)
    warning = next(line for line in err.splitlines() if "the 147 missing score 0" in line)
    assert f"nDCG@10 = {official:.4f} over all 300 judged queries (the official mean), {over_covered:.4f} over the " \
           "153 covered" in warning
    assert_matches_oracle(result, expected, judged)

    code, refused = evaluate(tmp_path, tmp_path / "partial.run", "--require-full-coverage", out="refused.json")
    err = said(capsys, caplog)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and not refused.exists() and "Traceback" not in err
    assert len(errors) == 1 and "covers 153 of 300 judged queries (147 missing" in errors[0]


def test_full_coverage_passes_the_requirement(tmp_path, bm25_rankings, judged, capsys, caplog):
    write_run(tmp_path / "full.run", {q: r for q, r in bm25_rankings.items() if q in judged}, "bm25")
    code, out = evaluate(tmp_path, tmp_path / "full.run", "--require-full-coverage")
    err = said(capsys, caplog)
    coverage = read_result(out).provenance.coverage
    assert code == 0 and (coverage.covered_queries, coverage.unjudged_run_queries) == (300, 0)
    assert "the run covers 300 of 300 judged queries; ranking depth" in err and "missing score 0" not in err


def _zip(path, text):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("run.txt", text)


@pytest.mark.parametrize(
    ("name", "write", "message"),
    [
        ("qrels.txt", lambda p: p.write_bytes(QRELS.read_bytes()), "looks like BEIR qrels"),
        ("trec-qrels.txt", lambda p: p.write_text("1 0 31715818 1\n"), "looks like TREC qrels"),
        ("scores.tsv", lambda p: p.write_text("1\t31715818\t12.5\n"), "looks like 'query_id doc_id score' lines"),
        ("five.run", lambda p: p.write_text("1 Q0 31715818 1 12.5\n"), "a TREC run with a column missing"),
        ("list.json", lambda p: p.write_text('[{"1": {"31715818": 1.0}}]'), "looks like a JSON list"),
        ("lines.jsonl", lambda p: p.write_text('{"1": {"31715818": 1.0}}\n{"3": {"14717500": 2.0}}\n'),
         "looks like JSON lines"),
        ("bad.json", lambda p: p.write_text('{"1": {"31715818": "high"}}'), "score 'high' is not a finite number"),
        ("space.json", lambda p: p.write_text('{"1": {"a b": 1.0}}'), "document id 'a b' contains ' '"),
        ("run.zip", lambda p: _zip(p, "1 Q0 31715818 1 1.0 t\n"), "a zip archive; unzip it"),
        ("cut.gz", lambda p: p.write_bytes(gzip.compress(b"1 Q0 31715818 1 1.0 t\n" * 50)[:40]),
         "a damaged gzip file"),
        ("empty.gz", lambda p: p.write_bytes(gzip.compress(b"")), "empty once decompressed"),
        ("binary.bin", lambda p: p.write_bytes(b"\x00\xff\xfe garbage\n"), "does not look like text"),
    ],
)
def test_a_file_in_no_run_format_gets_one_line_naming_what_it_looks_like(tmp_path, capsys, name, write, message):
    write(tmp_path / name)
    code, out = evaluate(tmp_path, tmp_path / name)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and not out.exists() and "Traceback" not in err
    assert len(errors) == 1 and str(tmp_path / name) in errors[0] and message in errors[0], err


def test_run_format_overrides_the_detection(tmp_path, capsys):
    # query ids, doc ids and whole-number scores: detected as MS MARCO ranks, read as TREC only when told
    (tmp_path / "run.txt").write_text("1 31715818 3\n1 14717500 2\n")
    code, out = evaluate(tmp_path, tmp_path / "run.txt", "--depth", "1000")  # two documents: as if asked for 1,000
    assert code == 0 and read_result(out).provenance.run_format.startswith("msmarco")
    code, out = evaluate(tmp_path, tmp_path / "run.txt", "--run-format", "trec", out="trec.json")
    err = capsys.readouterr().err
    assert code == 1 and "run.txt line 1: expected 6 columns 'query_id Q0 doc_id rank score tag', found 3" in err
    (tmp_path / "run.json").write_text('{"1": {"31715818": 3}}')
    code, out = evaluate(tmp_path, tmp_path / "run.json", "--run-format", "msmarco", out="msmarco.json")
    assert code == 1 and "run.json line 1: rank '3}}' is not a whole number from 1" in capsys.readouterr().err
