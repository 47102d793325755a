"""How quick a built site is in a real browser: the home page's blocking time and sorts of the whole board.

    python benchmarks/site_browser.py SITE_DIR [SITE_DIR ...] [--rounds 3]   (measure, e.g. before and after)
    python benchmarks/site_browser.py --build RESULTS_DIR OUT_DIR             (build a board to measure)

`--build` builds the site as `irboard build` does, with the results of nine models in ten counted verified (ranked,
with rank ranges) and the tenth listed apart, as a board with judgments at hand looks; `benchmarks/site.py
--browser` writes the 1,000 × 30 results, builds them so and measures them.

Debian's Chromium (/usr/bin/chromium) through Playwright, headless, at 1366 × 900, the site served over HTTP on
127.0.0.1, each site loaded in a fresh page. Measured inside the page with the Performance API:
- blocking time of the home page: the long tasks (PerformanceObserver "longtask", buffered) from navigation to
  the load event plus one second, each counted beyond its first 50 ms (Lighthouse's total blocking time);
- a sort: performance.now() around a click on a column's sort button and the layout it forces (reading the
  table's height), for the first group-mean column and the first dataset column, each sorted twice (descending,
  then ascending); every model is sorted, one page of rows shown;
- the next page of rows, and listing every row at once ("List all"), each a click and its layout.
Beside each wall time, the main thread's CPU time (the DevTools protocol's Performance.getMetrics ThreadTime), which
other processes on a shared machine do not inflate; and the elements in the page after load.
Prints one JSON line per page load, then the median of each measure per site.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import statistics
import sys
import threading
import zlib
from pathlib import Path

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
OBSERVE = """window.__long = []; new PerformanceObserver(list => { for (const e of list.getEntries())
  window.__long.push(e.duration); }).observe({type: "longtask", buffered: true});"""
CLICK = """selector => { const target = document.querySelector(selector);
  const start = performance.now(); target.click(); document.getElementById("board").offsetHeight;
  return performance.now() - start; }"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's signature
        pass


def build_board(results: Path, out: Path) -> None:
    """The site of `results` with nine models in ten counted verified (by a hash of the model id); the synthetic
    corpora and queries stand on registered dataset ids, so their registered query sets and facts are not held."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout, for tests.data
    from leaderboard.web.build import build_site
    from tests.data.make_synthetic_results import VerifiedWhen, scaled_lookup

    verified = VerifiedWhen(lambda result: zlib.crc32(result.model.id.encode()) % 10 != 0)
    build_site(results, out, is_verified=verified, lookup=scaled_lookup, workers=2)


def _measure_page(browser, url: str) -> dict:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")

    def cpu_ms() -> float:
        metrics = cdp.send("Performance.getMetrics")["metrics"]
        return 1000 * next(m["value"] for m in metrics if m["name"] == "ThreadTime")

    def click(selector: str) -> list[float]:
        used = cpu_ms()
        wall = page.evaluate(CLICK, selector)
        return [round(wall, 1), round(cpu_ms() - used, 1)]

    page.add_init_script(OBSERVE)
    page.goto(url, wait_until="load")
    page.wait_for_timeout(1000)
    long_tasks = page.evaluate("window.__long")
    measured = {"blocking_ms": round(sum(max(0, t - 50) for t in long_tasks), 1), "long_tasks": len(long_tasks),
                "load_cpu_ms": round(cpu_ms(), 1), "elements": page.evaluate("document.getElementsByTagName('*').length"),
                "rows": page.evaluate("document.querySelectorAll('#board tbody tr:not(.group-label)').length")}
    for prefix in ("g-", "d-"):
        key = page.evaluate(f"document.querySelector('#board th[data-key^=\"{prefix}\"]').dataset.key")
        measured[f"sort {prefix}"] = [click(f'#board th[data-key="{key}"] button.sort') for _ in range(2)]
    if page.locator("#page-next").count():
        measured["next page"] = click("#page-next")
    if page.locator("#show-all").count():
        measured["list all"] = click("#show-all")
        measured["rows after list all"] = page.evaluate("document.querySelectorAll('#board tbody tr:not(.group-label)').length")
    page.close()
    return measured


def measure(sites: list[Path], rounds: int = 3) -> dict[Path, list[dict]]:
    """Every site loaded and measured `rounds` times, the sites in turn within each round."""
    from playwright.sync_api import sync_playwright

    servers = []
    for site in sites:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append((site, server, f"http://127.0.0.1:{server.server_address[1]}/index.html"))
    measured = {site: [] for site in sites}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
            for _ in range(rounds):
                for site, _server, url in servers:
                    measured[site].append(_measure_page(browser, url))
                    print(json.dumps({"site": str(site), **measured[site][-1]}), flush=True)
            browser.close()
    finally:
        for _, server, _ in servers:
            server.shutdown()
    return measured


def summary(loads: list[dict]) -> dict[str, str]:
    """Medians over the loads: wall ms (main-thread CPU ms) of each measure."""
    def median(values) -> str:
        return f"{statistics.median(values):.0f}"

    rows = {"home blocking time (load CPU)": f"{median(m['blocking_ms'] for m in loads)} ms "
                                             f"({median(m['load_cpu_ms'] for m in loads)} ms)",
            "elements after load / rows shown": f"{median(m['elements'] for m in loads)} / {loads[0]['rows']}"}
    for name, key in (("sort by a group mean", "sort g-"), ("sort by a dataset", "sort d-"), ("next page", "next page"),
                      ("list all", "list all")):
        if key not in loads[0]:
            continue
        times = [t for m in loads for t in (m[key] if key.startswith("sort") else [m[key]])]
        rows[name + " (CPU)"] = f"{median(t[0] for t in times)} ms ({median(t[1] for t in times)} ms)"
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sites", type=Path, nargs="*", help="built sites, measured in turn (e.g. before and after)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--build", type=Path, nargs=2, metavar=("RESULTS_DIR", "OUT_DIR"),
                        help="build the site of RESULTS_DIR into OUT_DIR (nine models in ten verified) and stop")
    args = parser.parse_args()
    if args.build:
        build_board(*args.build)
        return 0
    if not args.sites:
        parser.error("give the built sites to measure, or --build RESULTS_DIR OUT_DIR")
    for site, loads in measure(args.sites, args.rounds).items():
        print(f"\n{site} (medians of {len(loads)} loads; wall ms, main-thread CPU ms in brackets)")
        for name, value in summary(loads).items():
            print(f"  {name:<36} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
