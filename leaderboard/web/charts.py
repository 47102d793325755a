"""Pure functions from numbers to Plotly figure dicts ({"data": [...], "layout": {...}}).

Figures are plain dicts so that their JSON is deterministic (no random ids); values are rounded to what
the eye can see, which also keeps pages small. Scores arrive as shown in the tables (×100).

Plotly reads text as markup (`<b>`, `<a href>`, `<br>`), so every name that comes from a result file (model and
dataset ids, metric names) goes through `_plain` before it reaches a figure: category labels, hover text,
titles and trace names alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from leaderboard.web.render import format_pvalue

FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", "size": 13, "color": "#1f2328"}
BLUE, ORANGE, GREY, GREEN, RED = "#1f5fa8", "#b35806", "#8c959f", "#1a7f37", "#c62828"
ROW_PX = 22  # height per model in horizontal charts
# A legend under the axis title, against the chart's bottom edge (Plotly makes room for it): one placed by the plot's
# own coordinates (y = -0.25) covers the axis title once it wraps, and the hover toolbar covers one at the top right.
BOTTOM_LEGEND = {"orientation": "h", "x": 0, "xanchor": "left", "y": 0, "yanchor": "bottom", "yref": "container"}


def _plain(text: str) -> str:
    """Text that Plotly shows as written: the three characters its markup uses become entities it decodes."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plain_all(texts: Sequence[str]) -> list[str]:
    return [_plain(text) for text in texts]


def _round(values, digits: int = 3) -> list:
    return [None if item is None or not math.isfinite(value := float(item)) else round(value, digits)
            for item in values]


def _rows(count: int, base: int) -> dict:
    """Marks a chart with one row per model (best last, as Plotly draws the first category at the bottom):
    charts.js keeps every array of `count` values to its last N and sets the height to base + N rows."""
    return {"count": count, "base": base, "px": ROW_PX}


def _layout(title: str, height: int, **extra) -> dict:
    layout = {
        "title": {"text": title, "x": 0, "font": {"size": 15}},
        "font": FONT,
        "height": height,
        "margin": {"l": 10, "r": 20, "t": 50, "b": 50},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "hovermode": "closest",
    }
    layout.update(extra)
    return layout


def scores_with_ci(models: Sequence[str], means, low, high, best, metric: str, baseline_mean: float | None,
                   level: str = "95%") -> dict:
    """Horizontal dot-and-whisker chart: each model's mean with its CI (at `level`); the best set (★) highlighted."""
    models, metric = _plain_all(models)[::-1], _plain(metric)  # Plotly draws the first category at the bottom
    means, low, high, best = (list(values)[::-1] for values in (means, low, high, best))
    colors = [BLUE if flag else GREY for flag in best]
    trace = {
        "type": "scatter",
        "mode": "markers",
        "x": _round(means),
        "y": models,
        "marker": {"color": colors, "size": 8},
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": _round(np.asarray(high) - np.asarray(means)),
            "arrayminus": _round(np.asarray(means) - np.asarray(low)),
            "color": "#57606a",
            "thickness": 1.5,
            "width": 3,
        },
        "customdata": [[lo, hi] for lo, hi in zip(_round(low), _round(high), strict=True)],
        "hovertemplate": "%{y}<br>" + metric + " %{x:.2f}<br>" + level + " CI %{customdata[0]:.2f} to %{customdata[1]:.2f}"
        "<extra></extra>",
        "name": metric,
        "showlegend": False,
    }
    shapes = []
    if baseline_mean is not None:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": round(baseline_mean, 3),
                       "x1": round(baseline_mean, 3), "y0": 0, "y1": 1,
                       "line": {"color": ORANGE, "dash": "dash", "width": 1.5}})
    return {
        "data": [trace],
        "layout": _layout(
            f"{metric} ×100: mean and {level} CI (blue: ★ could be #1, the best set; dashed: baseline)",
            120 + ROW_PX * len(models),
            xaxis={"title": {"text": f"{metric} ×100"}, "zeroline": False, "gridcolor": "#eaeef2"},
            yaxis={"automargin": True, "type": "category"},
            shapes=shapes,
        ),
        "rows": _rows(len(models), 120),
    }


def pvalue_heatmap(models: Sequence[str], pvalues: np.ndarray, alpha: float, correction: str,
                   of_models: int | None = None) -> dict:
    """Corrected p-values of every pair; cells below alpha are dark (the pair differs significantly).
    `of_models`: how many models were tested when `models` are only the best of them."""
    pairs = "all pairs" if of_models in (None, len(models)) else \
        f"the pairs among the {len(models)} best of {of_models:,} models"
    models, correction = _plain_all(models), _plain(correction)
    # A discrete scale: one colour per significance class, not a 0-1 ramp on which every significant pair sits in
    # the bottom 5%; "not significant" is a mid grey, visible on the light and the dark page alike.
    bounds = [bound for bound in (0.001, 0.01) if bound < alpha] + [alpha]
    labels = [f"p < {bound:g}" for bound in bounds] + [f"p ≥ {alpha:g}: not separable"]
    colours = ["#08306b", "#2171b5", "#6baed6"][-len(bounds):] + ["#8c959f"]
    p = np.asarray(pvalues, dtype=np.float64)
    z = np.searchsorted(np.asarray(bounds), p, side="right").tolist()  # class index: how many bounds p reaches
    top = len(bounds)
    scale = []
    for index, colour in enumerate(colours):
        scale += [[index / (top + 1), colour], [(index + 1) / (top + 1), colour]]
    trace = {
        "type": "heatmap",
        "x": models,
        "y": models,
        "z": z,
        "zmin": -0.5,
        "zmax": top + 0.5,
        "customdata": [[format_pvalue(value, alpha) for value in row] for row in p],
        "colorscale": scale,
        "colorbar": {"title": {"text": "corrected p"}, "tickvals": list(range(top + 1)), "ticktext": labels},
        "hovertemplate": "%{y} vs %{x}<br>corrected p = %{customdata}<extra></extra>",
        "xgap": 1,
        "ygap": 1,
    }
    cell = max(6, min(30, 1400 // max(len(models), 1)))  # pixels per cell: readable, bounded page height
    every = {"dtick": 1} if cell >= 14 else {}  # small cells: let Plotly thin out the labels
    return {
        "data": [trace],
        "layout": _layout(
            f"p-values of {pairs} ({correction}); blue: p < {alpha:g}, grey: not separable",
            340 + cell * len(models),
            xaxis={"automargin": True, "type": "category", "tickangle": -45, "constrain": "domain", **every},
            yaxis={"automargin": True, "type": "category", "autorange": "reversed", "scaleanchor": "x",
                   "constrain": "domain", **every},
        ),
    }


def per_query_boxes(models: Sequence[str], box: dict[str, np.ndarray], metric: str) -> dict:
    """Per-query score distribution of each model as box plots from precomputed quartiles."""
    models, metric = _plain_all(models)[::-1], _plain(metric)
    picked = {name: _round(list(values)[::-1]) for name, values in box.items()}
    trace = {
        "type": "box",
        "orientation": "h",
        "y": models,
        "q1": picked["q1"],
        "median": picked["median"],
        "q3": picked["q3"],
        "lowerfence": picked["low"],
        "upperfence": picked["high"],
        "mean": picked["mean"],
        "marker": {"color": BLUE},
        "line": {"color": BLUE},
        "fillcolor": "rgba(31,95,168,0.15)",
        "showlegend": False,
        "name": metric,
    }
    return {
        "data": [trace],
        "layout": _layout(
            f"Per-query {metric} ×100: quartiles, whiskers at 1.5 IQR, dashed line at the mean",
            120 + ROW_PX * len(models),
            xaxis={"title": {"text": f"{metric} ×100"}, "gridcolor": "#eaeef2"},
            yaxis={"automargin": True, "type": "category"},
        ),
        "rows": _rows(len(models), 120),
    }


def wins_ties_losses(models: Sequence[str], wins, ties, losses, baseline: str) -> dict:
    """Stacked bars: queries where each model beats, ties or loses to the baseline."""
    models, baseline = _plain_all(models)[::-1], _plain(baseline)
    traces = []
    for name, values, color in (("wins", wins, GREEN), ("ties", ties, GREY), ("losses", losses, RED)):
        traces.append({
            "type": "bar",
            "orientation": "h",
            "name": name,
            "y": models,
            "x": [int(value) for value in list(values)[::-1]],
            "marker": {"color": color},
            "hovertemplate": "%{y}: %{x} " + name + "<extra></extra>",
        })
    return {
        "data": traces,
        "layout": _layout(
            f"Per-query wins, ties and losses against {baseline}",
            170 + ROW_PX * len(models),
            barmode="stack",
            xaxis={"title": {"text": "queries"}, "gridcolor": "#eaeef2"},
            yaxis={"automargin": True, "type": "category"},
            legend={**BOTTOM_LEGEND, "traceorder": "normal"},
            margin={"l": 10, "r": 20, "t": 50, "b": 80},
        ),
        "rows": _rows(len(models), 170),
    }


def model_vs_baseline(datasets: Sequence[str], means, low, high, baseline_means, model: str,
                      baseline: str | None, level: str = "95%") -> dict:
    """Grouped bars per dataset: the model (with its CI) and the baseline, main metric of each dataset."""
    datasets, model = _plain_all(datasets), _plain(model)
    baseline = None if baseline is None else _plain(baseline)
    traces = [{
        "type": "bar",
        "name": model,
        "x": datasets,
        "y": _round(means),
        "marker": {"color": BLUE},
        "error_y": {"type": "data", "symmetric": False, "color": "#1f2328",
                    "array": _round(np.asarray(high, dtype=float) - np.asarray(means, dtype=float)),
                    "arrayminus": _round(np.asarray(means, dtype=float) - np.asarray(low, dtype=float))},
        "hovertemplate": "%{x}: %{y:.2f}<extra>" + model + "</extra>",
    }]
    if baseline is not None and baseline != model:
        traces.append({
            "type": "bar",
            "name": baseline,
            "x": datasets,
            "y": _round([np.nan if value is None else value for value in baseline_means]),
            "marker": {"color": ORANGE},
            "hovertemplate": "%{x}: %{y:.2f}<extra>" + baseline + "</extra>",
        })
    return {
        "data": traces,
        "layout": _layout(
            f"Main metric of each dataset ×100, with {level} CI",
            420,
            barmode="group",
            xaxis={"automargin": True, "type": "category", "tickangle": -30},
            yaxis={"automargin": True, "title": {"text": "main metric ×100"}, "gridcolor": "#eaeef2",
                   "rangemode": "tozero"},
            legend={"orientation": "h", "y": 1.08},
        ),
    }


def recall_at_scale(dataset: str, sizes: Sequence[float], ks: Sequence[int], recall: dict, measured: Sequence[tuple[int, float]],
                    num_docs: int, method: str) -> dict:
    """Predicted Recall@k (×100) against corpus size on a log axis, one line per k and growth scenario (`recall`:
    growth -> (sizes, ks) matrix; the first scenario solid, the others dashed), with the measured values at the
    dataset's own size drawn over it as diamonds of the same colour."""
    dataset, method = _plain(dataset), _plain(method)
    colors = (BLUE, ORANGE, GREEN, RED, GREY)
    dashes = ("solid", "dash", "dot")
    traces = []
    for g, (growth, matrix) in enumerate(recall.items()):
        matrix = np.asarray(matrix, dtype=np.float64)
        for j, k in enumerate(ks):
            traces.append({
                "type": "scatter",
                "mode": "lines",
                "name": f"R@{k}, {growth}",
                "x": [float(size) for size in sizes],
                "y": _round(matrix[:, j], 2),
                "line": {"color": colors[j % len(colors)], "width": 2, "dash": dashes[g % len(dashes)]},
                "hovertemplate": f"predicted R@{k} ({growth} growth)" + " at %{x:,.0f} docs: %{y:.1f}<extra></extra>",
            })
    shown = [(k, value) for k, value in measured if k in ks]
    if shown:
        traces.append({
            "type": "scatter",
            "mode": "markers",
            "name": f"measured at {num_docs:,} docs",
            "x": [float(num_docs)] * len(shown),
            "y": _round([value for _, value in shown], 2),
            "text": [f"R@{k}" for k, _ in shown],
            "marker": {"color": [colors[list(ks).index(k) % len(colors)] for k, _ in shown], "size": 12,
                       "symbol": "diamond", "line": {"color": "#1f2328", "width": 1}},
            "hovertemplate": "measured %{text} at %{x:,.0f} docs: %{y:.1f}<extra></extra>",
        })
    return {
        "data": traces,
        "layout": _layout(
            f"{dataset}: predicted Recall@k against corpus size (model-based prediction, {method})",
            420,
            xaxis={"title": {"text": "documents in the corpus (log scale)"}, "type": "log", "gridcolor": "#eaeef2",
                   "exponentformat": "power"},
            yaxis={"title": {"text": "Recall@k ×100"}, "range": [0, 102], "gridcolor": "#eaeef2"},
            shapes=[{"type": "line", "xref": "x", "yref": "paper", "x0": float(num_docs), "x1": float(num_docs),
                     "y0": 0, "y1": 1, "line": {"color": GREY, "dash": "dot", "width": 1}}],
            legend=BOTTOM_LEGEND,
            margin={"l": 60, "r": 20, "t": 50, "b": 60},
        ),
    }


def pareto_chart(models: Sequence[str], costs: Sequence[float], means, low, high, front: Sequence[bool],
                 cost_label: str, metric: str) -> dict:
    """The models that could be #1 against one cost (log axis), each mean with its 95% CI; the Pareto front's models
    in blue, joined by the staircase that bounds what the others reach (up means better, left cheaper)."""
    models, cost_label, metric = _plain_all(models), _plain(cost_label), _plain(metric)
    cost = [float(value) for value in costs]
    mean, lo, hi = (np.asarray(values, dtype=np.float64) for values in (means, low, high))
    log = all(value > 0 for value in cost)  # a cost of 0 (a model without parameters) has no place on a log axis
    traces = []
    for on_front, name, colour in ((False, "could be #1", GREY), (True, "on the Pareto front", BLUE)):
        keep = [i for i, flag in enumerate(front) if bool(flag) == on_front]
        keep.sort(key=lambda i: (cost[i], -mean[i]))
        if not keep:
            continue
        traces.append({
            "type": "scatter",
            "mode": "lines+markers" if on_front else "markers",
            "name": name,
            "x": [cost[i] for i in keep],
            "y": _round(mean[keep]),
            "text": [models[i] for i in keep],
            "line": {"color": colour, "shape": "hv", "width": 1.5},
            "marker": {"color": colour, "size": 10 if on_front else 8,
                       "symbol": "diamond" if on_front else "circle"},
            "error_y": {"type": "data", "symmetric": False, "color": colour, "thickness": 1, "width": 3,
                        "array": _round(hi[keep] - mean[keep]), "arrayminus": _round(mean[keep] - lo[keep])},
            "hovertemplate": "%{text}<br>" + cost_label + " %{x:,.4g}<br>" + metric + " %{y:.2f}<extra></extra>",
        })
    return {
        "data": traces,
        "layout": _layout(
            f"Could be #1: {metric} ×100 against {cost_label.lower()} (blue: the Pareto front)",
            450,
            xaxis={"title": {"text": cost_label + (" (log scale)" if log else "")}, "type": "log" if log else "linear",
                   "gridcolor": "#eaeef2",
                   "automargin": True},
            yaxis={"title": {"text": f"{metric} ×100"}, "gridcolor": "#eaeef2", "automargin": True},
            legend=BOTTOM_LEGEND,
            margin={"l": 60, "r": 20, "t": 50, "b": 60},
        ),
    }


TYPE_COLOURS = {"lexical": GREY, "sparse": ORANGE, "dense": BLUE, "hybrid": GREEN, "late-interaction": RED,
                "other": "#6e4b00"}


def size_score_chart(models: Sequence[str], parameters: Sequence[float | None], types: Sequence[str], means, low, high,
                     group: str) -> dict:
    """Every model with a mean on `group`: its parameter count (log axis) against the mean ×100 with its 95% CI, one
    colour per model type. A model without learned parameters (0: lexical) has no place on a log axis: it is a dashed
    line across the chart at its mean, named at its right end."""
    models, group = _plain_all(models), _plain(group)
    mean, lo, hi = (np.asarray(values, dtype=np.float64) for values in (means, low, high))
    traces, shapes, notes = [], [], []
    for kind, colour in TYPE_COLOURS.items():
        keep = [i for i, t in enumerate(types) if t == kind and parameters[i]]
        if keep:
            traces.append({
                "type": "scatter", "mode": "markers", "name": kind, "x": [float(parameters[i]) for i in keep],
                "y": _round(mean[keep]), "text": [models[i] for i in keep],
                "marker": {"color": colour, "size": 8},
                "error_y": {"type": "data", "symmetric": False, "color": colour, "thickness": 1, "width": 2,
                            "array": _round(hi[keep] - mean[keep]), "arrayminus": _round(mean[keep] - lo[keep])},
                "hovertemplate": "%{text}<br>%{x:,.3s} parameters<br>" + group + " mean %{y:.2f}<extra></extra>",
            })
    for i, count in enumerate(parameters):
        if count == 0:
            shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": round(float(mean[i]), 3),
                           "y1": round(float(mean[i]), 3),
                           "line": {"color": TYPE_COLOURS.get(types[i], GREY), "dash": "dash", "width": 1}})
            notes.append({"xref": "paper", "x": 1, "xanchor": "right", "y": round(float(mean[i]), 3),
                          "yanchor": "bottom", "showarrow": False, "text": f"{models[i]} (0 learned parameters)",
                          "font": {"size": 11, "color": "#57606a"}})
    return {
        "data": traces,
        "layout": _layout(
            f"{group} mean ×100 against model size", 460,
            xaxis={"title": {"text": "Parameters (log scale)"}, "type": "log", "gridcolor": "#eaeef2",
                   "automargin": True},
            yaxis={"title": {"text": f"{group} mean ×100"}, "gridcolor": "#eaeef2", "automargin": True},
            shapes=shapes, annotations=notes, legend=BOTTOM_LEGEND,
            margin={"l": 60, "r": 20, "t": 50, "b": 60},
        ),
    }


def stability_chart(models: Sequence[str], split_half: Sequence[float], left_out: Sequence[int], splits: int,
                    units: int, group: str) -> dict:
    """How stable a group's #1 is (analysis/stability.py): per model, the share of random query halves in which it
    is #1 and the share of its dataset units whose leaving-out makes it #1, as grouped horizontal bars (%), the
    models in the order given (the first drawn at the top); without the second where the group has one unit."""
    models, group = _plain_all(models)[::-1], _plain(group)
    checks = [(f"#1 on random halves of the queries ({splits} splits)", [100 * s for s in split_half], BLUE,
               "of the splits")]
    if units:
        checks.append((f"#1 with one dataset unit left out ({units} units)", [100 * c / units for c in left_out],
                       ORANGE, "of the units left out"))
    traces = []
    for name, values, colour, what in checks:
        traces.append({"type": "bar", "orientation": "h", "name": name, "y": models, "x": _round(values[::-1], 1),
                       "marker": {"color": colour},
                       "hovertemplate": "%{y}: #1 in %{x:.1f}% " + what + "<extra></extra>"})
    return {
        "data": traces,
        "layout": _layout(
            f"How stable is #1 on {group}?", 150 + len(checks) * ROW_PX * len(models), barmode="group",
            xaxis={"title": {"text": "% of the splits, or of the units left out, in which the model is #1"},
                   "range": [0, 100], "gridcolor": "#eaeef2"},
            yaxis={"automargin": True, "type": "category"},
            legend={**BOTTOM_LEGEND, "traceorder": "normal"},
            margin={"l": 10, "r": 20, "t": 50, "b": 100},
        ),
    }
