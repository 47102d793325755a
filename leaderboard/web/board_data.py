"""data/board.js: the whole home table (every model, every dataset column) as compact rows for site/js/board.js.

The home page's own HTML holds the top rows with their group means, so that the table shows before any script
runs; the rest would weigh megabytes as HTML at 1,000 models × 30 datasets (each unverified value carries its
accessible marks), so site/js/board.js builds it from these rows. Values arrive formatted as the page shows them
(render.py's filters), so both renderings agree to the character; a browser test compares them.

A row: [model_id, href, type, parameters, parameters as shown, licence, flags, groups, prediction, cells, tier,
judged]
- flags: letters o (open weights), z (zero-shot everywhere), v (every result verified), b (the baseline), m (the
  parameter count was measured by irboard, not only claimed);
- groups: per mean column, [mean, ci, mean rank or null, rank range or null, ★ (1: in the best set of all ranked
  models, best_data) or not (0), what could flip over the hole bounds ("r" the rank range, "b" the ★ or its
  absence, "rb" both, "" nothing: web.judged_data)] or
  "covered/total" for partial coverage;
- prediction: null without the column, else [text, partial (1) or not (0), the method's measured error as shown
  (with a mean; null: not measured)]; the text ends in * when a prediction in the mean comes from score samples
  that were not checked (shown * like an unverified metric);
- cells: per dataset column, the score as shown ("–" for none), then † when trained on it, then * when not
  verified; a leading ! marks a value in the best set of all the dataset's ranked models (bold);
- tier: the trust tier of the model's least trusted result (self-reported, re-scored or reproduced);
- judged: per dataset column, Judged@k at its main metric's cutoff in hundredths (93: 0.93), null where unknown.

Beside the rows, `best`: per column key, who could be #1 among any shown models (leaderboard/web/best_data.py),
with the rows whose membership could flip (web.judged_data.add_flips); `flips`: the ◊ of a group mean as HTML, by
what could flip; `judged`: per dataset column, the name of its Judged@k.
"""

from __future__ import annotations

import json

from jinja2 import Environment

from leaderboard.submissions.holes import judged_name
from leaderboard.web.contexts import GroupCell, HomeContext, HomeRow
from leaderboard.web.judged_data import flip_marks, judged_hundredths
from leaderboard.web.render import MISSING, format_ci, format_number, format_parameters, format_score


def _group(cell: GroupCell):
    if cell.mean is None:
        return f"{cell.covered}/{cell.total}"
    rank = None if cell.mean_rank is None else format_number(cell.mean_rank, 2)
    interval = None
    if cell.rank_interval:
        low, high = cell.rank_interval
        interval = str(low) if low == high else f"{low}–{high}"
    flips = ("" if cell.rank_holds else "r") + ("" if cell.best_holds else "b")
    return [format_score(cell.mean), format_ci(cell.ci), rank, interval, int(cell.top), flips]


def _prediction(row: HomeRow, error: float | None):
    if row.prediction.mean is not None:
        return [format_score(row.prediction.mean) + ("" if row.prediction.checked else "*"), 0,
                None if error is None else format_score(error)]
    if row.prediction.covered:
        return [f"{row.prediction.covered}/{row.prediction.total}", 1]
    return [MISSING, 1]


def _cells(row: HomeRow) -> list[str]:
    return [("!" if cell.best else "") + format_score(cell.value) + ("†" if cell.trained else "") +
            ("*" if cell.value is not None and not cell.verified else "") for cell in row.cells]


def board_rows(home: HomeContext) -> list[list]:
    rows = []
    for row in home.rows:
        flags = "".join(letter for letter, on in (("o", row.open_weights), ("z", row.zero_shot),
                                                  ("v", row.verified == "all"), ("b", row.is_baseline),
                                                  ("m", row.parameters_measured)) if on)
        rows.append([row.model_id, row.href, row.type, row.parameters, format_parameters(row.parameters),
                     row.license, flags, [_group(cell) for cell in row.groups],
                     _prediction(row, home.prediction.error) if home.prediction else None, _cells(row), row.tier,
                     [judged_hundredths(cell.judged) for cell in row.cells]])
    return rows


def board_script(env: Environment, home: HomeContext) -> str:
    """The script file, with the full table head and the unverified group's label as HTML (templates/_board.html).
    A file loaded by <script src>, never inline, so "<" needs no escape; ensure_ascii keeps U+2028 and U+2029 out
    of the string literals of older JavaScript."""
    table = env.get_template("_board.html").module
    data = {"head": str(table.head(home, True)), "label": str(table.unranked_label()), "columns": home.column_count,
            "rows": board_rows(home), "best": home.best_columns, "level": home.best_level,
            "flips": flip_marks(), "judged": [judged_name(column.metric) for group in home.dataset_groups
                                              for column in group.columns]}
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return f"(function (d) {{\n  d.board = {text};\n}})(window.irboardData = window.irboardData || {{}});\n"
