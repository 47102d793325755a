"""benchmarks/peers.py: a benchmark whose peer is missing stops with one line naming the extra."""

import subprocess
import sys

from tests.conftest import ROOT


def test_a_missing_peer_is_one_line_naming_the_extra(tmp_path):
    script = tmp_path / "bench_something.py"
    script.write_text("import sys\nsys.path.insert(0, sys.argv[1])\nfrom peers import require_extra\n"
                      "require_extra('bench', 'json', 'no_such_peer_module')\nprint('ran')\n")
    done = subprocess.run([sys.executable, str(script), str(ROOT / "benchmarks")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: benchmarks/bench_something.py needs no_such_peer_module from irboard's 'bench' extra; install it "
        "with `pip install torch==2.13.0 && pip install -e '.[bench]'`"]
