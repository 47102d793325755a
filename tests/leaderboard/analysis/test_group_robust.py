"""Group-level verdicts over the hole bounds (analysis.group_robust) and where they are shown: the home page's group
means (◊ beside a rank range or ★ that could flip, the sentence on who could be #1), the leaderboard download and
the compare page's data. Oracle for the method: a group of one dataset tests its means as the dataset does, so
its flags must be the dataset's own (analysis.robust). Each rule is then broken once on purpose on
tests/data/holes_board.py, whose `holey` run's bounds straddle the baseline on both datasets."""

import io
import json
import re
import sys

import numpy as np
import pandas as pd
import pytest

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.analysis.judged_words import set_clause
from leaderboard.web.board_data import board_rows
from leaderboard.web.downloads import home_downloads
from leaderboard.web.render import make_environment
from leaderboard.web.views.compare import compare_data
from leaderboard.web.views.home import build as build_home
from tests.conftest import OFFICIAL, ROOT

sys.path.insert(0, str(ROOT / "tests" / "data"))
import dl20_board  # noqa: E402
import holes_board  # noqa: E402


@pytest.fixture(scope="module")
def holes():
    board = holes_board.board()
    return board, build_home(board)


@pytest.mark.parametrize("pool", ["official", "shallow"])
def test_a_group_of_one_dataset_flags_what_the_dataset_flags(pool):
    board = build_leaderboard(dl20_board.loaded_results(OFFICIAL, pool), SiteSettings(), dl20_board.lookup)
    dataset, group = board.dataset(dl20_board.DATASET), board.groups[0]
    assert group.dataset_ids == (dl20_board.DATASET,) and group.robust is not None
    rows = [dataset.position[model_id] for model_id in group.ranked_ids]
    assert list(group.robust.best) == list(dataset.robust.best[rows])
    assert list(group.robust.rank) == list(dataset.robust.rank[rows])
    assert (group.robust.pairs == dataset.robust.pairs[np.ix_(rows, rows)]).all()
    assert not group.robust.rank.all()  # and there is something to flag, on either judgments


def test_bounds_that_straddle_the_baseline_flag_the_group_row_and_no_other(holes):
    board, home = holes
    group = board.groups[0]
    flags = dict(zip(group.ranked_ids, group.robust.rank, strict=True))
    assert flags == {"bm25": False, "holey": False, "solid": True}  # the holey-bm25 verdict could flip
    assert group.robust.best.all()  # solid's ★ and the others' exclusions hold: solid beats holey's high bounds
    html = make_environment().get_template("home.html").render(ctx=home, bench=None)
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr data-id="([^"]+)".*?</tr>', html, re.S)}
    assert 'class="flip" title="could flip: unjudged documents within the cutoff could change its rank range"' \
        in rows["holey"] and "(could flip: unjudged documents)" in rows["holey"]
    assert "flip" in rows["bm25"] and "flip" not in rows["solid"]
    cells = {row[0]: row for row in board_rows(home)}
    assert (cells["holey"][7][0][5], cells["bm25"][7][0][5], cells["solid"][7][0][5]) == ("r", "r", "")
    assert cells["holey"][11] == [40, 40] and cells["solid"][11] == [100, 100]  # Judged@10 per dataset column


def test_the_home_sentence_says_whether_the_set_holds(holes):
    board, home = holes
    assert home.answer.endswith(set_clause([])) and "holds over the hole bounds" in home.answer
    # break it: the real shallow-pool board, where the ★ of bm25 and of others could flip
    shallow = build_home(build_leaderboard(dl20_board.loaded_results(OFFICIAL, "shallow"), SiteSettings(),
                                           dl20_board.lookup))
    assert "◊ It could flip: unjudged documents within the cutoff could change whether bm25" in shallow.answer


def test_the_leaderboard_download_carries_the_group_flags_and_judged(holes):
    _, home = holes
    files = home_downloads(home)
    frame = pd.read_csv(io.StringIO(files["downloads/leaderboard.csv"])).set_index("model_id")
    assert not frame.loc["holey", "Other rank_holds"] and frame.loc["solid", "Other rank_holds"]
    assert frame["Other best_set_holds"].all()
    assert frame.loc["holey", "local/holes-a judged"] == pytest.approx(0.4)
    assert json.loads(files["downloads/leaderboard.json"]) is not None


def test_the_compare_data_names_the_pairs_that_could_flip(holes):
    board, _ = holes
    models = {model.info.id: model for model in board.models}
    data = json.loads(compare_data(board, models["holey"]))
    dataset = board.dataset(holes_board.DATASETS[0])
    entry = data[holes_board.DATASETS[0]]
    assert entry["j"] == 0.4 and entry["f"] == [dataset.position["bm25"]]  # not solid: that verdict holds
    assert data["groupFlips"]["Other"] == [board.groups[0].ranked_ids.index("bm25")]
    solid = json.loads(compare_data(board, models["solid"]))
    assert "f" not in solid[holes_board.DATASETS[0]] and "groupFlips" not in solid
