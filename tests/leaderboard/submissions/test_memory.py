"""`irboard` keeps the memory it frees for its next arrays (glibc's mallopt), instead of faulting it in again."""

import subprocess
import sys

from tests.conftest import ROOT

PROGRAM = """
import resource, sys
if sys.argv[1] == "tuned":
    from leaderboard.cli import keep_freed_memory
    keep_freed_memory()
from evaluator.result import read_result
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
read_result(sys.argv[2])
before = faults()
for _ in range(20):  # a build reads thousands of such files one after another
    read_result(sys.argv[2])
print(faults() - before)
"""


def _page_faults(mode: str) -> int:
    path = ROOT / "results" / "bm25" / "beir__scifact.json"  # a real result: ranking and score samples
    done = subprocess.run([sys.executable, "-c", PROGRAM, mode, str(path)], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return int(done.stdout)


def test_reading_results_again_reuses_freed_memory():
    plain, tuned = _page_faults("plain"), _page_faults("tuned")
    assert plain > 20 * 200  # the decoded columns (over 1 MB a read) faulted in again every time
    assert tuned < plain / 10
