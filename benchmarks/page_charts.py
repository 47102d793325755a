"""Benchmark: what a model page and a dataset page of a 30-dataset board cost in Chromium, against an earlier commit.

Usage: python benchmarks/page_charts.py --baseline DIR   (DIR: a checkout of the earlier commit, e.g.
                                                          `git worktree add /tmp/before 8466d4e`)
       python benchmarks/page_charts.py --baseline DIR --models 66 --repeat 3

One set of synthetic results (every one with a stored ranking and score samples, so every model page has a
recall-at-scale prediction per dataset) is built twice, by this checkout and by the baseline, each in its own
process. Each page is then opened in headless Chromium at 390 px (a phone: touch) and 1366 px, in a fresh context,
`--repeat` times: its height after load (document scrollHeight), the total blocking time from load until 1.5 s
after it (the long tasks' time over 50 ms, PerformanceObserver "longtask", buffered), and the charts drawn at load.
The medians are printed as a table, with the ratio baseline / this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / "_work" / "page_charts"
sys.path.insert(0, str(ROOT / "tests" / "data"))

BUILD = """
import sys
from dataclasses import replace
from leaderboard.submissions.catalog import dataset_info
from leaderboard.web.build import build_site
try:
    from tests.data.make_synthetic_results import VerifiedWhen
    verified = VerifiedWhen(lambda result: True)
except ImportError:  # a checkout from before the typed verify stage took a predicate
    verified = lambda result: True
try:
    from tests.data.make_synthetic_results import scaled_lookup
except ImportError:  # a checkout from before it: the registry's entry without its query set (and facts, if any)
    def scaled_lookup(d):
        info = dataset_info(d)
        return replace(info, query_ids_sha256=None, **({"facts": None} if hasattr(info, "facts") else {}))
build_site(sys.argv[1], sys.argv[2], is_verified=verified, lookup=scaled_lookup)
"""
MEASURE = """() => new Promise(done => {
  let blocking = 0;
  const observer = new PerformanceObserver(list => {
    for (const task of list.getEntries()) { blocking += Math.max(0, task.duration - 50); } });
  observer.observe({type: "longtask", buffered: true});
  setTimeout(() => { observer.disconnect(); done({blocking: blocking,
    height: document.documentElement.scrollHeight,
    drawn: document.querySelectorAll(".js-plotly-plot").length}); }, 1500); })"""


def write_results(models: int, datasets: int, queries: int) -> Path:
    import make_synthetic_results as synthetic

    results = WORK / f"results-{models}x{datasets}x{queries}"
    if not results.exists():
        synthetic.write_scaled_results(results, models, datasets, queries, depth=20, data_root=WORK / "data")
    return results


def build(checkout: Path, results: Path, out: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": str(checkout)}
    subprocess.run([sys.executable, "-c", BUILD, str(results), str(out)], check=True, env=environment, cwd=checkout)


def measure(site: Path, path: str, width: int, repeat: int) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.chromium import find_chromium

    runs = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox", "--disable-gpu"])
        for _ in range(repeat):
            phone = width < 500
            context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=phone, has_touch=phone)
            page = context.new_page()
            page.goto((site / path).as_uri())
            page.wait_for_load_state("load")
            runs.append(page.evaluate(MEASURE))
            context.close()
        browser.close()
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the commit to compare with")
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--datasets", type=int, default=30)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not (args.baseline / "leaderboard" / "web" / "build.py").is_file():
        sys.exit(f"error: {args.baseline} is not an irboard checkout (no leaderboard/web/build.py); "
                 "make one with `git worktree add DIR COMMIT`")
    results = write_results(args.models, args.datasets, args.queries)
    sites = {"baseline": WORK / "site-baseline", "this checkout": WORK / "site-this"}
    build(args.baseline.resolve(), results, sites["baseline"])
    build(ROOT, results, sites["this checkout"])
    model = sorted((sites["this checkout"] / "models").glob("org*.html"))[0].name
    rows = []
    for path in (f"models/{model}", "datasets/beir__scifact.html"):
        for width in (390, 1366):
            found = {name: measure(site, path, width, args.repeat) for name, site in sites.items()}
            rows.append((path, width, found))
    print(f"{args.models} models x {args.datasets} datasets x {args.queries} queries; medians of {args.repeat}")
    print("| page | width | height px (baseline → this) | blocking ms (baseline → this) | ratio | charts drawn |")
    print("|---|---|---|---|---|---|")
    for path, width, found in rows:
        before, after = found["baseline"], found["this checkout"]
        ratio = before["blocking"] / max(after["blocking"], 1.0)
        print(f"| {path} | {width} | {before['height']:,.0f} → {after['height']:,.0f} | {before['blocking']:,.0f} → "
              f"{after['blocking']:,.0f} | {ratio:.1f}× | {before['drawn']:.0f} → {after['drawn']:.0f} |")
    (WORK / "last.json").write_text(json.dumps([[p, w, f] for p, w, f in rows], indent=1))


if __name__ == "__main__":
    main()
