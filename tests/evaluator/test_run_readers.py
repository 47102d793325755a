"""Run and qrels readers that never guess: a byte-order mark removed and said, the separator chosen per file,
repeated MS MARCO ranks and repeated JSON keys refused, scores float32 cannot hold refused, compressed input
inflated within a size and a ratio cap (bombs built here, on the fly). Every refusal is one line naming the
file and the line or key, exit 1, nothing written. Expected values come from pytrec_eval."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
import subprocess
import sys

import pytest
import pytrec_eval

import irboard
from evaluator.datasets.layout import iter_json_lines
from evaluator.errors import InputFormatError
from evaluator.inflate import MAX_INFLATED_ENV, MAX_RATIO
from evaluator.result import read_result
from evaluator.trec import read_qrels, read_run
from leaderboard.cli import main
from tests.conftest import ROOT

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1, "d4": 1}, "q3": {"d5": 1}}
RUN = {"q1": {"d3": 2.5, "d1": 2.0, "d7": 1.0}, "q2": {"d4": 0.5, "d1": 0.25}, "q3": {"d5": 3.0, "d6": 1.0}}
BOM = b"\xef\xbb\xbf"


def trec_text(run: dict, sep: str = " ") -> str:
    return "".join(sep.join([q, "Q0", d, str(rank), repr(s), "t"]) + "\n" for q, docs in run.items()
                   for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda item: -item[1]), 1))


def qrels_text(qrels: dict, sep: str = " ") -> str:
    return "".join(sep.join([q, "0", d, str(r)]) + "\n" for q, docs in qrels.items() for d, r in docs.items())


def oracle(run: dict, qrels: dict) -> dict[str, float]:
    """pytrec_eval's means over the judged queries (a judged query the run lacks scores 0)."""
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map"}).evaluate(run)
    return {ours: sum(per_query.get(q, {}).get(theirs, 0.0) for q in qrels) / len(qrels)
            for ours, theirs in [("nDCG@10", "ndcg_cut_10"), ("AP", "map")]}


def evaluate(tmp_path, capsys, run_path, qrels_path=None, *extra: str) -> tuple[int, object, list[str], str]:
    """`irboard evaluate --run` on the files: (exit code, the --out path, its error lines, all it said)."""
    if qrels_path is None:
        qrels_path = tmp_path / "qrels.txt"
        qrels_path.write_text(qrels_text(QRELS))
    out = tmp_path / "out.json"
    capsys.readouterr()
    code = main(["evaluate", "--run", str(run_path), "--qrels", str(qrels_path), "--model-id", "org/model",
                 "--dataset-id", "test/data", "--out", str(out), "--metrics", "nDCG@10,AP", "--force", "--declare",
                 "--depth", "1000", *extra])  # a collection of the test's own; these small runs rank all they retrieve
    err = capsys.readouterr().err
    return code, out, [line for line in err.splitlines() if line.startswith("error:")], err


def assert_refused(code, out, errors, err, *words: str) -> None:
    assert code == 1 and not out.exists() and "Traceback" not in err, err
    assert len(errors) == 1, err
    for word in words:
        assert word in errors[0], (word, errors[0])


# --- a byte-order mark ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["trec", "json", "trec (gzip)"])
def test_a_byte_order_mark_is_removed_and_said(tmp_path, capsys, caplog, form):
    """Windows editors write a BOM first; read as text it glued itself to the first query id, and query q1 was
    lost. The values equal the BOM-less file's, and the result says what was removed."""
    text = json.dumps(RUN).encode() if form == "json" else trec_text(RUN).encode()
    content = BOM + text
    (tmp_path / "run").write_bytes(gzip.compress(content) if "gzip" in form else content)
    (tmp_path / "qrels.txt").write_bytes(BOM + qrels_text(QRELS).encode())
    code, out, errors, err = evaluate(tmp_path, capsys, tmp_path / "run", tmp_path / "qrels.txt")
    assert code == 0, err
    result = read_result(out)
    expected = oracle(RUN, QRELS)
    assert result.metrics == pytest.approx(expected, abs=1e-9)
    assert result.values("nDCG@10")["q1"] > 0  # the first query was lost before
    assert "UTF-8 byte-order mark removed" in result.provenance.run_format
    said = err + caplog.text
    assert said.count("byte-order mark (BOM); it was removed") == 2  # once for the run, once for the qrels
    assert irboard.evaluate(tmp_path / "run", tmp_path / "qrels.txt", "nDCG@10,AP") == pytest.approx(expected)


# --- the separator, per file ------------------------------------------------------------------------------------

SPACED_QRELS = {"q 1": {"NCT 0001": 1, "NCT 0002": 0}, "q2": {"NCT 0003": 2, "NCT 0004": 1}}
SPACED_RUN = {"q 1": {"NCT 0002": 9.0, "NCT 0001": 8.0, "NCT 0009": 7.0},
              "q2": {"NCT 0009": 5.0, "NCT 0004": 4.0, "NCT 0003": 3.0}}


def test_a_tab_separated_file_is_split_on_tabs_only(tmp_path):
    """Ids with spaces survive in tab-separated runs and qrels (split on whitespace, the doc id was 'NCT' and
    the score the rank column: silently wrong numbers)."""
    (tmp_path / "run.tsv").write_text(trec_text(SPACED_RUN, "\t"))
    beir = "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, docs in SPACED_QRELS.items()
                                                     for d, r in docs.items())
    (tmp_path / "qrels.tsv").write_text(beir)
    (tmp_path / "qrels.trec").write_text(qrels_text(SPACED_QRELS, "\t"))
    assert read_qrels(tmp_path / "qrels.tsv").to_dict() == SPACED_QRELS
    assert read_qrels(tmp_path / "qrels.trec").to_dict() == SPACED_QRELS
    assert read_run(tmp_path / "run.tsv") == SPACED_RUN
    expected = oracle(SPACED_RUN, SPACED_QRELS)
    assert expected["nDCG@10"] > 0.5
    for qrels in ("qrels.tsv", "qrels.trec"):
        assert irboard.evaluate(tmp_path / "run.tsv", tmp_path / qrels, "nDCG@10,AP") == pytest.approx(expected)
    # an MS MARCO run, tab-separated as MS MARCO writes it
    (tmp_path / "run.msmarco").write_text("".join(f"q2\t{d}\t{rank}\n" for rank, d in enumerate(
        ["NCT 0003", "NCT 0009", "NCT 0004"], 1)))
    means = irboard.evaluate(tmp_path / "run.msmarco", tmp_path / "qrels.tsv", "nDCG@10,AP")
    assert means == pytest.approx(oracle({"q2": {"NCT 0003": -1.0, "NCT 0009": -2.0, "NCT 0004": -3.0}},
                                         SPACED_QRELS), abs=1e-12)
    # a space-separated file stays split on whitespace (tabs or runs of spaces alike)
    (tmp_path / "run.txt").write_text(trec_text(RUN).replace(" Q0 ", "  Q0\t"))
    (tmp_path / "q.txt").write_text(qrels_text(QRELS))
    assert irboard.evaluate(tmp_path / "run.txt", tmp_path / "q.txt", "nDCG@10,AP") == pytest.approx(
        oracle(RUN, QRELS))


def test_a_space_separated_line_in_a_tab_separated_file_is_refused(tmp_path, capsys):
    lines = trec_text(RUN, "\t").splitlines()
    lines[2] = lines[2].replace("\t", " ")
    (tmp_path / "run.tsv").write_text("\n".join(lines) + "\n")
    assert_refused(*evaluate(tmp_path, capsys, tmp_path / "run.tsv"), "run.tsv line 3: expected 6 columns",
                   "found 1 (the file is tab-separated, as its first line is)")


def test_ids_with_spaces_cannot_go_into_a_result_file(tmp_path, capsys):
    """The API scores them; a result file holds no whitespace in ids, so the command says so and writes
    nothing (rather than split them)."""
    (tmp_path / "run.tsv").write_text(trec_text(SPACED_RUN, "\t"))
    (tmp_path / "qrels.tsv").write_text(qrels_text(SPACED_QRELS, "\t"))
    code, out, errors, err = evaluate(tmp_path, capsys, tmp_path / "run.tsv", tmp_path / "qrels.tsv")
    assert_refused(code, out, errors, err, "'q 1'", "whitespace")


# --- refused with one line naming the line or key -----------------------------------------------------------------

MSMARCO_ALL_RANK_1 = "".join(f"{q}\t{d}\t1\n" for q, docs in RUN.items() for d in docs)


@pytest.mark.parametrize(("name", "content", "words"), [
    ("every-rank-1.tsv", MSMARCO_ALL_RANK_1, ["line 2: rank '1' appears a second time for query 'q1'",
                                              "its own rank (1, 2, 3, ...)"]),
    ("repeated-rank.tsv", "q1\td3\t1\nq1\td1\t2\nq1\td7\t3\nq2\td4\t1\nq2\td1\t3\nq2\td9\t3\n",
     ["line 6: rank '3' appears a second time for query 'q2'"]),
    ("interleaved.tsv", "q1\td3\t1\nq2\td4\t1\nq1\td1\t2\nq2\td1\t1\n", ["line 4: rank '1'", "query 'q2'"]),
    ("huge-rank.tsv", "q1\td3\t1\nq1\td1\t16777217\n", ["line 2: rank '16777217' is not a whole number from 1 "
                                                          "to 16777216"]),
    ("query-twice.json", '{"q1": {"d3": 2.5}, "q2": {"d4": 1.0}, "q1": {"d1": 2.0}}',
     ["query id 'q1' is a key twice", "give each query once"]),
    ("doc-twice.json", '{"q1": {"d3": 2.5, "d1": 2.0}, "q2": {"d4": 1.0, "d1": 0.5, "d4": 3.0}}',
     ["query 'q2': document 'd4' is a key twice", "give each document once per query"]),
    ("escaped-doc-twice.json", '{"q\\u0031": {"d3": 2.5, "d\\u0033": 2.0}}', ["query 'q1': document 'd3'"]),
    ("spaced-doc-twice.json", '{"q1": {"d3" : 2.5, "d3":1.0}, "q2": {"d\\"x": 1.0}}', ["document 'd3'"]),
    ("nan.run", "q1 Q0 d3 1 nan t\n", ["nan.run line 1: score 'nan' is not a finite decimal number"]),
    ("inf.run", "q1 Q0 d3 1 2.5 t\nq1 Q0 d1 2 -inf t\n", ["inf.run line 2: score '-inf' is not a finite"]),
    ("double-overflow.run", "q1 Q0 d3 1 1e400 t\n", ["line 1: score '1e400' is not a finite decimal number"]),
    ("float32-overflow.run", "q1 Q0 d3 1 1e39 t\nq1 Q0 d1 2 5e38 t\n",
     ["line 1: score '1e39' is beyond float32's range", "rescale the run's scores"]),
    ("float32-overflow-negative.run", "q1 Q0 d3 1 2.5 t\nq1 Q0 d1 2 -3.5e38 t\n", ["line 2: score '-3.5e38'"]),
    ("float32-overflow.json", '{"q1": {"d3": 2.5, "d1": 1e39}}', ["query 'q1', document 'd1': score 1e+39 is "
                                                                     "beyond float32's range"]),
    ("big-int.json", '{"q1": {"d3": 2.5, "d1": 1000000000000000000000000000000000000000}}',
     ["big-int.json: query 'q1', document 'd1': score", "float32's range"]),
])
def test_a_run_that_would_be_misread_is_refused_in_one_line(tmp_path, capsys, name, content, words):
    (tmp_path / name).write_text(content)
    assert_refused(*evaluate(tmp_path, capsys, tmp_path / name), str(tmp_path / name), *words)
    with pytest.raises(InputFormatError, match=re.escape(words[0])):
        irboard.evaluate(tmp_path / name, QRELS)


def test_float32s_largest_score_is_kept_and_the_next_refused(tmp_path, capsys):
    """The bound is float32's own: 3.4028234663852886e38 (its largest value) orders as a number; the smallest
    double that float32 rounds to infinity, 2**128 - 2**103, is refused."""
    largest, overflowing = 3.4028234663852886e38, 2.0**128 - 2.0**103
    (tmp_path / "max.run").write_text(f"q1 Q0 d3 1 {largest!r} t\nq1 Q0 d1 2 {largest / 2!r} t\n")
    code, out, _, err = evaluate(tmp_path, capsys, tmp_path / "max.run")
    assert code == 0, err
    assert read_result(out).rankings()["q1"] == [("d3", largest), ("d1", largest / 2)]
    out.unlink()
    (tmp_path / "over.run").write_text(f"q1 Q0 d3 1 {overflowing!r} t\n")
    assert_refused(*evaluate(tmp_path, capsys, tmp_path / "over.run"), "beyond float32's range")


# --- compressed input ----------------------------------------------------------------------------------------------

def bomb(kind: str, inflated: int, block: int = 1 << 25) -> bytes:
    """A file of `kind` that inflates to `inflated` zero bytes: one compressed stream of `block` zeros,
    repeated (every reader, irboard's included, reads concatenated streams)."""
    one = {"bzip2": lambda b: bz2.compress(b, 9), "xz": lzma.compress,
           "gzip": lambda b: gzip.compress(b, 9, mtime=0)}[kind](bytes(block))
    return one * (inflated // block)


@pytest.mark.parametrize("kind", ["bzip2", "gzip", "xz"])
def test_a_compression_bomb_fails_fast_in_one_line(tmp_path, capsys, kind):
    (tmp_path / "bomb").write_bytes(bomb(kind, 1 << 30))
    assert_refused(*evaluate(tmp_path, capsys, tmp_path / "bomb"), str(tmp_path / "bomb"),
                   f"inflates more than {MAX_RATIO} times its size ({kind}", "decompress it yourself")
    (tmp_path / "qrels.gz").write_bytes(bomb(kind, 1 << 30))  # the qrels too
    (tmp_path / "run.txt").write_text(trec_text(RUN))
    assert_refused(*evaluate(tmp_path, capsys, tmp_path / "run.txt", tmp_path / "qrels.gz"),
                   str(tmp_path / "qrels.gz"), "inflates more than")


def test_a_bzip2_bomb_inflating_to_2_gb_is_refused_in_bounded_memory(tmp_path):
    """The issue's case: a bzip2 file of a few kilobytes that inflates to 2.2 GB. `irboard evaluate`, run as a
    command, fails with one line, its peak memory far below the inflated size."""
    (tmp_path / "bomb.bz2").write_bytes(bomb("bzip2", 2_200_000_000, 1 << 26) + bz2.compress(bytes(1 << 20)))
    assert (tmp_path / "bomb.bz2").stat().st_size < 5000
    (tmp_path / "qrels.txt").write_text(qrels_text(QRELS))
    # VmHWM: this process's own peak (ru_maxrss would start from the forking test runner's size)
    code = ("import re, sys; from leaderboard.cli import main; code = main(sys.argv[1:]); "
            "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, "evaluate", "--run", str(tmp_path / "bomb.bz2"), "--qrels",
                           str(tmp_path / "qrels.txt"), "--model-id", "org/model", "--dataset-id", "test/data",
                           "--out", str(tmp_path / "out.json"), "--declare", "--depth", "1000"],
                          capture_output=True, text=True, cwd=ROOT)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 1 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "inflates more than" in errors[0] and not (tmp_path / "out.json").exists()
    peak_mb = int(done.stdout.split()[-1]) / 1024  # VmHWM is in KiB
    assert peak_mb < 700, peak_mb  # reading it whole needed more than 2,200 MB


def test_the_inflated_size_is_capped(tmp_path, capsys, monkeypatch):
    """A genuine compressed run larger than the size cap is refused with the way out; under it, read alike."""
    text = trec_text(RUN).encode()
    for kind, compress in [("gzip", gzip.compress), ("bzip2", bz2.compress), ("xz", lzma.compress)]:
        (tmp_path / f"run.{kind}").write_bytes(compress(text))
        code, out, _, err = evaluate(tmp_path, capsys, tmp_path / f"run.{kind}")
        assert code == 0 and read_result(out).metrics == pytest.approx(oracle(RUN, QRELS)), err
        out.unlink()
        monkeypatch.setenv(MAX_INFLATED_ENV, str(len(text) - 1))
        assert_refused(*evaluate(tmp_path, capsys, tmp_path / f"run.{kind}"),
                       f"inflates to more than {len(text) - 1:,} bytes ({kind})", MAX_INFLATED_ENV)
        monkeypatch.delenv(MAX_INFLATED_ENV)
    monkeypatch.setenv(MAX_INFLATED_ENV, "lots")
    assert_refused(*evaluate(tmp_path, capsys, tmp_path / "run.gzip"), f"{MAX_INFLATED_ENV}='lots'")


def test_a_damaged_or_truncated_compressed_run_is_one_line(tmp_path, capsys):
    whole = bz2.compress(trec_text(RUN).encode() * 20)
    (tmp_path / "cut.bz2").write_bytes(whole[: len(whole) // 2])
    assert_refused(*evaluate(tmp_path, capsys, tmp_path / "cut.bz2"), "a damaged bzip2 file")
    flipped = bytearray(gzip.compress(trec_text(RUN).encode() * 20))
    flipped[30] ^= 0xFF
    (tmp_path / "flipped.gz").write_bytes(bytes(flipped))
    assert_refused(*evaluate(tmp_path, capsys, tmp_path / "flipped.gz"), "a damaged gzip file")


def test_a_dataset_file_bomb_is_refused_while_streaming(tmp_path):
    """Dataset files (corpus, queries, qrels) are read a line at a time; a bomb without newlines would make one
    line of gigabytes. The ratio cap stops it early."""
    (tmp_path / "corpus.jsonl.gz").write_bytes(bomb("gzip", 1 << 30))
    with pytest.raises(InputFormatError, match="corpus.jsonl.gz: inflates more than"):
        list(iter_json_lines(tmp_path / "corpus.jsonl.gz"))
    lines = [json.dumps({"_id": str(i), "text": f"passage {i} about topic {i % 7}"}) for i in range(2000)]
    (tmp_path / "fine.jsonl.gz").write_bytes(gzip.compress("\n".join(lines).encode()))
    assert [obj["_id"] for _, obj in iter_json_lines(tmp_path / "fine.jsonl.gz")] == [str(i) for i in range(2000)]
