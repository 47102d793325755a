"""A `Report` as a table for a paper (LaTeX with booktabs) or a notebook (HTML): runs × metrics, each cell the
mean, the best mean of each metric in bold, and the verdicts of the tests as marks: ★ could be #1 (the `best_set`
column: the site's best set, leaderboard/analysis/best_words.py), ▲/▼ significantly better/worse than the baseline,
≈ equivalent to it within the report's margin (the `verdict` column), ◊ could flip: the row's verdict or best-set
membership may not hold over the hole bounds (the `robust` column, docs/statistics.md), with a footnote saying so;
and one Judged@k column per cutoff of the metrics (the `judged` column), unless asked to leave it out."""

from __future__ import annotations

import html
import re
from typing import Any

from evaluator.errors import InputFormatError

MARKS = {"top": ("$^{\\star}$", "★", "could be #1 at {level} (the best set)"),
         "better": ("$^{\\uparrow}$", "▲", "significantly better than the baseline"),
         "worse": ("$^{\\downarrow}$", "▼", "significantly worse than the baseline"),
         "equivalent": ("$^{\\approx}$", "≈", "equivalent to the baseline within the margin"),
         "flip": ("$^{\\diamond}$", "◊", "could flip: unjudged documents within the cutoff could change this "
                  "verdict")}
LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "α": r"$\alpha$", "–": "--", "×": r"$\times$",
                  # in the default (OT1) font encoding these print as other glyphs
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
# Line breaks and other control characters in a name: a blank line would end the table's paragraph, a line break
# would split a Markdown row; each run of them becomes one space.
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# Markdown's punctuation with a meaning in a table cell or inline (CommonMark escapes any ASCII punctuation)
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|#~$&])")
MAX_DIGITS = 10


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIALS.get(char, char) for char in _BREAKS.sub(" ", text))


def latex_cell(text: str) -> str:
    """A row's first cell: escaped, and after `\\\\` or `\\midrule` (which look ahead, past spaces, for `*` and an
    optional `[...]`) a leading `[` or `*` is kept text by an empty group before it."""
    escaped = latex_escape(text)
    return "{}" + escaped if escaped.lstrip()[:1] in ("[", "*") else escaped


def markdown_escape(text: str) -> str:
    """One table cell of Markdown: on one line, its punctuation shown as written."""
    return _MARKDOWN.sub(r"\\\1", _BREAKS.sub(" ", text))


def check_digits(digits: object) -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= MAX_DIGITS:
        raise InputFormatError(f"digits={digits!r}: expected a whole number of decimals from 0 to {MAX_DIGITS}, "
                               "e.g. 3")
    return digits


Column = tuple[str | None, str]  # (dataset, or None for a report on one dataset; metric)


def grid(rows: list[dict[str, Any]]) -> tuple[list[str], list[Column], dict[tuple[str, Column], dict[str, Any]]]:
    """(runs in order, columns in order, {(run, column): row}): a column per metric, and over several datasets per
    dataset and metric, so that no dataset's value stands in another's cell."""
    runs, columns = [], []
    for row in rows:
        column = (row.get("dataset"), row["metric"])
        runs += [row["run"]] if row["run"] not in runs else []
        columns += [column] if column not in columns else []
    return runs, columns, {(row["run"], (row.get("dataset"), row["metric"])): row for row in rows}


def label(column: Column) -> str:
    """A column's heading: its metric, after its dataset when the report covers several."""
    dataset, metric = column
    return metric if dataset is None else f"{dataset} {metric}"


def marks(row: dict[str, Any]) -> list[str]:
    """The verdicts on one run and metric, as keys of MARKS."""
    found = ["top"] if row["best_set"] else []
    if row["significant"]:
        found.append("better" if row["diff"] > 0 else "worse")
    elif row.get("verdict") == "equivalent":
        found.append("equivalent")
    if row.get("robust") is False:  # its verdict or its best-set membership may not hold over the hole bounds
        found.append("flip")
    return found


def flips(rows: list[dict[str, Any]]) -> bool:
    """Does some cell carry the could-flip mark (its footnote is then written)?"""
    return any(row.get("robust") is False for row in rows)


def judged_columns(columns: list[Column]) -> list[tuple[str, Column]]:
    """[(Judged@k heading, the first column with that cutoff)]: one Judged@k column per cutoff (and dataset)."""
    from leaderboard.submissions.holes import judged_name

    out: dict[str, Column] = {}
    for column in columns:
        out.setdefault(label((column[0], judged_name(column[1]))), column)
    return list(out.items())


def judged_text(cells: dict, run: str, column: Column) -> str:
    row = cells.get((run, column))
    return "" if row is None or row.get("judged") is None else f"{row['judged']:.2f}"


def flip_note(report: Any) -> str:
    """The footnote of the ◊ mark (docs/statistics.md, "Verdicts over the holes")."""
    return (f"{MARKS['flip'][1]} could flip: the run's verdict against {report.baseline} or its best-set "
            "membership may not hold over the hole bounds of both runs (the range of each per-query value over "
            "every labelling of the unjudged documents within the metric's cutoff)")


def mark_text(mark: str, report: Any) -> str:
    """The words of a mark, with the report's level (★: 1 - alpha)."""
    from leaderboard.analysis.best_words import level

    return MARKS[mark][2].format(level=level(report.alpha))


def _best(cells: dict, runs: list[str], column: Column) -> float:
    return max(cells[run, column]["mean"] for run in runs if (run, column) in cells)


def caption(report: Any, judged: bool = True) -> str:
    flip = (f" $\\diamond$ {latex_escape(flip_note(report)[2:])}." if flips(report.rows) else "")
    column = " Judged@k: the share of each run's top k documents that is judged." if judged else ""
    return (f"Mean over {report.queries} judged queries; bold: the best mean of each metric. "
            f"{latex_escape(mark_text('top', report).capitalize())}: $\\star$; {MARKS['better'][2]} "
            f"({latex_escape(report.baseline)}): "
            f"$\\uparrow$, {MARKS['worse'][2]}: $\\downarrow$, {MARKS['equivalent'][2]}: $\\approx$.{flip}{column} "
            f"{latex_escape(report.describe())}.")


def to_latex(report: Any, digits: int = 3, judged: bool = True) -> str:
    """A booktabs table (\\usepackage{booktabs}): one row per run, one column per metric, then (`judged`) one
    Judged@k column per cutoff of the metrics."""
    digits = check_digits(digits)
    runs, metrics, cells = grid(report.rows)
    extra = judged_columns(metrics) if judged else []
    lines = ["\\begin{table}", "\\centering", f"\\begin{{tabular}}{{l{'r' * (len(metrics) + len(extra))}}}",
             "\\toprule", " & ".join(["Run", *(latex_escape(label(metric)) for metric in metrics),
                                       *(latex_escape(name) for name, _ in extra)]) + r" \\", "\\midrule"]
    for run in runs:
        values = []
        for metric in metrics:
            row = cells.get((run, metric))
            if row is None:
                values.append("")
                continue
            text = f"{row['mean']:.{digits}f}"
            if round(row["mean"], digits) == round(_best(cells, runs, metric), digits):
                text = f"\\textbf{{{text}}}"
            values.append(text + "".join(MARKS[mark][0] for mark in marks(row)))
        values += [judged_text(cells, run, metric) for _, metric in extra]
        lines.append(" & ".join([latex_cell(run), *values]) + r" \\")
    lines += ["\\bottomrule", "\\end{tabular}", f"\\caption{{{caption(report, judged)}}}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def to_html(report: Any, digits: int = 3, judged: bool = True) -> str:
    """The same table for a notebook: each cell the mean with its 95% interval and the marks, then (`judged`) the
    Judged@k columns."""
    digits = check_digits(digits)
    runs, metrics, cells = grid(report.rows)
    extra = judged_columns(metrics) if judged else []
    head = "".join(f"<th>{html.escape(name)}</th>" for name in [*map(label, metrics), *(name for name, _ in extra)])
    body = []
    for run in runs:
        values = []
        for metric in metrics:
            row = cells.get((run, metric))
            if row is None:
                values.append("<td></td>")
                continue
            text = f"{row['mean']:.{digits}f}"
            if round(row["mean"], digits) == round(_best(cells, runs, metric), digits):
                text = f"<b>{text}</b>"
            signs = "".join(f"<span title=\"{html.escape(mark_text(mark, report))}\">{MARKS[mark][1]}</span>"
                            for mark in marks(row))
            values.append(f"<td style=\"text-align:right\">{text}{signs} <small>[{row['ci_low']:.{digits}f}, "
                          f"{row['ci_high']:.{digits}f}]</small></td>")
        values += [f"<td style=\"text-align:right\">{judged_text(cells, run, metric)}</td>" for _, metric in extra]
        body.append(f"<tr><th style=\"text-align:left\">{html.escape(run)}</th>{''.join(values)}</tr>")
    legend = "; ".join(f"{sign} {mark_text(mark, report)}" for mark, (_, sign, _) in MARKS.items() if mark != "flip")
    notes = (f" {flip_note(report)}." if flips(report.rows) else "") + (
        " Judged@k: the share of each run's top k documents that is judged." if extra else "")
    return (f"<table><caption style=\"caption-side:bottom;text-align:left\">{html.escape(report.describe())}. "
            f"Bold: the best mean of each metric; {html.escape(legend)} ({html.escape(report.baseline)}); "
            f"[95% interval].{html.escape(notes)}</caption><thead><tr><th>Run</th>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table>")
