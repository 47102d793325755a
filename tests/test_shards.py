"""`make test` runs the suite as two processes side by side (IRBOARD_TEST_SHARD=i/n, tests/conftest.py): together
they collect every test once, the Ray files stay in one process, and the shards weigh about the same."""

import os
import subprocess
import sys

from tests.conftest import ROOT, TOGETHER, shard_files


def test_every_file_is_in_exactly_one_shard_and_the_ray_files_stay_together():
    weights = {f"tests/a/test_{k}.py": float(k % 7 + 1) for k in range(40)}
    weights |= {f"{TOGETHER[0]}test_{name}.py": 5.0 for name in ("one", "two", "three")}
    weights["tests/big/test_heavy.py"] = 60.0
    for shards in (1, 2, 3):
        split = shard_files(weights, shards)
        assert len(split) == shards and sorted(n for s in split for n in s) == sorted(weights)
        assert sum(any(n.startswith(TOGETHER[0]) for n in s) for s in split) == 1
        loads = sorted(sum(weights[n] for n in s) for s in split)
        assert loads[-1] - loads[0] <= 60.0  # within the heaviest unit
        assert shard_files(dict(reversed(weights.items())), shards) == split  # the same in every process


def _collected(shard: str | None, folder: str = "tests/irboard") -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "IRBOARD_TEST_SHARD"}
    if shard is not None:
        env["IRBOARD_TEST_SHARD"] = shard
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", folder],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def _ids(done: subprocess.CompletedProcess) -> list[str]:
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_two_shards_collect_every_test_once():
    whole, first, second = _ids(_collected(None)), _ids(_collected("0/2")), _ids(_collected("1/2"))
    assert first and second and not set(first) & set(second)
    assert sorted(first + second) == sorted(whole)


def test_a_bad_shard_setting_is_one_line_and_exit_1():
    done = _collected("2/2")
    assert done.returncode == 1
    assert "IRBOARD_TEST_SHARD='2/2': expected i/n with 0 <= i < n" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
