"""The ◊ of a group mean on the model and ranks pages: beside a group row's rank range where
GroupBoard.robust.rank says it could flip, beside its mean (where ★ stands) where robust.best says its ★ or its
absence could flip, nowhere else; with the home page's words (render.group_flip) and the caption's legend only where
some row has one. Boards from tests/data/holes_board.py: at lift 0 nothing can flip, at 0.3 the rank ranges of bm25
and holey can, at 0.6 also the best set. The group's name carries markup, which the pages must escape."""

import re
import sys

import pytest
from markupsafe import escape

from leaderboard.analysis.judged_words import flip_title
from leaderboard.analysis.robust import MARK, MARK_LEGEND
from leaderboard.submissions.catalog import DatasetInfo
from leaderboard.web.render import make_environment
from leaderboard.web.views.model import build as build_model
from leaderboard.web.views.ranks import build as build_ranks
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "data"))
import holes_board  # noqa: E402

GROUP = 'R&D <b>"x"</b>'


def _lookup(dataset_id: str) -> DatasetInfo:
    return DatasetInfo(dataset_id, dataset_id, GROUP, "en", holes_board.METRIC)


@pytest.fixture(scope="module", params=[0.0, 0.3, 0.6])
def board(request):
    return holes_board.board(request.param, _lookup)


def _expected(board) -> dict[str, tuple[bool, bool]]:
    """model -> (rank range could flip, ★ or its absence could flip), read off GroupBoard.robust."""
    (group,) = board.groups
    if group.robust is None:
        return {model_id: (False, False) for model_id in group.ranked_ids}
    return {model_id: (not group.robust.rank[k], not group.robust.best[k])
            for k, model_id in enumerate(group.ranked_ids)}


def _cells(row: str) -> list[str]:
    return re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)


def _marks(cell: str) -> list[str]:
    """The titles of the cell's ◊ marks."""
    return re.findall(rf'<span class="flip" title="([^"]*)">{MARK}</span>', cell)


def _check(cell: str, flips: bool, what: str) -> None:
    titles = _marks(cell)
    if flips:
        assert titles == [escape(flip_title(what == "rank", what == "best"))]
        assert "(could flip: unjudged documents)" in cell
    else:
        assert titles == [] and MARK not in cell


def test_the_boards_cover_a_flip_of_each_kind_and_none():
    flags = {lift: _expected(holes_board.board(lift, _lookup)) for lift in (0.0, 0.3, 0.6)}
    assert not any(any(pair) for pair in flags[0.0].values())
    assert any(rank for rank, _ in flags[0.3].values()) and not any(best for _, best in flags[0.3].values())
    assert any(best for _, best in flags[0.6].values())
    assert not all(rank for rank, _ in flags[0.3].values())  # solid's holds: a row without the mark


def test_the_model_page_marks_exactly_the_group_rows_that_could_flip(board):
    env = make_environment()
    expected = _expected(board)
    for model in board.models:
        html = env.get_template("model.html").render(ctx=build_model(board, model))
        assert GROUP not in html
        table = html.split('id="groups-caption"', 1)[1].split("</table>", 1)[0]
        (row,) = re.findall(rf"<tr>\s*<th scope=\"row\">{re.escape(escape(GROUP))}</th>.*?</tr>", table, re.S)
        cells = _cells(row)  # group, mean (★), CI, mean rank, coverage, rank range, band, re-scored, ★ count
        rank_flips, best_flips = expected[model.info.id]
        _check(cells[5], rank_flips, "rank")
        _check(cells[1], best_flips, "best")
        assert (MARK_LEGEND in table.split("</caption>", 1)[0]) == (rank_flips or best_flips)


def test_the_ranks_page_marks_exactly_the_rows_that_could_flip(board):
    html = make_environment().get_template("ranks.html").render(ctx=build_ranks(board))
    assert GROUP not in html
    expected = _expected(board)
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr data-id="([^"]+)">.*?</tr>', html, re.S)}
    assert set(rows) == set(expected)
    for model_id, (rank_flips, best_flips) in expected.items():
        cells = _cells(rows[model_id])  # place, model, mean (★), CI, rank range, band
        _check(cells[4], rank_flips, "rank")
        _check(cells[2], best_flips, "best")
    caption = re.search(r'<caption id="[^"]*-caption">(.*?)</caption>', html, re.S).group(1)
    assert caption.startswith(escape(GROUP) + ":")
    assert (MARK_LEGEND in caption) == any(rank or best for rank, best in expected.values())


def test_the_ranks_page_says_whether_the_best_set_holds_as_the_home_page_does(board):
    (group,) = board.groups
    html = make_environment().get_template("ranks.html").render(ctx=build_ranks(board))
    flipping = [] if group.robust is None else [m for k, m in enumerate(group.ranked_ids) if not group.robust.best[k]]
    if group.robust is None:  # lift 0: the bounds equal the values; the sentence says the set holds
        assert "The set holds over the hole bounds" in html
    elif flipping:
        assert f"{MARK} It could flip: unjudged documents within the cutoff could change whether" in html
        assert all(escape(m) in html for m in flipping)
    else:
        assert "The set holds over the hole bounds of the unjudged documents within the cutoff." in html
