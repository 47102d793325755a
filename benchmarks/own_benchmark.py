"""How quick the home page's "Your own benchmark" is: the first recomputation of a chosen group in a real browser.

    python benchmarks/own_benchmark.py --build 200 30 10 OUT_DIR    (write synthetic results and build their site)
    python benchmarks/own_benchmark.py SITE_DIR [SITE_DIR ...] [--rounds 5]

Debian's Chromium (/usr/bin/chromium) through Playwright, headless, at 1366 × 900, the site served over HTTP on
127.0.0.1; each round loads the home page in a fresh browser context (nothing cached), then measures inside the page
with performance.now():
- first: from the call to the result shown, for every dataset of the board (the registered group All datasets,
  the heaviest choice): loading data/queries/*.js of each dataset, the statistics of the group and its table;
- compute: the statistics and the table alone, out of `first` (the files loaded);
- subset: a second choice of a third of the datasets with weights, the files already loaded;
beside them the main thread's CPU time of the first (the DevTools protocol's Performance.getMetrics ThreadTime),
which other processes on a shared machine do not inflate, and the bytes of data/queries/. Prints one JSON line per
round, then the medians per site.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from site_browser import ARGS, build_board  # noqa: E402  (benchmarks/ is not a package)


@contextmanager
def serve(site: Path):
    """`site` over HTTP on 127.0.0.1 (the project's own server) while the block runs: its URL."""
    from leaderboard.web.build import make_server

    server = make_server(site, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

FIRST = """async () => {
  const ids = [...document.querySelectorAll('#bench-form input[name=ds]')].map(box => box.value);
  const start = performance.now();
  const result = await window.irboardBenchmark.compute(ids, null);
  document.getElementById('bench-table').offsetHeight;
  return {seconds: (performance.now() - start) / 1000, compute: result.computeSeconds, models: result.models.length,
          datasets: ids.length};
}"""
SUBSET = """async () => {
  const ids = [...document.querySelectorAll('#bench-form input[name=ds]')].map(box => box.value)
    .filter((id, k) => k % 3 === 0);
  const start = performance.now();
  await window.irboardBenchmark.compute(ids, ids.map((id, k) => 1 + k % 3));
  document.getElementById('bench-table').offsetHeight;
  return (performance.now() - start) / 1000;
}"""


def _thread_time(session) -> float:
    """The main thread's CPU seconds so far (DevTools' Performance.getMetrics)."""
    metrics = session.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "ThreadTime")


def measure(site: Path, rounds: int) -> list[dict]:
    from playwright.sync_api import sync_playwright

    found = []
    size = sum(path.stat().st_size for path in (site / "data" / "queries").glob("*.js"))
    with serve(site) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS, headless=True)
        for _ in range(rounds):
            context = browser.new_context(viewport={"width": 1366, "height": 900})
            page = context.new_page()
            page.goto(f"{url}/index.html")
            page.wait_for_load_state("load")
            session = context.new_cdp_session(page)
            session.send("Performance.enable")

            before = _thread_time(session)
            first = page.evaluate(FIRST)
            cpu = _thread_time(session) - before
            subset = page.evaluate(SUBSET)
            row = {"site": str(site), "first_s": round(first["seconds"], 4), "compute_s": round(first["compute"], 4),
                   "first_cpu_s": round(cpu, 4), "subset_s": round(subset, 4), "models": first["models"],
                   "datasets": first["datasets"], "query_data_bytes": size}
            print(json.dumps(row), flush=True)
            found.append(row)
            context.close()
        browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sites", nargs="*", type=Path)
    parser.add_argument("--build", nargs=4, metavar=("MODELS", "DATASETS", "QUERIES", "OUT_DIR"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.build:
        from tests.data.make_synthetic_results import write_scaled_results

        models, datasets, queries, out = int(args.build[0]), int(args.build[1]), int(args.build[2]), Path(args.build[3])
        write_scaled_results(out / "results", models, datasets, queries, depth=5)
        build_board(out / "results", out / "_site")
        print(f"built {out / '_site'}")
        return
    for site in args.sites:
        rows = measure(site, args.rounds)
        print(json.dumps({"site": str(site), **{key: statistics.median(row[key] for row in rows)
                                                for key in ("first_s", "compute_s", "first_cpu_s", "subset_s")}}))


if __name__ == "__main__":
    main()
