import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
from markupsafe import Markup

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.analysis.verdicts import shown_pvalue
from leaderboard.submissions.load import load_results
from leaderboard.web.render import (
    format_ci,
    format_parameters,
    format_pvalue,
    format_score,
    format_signed,
    indented_json,
    json_rounded,
    json_text,
    make_environment,
    rounded,
    score_cells,
    table_json,
)
from leaderboard.web.views.dataset import build as build_dataset
from leaderboard.web.views.home import build as build_home
from leaderboard.web.views.model import build as build_model


class Collector(HTMLParser):
    """Every start tag with its attributes, and the text inside each <script>."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = (dict(attrs), [])

    def handle_data(self, data):
        if self._script is not None:
            self._script[1].append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script[0], "".join(self._script[1])))
            self._script = None


def parse(path: Path) -> Collector:
    collector = Collector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector


@pytest.fixture(scope="module")
def board(synth):
    return build_leaderboard(load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification).results,
                             SiteSettings(), synth.golden_lookup)


def test_formatting_filters():
    assert format_score(0.45678) == "45.68"
    assert format_score(None) == "–" and format_score(float("nan")) == "–"
    assert format_ci((0.4, 0.512)) == "[40.00, 51.20]"
    assert format_signed(0.0123) == "+1.23" and format_signed(-0.0123) == "-1.23" and format_signed(-1e-9) == "0.00"
    assert format_pvalue(0.0004) == "< 0.001" and format_pvalue(0.04321) == "0.043"
    assert [format_parameters(v) for v in (None, 950, 22_700_000, 1_100_000_000)] == ["unknown", "950", "22.7M", "1.1B"]


def test_p_values_are_never_printed_on_alpha_or_across_it():
    assert format_pvalue(0.0498) == "0.0498" and format_pvalue(0.0502) == "0.0502"
    assert format_pvalue(0.04996) == "0.04996" and format_pvalue(0.0504) == "0.0504"
    assert format_pvalue(0.0096, alpha=0.01) == "0.0096" and format_pvalue(0.0496, alpha=0.01) == "0.050"
    assert format_pvalue(0.05) == "0.05"  # the value itself: not below alpha, so not significant
    rng = np.random.default_rng(3)
    for p in np.r_[rng.uniform(0.04, 0.06, 2000), 0.0495, 0.0505, 0.04995]:
        text = format_pvalue(float(p))
        assert (float(text) < 0.05) == (p < 0.05) and (float(text) != 0.05 or p == 0.05)
    # the data files' four decimals are rounded away from alpha, so the compare page keeps the side too
    p = np.array([0.04996, 0.05001, 0.0123456, 0.9])
    np.testing.assert_allclose(shown_pvalue(p, 0.05), [0.0499, 0.0501, 0.0123, 0.9])


def test_json_text_cannot_close_a_script_element():
    text = json_text({"a": "</script><script>alert(1)</script>", "b": "x & y > z"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><script>alert(1)</script>", "b": "x & y > z"}


def test_json_rounded_writes_what_json_writes_for_the_rounded_values():
    rng = np.random.default_rng(5)
    cases = [rng.random(300), rng.random(50) ** 8, np.arange(20001) / 20000, np.array([0.0, 1.0, -0.0, 5e-5, 1e-300]),
             rng.random(10) * 7, np.array([])]  # unbounded values and -0.0 take the general path
    for values in cases:
        for decimals in (0, 2, 4, 6):
            assert json_rounded(values, decimals) == json_text(np.round(values, decimals).tolist())


def test_table_json_is_the_indented_document_of_rounded_records():
    meta = {"table": "x </b> é", "methods": ["a", "b\nc"], "nested": {"b": [1, 2.5, None], "a": {}}, "empty": []}
    header = ["model_id", "score", "rank", "verified", "note"]
    rows = [["m\"1", 0.123456789, np.int64(3), np.bool_(True), None], ["m2", float("nan"), 1, False, "=1+1"],
            ["m3", np.float64(1 / 3), None, True, "line\u2028end"]]
    expected = indented_json({**meta, "columns": header,
                              "rows": rounded([dict(zip(header, row, strict=True)) for row in rows])}) + "\n"
    assert table_json(meta, header, rows) == expected
    assert table_json(meta, header, []) == indented_json({**meta, "columns": header, "rows": []}) + "\n"
    nested = [row[:-1] + [(1, 2)] for row in rows]  # not a flat record: the general path
    assert table_json(meta, header, nested) == indented_json(
        {**meta, "columns": header, "rows": rounded([dict(zip(header, row, strict=True)) for row in nested])}) + "\n"


def test_score_cells_write_what_the_cell_loop_wrote():
    loop = make_environment().from_string(
        '{% for value in values %}<td class="num">{{ value|score(scales[loop.index0]) }}{% if value is not none and '
        'not checks[loop.index0] %}{{ mark }}{% endif %}</td>\n{% endfor %}')
    mark = Markup('<span class="unv">*</span>')
    values, scales, checks = (0.1234, None, 7.5, float("nan"), 0.5), (100.0, 100.0, 1.0, 100.0, 100.0), (
        True, False, False, False, True)
    assert score_cells(values, scales, checks, mark, "\n") == loop.render(values=values, scales=scales, checks=checks,
                                                                         mark=mark)
    assert score_cells((), (), (), mark) == ""


def test_environment_escapes_and_refuses_undefined_names():
    env = make_environment()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    with pytest.raises(Exception, match="undefined"):
        env.from_string("{{ missing }}").render()


def test_home_context_rows_and_partial_coverage(board, synth):
    home = build_home(board)
    assert len(home.rows) == len(synth.GOLDEN_MODELS)
    # the mean the rows are ordered by first, beside the names (on a phone's first screen)
    assert [group.name for group in home.groups] == ["All datasets", "BEIR", "MIRACL", "mMARCO", "Classic", "Other"]
    assert [row.verified == "all" for row in home.rows] == sorted((row.verified == "all" for row in home.rows),
                                                                   reverse=True)  # verified models first
    for verified in (True, False):
        complete = [row.groups[0].mean for row in home.rows
                    if row.groups[0].mean is not None and (row.verified == "all") == verified]
        assert complete == sorted(complete, reverse=True)
    bm25 = next(row for row in home.rows if row.model_id == "bm25")  # main metric unverified on miracl/fi
    assert bm25.verified == "some" and bm25.groups[0].mean is not None and bm25.groups[0].mean_rank is None
    columns = [c.dataset_id for g in home.dataset_groups for c in g.columns]
    assert not bm25.cells[columns.index("miracl/fi")].verified
    # splade's cell value, nDCG@10, was re-scored on nfcorpus even though its R@100 was not: ranked there
    splade = next(row for row in home.rows if row.model_id == "naver/splade-v3")
    assert splade.cells[columns.index("beir/nfcorpus")].verified and splade.verified == "all"
    partial = next(row for row in home.rows if row.model_id == "org/partial-model")
    assert partial.verified == "none" and not partial.cells[columns.index("beir/scifact")].verified
    partial = next(row for row in home.rows if row.model_id == "org/partial-model")
    assert (partial.groups[1].mean, partial.groups[1].covered, partial.groups[1].total) == (None, 2, 4)
    trained = next(row for row in home.rows if row.model_id == "BAAI/bge-small-en-v1.5")
    columns = [c.key for g in home.dataset_groups for c in g.columns]
    assert trained.cells[columns.index("d-beir__scifact")].trained and not trained.zero_shot


def test_dataset_and_model_contexts(board):
    dataset = board.dataset("beir/scifact")
    page = build_dataset(board, dataset)
    assert [row.model_id for row in page.rows] == list(dataset.model_ids)
    assert page.other_metrics == ("R@100", "RR@10")
    assert all(0 <= row.whisker[0] <= row.whisker[1] <= row.whisker[2] <= 100 for row in page.rows)
    model = next(m for m in board.models if m.info.id == "org/partial-model")
    context = build_model(board, model)
    assert [row.dataset_id for row in context.rows] == ["beir/nfcorpus", "beir/scifact"]
    assert all(row.baseline_mean is not None for row in context.rows)


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_local_link_and_script_resolves(built_site):
    for page in _pages(built_site):
        for tag, attrs in parse(page).tags:
            for name in ("href", "src"):
                target = attrs.get(name)
                if not target or target.startswith(("http://", "https://", "data:", "#")):
                    continue
                path = unquote(urlsplit(target).path)
                assert (page.parent / path).resolve().is_file(), f"{page}: {tag} {name}={target}"


def test_no_inline_scripts_or_event_handlers(built_site):
    for page in _pages(built_site):
        parsed = parse(page)
        for tag, attrs in parsed.tags:
            handlers = [name for name in attrs if name.startswith("on")]
            assert not handlers, f"{page}: <{tag}> has {handlers}"
        for attrs, text in parsed.scripts:
            if "src" in attrs:
                assert text.strip() == "" and not attrs["src"].startswith(("http:", "https:", "//"))
            else:
                assert attrs.get("type") == "application/json", f"{page}: inline script"
                json.loads(text)


def test_markup_in_free_text_fields_is_shown_as_text(built_site):
    html = (built_site / "models" / "test__markup-in-metadata.html").read_text()
    assert "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in html  # licence
    assert "&lt;b&gt;bold&lt;/b&gt;" in html  # training data
    assert "&lt;iframe" in html and "<iframe" not in html  # hardware
    assert "&lt;/pre&gt;&lt;h1&gt;x&lt;/h1&gt;" in html  # command
    for page in _pages(built_site):
        text = page.read_text()
        assert "<script>alert" not in text and "<img src=x" not in text and "<b>bold" not in text
    tags = [tag for tag, _ in parse(built_site / "models" / "test__markup-in-metadata.html").tags]
    assert "iframe" not in tags and "img" not in tags and tags.count("h1") == 1


def test_free_text_in_downloads_and_data_is_plain_data(built_site):
    data = json.loads((built_site / "downloads" / "leaderboard.json").read_text())
    licences = {row["license"] for row in data["rows"]}
    assert "<script>alert('xss')</script>" in licences
    script = (built_site / "data" / "models" / "test__markup-in-metadata.js").read_text()
    assert "<" not in script


def test_tables_and_forms_are_labelled(built_site):
    for page in _pages(built_site):
        parsed = parse(page)
        tags = [tag for tag, _ in parsed.tags]
        assert tags.count("table") == tags.count("caption"), page
        ids = {attrs["id"] for _, attrs in parsed.tags if "id" in attrs}
        labelled = {attrs["for"] for tag, attrs in parsed.tags if tag == "label" and "for" in attrs}
        for tag, attrs in parsed.tags:
            if tag in ("select",) or (tag == "input" and attrs.get("type") == "search"):
                assert attrs["id"] in labelled, f"{page}: {tag} without label"
        for tag, attrs in parsed.tags:
            if tag == "th":
                assert attrs.get("scope") in ("col", "row", "colgroup", "rowgroup"), f"{page}: th without scope"
        assert len(ids) == len([a for _, a in parsed.tags if "id" in a]), f"{page}: duplicate id"
        html = page.read_text()
        assert re.search(r'<html lang="en">', html) and '<link rel="icon"' in html


def test_main_metric_comes_first_and_unbounded_metrics_are_not_scaled(tmp_path, synth):
    from evaluator.result import result_path

    dataset = synth.SyntheticDataset("custom/ranks", "custom/ranks", "Other", "", "nDCG@10", 10, 0.0)
    for model in synth.GOLDEN_MODELS[:3]:
        path = result_path(model.id, dataset.id, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(synth.dump(synth.result_dict(model, dataset, ("ARP", "RR@10", "nDCG@10"))))
    board = build_leaderboard(load_results(tmp_path).results, SiteSettings(), synth.golden_lookup)
    page = build_dataset(board, board.dataset("custom/ranks"))
    assert (page.main_metric, page.other_metrics, page.other_scales) == ("nDCG@10", ("RR@10", "ARP"), (100.0, 1.0))
    html = make_environment().get_template("dataset.html").render(ctx=page)
    arp = page.rows[0].values[1]
    assert f'<td class="num">{arp:.2f}<span class="unv"' in html  # not verified: no stored ranking


def test_mmarco_pages_lead_with_its_own_main_metric(board):
    page = build_dataset(board, board.dataset("mmarco/fr"))
    assert (page.main_metric, page.other_metrics) == ("RR@10", ("nDCG@10", "R@100"))


def test_partial_runs_are_marked_and_the_published_metrics_lead(scifact_like_results):
    """scifact_like_results' runs skip about a tenth of the judged queries: each row says how many it covers."""
    from evaluator.result import read_result
    from leaderboard.submissions.catalog import dataset_info

    folder = scifact_like_results[0].parents[1]
    board = build_leaderboard(load_results(folder).results, SiteSettings(), dataset_info)
    page = build_dataset(board, board.dataset("beir/scifact"))
    assert page.other_metrics[0] == "R@100"  # BEIR's published metrics first: nDCG@10, then R@100
    assert page.headline.startswith("nDCG@10, R@100, R@1000 (nDCG@10 and Recall@100: the BEIR paper")
    html = make_environment().get_template("dataset.html").render(ctx=page)
    # in the page's method fold, under the table
    how = html[html.index('<details class="methods" id="how">'):]
    assert "<p>Published with: nDCG@10, R@100, R@1000 (" in how[:how.index("</details>")]
    for path in scifact_like_results:
        result = read_result(path)
        covered = int(np.count_nonzero(result.run.lengths))
        assert 0 < covered < 300 and result.provenance.coverage.covered_queries == covered
        row = next(row for row in page.rows if row.model_id == result.model.id)
        assert row.coverage == f"{covered} of 300 queries"
        assert f'<span class="tag no" title="its run ranks documents for {covered} of 300 queries; the other judged ' \
               f'queries score 0 in every mean">covers {covered} of 300 queries</span>' in html
