"""TREC run / qrels reading and writing: the fast path equals the dict path, and bad input is named by line."""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator.errors import InputFormatError
from evaluator.metrics import evaluate, parse_measures
from evaluator.metrics.ranking import FLOAT32_OVERFLOW, Qrels, RankedRun, rank_run
from evaluator.trec import rank_trec_run, read_qrels, read_run, write_qrels, write_run
from tests.conftest import CONFORMANCE, SHARED

CASES = sorted(p for p in (CONFORMANCE / "cases").iterdir() if p.is_dir())
RANKABLE = [c for c in CASES if c.name != "06_duplicate_docids"]
SCIFACT_QRELS = SHARED / "data" / "beir" / "scifact" / "qrels" / "test.tsv"


def assert_same_ranking(fast: RankedRun, reference: RankedRun) -> None:
    assert fast.query_ids == reference.query_ids
    assert fast.labels.dtype == reference.labels.dtype and fast.labels.shape == reference.labels.shape
    np.testing.assert_array_equal(fast.labels, reference.labels)
    assert fast.lengths.dtype == reference.lengths.dtype
    np.testing.assert_array_equal(fast.lengths, reference.lengths)


def trec_eval_order(ranking: dict[str, float]) -> list[tuple[str, float]]:
    """Score as float32 descending, then doc id descending in UTF-8 byte order."""
    return sorted(ranking.items(), key=lambda item: (np.float32(item[1]), item[0].encode()), reverse=True)


def as_dict(ranked, top) -> dict[str, list[tuple[str, float]]]:
    """rank_trec_run's top rankings as {query_id: [(doc_id, score), ...]}, queries with an empty one left out;
    also checks the doc-id table: exactly the ids used, sorted in code point order."""
    assert list(top.doc_ids) == sorted({top.doc_ids[d] for d in top.docs.tolist()})
    assert top.lengths.shape == (len(ranked.query_ids),) and top.docs.size == top.scores.size == top.lengths.sum()
    return {q: top.ranking(i) for i, q in enumerate(ranked.query_ids) if top.lengths[i]}


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# ------------------------------------------------------------------------------------ conformance cases
@pytest.mark.parametrize("case", RANKABLE, ids=lambda c: c.name)
def test_conformance_case_ranks_like_the_dict_path(case: Path) -> None:
    qrels = read_qrels(case / "qrels.txt")
    run = json.loads((case / "run.json").read_text())
    ranked, tops = rank_trec_run(case / "run.txt", qrels)
    assert_same_ranking(ranked, rank_run(run, qrels))
    in_both = [q for q in qrels.query_ids if q in run and run[q]]
    assert as_dict(ranked, tops) == {q: trec_eval_order(run[q])[:100] for q in in_both}


@pytest.mark.parametrize("case", RANKABLE, ids=lambda c: c.name)
def test_conformance_case_values_match_trec_eval(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())["trec_eval"]["per_query"]
    qrels = read_qrels(case / "qrels.txt")
    ranked, _ = rank_trec_run(case / "run.txt", qrels)
    names = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "AP": "map", "RR": "recip_rank"}
    values = evaluate(ranked, qrels, parse_measures(list(names)))
    for measure, trec_name in names.items():
        for row, query_id in enumerate(ranked.query_ids):
            oracle = expected.get(query_id, {}).get(trec_name, 0.0)  # qrels query absent from the run: 0
            assert values[measure][row] == pytest.approx(oracle, abs=1e-9), (query_id, measure)


@pytest.mark.parametrize("case", RANKABLE, ids=lambda c: c.name)
def test_read_run_gives_what_the_oracle_evaluated(case: Path) -> None:
    run = json.loads((case / "run.json").read_text())
    assert read_run(case / "run.txt") == {q: docs for q, docs in run.items() if docs}


def test_duplicate_doc_id_case_is_refused_with_its_line() -> None:
    case = CONFORMANCE / "cases" / "06_duplicate_docids"
    qrels = read_qrels(case / "qrels.txt")
    for read in (lambda: rank_trec_run(case / "run.txt", qrels), lambda: read_run(case / "run.txt")):
        with pytest.raises(
            InputFormatError,
            match=rf"{re.escape(str(case / 'run.txt'))} line 4: document 'a' appears a second",
        ):
            read()


def test_identical_ids_are_dropped_like_beir() -> None:
    case = CONFORMANCE / "cases" / "10_beir_identical_ids"
    qrels = read_qrels(case / "qrels.txt")
    ranked, tops = rank_trec_run(case / "run.txt", qrels, ignore_identical_ids=True)
    run = json.loads((case / "run.json").read_text())
    assert_same_ranking(ranked, rank_run(run, qrels, ignore_identical_ids=True))
    assert as_dict(ranked, tops) == {"Q1": [("D2", 0.9), ("D1", 0.8)], "Q2": [("D3", 0.6)]}


# ------------------------------------------------------------------------------------ qrels formats
def test_beir_tsv_and_trec_qrels_read_the_same(tmp_path: Path) -> None:
    beir = read_qrels(SCIFACT_QRELS)
    write_qrels(tmp_path / "qrels.txt", beir)
    trec = read_qrels(tmp_path / "qrels.txt")
    assert trec == beir
    assert len(beir.query_ids) == 300 and beir.query_ids == sorted(beir.query_ids, key=str.encode)
    lines = SCIFACT_QRELS.read_text().splitlines()[1:]
    assert sum(len(j) for j in beir.judgments) == len(lines)
    query_id, doc_id, label = lines[0].split("\t")
    assert beir.to_dict()[query_id][doc_id] == int(label)


def test_small_qrels_in_both_formats(tmp_path: Path) -> None:
    trec = write(
        tmp_path / "q.txt", "q2 0 d1 1\nq1 0 é 2\r\n\nq1 Q0 d1 -1\nq10\t0\td5\t0"
    )  # CRLF, tabs, no final newline
    beir = write(
        tmp_path / "q.tsv", "query-id\tcorpus-id\tscore\nq1\té\t2\nq1\td1\t-1\nq2\td1\t1\nq10\td5\t0\n"
    )
    expected = Qrels(["q1", "q10", "q2"], [{"é": 2, "d1": -1}, {"d5": 0}, {"d1": 1}])
    assert read_qrels(trec) == expected
    assert read_qrels(beir) == expected


# ------------------------------------------------------------------------------------ bad input
QRELS_TEXT = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n", 2, "expected 6 columns .* found 5"),
        ("\nq1 Q0 d1 1\n", 2, "expected 6 columns .* found 4"),
        ("q1 Q0 d1 1 abc t\n", 1, "score 'abc' is not a finite"),
        ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 nan t\n", 2, "score 'nan' is not a finite"),
        ("q1 Q0 d1 1 NaN t\n", 1, "score 'NaN'"),
        ("q1 Q0 d1 1 inf t\n", 1, "score 'inf'"),
        ("q1 Q0 d1 1 1e999 t\n", 1, "score '1e999'"),
        ("q1 Q0 d1 1 1_0 t\n", 1, "score '1_0'"),
        ("q1 Q0 d1 1 0x10 t\n", 1, "score '0x10'"),
        ("q1 Q0 d1 1 1.0e t\n", 1, "score '1.0e'"),
        ("q1 Q0 d1 1 . t\n", 1, r"score '\.'"),
        ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d1 3 0.1 t\n", 3, "document 'd1' appears a second time"),
        ("q1 Q0 d1 1 1.0 t\nq2 Q0 d3 1 1.0 t\nq1 Q0 d1 3 0.1 t\n", 3, "document 'd1' appears a second time"),
    ],
)
def test_bad_run_line_is_named(tmp_path: Path, text: str, line: int, problem: str) -> None:
    path = write(tmp_path / "run.txt", text)
    qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d3": 1}})
    for read in (lambda: rank_trec_run(path, qrels), lambda: read_run(path)):
        with pytest.raises(InputFormatError, match=rf"^{re.escape(str(path))} line {line}: {problem}"):
            read()


def test_bad_utf8_run_line_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "run.txt", b"q1 Q0 d1 1 1.0 t\nq1 Q0 d\xff 2 0.5 t\n")
    for read in (lambda: rank_trec_run(path, Qrels.from_dict({"q1": {"d1": 1}})), lambda: read_run(path)):
        with pytest.raises(InputFormatError, match=rf"^{re.escape(str(path))} line 2: is not valid UTF-8"):
            read()


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 columns 'query_id 0 doc_id relevance', found 3"),
        ("q1 0 d1 1.5\n", 1, "relevance '1.5' is not an integer"),
        ("q1 0 d1 high\n", 1, "relevance 'high' is not an integer"),
        ("q1 0 d1 1\nq1 0 d1 -\n", 2, "relevance '-' is not an integer"),
        ("q1 0 d1 5000\n", 1, r"relevance 5000 is outside \[-1000, 1000\]"),
        ("q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 1\n", 3, "document 'd1' is judged a second time for query 'q1'"),
        (b"q1 0 \xe9 1\n", 1, "is not valid UTF-8"),
        (
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n",
            3,
            "expected 3 columns 'query-id corpus-id score'",
        ),
        ("query-id\tcorpus-id\tscore\nq1\td1\t1.0\n", 2, "relevance '1.0' is not an integer"),
    ],
)
def test_bad_qrels_line_is_named(tmp_path: Path, text: str | bytes, line: int, problem: str) -> None:
    path = write(tmp_path / "qrels.txt", text)
    with pytest.raises(InputFormatError, match=rf"^{re.escape(str(path))} line {line}: {problem}"):
        read_qrels(path)


@pytest.mark.parametrize("text", ["", "\n \n\t\n"])
def test_empty_files_are_refused(tmp_path: Path, text: str) -> None:
    run, qrels = write(tmp_path / "run.txt", text), write(tmp_path / "qrels.txt", text)
    with pytest.raises(InputFormatError, match=rf"^{re.escape(str(qrels))}: .*(empty|no judgments)"):
        read_qrels(qrels)
    for read in (lambda: rank_trec_run(run, Qrels.from_dict({"q": {"d": 1}})), lambda: read_run(run)):
        with pytest.raises(InputFormatError, match=rf"^{re.escape(str(run))}: .*(empty|no run lines)"):
            read()


def test_header_only_beir_qrels_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "qrels.tsv", "query-id\tcorpus-id\tscore\n")
    with pytest.raises(InputFormatError, match=rf"^{re.escape(str(path))}: has no judgments"):
        read_qrels(path)


def test_run_and_qrels_without_a_common_query(tmp_path: Path) -> None:
    path = write(tmp_path / "run.txt", "7 Q0 d1 1 1.0 t\n")
    with pytest.raises(
        InputFormatError, match=rf"^{re.escape(str(path))}: has no query id in common with the qrels .*'7'"
    ):
        rank_trec_run(path, read_qrels(write(tmp_path / "qrels.txt", QRELS_TEXT)))


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="cannot be read"):
        read_qrels(tmp_path / "absent.txt")


# ------------------------------------------------------------------------------------ layouts
def test_interleaved_queries_rank_like_grouped_ones(tmp_path: Path) -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1, "c": 2}, "q2": {"b": 1}, "q3": {"z": 1}})
    grouped = "q1 Q0 a 1 3 t\nq1 Q0 c 2 2 t\nq9 Q0 a 1 9 t\nq2 Q0 b 1 1 t\nq2 Q0 x 2 5 t\n"
    interleaved = "q1 Q0 c 2 2 t\nq2 Q0 b 1 1 t\nq9 Q0 a 1 9 t\nq1 Q0 a 1 3 t\nq2 Q0 x 2 5 t\n"
    results = [
        rank_trec_run(write(tmp_path / f"{i}.txt", t), qrels) for i, t in enumerate([grouped, interleaved])
    ]
    assert_same_ranking(results[0][0], results[1][0])
    assert as_dict(*results[0]) == as_dict(*results[1]) == {"q1": [("a", 3.0), ("c", 2.0)],
                                                            "q2": [("x", 5.0), ("b", 1.0)]}
    np.testing.assert_array_equal(results[0][0].labels, [[1, 2], [-1_000_000, 1], [-2_000_000, -2_000_000]])


def test_keep_top_limits_the_rankings(tmp_path: Path) -> None:
    path = write(tmp_path / "run.txt", "".join(f"q1 Q0 d{i} {i} {i / 8} t\n" for i in range(10)))
    qrels = Qrels.from_dict({"q1": {"d1": 1}})
    assert as_dict(*rank_trec_run(path, qrels, keep_top=3)) == {"q1": [("d9", 9 / 8), ("d8", 1.0), ("d7", 7 / 8)]}
    assert as_dict(*rank_trec_run(path, qrels, keep_top=0)) == {}
    assert len(as_dict(*rank_trec_run(path, qrels, keep_top=None))["q1"]) == 10


def test_write_run_refuses_what_trec_text_cannot_hold(tmp_path: Path) -> None:
    for rankings, tag in [
        ({"q 1": [("d", 1.0)]}, "t"),
        ({"q": [("d\t2", 1.0)]}, "t"),
        ({"q": [("d", 1.0)]}, ""),
        ({"q": [("d", math.nan)]}, "t"),
        ({"q": [("", 1.0)]}, "t"),
    ]:
        with pytest.raises(InputFormatError):
            write_run(tmp_path / "run.txt", rankings, tag)
    assert not (tmp_path / "run.txt").exists()


# ------------------------------------------------------------------------------------ properties
IDS = st.sampled_from(
    ["q1", "Q1", "D3", "d1", "d10", "d2", "_a", "zz", "é", "ü1", "文档", "a_b", "1", "10"]
) | st.text(
    alphabet=st.characters(categories=("L", "Nd"), include_characters="_-#.:"), min_size=1, max_size=5
)
# Doubles equal as float32 (0.1 and 0.1 + 1e-9), equal as text in different spellings, signed zeros.
SCORES = st.sampled_from(
    [0.1, 0.1 + 1e-9, 0.3, 1.0, 1.0 + 1e-12, 0.0, -0.0, -2.5, 1e-300, 7e22, 123456789.0]
) | st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
SPELLINGS = [
    repr,
    lambda x: f"{x:.17g}",
    lambda x: f"{x:.17e}",
    lambda x: f"{x:.30f}",
]  # the first three are exact


def spell(score: float, spelling: int) -> str:
    text = SPELLINGS[spelling](score)
    return text if float(text) == score else repr(score)


@st.composite
def runs_and_qrels(draw):
    qrels = draw(
        st.dictionaries(
            IDS, st.dictionaries(IDS, st.integers(-2, 3), min_size=1, max_size=6), min_size=1, max_size=4
        )
    )
    run_queries = draw(st.lists(IDS, min_size=1, max_size=4, unique=True))
    run_queries.append(draw(st.sampled_from(sorted(qrels))))  # at least one query in common
    run = {q: draw(st.dictionaries(IDS, SCORES, min_size=1, max_size=8)) for q in run_queries}
    return run, qrels


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=runs_and_qrels(),
    shuffle_seed=st.integers(0, 2),
    spelling=st.integers(0, 3),
    ignore_identical_ids=st.booleans(),
    keep_top=st.sampled_from([None, 0, 1, 3]),
    label_depth=st.sampled_from([None, 1, 3]),
)
def test_fast_path_equals_dict_path(
    tmp_path: Path, data, shuffle_seed, spelling, ignore_identical_ids, keep_top, label_depth
) -> None:
    run, qrels_dict = data
    lines = [f"{q} Q0 {d} 0 {spell(s, spelling)} tag\n" for q, docs in run.items() for d, s in docs.items()]
    if shuffle_seed:  # interleave the queries' lines
        random.Random(shuffle_seed).shuffle(lines)
    path = write(tmp_path / "run.txt", "".join(lines))
    qrels = Qrels.from_dict(qrels_dict)
    ranked, tops = rank_trec_run(path, qrels, ignore_identical_ids=ignore_identical_ids, keep_top=keep_top,
                                 label_depth=label_depth)
    reference = rank_run(run, qrels, ignore_identical_ids=ignore_identical_ids)
    if label_depth is not None:  # the same ranking with its label matrix cut at label_depth, lengths in full
        reference = RankedRun(reference.query_ids, reference.labels[:, :label_depth], reference.lengths)
    assert_same_ranking(ranked, reference)
    kept = {
        q: {d: s for d, s in docs.items() if not (ignore_identical_ids and d == q)} for q, docs in run.items()
    }
    expected = {q: trec_eval_order(kept[q])[:keep_top] for q in qrels.query_ids if q in run}
    expected = {q: ranking for q, ranking in expected.items() if ranking}
    tops = as_dict(ranked, tops)
    assert tops == expected
    assert all(
        math.copysign(1, a[1]) == math.copysign(1, b[1])
        for q in tops
        for a, b in zip(tops[q], expected[q], strict=True)
    )
    assert read_run(path) == run


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rankings=st.dictionaries(
        IDS, st.lists(st.tuples(IDS, SCORES), max_size=6, unique_by=lambda t: t[0]), min_size=1, max_size=4
    )
)
def test_write_run_round_trips(tmp_path: Path, rankings) -> None:
    if not any(rankings.values()):
        rankings[next(iter(rankings))] = [("d", 1.0)]
    write_run(tmp_path / "run.txt", rankings, "my-run")
    assert read_run(tmp_path / "run.txt") == {q: dict(r) for q, r in rankings.items() if r}
    lines = (tmp_path / "run.txt").read_text().splitlines()
    assert [line.split()[3] for line in lines] == [
        str(i) for r in rankings.values() for i in range(1, len(r) + 1)
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(
        st.floats(allow_nan=False, allow_infinity=False).map(repr)
        | st.builds(lambda m, e: f"{m}e{e}", st.integers(-(10**25), 10**25), st.integers(-330, 310))
        | st.builds(
            lambda i, f, s: f"{s}{i}.{f}",
            st.integers(0, 10**20),
            st.text("0123456789", min_size=1, max_size=30),
            st.sampled_from(["", "-", "+"]),
        )
        | st.sampled_from(
            ["0.1", "0.10000000000000001", "1e-400", "-0", ".5", "5.", "9007199254740993", "1e22", "1e23"]
        ),
        min_size=1,
        max_size=8,
    )
)
def test_scores_are_parsed_exactly_like_python(tmp_path: Path, texts) -> None:
    texts = [t for t in texts if abs(float(t)) < FLOAT32_OVERFLOW]  # finite, and float32 holds it (else refused)
    if not texts:
        return
    path = write(tmp_path / "run.txt", "".join(f"q Q0 d{i} 1 {t} x\n" for i, t in enumerate(texts)))
    parsed = dict(as_dict(*rank_trec_run(path, Qrels.from_dict({"q": {"d0": 1}}), keep_top=None))["q"])
    for i, text in enumerate(texts):
        assert parsed[f"d{i}"] == float(text) and math.copysign(1, parsed[f"d{i}"]) == math.copysign(
            1, float(text)
        )


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(IDS, st.dictionaries(IDS, st.integers(-(2**70), 2**70) | st.booleans(), min_size=1,
                                            max_size=80), min_size=1, max_size=4))
def test_qrels_fingerprint_is_the_sha256_of_the_sorted_lines(judged) -> None:
    qrels = Qrels.from_dict(judged)
    lines = "".join(f"{q}\t{d}\t{qrels.judgments[i][d]}\n" for i, q in enumerate(qrels.query_ids)
                    for d in sorted(qrels.judgments[i]))
    assert qrels.sha256() == hashlib.sha256(lines.encode()).hexdigest()
