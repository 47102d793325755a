"""trec_eval's own test files (tests/data/trec_eval/) read as trec_eval 9.0.8 reads them: a tab-separated line's
fields without the whitespace around them (results.test pads its scores: `104<TAB>  2.129133`), words after the
tag ignored (results.trunc), graded labels at a relevance level (qrels.rel_level). Every value equals pytrec_eval's
on the same files and the figures of trec_eval's own expected outputs; a malformed padded line is one error line
naming the line and the fix."""

from __future__ import annotations

import collections
import math
import re

import pytest
import pytrec_eval

import irboard
from evaluator.trec import read_qrels, read_run
from leaderboard.cli import main
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "trec_eval"
# irboard's measure -> pytrec_eval's name (trec_eval's, as its outputs print it)
SIMPLE = {"AP": "map", "Rprec": "Rprec", "Bpref": "bpref", "RR": "recip_rank", "nDCG": "ndcg"}
CUT = {"P": "P_", "R": "recall_", "nDCG": "ndcg_cut_", "Success": "success_", "AP": "map_cut_"}
PARAMETER = {"P_": "P", "recall_": "recall", "ndcg_cut_": "ndcg_cut", "success_": "success", "map_cut_": "map_cut"}
# (run, qrels, relevance level, trec_eval's output for them: the Makefile's quicktest lines, README.md)
CASES = [("results.test", "qrels.test", 1, "out.test"),
         ("results.test", "qrels.test", 1, "out.test.aq"),
         ("results.trunc", "qrels.test", 1, "out.test.aqc"),
         ("results.test", "qrels.rel_level", 2, "out.test.aql"),
         ("results.test", "qrels.test", 1, "out.test.meas_params")]


def trec_name(measure: str) -> str:
    kind, _, cutoff = measure.partition("@")
    return CUT[kind] + cutoff if cutoff else SIMPLE[kind]


def ours(name: str) -> str | None:
    """The irboard measure trec_eval's `name` is, or None for one irboard does not have."""
    by_name = {theirs: mine for mine, theirs in SIMPLE.items()}
    if name in by_name:
        return by_name[name]
    for kind, prefix in CUT.items():
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return f"{kind}@{name[len(prefix):]}"
    return None


def trec_eval_figures(name: str) -> dict[str, dict[str, str]]:
    """{query id or 'all': {irboard measure: the value as trec_eval printed it}} of an expected output."""
    figures: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for line in (DATA / name).read_text().splitlines():
        measure, query, value = (field.strip() for field in line.split("\t"))
        if ours(measure):
            figures[query][ours(measure)] = value
    return figures


def trec_eval_run(path) -> dict[str, dict[str, float]]:
    """The run as trec_eval 9.0.8 reads it (get_trec_results.c): fields split at whitespace, the first six kept."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            query_id, _, doc_id, _, score, _ = line.split()[:6]
            run.setdefault(query_id, {})[doc_id] = float(score)
    return run


def trec_eval_qrels(path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        query_id, _, doc_id, label = line.split()
        qrels.setdefault(query_id, {})[doc_id] = int(label)
    return qrels


def pytrec_eval_means(run: dict, qrels: dict, measures: list[str], level: int) -> dict[str, float]:
    """pytrec_eval's means over every judged query (a judged query the run lacks scores 0, as trec_eval -c)."""
    wanted = collections.defaultdict(set)
    for measure in measures:
        name = trec_name(measure)
        prefix = next((p for p in PARAMETER if name.startswith(p) and name[len(p):].isdigit()), None)
        wanted[PARAMETER[prefix] if prefix else name].add(name[len(prefix):] if prefix else "")
    spelled = {kind + ("." + ",".join(sorted(cutoffs)) if cutoffs != {""} else "") for kind, cutoffs in wanted.items()}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, spelled, relevance_level=level).evaluate(run)
    return {m: math.fsum(per_query.get(q, {}).get(trec_name(m), 0.0) for q in qrels) / len(qrels) for m in measures}


@pytest.mark.parametrize(("run", "qrels", "level", "output"), CASES, ids=[case[3] for case in CASES])
def test_trec_eval_test_files_give_trec_eval_figures_and_pytrec_eval_values(run, qrels, level, output):
    figures = trec_eval_figures(output)
    measures = sorted(figures["all"])
    assert len(measures) >= (5 if output == "out.test" else 10)  # the outputs hold that many measures irboard has
    table = irboard.evaluate(DATA / run, DATA / qrels, measures, per_query=True, relevance_level=level)
    compared = 0
    for query, values in figures.items():
        for measure, printed in values.items():
            value = table[measure].mean() if query == "all" else table.loc[query, measure]
            assert f"{value:.4f}" == printed, (output, query, measure)
            compared += 1
    assert compared >= len(measures) * (1 if output == "out.test" else 3)  # per query too, where printed (-q)
    oracle = pytrec_eval_means(trec_eval_run(DATA / run), trec_eval_qrels(DATA / qrels), measures, level)
    assert table.mean().to_dict() == pytest.approx(oracle, abs=1e-12)


def test_the_padded_run_is_read_field_for_field_as_trec_eval_reads_it():
    """No id or score keeps a space of the padding; read_run, the general reader, agrees with the fast one."""
    first = (DATA / "results.test").read_text().splitlines()[0]
    assert first == "301\tQ0\tFR940202-2-00150\t104\t  2.129133\tSTANDARD"  # the padding this file is about
    for name in ("results.test", "results.trunc"):
        assert read_run(DATA / name) == trec_eval_run(DATA / name)
    assert read_qrels(DATA / "qrels.test").to_dict() == trec_eval_qrels(DATA / "qrels.test")


def padded(text: str, columns: int) -> str:
    """Every line's fields tab-separated with ASCII whitespace around each (and a '\\r\\n' end)."""
    pads = [" ", "  ", "\v", "\f ", " \t"]
    return "".join("\t".join(f"{pads[i % 5]}{field}{pads[(i + 2) % 5]}" for i, field in
                             enumerate(line.split()[:columns])) + " \r\n" for line in text.splitlines())


def test_whitespace_around_every_field_of_a_tab_separated_run_and_qrels_is_not_part_of_it(tmp_path):
    """Runs and qrels padded around every field, with vertical tabs and form feeds as well, give the plain files'
    values bit for bit (and so pytrec_eval's)."""
    (tmp_path / "run").write_text(padded((DATA / "results.test").read_text(), 6))
    (tmp_path / "qrels").write_text(padded((DATA / "qrels.rel_level").read_text(), 4))
    first = (tmp_path / "run").read_bytes().split(b"\n")[0]
    assert first == b" 301\v\t  Q0\f \t\vFR940202-2-00150 \t\t\f 104 \t \t2.129133  \t STANDARD\v \r"
    measures = ["nDCG@10", "AP", "R@100", "Bpref", "RR"]
    plain = irboard.evaluate(DATA / "results.test", DATA / "qrels.rel_level", measures)
    assert irboard.evaluate(tmp_path / "run", tmp_path / "qrels", measures) == plain
    assert read_qrels(tmp_path / "qrels").to_dict() == trec_eval_qrels(DATA / "qrels.rel_level")
    oracle = pytrec_eval_means(trec_eval_run(DATA / "results.test"), trec_eval_qrels(DATA / "qrels.rel_level"),
                               measures, 1)
    assert plain == pytest.approx(oracle, abs=1e-12)


def evaluate_errors(capsys, run, qrels=DATA / "qrels.test") -> list[str]:
    capsys.readouterr()
    code = main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--metrics", "AP", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize(("line", "edit", "words"), [
    (7, lambda line: re.sub(r"\t  ([0-9.]+)\t", r"\t  \1x\t", line), ["run line 7: score '", "x' is not a finite "
                                                                     "decimal number", "write scores such as 12.5"]),
    (9, lambda line: line.replace("\tSTANDARD", "\t  "), ["run line 9: expected 6 columns", "found 5",
                                                          "fix or remove the line"]),
    (11, lambda line: line.replace("\t", " "), ["run line 11: expected 6 columns", "found 1 (the file is "
                                                "tab-separated, as its first line is)", "trec_eval splits, it has 6",
                                                "separate this line's columns by tabs"]),
])
def test_a_malformed_padded_line_is_one_error_naming_the_line_and_the_fix(tmp_path, capsys, line, edit, words):
    lines = (DATA / "results.test").read_text().splitlines()
    lines[line - 1] = edit(lines[line - 1])
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    errors = evaluate_errors(capsys, tmp_path / "run")
    assert len(errors) == 1, errors
    for word in words:
        assert word in errors[0], (word, errors[0])


def test_a_malformed_padded_qrels_line_is_one_error_naming_the_line(tmp_path, capsys):
    text = padded((DATA / "qrels.test").read_text(), 4).split("\n")  # not splitlines(): it splits at \v too
    text[4] = re.sub(r"\t[^\t]*$", "\t  1.5 ", text[4])
    (tmp_path / "qrels").write_text("\n".join(text))
    errors = evaluate_errors(capsys, DATA / "results.test", tmp_path / "qrels")
    assert len(errors) == 1 and "qrels line 5: relevance '1.5' is not an integer" in errors[0], errors


def test_ids_holding_spaces_in_a_tab_separated_file_are_said_to_read_otherwise_in_trec_eval(tmp_path, capsys,
                                                                                            caplog):
    """Split on tabs, `FR94 A` is one id; trec_eval splits at the space and reads other columns (other numbers),
    so the run and the qrels each say so once; trec_eval's own padded files say nothing of it."""
    (tmp_path / "run").write_text("301\tQ0\tFR94 A\t1\t  2.5\tSTANDARD\n301\tQ0\tFR94 B\t2\t2.0\tSTANDARD\n"
                                  "301\tQ0\tFR94\t3\t1.0\tSTANDARD\n")
    (tmp_path / "qrels").write_text("301\t0\tFR94 A\t1\n301\t0\tFR94\t0\n")
    code = main(["evaluate", "--run", str(tmp_path / "run"), "--qrels", str(tmp_path / "qrels"), "--metrics", "AP"])
    out, err = capsys.readouterr()
    assert code == 0 and out == "AP                    \tall\t1.0000\n", err
    said = err + caplog.text
    assert "run: 2 lines hold a space inside one of the first five columns (the first is line 1)" in said
    assert "qrels: ids hold spaces" in said
    assert said.count("trec_eval, which splits at spaces too, would read other columns") == 2
    caplog.clear()
    assert main(["evaluate", "--run", str(DATA / "results.trunc"), "--qrels", str(DATA / "qrels.test")]) == 0
    assert "splits at spaces too" not in capsys.readouterr().err + caplog.text
