"""The build's worker pool (leaderboard/submissions/parallel.py): order, large buffers, nesting, cleanup."""

import os

import numpy as np
import pytest

from leaderboard.submissions import parallel
from leaderboard.submissions.parallel import BIG_BUFFER, forked_map


def test_results_come_back_in_order_from_other_processes():
    def task(i):
        return i * i, os.getpid()

    out = list(forked_map(task, range(20), workers=2))
    assert [value for value, _ in out] == [i * i for i in range(20)]
    pids = {pid for _, pid in out}
    assert os.getpid() not in pids and len(pids) <= 2


def test_large_arrays_travel_through_a_file_that_is_removed(monkeypatch):
    folders = []
    real = parallel._shared_folder
    monkeypatch.setattr(parallel, "_shared_folder", lambda: folders.append(real()) or folders[-1])
    size = BIG_BUFFER // 8 + 1  # float64 values: one buffer just over the threshold

    def task(i):
        return {"big": np.arange(size, dtype=np.float64) + i, "small": np.full(3, i), "text": f"item {i}"}

    out = list(forked_map(task, range(5), workers=2))
    for i, item in enumerate(out):
        assert np.array_equal(item["big"], np.arange(size, dtype=np.float64) + i)
        assert np.array_equal(item["small"], np.full(3, i)) and item["text"] == f"item {i}"
    assert folders and not os.path.exists(folders[0])


def test_a_worker_runs_nested_maps_inline():
    def inner(i):
        return os.getpid()

    def outer(i):
        return set(forked_map(inner, range(4), workers=2)), os.getpid()

    for inner_pids, pid in forked_map(outer, range(3), workers=2):
        assert inner_pids == {pid}


def test_one_worker_or_one_item_runs_here():
    assert list(forked_map(lambda i: os.getpid(), range(3), workers=1)) == [os.getpid()] * 3
    assert list(forked_map(lambda i: os.getpid(), [0], workers=2)) == [os.getpid()]


def test_a_failing_task_raises_here_and_leaves_no_folder(monkeypatch):
    folders = []
    real = parallel._shared_folder
    monkeypatch.setattr(parallel, "_shared_folder", lambda: folders.append(real()) or folders[-1])

    def task(i):
        if i == 3:
            raise ValueError("item 3")
        return np.zeros(BIG_BUFFER // 8 + 1)

    with pytest.raises(ValueError, match="item 3"):
        list(forked_map(task, range(6), workers=2))
    assert not os.path.exists(folders[0])
