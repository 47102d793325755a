"""Every model placed on the "could be #1" page: a lexical model without a parameter count is plotted at 0 learned
parameters and says so, and each page opens on the first cost (milliseconds per query, then parameters, then
embedding dimensions) that places every model that could be #1. On the synthetic board with BM25 (lexical, no count)
and two small dense models, BM25 could be #1 on the "Other" group."""

from __future__ import annotations

import json

import pytest

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.submissions.load import load_results
from leaderboard.web.views.pareto import DEFAULT_COSTS, LEXICAL_PARAMETERS, cost_text
from leaderboard.web.views.pareto import build as build_pareto


def _pages(synth, models=None):
    loaded = load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification)
    board = build_leaderboard([r for r in loaded.results if models is None or r.model.id in models], SiteSettings(),
                              synth.golden_lookup)
    return board, {context.choice.key: context for context in build_pareto(board)}


@pytest.fixture(scope="module")
def pages(synth):
    return _pages(synth)


def test_a_lexical_model_is_plotted_at_zero_parameters(synth):
    board, contexts = _pages(synth, {"bm25", "intfloat/e5-small-v2", "sentence-transformers/all-MiniLM-L6-v2"})
    bm25 = next(m for m in board.models if m.info.id == "bm25")
    assert bm25.info.type == "lexical" and bm25.info.parameters is None
    choice = contexts["g-other"].choice
    row = next(row for row in choice.rows if row.model_id == "bm25")  # could be #1 there
    parameters = next(view for view in choice.views if view.cost == "parameters")
    assert "bm25" not in parameters.missing
    assert row.costs[0].value == 0 and row.costs[0].text == LEXICAL_PARAMETERS
    figure = json.loads(parameters.figure.json)
    placed = {name: x for trace in figure["data"] for name, x in zip(trace.get("text", []), trace["x"], strict=False)}
    assert placed.get("bm25") == 0
    assert figure["layout"]["xaxis"]["type"] == "linear"  # 0 has no place on a log axis
    assert "plotted at 0 learned parameters" in contexts["g-other"].rule
    others = [m for m in board.models if m.info.parameters is None and m.info.type != "lexical"]
    for view in (v for c in contexts.values() for v in c.choice.views if v.cost == "parameters"):
        assert set(view.missing) <= {m.info.id for m in others}  # only non-lexical models lack the count


def test_each_page_opens_on_the_first_cost_that_places_every_tied_model(pages):
    _, contexts = pages
    for context in contexts.values():
        choice = context.choice
        if not choice.rows:
            continue
        placing = [view.cost for view in choice.views if not view.missing]
        expected = next((cost for cost in DEFAULT_COSTS if cost in placing), None)
        if expected is None:  # none places all: the one that places most
            expected = max(choice.views, key=lambda view: len(choice.rows) - len(view.missing)).cost
        assert choice.default_cost == expected, choice.key


def test_the_default_cost_is_the_selected_option(built_site):
    html = (built_site / "pareto.html").read_text()
    selected = html.split('id="pareto-cost"', 1)[1].split("</select>", 1)[0]
    assert selected.count(" selected") == 1


@pytest.mark.parametrize(("value", "text"), [(116.0, "116 ms"), (99.96, "100 ms"), (1234.4, "1,234 ms"),
                                             (1.0, "1.00 ms"), (12.34, "12.3 ms")])
def test_milliseconds_read_without_a_trailing_point(value, text):
    assert cost_text("latency", value) == text
