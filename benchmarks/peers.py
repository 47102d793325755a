"""Which extra each benchmark needs: a missing peer stops the script with one line naming the extra.

Each benchmark calls `require_extra(extra, module, ...)` first thing in main(), with the modules it imports
from that extra (import names, e.g. `faiss` for faiss-cpu).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def require_extra(extra: str, *modules: str) -> None:
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        script = Path(sys.argv[0]).name
        raise SystemExit(f"error: benchmarks/{script} needs {', '.join(missing)} from irboard's '{extra}' extra; "
                         f"install it with `pip install torch==2.13.0 && pip install -e '.[{extra}]'`")
