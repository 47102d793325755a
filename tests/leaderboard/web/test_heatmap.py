"""The p-value heatmap of a dataset page: all pairs for a few models, the best ones' pairs for many."""

import numpy as np

from leaderboard.web import charts


def test_heatmap_names_the_pairs_it_shows():
    models = [f"org/m{i}" for i in range(4)]
    pvalues = np.full((4, 4), 0.5)
    full = charts.pvalue_heatmap(models, pvalues, 0.05, "holm")
    assert full["layout"]["title"]["text"].startswith("p-values of all pairs (holm)")
    assert np.array(full["data"][0]["z"]).shape == (4, 4)
    best = charts.pvalue_heatmap(models[:2], pvalues[:2, :2], 0.05, "holm", of_models=1000)
    assert best["layout"]["title"]["text"].startswith("p-values of the pairs among the 2 best of 1,000 models (holm)")
    assert best["data"][0]["x"] == models[:2] and np.array(best["data"][0]["z"]).shape == (2, 2)


def test_per_model_charts_mark_their_rows_for_the_top_n_control():
    models = [f"org/m{i}" for i in range(40)]
    means = np.linspace(0.9, 0.1, 40)
    figure = charts.scores_with_ci(models, means, means - 0.01, means + 0.01, [True] * 40, "nDCG@10", None)
    assert figure["rows"] == {"count": 40, "base": 120, "px": charts.ROW_PX}
    assert figure["layout"]["height"] == 120 + charts.ROW_PX * 40
    assert figure["data"][0]["y"][-1] == "org/m0"  # the best last: charts.js keeps the last N
    assert len(figure["data"][0]["error_x"]["array"]) == len(figure["data"][0]["marker"]["color"]) == 40


def test_heatmap_colours_significance_classes_not_a_0_1_ramp():
    p = np.array([[1.0, 0.0004, 0.004], [0.0004, 1.0, 0.0498], [0.004, 0.0498, 0.0502]])
    trace = charts.pvalue_heatmap(["a", "b", "c"], p, 0.05, "holm")["data"][0]
    assert trace["z"] == [[3, 0, 1], [0, 3, 2], [1, 2, 3]]  # p < 0.001, < 0.01, < alpha, not separable
    assert trace["colorbar"]["ticktext"] == ["p < 0.001", "p < 0.01", "p < 0.05", "p ≥ 0.05: not separable"]
    assert trace["customdata"][1][2] == "0.0498" and trace["customdata"][2][2] == "0.0502"
    colours = {colour for _, colour in trace["colorscale"]}
    assert "#ffffff" not in colours and len(colours) == 4  # no white block on a dark page
    strict = charts.pvalue_heatmap(["a", "b"], np.array([[1.0, 0.0005], [0.0005, 1.0]]), 0.001, "holm")["data"][0]
    assert strict["z"] == [[1, 0], [0, 1]] and len(strict["colorbar"]["ticktext"]) == 2
