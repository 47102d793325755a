"""Who could be #1 is one verdict (analysis/best_words.py): the ranks, dataset, model, home and "could be #1" pages,
the downloads, the pull request's summary and `irboard.compare` name the same best set (ranks.best_set), in the same
sentence, at the level 1 - alpha of the build's settings. The board is made so that the best set and the top group
of the rank ranges (rank range from 1) differ: one judged document per query, and nDCG@10 of

- org/a: 1 on every query (rank 1);
- org/b: 1/log2(3) on 6 queries (rank 2), else 1: one-sided p against org/a 0.006, below 0.05 / 3, but Holm's
  two-sided 6 x 0.012 = 0.074 rejects nothing, so its rank range starts at 1 and it is not in the set;
- org/c: 0 on 4 other queries (one-sided p 0.022: in the set at 0.05, out of it at 0.1);
- org/d: 0 on 5 other queries (one-sided p 0.012: out of the set).

The expected sets come from scipy's one-sided paired t-tests and statsmodels' Holm correction on the same values,
which `irboard.evaluate` computes from the runs; a page, file or summary that marked the rank-range top group again
would name org/b and org/d."""

from __future__ import annotations

import csv
import html
import itertools
import math
import re
import threading

import numpy as np
import pytest
from playwright.sync_api import expect
from scipy import stats
from statsmodels.stats.multitest import multipletests

import irboard
from leaderboard.analysis.stats import TestSettings
from leaderboard.review.compare import comparison_markdown
from leaderboard.web.build import build_site

DATASET, SLUG, QUERIES = "custom/bestset", "custom__bestset", 40
WORSE = {"org/a": (), "org/b": range(0, 6), "org/c": range(6, 10), "org/d": range(10, 15)}  # queries it loses
SECOND = {"org/b"}  # loses by ranking the judged document second; the others miss it
MODELS = list(WORSE)


def _query(k: int) -> str:
    return f"BES-{k + 1:03d}"  # the query ids of tests/data/make_synthetic_results.py's result_dict


def _runs() -> tuple[dict, dict]:
    qrels = {_query(k): {f"rel-{k}": 1} for k in range(QUERIES)}
    runs = {}
    for model in MODELS:
        run = {}
        for k in range(QUERIES):
            others = {f"doc-{k}-{j}": 10.0 - j for j in range(9)}
            if k not in WORSE[model]:
                others[f"rel-{k}"] = 20.0
            elif model in SECOND:
                others[f"rel-{k}"] = 9.5  # between the first and the second of the others
            run[_query(k)] = others
        runs[model] = run
    return runs, qrels


def _values(runs, qrels) -> np.ndarray:
    table = [irboard.evaluate(runs[m], qrels, "nDCG@10", per_query=True)["nDCG@10"] for m in MODELS]
    return np.stack([series.loc[[_query(k) for k in range(QUERIES)]].to_numpy() for series in table])


def best_set(values: np.ndarray, alpha: float) -> set[str]:
    """Models no other is better than in scipy's one-sided paired t-test at alpha / (models - 1)."""
    level = alpha / (len(MODELS) - 1)
    beaten = {MODELS[i] for i, j in itertools.permutations(range(len(MODELS)), 2)
              if stats.ttest_rel(values[j], values[i], alternative="greater").pvalue < level}
    return set(MODELS) - beaten


def top_group(values: np.ndarray, alpha: float) -> set[str]:
    """Models whose rank range starts at 1: none significantly better after Holm over all pairs (statsmodels)."""
    pairs = list(itertools.combinations(range(len(MODELS)), 2))
    raw = [stats.ttest_rel(values[i], values[j]).pvalue for i, j in pairs]
    reject = multipletests(raw, alpha=alpha, method="holm")[0]
    means = values.mean(axis=1)
    beaten = {MODELS[j] if means[i] > means[j] else MODELS[i] for (i, j), r in zip(pairs, reject, strict=True) if r}
    return set(MODELS) - beaten


@pytest.fixture(scope="module")
def board(tmp_path_factory, synth):
    runs, qrels = _runs()
    values = _values(runs, qrels)
    root = tmp_path_factory.mktemp("bestset")
    dataset = synth.SyntheticDataset(DATASET, "bestset", "Other", "en", "nDCG@10", QUERIES, 0.0)
    files = {}
    for model, row in zip(MODELS, values, strict=True):
        data = synth.result_dict(synth.SyntheticModel(model, "dense", 0.5, 1_000_000), dataset, ("nDCG@10",),
                                 with_run=True)
        data["per_query"]["nDCG@10"] = {_query(k): float(row[k]) for k in range(QUERIES)}
        data["metrics"]["nDCG@10"] = float(row.mean())
        files[model] = root / "results" / model.replace("/", "__") / f"{SLUG}.json"
        files[model].parent.mkdir(parents=True, exist_ok=True)
        files[model].write_text(synth.dump(data), encoding="utf-8")
    verified = synth.VerifiedWhen(lambda result: True)
    sites = {}
    for alpha in (0.05, 0.1):
        sites[alpha] = root / f"site-{alpha}"
        build_site(root / "results", sites[alpha], settings=TestSettings(alpha=alpha), is_verified=verified,
                   lookup=synth.golden_lookup)
    summary = comparison_markdown([files[m] for m in ("org/b", "org/c", "org/d")], root / "results",
                                  judgments=verified)
    return {"runs": runs, "qrels": qrels, "values": values, "sites": sites, "summary": summary}


def _rows(page: str) -> dict[str, str]:
    """Each table row of a page that names a model (data-id), by model id."""
    return {match[1]: match[2] for match in re.finditer(r'<tr[^>]* data-id="([^"]+)"[^>]*>(.*?)</tr>', page, re.S)}


def _starred(page: str) -> set[str]:
    return {model for model, row in _rows(page).items() if 'class="star"' in row}


def _answer(page: str, anchor: str) -> str:
    found = re.search(rf'<p class="[^"]*" id="{anchor}"[^>]*>(?:<span id="answer-text">)?(.*?)</', page, re.S)
    return html.unescape(found[1])


def test_the_board_is_made_as_the_module_says(board):
    values = board["values"]
    assert best_set(values, 0.05) == {"org/a", "org/c"} and top_group(values, 0.05) == set(MODELS)
    assert best_set(values, 0.1) == {"org/a"} and top_group(values, 0.1) == {"org/a", "org/c", "org/d"}


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_every_page_and_download_marks_the_best_set_at_the_settings_level(board, alpha):
    site, expected = board["sites"][alpha], best_set(board["values"], alpha)
    level = f"{100 * (1 - alpha):g}%"
    read = lambda path: (site / path).read_text(encoding="utf-8")  # noqa: E731
    dataset = read(f"datasets/{SLUG}.html")
    assert _starred(dataset) == expected  # ★ beside the score
    assert f"★ could be #1 at {level}" in dataset
    ranks = read("ranks.html")
    assert _starred(ranks) == {m.lower() for m in expected}
    home = read("index.html")
    assert _starred(home) == {m.lower() for m in expected}  # ★ beside each group mean, before any script
    sentence = _answer(dataset, "answer")
    assert sentence.startswith(f"Who could be #1 on {DATASET} at {level}: ") and f"α / {len(MODELS) - 1})" in sentence
    named = sentence.split(": ", 1)[1].split(" (", 1)[0].split(", ")
    assert set(named) == expected
    # one dataset, so one group ("Other"): its mean's set is the dataset's, in the same words
    assert sentence.replace(DATASET, "Other (1 dataset)") in html.unescape(ranks)
    assert _answer(home, "answer") == sentence.replace(DATASET, "Other (1 dataset)")
    assert f'"level":"{level}"' in read("data/board.js")  # the script writes the home sentence for each view
    for model in MODELS:
        page = read(f"models/{model.replace('/', '__')}.html")
        assert ('class="star"' in page) == (model in expected), model
    pareto = read("pareto.html")
    listed = set(re.findall(r'<th scope="row"><a href="[^"]*">([^<]+)</a></th>', pareto))
    assert listed == expected and f"could be #1 on Other (1 dataset) at {level}" in pareto
    with open(site / "downloads" / "datasets" / f"{SLUG}.csv", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert {row["model_id"] for row in rows if row["best_set"] == "True"} == expected
    assert all(row["rank_best"] == "1" for row in rows) if alpha == 0.05 else True  # the ranges would say all four
    with open(site / "downloads" / "leaderboard.csv", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert {row["model_id"] for row in rows if row["Other verdict"] == "best_set"} == expected


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_the_api_names_the_same_set(board, alpha):
    report = irboard.compare(board["runs"], board["qrels"], "nDCG@10", alpha=alpha)
    frame = report.to_dataframe().set_index("run")
    assert set(frame.index[frame["best_set"]]) == best_set(board["values"], alpha)
    assert math.isclose(frame.loc["org/b", "mean"], board["values"][1].mean())
    latex = report.to_latex()
    assert f"Could be \\#1 at {100 * (1 - alpha):g}\\%" in latex
    starred = {line.split(" & ")[0].replace("\\_", "_") for line in latex.splitlines() if "\\star" in line
               and " & " in line}
    assert starred == best_set(board["values"], alpha)


def test_the_pull_request_summary_names_the_same_set_in_the_pages_words(board):
    summary, expected = board["summary"], best_set(board["values"], 0.05)
    header = next(line for line in summary.splitlines() if line.startswith("| model |"))
    assert header.endswith("| could be #1 at 95% |")
    column = {line.split(" | ")[0][2:]: line.rstrip(" |").rsplit(" | ", 1)[1] for line in summary.splitlines()
              if line.startswith("| org/")}
    assert column == {"org/b": "no", "org/c": "★ yes", "org/d": "no"}
    dataset = (board["sites"][0.05] / "datasets" / f"{SLUG}.html").read_text(encoding="utf-8")
    sentence = _answer(dataset, "answer")
    assert f"- {sentence}" in summary.splitlines()
    assert all(model in sentence for model in expected) and "org/b" not in sentence and "org/d" not in sentence


@pytest.mark.browser
def test_the_home_script_writes_the_settings_level(board, watched):
    """At alpha 0.1 the sentence and the ★ that site/js/board.js writes for the view say 90%, as the build's own."""
    from leaderboard.web.build import make_server

    server = make_server(board["sites"][0.1], port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        watched.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        expect(watched.locator("#board-sort")).to_contain_text("Sorted by")  # the script has built the view
        page = (board["sites"][0.1] / "index.html").read_text(encoding="utf-8")
        expect(watched.locator("#answer-text")).to_have_text(_answer(page, "answer"))
        expect(watched.locator("#answer-text")).to_contain_text(": org/a (1 of 4, marked ★")
        expect(watched.locator("#answer-text")).to_contain_text("at 90%")
        titles = watched.locator("#board .star").evaluate_all("nodes => nodes.map(node => node.title)")
        assert titles and set(titles) == {"could be #1 at 90% among the ranked models shown (best set)"}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _small_board(root, synth, queries: int, verified=lambda result: True):
    """A board of one dataset, custom/one, with `queries` queries: org/a scores 0.9 and org/b 0.1 on each."""
    from leaderboard.analysis.aggregate import build_leaderboard
    from leaderboard.submissions.load import load_results

    dataset = synth.SyntheticDataset("custom/one", "one", "Other", "en", "nDCG@10", queries, 0.0)
    for model, value in (("org/a", 0.9), ("org/b", 0.1)):
        data = synth.result_dict(synth.SyntheticModel(model, "dense", 0.5), dataset, ("nDCG@10",), with_run=True)
        data["per_query"]["nDCG@10"] = {query: value for query in data["per_query"]["nDCG@10"]}
        data["metrics"]["nDCG@10"] = value
        path = root / model.replace("/", "__") / "custom__one.json"
        path.parent.mkdir(parents=True)
        path.write_text(synth.dump(data), encoding="utf-8")
    loaded = load_results(root, is_verified=synth.VerifiedWhen(verified))
    return build_leaderboard(loaded.results, lookup=synth.golden_lookup)


def test_one_query_names_no_test(tmp_path, synth):
    """With one query no one-sided test can be made: every ranked model could be #1, and the sentence says why."""
    from leaderboard.analysis.best_words import dataset_sentence
    from leaderboard.web import best_data

    leaderboard = _small_board(tmp_path, synth, 1)
    board = leaderboard.datasets[0]
    assert board.best_set.tolist() == [True, True]
    assert dataset_sentence(board, 0.05) == ("Who could be #1 on custom/one: any of its 2 ranked models (marked ★); "
                                             "with one query no test can tell them apart.")
    # its group (Other, this one dataset) makes no test either: both could be #1 there too, on every page and view
    (group,) = leaderboard.groups
    assert group.best_set == {"org/a", "org/b"}
    assert [group.scores[m].rank_interval for m in ("org/a", "org/b")] == [(1, 2), (1, 2)]
    assert board.rank_range.tolist() == [[1, 2], [1, 2]]
    ids, _, sizes = best_data.group_sizes(leaderboard, group)
    assert best_data.best_of_all(ids, sizes) == {"org/a", "org/b"}


@pytest.mark.parametrize("verified, expected", [
    (set(), "No model is ranked on custom/one: none of its 2 results is re-scored, so none can be called #1."),
    ({"org/b"}, "Who could be #1 on custom/one: org/b, its only ranked model."),
])
def test_a_dataset_with_fewer_than_two_ranked_models_is_spoken_of_as_a_dataset(tmp_path, synth, verified, expected):
    """A dataset has no datasets and no filter: its sentence (dataset and "could be #1" pages, pull request) says
    neither."""
    from leaderboard.analysis.best_words import dataset_sentence
    from leaderboard.web.views.pareto import dataset_choice

    board = _small_board(tmp_path, synth, 3, lambda result: result.model.id in verified)
    assert dataset_sentence(board.datasets[0], 0.05) == expected
    if not verified:  # the "could be #1" page's empty state says the same
        assert dataset_choice(board, board.datasets[0]).summary == expected


def test_one_ranked_model_is_among_the_shown_models_only_under_a_filter():
    from leaderboard.analysis.best_words import sentence

    assert sentence("G", ["org/a"], 1, 1, False, 1, 0.05) == "Who could be #1 on G: org/a, the only model ranked there."
    assert sentence("G", ["org/a"], 1, 3, True, 3, 0.05) == ("Who could be #1 on G among the shown models: org/a, "
                                                             "the only one ranked there.")


@pytest.mark.browser
def test_the_home_script_says_shown_only_under_a_filter(tmp_path, synth, watched):
    """One ranked model and no filter: the home's sentence, the build's and the script's, names no shown models."""
    from leaderboard.web.build import make_server

    _small_board(tmp_path / "results", synth, 3, lambda result: result.model.id == "org/b")
    site = tmp_path / "site"
    build_site(tmp_path / "results", site, is_verified=synth.VerifiedWhen(lambda result: result.model.id == "org/b"),
               lookup=synth.golden_lookup)
    expected = "Who could be #1 on Other (1 dataset): org/b, the only model ranked there."
    assert _answer((site / "index.html").read_text(encoding="utf-8"), "answer") == expected
    server = make_server(site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        watched.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        expect(watched.locator("#board-sort")).to_contain_text("Sorted by")  # the script has built the view
        expect(watched.locator("#answer-text")).to_have_text(expected)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_the_method_page_says_which_test_decides_the_star(board, synth):
    """★ and bold come from the best set's one-sided paired t-tests, not from the corrected test of the settings:
    the method page says so and links to #best-set, and the set is the same whichever test the settings choose."""
    from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
    from leaderboard.submissions.load import load_results

    method = (board["sites"][0.05] / "method.html").read_text(encoding="utf-8")
    correction = re.search(r"<li><strong>Correction: .*?</li>", method, re.S)[0]
    assert "every mark" not in correction and '<a href="#best-set">' in correction
    assert "one-sided paired <em>t</em>-tests at α / (models − 1)" in correction
    decides = re.search(r"The same corrected test decides [^.]*\.", correction)[0]
    assert "★" not in decides and "bold" not in decides, decides
    tied = re.search(r'<p id="tied-for-best">.*?</p>', method, re.S)[0]
    assert '(<a href="#best-set">the best set above</a>' in tied
    assert method.index('id="best-set"') < method.index('id="tied-for-best"')
    loaded = load_results(board["sites"][0.05].parent / "results", is_verified=synth.VerifiedWhen(lambda result: True))
    for test in ("wilcoxon", "randomization"):
        settings = SiteSettings(tests=TestSettings(method=test, resamples=2_000))
        dataset = build_leaderboard(loaded.results, settings, lookup=synth.golden_lookup).datasets[0]
        assert {m for m, keep in zip(dataset.model_ids, dataset.best_set, strict=True) if keep} == best_set(
            board["values"], 0.05), test


def test_every_printed_interval_level_is_the_settings_level(board):
    """The confidence intervals are computed and printed at 1 - alpha: at alpha 0.1 the home, ranks and dataset
    pages say 90% and never 95%, and the dataset's interval is the narrower 90% one."""
    wide, narrow = (board["sites"][alpha] for alpha in (0.05, 0.1))
    for path in ("index.html", "ranks.html", f"datasets/{SLUG}.html"):
        page = (narrow / path).read_text(encoding="utf-8")
        assert "90%" in page and "95%" not in page, path
        assert "95%" in (wide / path).read_text(encoding="utf-8"), path

    def interval(site):
        row = _rows((site / f"datasets/{SLUG}.html").read_text(encoding="utf-8"))["org/a"]
        return [float(x) for x in re.findall(r"\[(-?\d+\.\d+), (-?\d+\.\d+)\]", row)[0]]

    (low95, high95), (low90, high90) = interval(wide), interval(narrow)
    assert low95 < low90 < high90 <= high95  # (a score interval may reach 100 at both levels)
