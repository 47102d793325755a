"""Where the board starts on a reader's first screen: the first result row's top and the rows wholly in view.

    python benchmarks/first_screen.py SITE_DIR [SITE_DIR ...]          (e.g. the site before and after a change)

Debian's Chromium (/usr/bin/chromium) through Playwright, headless, each site served over HTTP on 127.0.0.1, each page
loaded in a fresh page at 390 × 844 (a phone) and 1366 × 900, not scrolled. On the home page, a dataset page
(SciFact), the ranks page and the compare page (bm25 and splade-tiny where the site has both, as the repository's board
does, else the page's own pair; its table is drawn by its script): the top of the first row of results (px from the
top of the screen) and how many rows of that table lie wholly inside the screen (and inside the table's own scroll
box). Prints one JSON line per page and screen, then a table. tests/leaderboard/web/test_board_first.py asserts the
rule these figures are held to (issue 47): the first row starts within the top 60% of the screen, and the home page
shows at least 5 rows at 1366 × 900.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
SCREENS = ((390, 844), (1366, 900))
# (page, the table whose rows are the results): the compare page's table is drawn by its script
PAGES = (("index.html", "#board"), ("datasets/beir__scifact.html", "#scores"), ("ranks.html", "table.results"),
         ("compare.html", "#compare-summary"))
MEASURE = """table => {
  const t = document.querySelector(table), wrap = t.closest('.table-wrap') || t;
  const rows = [...t.querySelectorAll('tbody tr:not(.group-label)')].filter(r => !r.hidden && r.offsetParent);
  const bottom = Math.min(window.innerHeight, wrap.getBoundingClientRect().bottom);
  const seen = rows.filter(r => { const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= bottom; });
  return {top: Math.round(rows[0].getBoundingClientRect().top), rows: seen.length, of: rows.length,
          scrolled: window.scrollY};
}"""


def first_screen(page, url: str, table: str) -> dict:
    """The first row's top (px from the top of the screen), the rows wholly in view and the rows shown of `table` at
    `url`, loaded in `page` (a Playwright page whose viewport is the screen) and not scrolled."""
    page.goto(url)
    page.wait_for_selector(f"{table} tbody tr")
    page.evaluate("window.scrollTo(0, 0)")  # the first screen, whatever a script scrolled to
    return page.evaluate(MEASURE, table)


def pages(site: Path) -> list[tuple[str, str]]:
    """PAGES of `site`, the compare page with bm25 and splade-tiny where the site has both (the repository's board,
    whose own first pair shares no dataset)."""
    pair = "?a=bm25&b=splade-tiny" if (site / "models" / "splade-tiny.html").exists() else ""
    return [(path + pair if path == "compare.html" else path, table) for path, table in PAGES]


def measure(sites: list[Path]) -> dict[str, dict]:
    """{site: {"page at WxH": measured}} of every site, page and screen."""
    import threading

    from playwright.sync_api import sync_playwright

    from leaderboard.web.build import make_server

    found = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        for site in sites:
            server = make_server(site, port=0)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            url = f"http://127.0.0.1:{server.server_address[1]}"
            found[str(site)] = {}
            try:
                for width, height in SCREENS:
                    page = browser.new_page(viewport={"width": width, "height": height})
                    for path, table in pages(site):
                        key = f"{path.split('?')[0]} at {width}×{height}"
                        found[str(site)][key] = first_screen(page, f"{url}/{path}", table)
                        print(json.dumps({"site": str(site), "page": key, **found[str(site)][key]}), flush=True)
                    page.close()
            finally:
                server.shutdown()
                server.server_close()
        browser.close()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sites", type=Path, nargs="+", help="built sites, measured in turn (e.g. before and after)")
    args = parser.parse_args()
    found = measure(args.sites)
    keys = list(next(iter(found.values())))
    print("\n| page at screen | " + " | ".join(found) + " |")
    print("|---|" + "---|" * len(found))
    for key in keys:
        cells = [f"{m[key]['top']} px, {m[key]['rows']} of {m[key]['of']} rows" for m in found.values()]
        print(f"| {key} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
