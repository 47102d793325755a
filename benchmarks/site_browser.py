"""How quick a built site is in a real browser: the home page's blocking time and a sort of the whole board.

    python benchmarks/site_browser.py SITE_DIR [SITE_DIR ...] [--rounds 3]

Debian's Chromium (/usr/bin/chromium) through Playwright, headless, at 1366 × 900, the site served over HTTP on
127.0.0.1. Measured inside the page with the Performance API:
- blocking time of the home page: the long tasks (PerformanceObserver "longtask", buffered) from navigation to
  the load event plus one second, each counted beyond its first 50 ms (Lighthouse's total blocking time);
- a sort: performance.now() around a click on a column's sort button (table.js sorts and re-appends every row
  synchronously) and the layout it forces (reading the table's height), for the first group-mean column and the
  first dataset column, each sorted twice (descending, then ascending).
Prints one JSON line per round.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
OBSERVE = """window.__long = []; new PerformanceObserver(list => { for (const e of list.getEntries())
  window.__long.push(e.duration); }).observe({type: "longtask", buffered: true});"""
SORT = """key => { const th = document.querySelector(`#board th[data-key="${key}"] button.sort`);
  const start = performance.now(); th.click(); document.getElementById("board").offsetHeight;
  return performance.now() - start; }"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's signature
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sites", type=Path, nargs="+", help="built sites, measured in turn (e.g. before and after)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    servers = []
    for site in args.sites:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append((site, server, f"http://127.0.0.1:{server.server_address[1]}/index.html"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        for _, (site, _server, url) in ((r, item) for r in range(args.rounds) for item in servers):
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.add_init_script(OBSERVE)
            page.goto(url, wait_until="load")
            page.wait_for_timeout(1000)
            long_tasks = page.evaluate("window.__long")
            rows = page.evaluate("document.querySelectorAll('#board tbody tr:not(.group-label)').length")
            dataset = page.evaluate("document.querySelector('#board th[data-key^=\"d-\"]').dataset.key")
            group = page.evaluate("document.querySelector('#board th[data-key^=\"g-\"]').dataset.key")
            sorts = {key: [round(page.evaluate(SORT, key), 1) for _ in range(2)] for key in (group, dataset)}
            print(json.dumps({"site": str(site), "rows": rows, "blocking_ms": round(sum(max(0, t - 50) for t in long_tasks), 1),
                              "long_tasks": len(long_tasks), "sort_ms": sorts}), flush=True)
            page.close()
        browser.close()
    for _, server, _ in servers:
        server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
