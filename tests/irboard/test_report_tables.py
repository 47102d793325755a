"""`Report.to_latex()` (booktabs, runs × metrics, best in bold, the tests' verdicts as marks, a caption naming the
test and correction) and `Report._repr_html_()` on three real SciFact rankings. No TeX is installed here, so the
LaTeX is checked by its structure; where one is (`pdflatex` on the PATH), it is compiled too."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import irboard
from tests.conftest import SCIFACT

ROOT = Path(__file__).resolve().parents[2]
QRELS = SCIFACT / "qrels" / "test.tsv"
NAMES = ["bm25", "splade-tiny", "sentence-transformers__all-minilm-l6-v2"]


@pytest.fixture(scope="module")
def report():
    runs = {name: {q: dict(ranking) for q, ranking in irboard.read_result(
        ROOT / "results" / name / "beir__scifact.json").run.items()} for name in NAMES}
    return irboard.compare(runs, QRELS, "nDCG@10,R@100,RR@10", baseline="bm25")


def _body(latex: str) -> list[list[str]]:
    middle = latex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    return [[cell.strip() for cell in line.rstrip(" \\").split(" & ")] for line in middle.strip().splitlines()]


def test_latex_is_a_booktabs_table_of_runs_by_metrics(report):
    latex = report.to_latex()
    frame = report.to_dataframe()
    assert latex.count("\\toprule") == latex.count("\\midrule") == latex.count("\\bottomrule") == 1
    assert "\\hline" not in latex and "\\begin{tabular}{lrrrrr}" in latex
    head = latex.split("\\toprule\n", 1)[1].split(" \\\\", 1)[0]
    assert head == "Run & nDCG@10 & R@100 & RR@10 & Judged@10 & Judged@100"  # one Judged@k column per cutoff
    rows = _body(latex)
    assert [row[0] for row in rows] == ["bm25", "splade-tiny", "sentence-transformers\\_\\_all-minilm-l6-v2"]
    for column, metric in enumerate(["nDCG@10", "R@100", "RR@10"], start=1):
        means = frame[frame["metric"] == metric].set_index("run")
        best = means["mean"].round(3).max()
        for name, row in zip(NAMES, rows, strict=True):
            cell, line = row[column], means.loc[name]
            number = float(re.search(r"\d\.\d{3}", cell).group())
            assert number == pytest.approx(line["mean"], abs=5e-4)
            assert cell.startswith("\\textbf{") == (round(line["mean"], 3) == best)  # bold: the best of the column
            assert ("\\star" in cell) == bool(line["best_set"])  # ★: could be #1, not the rank range
            significant = bool(line["significant"]) if name != "bm25" else False
            assert ("\\uparrow" in cell) == (significant and line["diff"] > 0)
            assert ("\\downarrow" in cell) == (significant and line["diff"] < 0)
            assert ("\\approx" in cell) == (name != "bm25" and line["verdict"] == "equivalent")
            assert ("\\diamond" in cell) == (not line["robust"])  # ◊: the verdict or ★ could flip
            if metric != "RR@10":  # Judged@10 is nDCG@10's cutoff (and RR@10's), Judged@100 R@100's
                assert float(row[4 if metric == "nDCG@10" else 5]) == pytest.approx(line["judged"], abs=0.005)
    caption = re.search(r"\\caption\{(.*)\}\n", latex).group(1)
    assert "Paired two-sided t-test" in caption and "Holm" in caption and "$\\alpha$ = 0.05" in caption
    assert "α" not in latex and "–" not in latex  # plain LaTeX: no characters pdflatex cannot set


def test_the_judged_columns_can_be_left_out_and_the_flip_mark_has_its_footnote(report):
    plain = report.to_latex(judged=False)
    assert "\\begin{tabular}{lrrr}" in plain and "Judged@10 &" not in plain
    assert "Judged@10</th>" in report.to_html() and "Judged@10</th>" not in report.to_html(judged=False)
    assert "| judged |" in report.to_markdown() and "| judged |" not in report.to_markdown(judged=False)
    rows = [dict(row, robust=True, robust_verdict=True, robust_best=True) for row in report.rows]
    holding = type(report)(rows, report.baseline, report.test, report.correction, report.alpha, report.queries)
    assert "\\diamond" not in holding.to_latex() and "◊" not in holding.to_html() + holding.to_markdown()
    rows[1] = dict(rows[1], robust=False, robust_verdict=False)  # break one: its cell and the footnote say so
    flipping = type(report)(rows, report.baseline, report.test, report.correction, report.alpha, report.queries)
    latex = flipping.to_latex()
    assert latex.count("$^{\\diamond}$") == 1 and "$\\diamond$ could flip: the run's verdict against bm25" in latex
    row = next(line for line in flipping.to_markdown().splitlines() if f"| {rows[1]['run']} |" in line)
    assert row.count("◊") == 1 and "◊ could flip: the run's verdict" in flipping.to_markdown()
    assert flipping.to_html().count("◊") == 2  # the cell's mark and the footnote


def test_a_mark_follows_the_verdict(report):
    """Turn a verdict around: the marks follow it (the table reads the report's rows, not its own guess)."""
    rows = [dict(row) for row in report.rows]
    target = next(row for row in rows if row["run"] == "splade-tiny" and row["metric"] == "nDCG@10")
    target.update(significant=True, diff=-0.01, rank_best=1, best_set=False)
    changed = type(report)(rows, report.baseline, report.test, report.correction, report.alpha, report.queries)
    cell = _body(changed.to_latex())[1][1]
    assert "\\downarrow" in cell and "\\uparrow" not in cell and "\\star" not in cell


def test_names_are_escaped_in_latex_and_html(report):
    rows = [dict(row, run="a_&%$#{}~^\\<b>") if row["run"] == "bm25" else row for row in report.rows]
    odd = type(report)(rows, "a_&%$#{}~^\\<b>", report.test, report.correction, report.alpha, report.queries)
    first = _body(odd.to_latex())[0][0]
    assert first == ("a\\_\\&\\%\\$\\#\\{\\}\\textasciitilde{}\\textasciicircum{}\\textbackslash{}"
                     "\\textless{}b\\textgreater{}")
    assert "<b>" not in odd._repr_html_().replace("<b>0.", "").replace("<b>1.", "")
    assert "&lt;b&gt;" in odd._repr_html_()


class _Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.caption, self._in = [], "", None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append("")
            self._in = "cell"
        elif tag == "caption":
            self._in = "caption"

    def handle_endtag(self, tag):
        if tag in ("td", "th", "caption"):
            self._in = None

    def handle_data(self, data):
        if self._in == "cell":
            self.rows[-1][-1] += data
        elif self._in == "caption":
            self.caption += data


def test_notebook_html_shows_each_mean_with_its_interval(report):
    parser = _Cells()
    parser.feed(report._repr_html_())
    frame = report.to_dataframe().set_index(["run", "metric"])
    assert parser.rows[0] == ["Run", "nDCG@10", "R@100", "RR@10", "Judged@10", "Judged@100"]
    for row in parser.rows[1:]:
        for metric, cell in zip(["nDCG@10", "R@100", "RR@10"], row[1:4], strict=True):
            line = frame.loc[(row[0], metric)]
            assert cell.startswith(f"{line['mean']:.3f}")
            assert f"[{line['ci_low']:.3f}, {line['ci_high']:.3f}]" in cell
        assert row[4:] == [f"{frame.loc[(row[0], metric), 'judged']:.2f}" for metric in ("nDCG@10", "R@100")]
    assert "Holm" in parser.caption and "t-test" in parser.caption


def test_equivalence_is_marked_within_a_wide_margin():
    """With a margin of a whole point of the scale every pair not found different is equivalent (its interval lies
    within it): each such cell carries the mark, in LaTeX and in the notebook's table."""
    runs = {name: {q: dict(ranking) for q, ranking in irboard.read_result(
        ROOT / "results" / name / "beir__scifact.json").run.items()} for name in NAMES}
    wide = irboard.compare(runs, QRELS, "nDCG@10", baseline="bm25", margin=1.0)
    frame = wide.to_dataframe().set_index("run")
    expected = [name for name in NAMES[1:] if not frame.loc[name, "significant"]]
    assert expected and all(frame.loc[name, "verdict"] == "equivalent" for name in expected)
    rows = {row[0]: row[1] for row in _body(wide.to_latex())}
    for name in NAMES[1:]:
        assert ("\\approx" in rows[name.replace("_", "\\_")]) == (name in expected)
    assert wide._repr_html_().count("≈") == len(expected) + 1  # each marked cell and the caption's legend


def _renamed(report, names: dict[str, str]):
    """The report with runs renamed (the baseline too)."""
    rows = [dict(row, run=names.get(row["run"], row["run"])) for row in report.rows]
    return type(report)(rows, names.get(report.baseline, report.baseline), report.test, report.correction,
                        report.alpha, report.queries)


@pytest.mark.parametrize(("name", "cell"), [
    ("[3pt]bm25", "{}[3pt]bm25"),  # \\ and \midrule would take [3pt] as their optional argument
    ("*bm25", "{}*bm25"),  # ... and * as their star form
    ("  [x]", "{}  [x]"),  # they look past spaces
    ("a[1]", "a[1]"),  # only a leading one is read so
])
def test_a_run_name_never_becomes_an_argument_of_the_row_before_it(report, name, cell):
    for old in ("bm25", "splade-tiny"):  # the first row (after \midrule) and the second (after \\)
        latex = _renamed(report, {old: name}).to_latex()
        rows = _body(latex)
        assert cell in [row[0] for row in rows]
        body = latex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
        assert not any(line.lstrip().startswith(("[", "*")) for line in body.splitlines())


def test_a_line_break_in_a_name_stays_in_its_cell(report):
    odd = _renamed(report, {"bm25": "bm\n\nbm25\r\n|x", "splade-tiny": "sp\u2028lade"})
    latex = odd.to_latex()
    body = latex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    assert "\n\n" not in latex and len(body.strip().splitlines()) == 3  # one line a run; no paragraph break
    assert _body(latex)[0][0] == "bm bm25 \\textbar{}x" and _body(latex)[1][0] == "sp lade"
    assert "<th style=\"text-align:left\">bm\n\nbm25\r\n|x</th>" in odd._repr_html_()  # whitespace in HTML
    markdown = odd.to_markdown()
    table = markdown.split("\n\n", 1)[0].splitlines()
    assert len(table) == 2 + len(odd.rows)  # the header, the rule and one line a row
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").enable("table").parse(markdown)
    cells = [token.children[0].content if token.children else "" for token in rendered if token.type == "inline"]
    run = odd.columns.index("run")
    width = len(odd.columns)
    assert [cells[width * (i + 1) + run] for i in range(len(odd.rows))] == [
        {"bm25": "bm bm25 |x", "splade-tiny": "sp lade"}.get(row["run"], row["run"]) for row in report.rows]


MARKDOWN_NAMES = ["a|b", "*bold*", "_x_", "`code`", "[link](http://x)", "<b>x</b>", "#h", "a\\|b", "&amp;", "~~s~~",
                  "$x$"]


def test_markdown_shows_every_name_as_written(report):
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    odd = _renamed(report, {"bm25": MARKDOWN_NAMES[0], "splade-tiny": MARKDOWN_NAMES[1]})
    for name in MARKDOWN_NAMES:
        odd = _renamed(report, {"bm25": name})
        html = parser.render(odd.to_markdown())
        rows = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0].split("<tr>")[1:]
        assert len(rows) == len(odd.rows)
        run = odd.columns.index("run")
        shown = rows[0].split("<td>")[run + 1].split("</td>")[0]
        assert shown == name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"), (name, shown)


@pytest.mark.parametrize("digits", [-1, 11, 1.5, "3", True, None, 10**9])
def test_a_bad_digits_argument_is_one_irboard_error(report, digits):
    for render in (report.to_latex, lambda digits: irboard.report_tables.to_html(report, digits)):
        with pytest.raises(irboard.errors.InputFormatError, match=r"^digits=.*expected a whole number") as caught:
            render(digits)
        assert "\n" not in str(caught.value) and type(caught.value) not in (ValueError, TypeError)
    assert report.to_latex(digits=0).count("\\textbf{") >= 3 and report.to_latex(digits=10)


def test_over_several_datasets_each_dataset_has_its_own_columns():
    """Two datasets (SciFact and the same judgments under another name, one run cut to its top 3): the LaTeX and
    HTML tables give each dataset's mean in its own column, never one dataset's value in another's cell."""
    runs = {name: {q: dict(ranking) for q, ranking in irboard.read_result(
        ROOT / "results" / name / "beir__scifact.json").run.items()} for name in NAMES[:2]}
    cut = {name: {q: dict(sorted(docs.items(), key=lambda item: -item[1])[:3]) for q, docs in run.items()}
           for name, run in runs.items()}
    report = irboard.compare({name: {"a": runs[name], "b": cut[name]} for name in NAMES[:2]},
                             {"a": QRELS, "b": QRELS}, "nDCG@10", baseline="bm25")
    frame = report.to_dataframe().set_index(["dataset", "run"])
    latex = report.to_latex()
    head = latex.split("\\toprule\n", 1)[1].split(" \\\\", 1)[0]
    assert head == "Run & a nDCG@10 & b nDCG@10 & a Judged@10 & b Judged@10"
    for name, row in zip(NAMES[:2], _body(latex), strict=True):
        for column, dataset in ((1, "a"), (2, "b")):
            number = float(re.search(r"\d\.\d{3}", row[column]).group())
            assert number == pytest.approx(frame.loc[(dataset, name), "mean"], abs=5e-4), (name, dataset)
    assert frame.loc[("a", "bm25"), "mean"] != pytest.approx(frame.loc[("b", "bm25"), "mean"], abs=1e-3)
    html_table = report.to_html()
    assert "<th>a nDCG@10</th><th>b nDCG@10</th>" in html_table
