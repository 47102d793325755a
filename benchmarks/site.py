"""Benchmark: `irboard build` on a synthetic leaderboard of 200 models x 30 datasets x 1,000 queries.

Usage: python benchmarks/site.py                      (200 models, 30 datasets, 1,000 queries, 3 metrics)
       python benchmarks/site.py --small              (40 x 8 x 200, a quick check)
       python benchmarks/site.py --models 1000 --datasets 30 --queries 100 --depth 100 --default-metrics
                                                      (results shaped like real ones: a depth-100 ranking
                                                      and per-query values for the 30 default metrics)
       python benchmarks/site.py --models 1000 --datasets 30 --queries 100 --depth 100 --default-metrics --verifying
                                                      (and score samples as evaluate writes them; judgments
                                                      that re-score every result; `irboard build` as the deploy
                                                      runs it, from empty and from warm caches, on 2 cores and 1)
       python benchmarks/site.py --models 1000 --datasets 30 --queries 100 --browser
                                                      (only the home page in Chromium: the board built with nine
                                                      models in ten verified, its blocking time on load, sorts of
                                                      every model, a page turn; benchmarks/site_browser.py)
       python benchmarks/site.py --models 1000 --datasets 30 --queries 20 --depth 100 --default-metrics --verifying \
           --make-site ../before                      (`make site`, validate then build, with this code and with
                                                      the code of another checkout, in turns, from empty and warm
                                                      caches; --results results --make-site ../before: on the
                                                      repository's results, re-scored against ../shared/data)

Results (per-query values for nDCG@10, R@100, RR@10; about 1 model in 10 misses some datasets) are written
once to benchmarks/_work/ by tests/data/make_synthetic_results.py. Each measurement runs in its own fresh
process, so its wall time and peak RSS (resource.getrusage, ru_maxrss) are its own. With --verifying the build is
the command itself, `irboard build --strict --results ... --data-dir ...` (CPU time and the largest peak RSS of it
and its worker processes); "1 core" runs it pinned to one core, where it uses one process:

- full build: `leaderboard.web.build.build_site` end to end (load + validate every file, all-pairs paired t-tests
  with Holm's correction per dataset, effect sizes of every pair, power and separability per dataset,
  score intervals of every mean, rank ranges and bands of every group mean from its pairwise tests, render, write), the issue's
  targets being <= 60 s and <= 2 GiB, and a home page of at most 300 KB (plotly.js is a separate file the home
  page does not load);
- the build's stages, timed inside one process, and, within the statistics stage, the parts added for honest
  ranks (effect sizes + power + separability of every dataset; rank ranges + bands of every group), timed
  by running them again on the same data;
- reading a sample of the same files: `json.loads` alone (a lower bound for any loader of these JSON files)
  against `leaderboard.submissions.load.read_loaded` (the build's reader: json + the full schema validation of
  `evaluator.result.read_result` + per-query arrays), per file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / "_work"
sys.path.insert(0, str(ROOT / "tests" / "data"))

FULL_BUILD = """
import json, os, resource, sys, time
from leaderboard.cli import keep_freed_memory
keep_freed_memory()  # as `irboard build` does
from leaderboard.web.build import build_site
# No judgments: "decode" decodes and checks every stored ranking, re-scoring nothing (every result stays unverified);
# "" leaves the rankings encoded. argv[4]: worker processes. Recall at scale is predicted from each result's score
# samples while it is read, through $IRBOARD_CACHE/predicted (the caller empties it first).
class DecodeOnly:  # a verify stage (leaderboard.submissions.stages.Verifier) that verifies nothing
    errors = []
    def can_verify(self, dataset_id, split): return True  # so every stored ranking is decoded and checked
    def cached(self, file_sha256, header): return None
    def verification(self, result, file_sha256=None): return None
    def judgments_key(self, dataset_id, split): return None
    def local_query_set(self, dataset_id): return None
    def add_errors(self, errors): pass
verify = DecodeOnly() if sys.argv[3] == "decode" else None
start, cpu, load = time.perf_counter(), time.process_time(), os.getloadavg()[0]
report = build_site(sys.argv[1], sys.argv[2], is_verified=verify, workers=int(sys.argv[4]))
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": time.perf_counter() - start, "files": report.files,
                  "cpu": time.process_time() - cpu + children.ru_utime + children.ru_stime,
                  "results": report.results, "warnings": len(report.warnings), "load": [load, os.getloadavg()[0]],
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "worker_rss": children.ru_maxrss * 1024}))
"""

STAGES = """
import functools, json, resource, sys, time
from pathlib import Path
from leaderboard.cli import keep_freed_memory
keep_freed_memory()
from leaderboard.analysis.aggregate import build_leaderboard
from leaderboard.submissions.catalog import dataset_info
from leaderboard.web.build import render_site
from leaderboard.analysis.predictions import Predictor
from leaderboard.submissions.load import load_results, read_cache
from evaluator.environment import cores
from leaderboard.submissions.verify import Judgments
from leaderboard.web.render import replace_folder
# the build's stages as `irboard build` runs them (one worker process per core); with judgments (argv[3]) through
# the caches the builds before filled, else without judgments or caches (nothing verified, every file predicted)
lookup = functools.lru_cache(maxsize=None)(dataset_info)
workers = min(cores(), 4)
judged = bool(sys.argv[3])
times = {}
def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
def timed(name, run):
    start, used = time.perf_counter(), cpu()
    result = run()
    times[name] = [time.perf_counter() - start, cpu() - used]
    return result
loaded = timed("load + validate + verify + predict", lambda: load_results(
    sys.argv[1], keep_metrics=lambda d: [lookup(d).main_metric], workers=workers,
    is_verified=Judgments(data_root=Path(sys.argv[3])) if judged else None, predictor=Predictor(cache=judged),
    reads=read_cache() if judged else None))
board = timed("statistics + aggregation", lambda: build_leaderboard(loaded.results, lookup=lookup, workers=workers))
import numpy as np
from leaderboard.analysis import effects
from leaderboard.analysis.aggregate import _GroupAccumulator
from leaderboard.analysis.ranks import rank_ranges, tie_bands
from leaderboard.analysis.stats import corrected_matrix
tests = board.settings.tests
timed("  part: effect sizes, power, separability (1 process)", lambda: [
    effects.dataset_effects(dataset.scores, 0, dataset.pvalues, tests.alpha, tests.method) for dataset in board.datasets])
boards = {dataset.info.id: dataset for dataset in board.datasets}
def group_ranks(group):
    ranked = sorted(m for m, score in group.scores.items() if score.mean_rank is not None)
    if not ranked:
        return None
    accumulator = _GroupAccumulator(group.name, list(group.dataset_ids), {m: i for i, m in enumerate(ranked)}, tests,
                                    bootstrap=False)
    pvalues = corrected_matrix(accumulator.pvalues(boards, ranked), tests.correction)
    means = np.array([group.scores[m].mean for m in ranked])
    return rank_ranges(means, pvalues, tests.alpha), tie_bands(means, pvalues, tests.alpha)
timed("  part: rank ranges and bands of group means (1 process)", lambda: [group_ranks(g) for g in board.groups])
files, pages = timed("render pages, charts, downloads", lambda: render_site(board, workers=workers))
timed("write files", lambda: replace_folder(files, Path(sys.argv[2])))
print(json.dumps({"times": times, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

READERS = """
import json, resource, sys, time
from pathlib import Path
from leaderboard.cli import keep_freed_memory
keep_freed_memory()
paths = [Path(line) for line in sys.argv[2].split(",")]
if sys.argv[1] == "json":
    import json as _json
    def read(path):
        return _json.loads(path.read_bytes())
else:
    from leaderboard.submissions.load import read_loaded as read
start = time.perf_counter()
for path in paths:
    read(path)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


BROWSER_BUILD = """
import json, sys, time
sys.path.insert(0, "benchmarks")
from site_browser import build_board
start = time.perf_counter()
build_board(sys.argv[1], sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def run_python(code: str, *args: str, cache: Path | None = None, tree: Path = ROOT) -> dict:
    """`code` in a process of its own, with the code of the checkout `tree` (default: this one)."""
    env = {"OPENBLAS_NUM_THREADS": "1", **os.environ}  # as the command line sets it (leaderboard.cli.main)
    if cache:
        env["IRBOARD_CACHE"] = str(cache)
    if tree != ROOT:
        env["PYTHONPATH"] = str(tree)
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


TIMED_COMMAND = """
import json, os, resource, subprocess, sys, time
if sys.argv[1] == "1":  # one core: the command then reads, computes and renders in one process
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
load, start = os.getloadavg()[0], time.perf_counter()
done = subprocess.run(sys.argv[2:], capture_output=True, text=True)
seconds = time.perf_counter() - start
used = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command and its worker processes
print(json.dumps({"returncode": done.returncode, "stderr": done.stderr[-3000:], "seconds": seconds,
                  "cpu": used.ru_utime + used.ru_stime, "rss": used.ru_maxrss * 1024, "worker_rss": 0,
                  "load": [load, os.getloadavg()[0]]}))
"""


def run_build(results: Path, out: Path, data: Path, cache: Path, one_core: bool = False) -> dict:
    """`irboard build --strict` as a user or the deploy workflow runs it, timed from a process of its own (peak RSS:
    the largest of the command and its workers)."""
    irboard = str(Path(sys.executable).with_name("irboard"))
    measured = run_python(TIMED_COMMAND, "1" if one_core else "all", irboard, "build", "--strict", "--results",
                          str(results), "--out", str(out), "--data-dir", str(data), cache=cache)
    if measured["returncode"] != 0:
        raise SystemExit(f"irboard build failed:\n{measured['stderr']}")
    return measured


NOW = "2026-01-01T00:00:00Z"  # round phases judged at one instant, so that every build gives the same site


def run_make_site(tree: Path, results: Path, out: Path, data: Path, cache: Path) -> dict:
    """`make site` as the deploy workflow runs it, with the code of the checkout `tree`: `irboard validate`, then
    `irboard build --strict`, each timed in a process of its own. Validate's exit code is kept, not required to be
    0: synthetic results on registered datasets have fewer queries than the registry's, which validate reports
    (after checking and re-scoring every file)."""
    steps = {}
    for step, args in (("validate", ["validate", "--results", str(results), "--data-dir", str(data)]),
                       ("build", ["build", "--strict", "--results", str(results), "--out", str(out), "--data-dir",
                                  str(data), "--now", NOW])):
        measured = run_python(TIMED_COMMAND, "all", sys.executable, "-m", "leaderboard.cli", *args, cache=cache,
                              tree=tree)
        if step == "build" and measured["returncode"] != 0:
            raise SystemExit(f"irboard build failed:\n{measured['stderr']}")
        steps[step] = measured
    return steps


def compare_make_site(results: Path, data: Path, before: Path, work: Path, turns: int = 4) -> None:
    """`make site` with this checkout's code and with `before`'s, in turns (before, after, after, before; the first
    `turns` of them), each from an empty $IRBOARD_CACHE and then again from the cache it filled; every site compared
    byte for byte. Each row is printed as soon as it is measured."""
    print(f"`make site` (validate, then build --strict), {sum(1 for _ in results.glob('*/*.json'))} files\n")
    print("| code | caches | validate wall s (CPU s), exit code | build wall s (CPU s) | both wall s (CPU s) | load |")
    print("|---|---|---|---|---|---|", flush=True)
    sites = []
    order = (("before", before), ("after", ROOT), ("after", ROOT), ("before", before))[:turns]
    for turn, (name, tree) in enumerate(order):
        cache = work / f"cache-make-site-{turn}"
        shutil.rmtree(cache, ignore_errors=True)
        for state in ("empty cache", "warm cache"):
            out = work / f"site-make-{turn}-{state[0]}"
            load = os.getloadavg()[0]
            steps = run_make_site(tree, results, out, data, cache)
            validate, build = steps["validate"], steps["build"]
            print(f"| {name} | {state} | {validate['seconds']:.1f} ({validate['cpu']:.1f}), {validate['returncode']} | "
                  f"{build['seconds']:.1f} ({build['cpu']:.1f}) | {validate['seconds'] + build['seconds']:.1f} "
                  f"({validate['cpu'] + build['cpu']:.1f}) | {load:.1f}, {os.getloadavg()[0]:.1f} |", flush=True)
            sites.append(out)
        shutil.rmtree(cache, ignore_errors=True)
    for out in sites[1:]:
        differ = subprocess.run(["diff", "-rq", str(sites[0]), str(out)], capture_output=True, text=True).stdout
        print(f"{sites[0].name} and {out.name}: {'differ: ' + differ[:300] if differ else 'identical'}")


def ensure_results(models: int, datasets: int, queries: int, depth: int = 0, real_metrics: bool = False,
                   verifying: bool = False) -> Path:
    from make_synthetic_results import write_scaled_results

    from evaluator.metrics import DEFAULT_MEASURES

    shape = (f"_depth{depth}" if depth else "") + ("_defaultmetrics" if real_metrics else "") + \
        ("_verifying" if verifying else "")
    folder = WORK / f"site_{models}x{datasets}x{queries}{shape}"
    results = folder / "results"
    done = folder / "complete"
    if not done.exists():
        print(f"writing synthetic results to {results} (once) ...", flush=True)
        start = time.perf_counter()
        metrics = [str(m) for m in DEFAULT_MEASURES] if real_metrics else ["nDCG@10", "R@100", "RR@10"]
        count = write_scaled_results(results, models, datasets, queries, metrics, depth,
                                     folder / "data" if verifying else None, jobs=os.cpu_count() or 1)
        done.write_text(f"{count}\n")
        print(f"  {count} files in {time.perf_counter() - start:.1f} s", flush=True)
    return folder


def measure_home(args) -> None:
    """The home page of the board in Chromium, as benchmarks/site_browser.py measures it (targets from issue 26)."""
    from site_browser import measure, summary

    folder = ensure_results(args.models, args.datasets, args.queries, args.depth or 10, args.default_metrics)
    site = folder / "site-browser"
    load = os.getloadavg()[0]
    built = run_python(BROWSER_BUILD, str(folder / "results"), str(site), cache=folder / "cache-browser")
    loads = measure([site], args.rounds)[site]
    print(f"\nhome page of {args.models} models x {args.datasets} datasets in Chromium (built in {built['seconds']:.0f} s; "
          f"medians of {len(loads)} loads; load average {load:.1f}, then {os.getloadavg()[0]:.1f})\n")
    targets = {"home blocking time (load CPU)": "< 300 ms", "sort by a group mean (CPU)": "< 200 ms",
               "sort by a dataset (CPU)": "< 200 ms"}
    print(f"| {'measure: wall (main-thread CPU)':<40} | {'value':>22} | {'target':>10} |")
    print(f"|{'-' * 42}|{'-' * 24}|{'-' * 12}|")
    for name, value in summary(loads).items():
        print(f"| {name:<40} | {value:>22} | {targets.get(name, ''):>10} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--datasets", type=int, default=30)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=300, help="files read by each reader in the peer test")
    parser.add_argument("--small", action="store_true", help="40 models x 8 datasets x 200 queries")
    parser.add_argument("--depth", type=int, default=0, help="store a ranking this deep in every result "
                        "(as real results do; 100 is what evaluate stores by default)")
    parser.add_argument("--default-metrics", action="store_true",
                        help="per-query values for evaluate's 30 default metrics instead of 3")
    parser.add_argument("--make-site", type=Path, metavar="BEFORE",
                        help="with --verifying: time `make site` (validate, then build) with this checkout's code "
                        "and with the code of the checkout BEFORE, in turns; with --results, on those results "
                        "(and --data-dir) instead of synthetic ones")
    parser.add_argument("--turns", type=int, default=4, choices=(2, 4),
                        help="with --make-site: 4 turns (before, after, after, before) or the first 2")
    parser.add_argument("--results", type=Path, help="with --make-site: a results folder (e.g. the repository's)")
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data",
                        help="with --make-site --results: the judgments to re-score them against")
    parser.add_argument("--verifying", action="store_true",
                        help="with --depth: synthetic qrels too, and results whose values are the re-scoring of "
                        "their rankings; measures the build that re-scores every result, with a cold and a warm "
                        "verification cache")
    parser.add_argument("--browser", action="store_true",
                        help="measure only the home page in Chromium (blocking time, sorts, a page turn): the board "
                        "built with nine models in ten verified, which needs rankings (--depth, 10 unless given)")
    parser.add_argument("--rounds", type=int, default=3, help="page loads measured with --browser")
    args = parser.parse_args()
    if args.small:
        args.models, args.datasets, args.queries, args.sample = 40, 8, 200, 100
    if args.browser:
        measure_home(args)
        return
    if args.make_site and args.results:
        work = WORK / "make_site_results"
        work.mkdir(parents=True, exist_ok=True)
        compare_make_site(args.results.resolve(), args.data_dir.resolve(), args.make_site.resolve(), work, args.turns)
        return
    folder = ensure_results(args.models, args.datasets, args.queries, args.depth, args.default_metrics,
                            args.verifying)
    if args.make_site:
        compare_make_site(folder / "results", folder / "data", args.make_site.resolve(), folder, args.turns)
        return
    results = folder / "results"
    files = sorted(results.glob("*/*.json"))
    data_mb = sum(path.stat().st_size for path in files) / 1e6

    builds = []
    if args.verifying:
        # `irboard build` from an empty cache (the first deploy, or after a change to the reading, verification or
        # prediction code) and then from the cache it filled (every later deploy), on both cores and on one
        cache = folder / "cache"
        for cores in ("2 cores", "1 core"):
            shutil.rmtree(cache, ignore_errors=True)
            for state in ("empty cache", "warm cache"):
                name = f"irboard build, {cores}, {state}"
                print(f"{name} ...", flush=True)
                builds.append((name, run_build(results, folder / f"site-{cores[0]}-{state[0]}", folder / "data", cache,
                                               one_core=cores == "1 core")))
                for kind in ("verified", "predicted", "read"):
                    entries = sum(1 for _ in (cache / kind).rglob("*.json"))
                    if entries != len(files):
                        raise SystemExit(f"only {entries} of {len(files)} results {kind}")
        reference = folder / "site-2-e"
        for other in ("2-w", "1-e", "1-w"):
            differ = [path for path in reference.rglob("*") if path.is_file() and path.read_bytes()
                      != (folder / f"site-{other}" / path.relative_to(reference)).read_bytes()]
            print(f"every result verified; site-2-e and site-{other}: "
                  f"{'differ: ' + str(differ[:3]) if differ else 'identical'}")
        site = reference
    else:
        # every build starts from an empty cache (predictions) and has no judgments: nothing is verified
        workers = str(min(os.cpu_count() or 1, 4))  # as `irboard build` chooses
        shutil.rmtree(folder / "cache-unverified", ignore_errors=True)
        builds.append(("full build", run_python(FULL_BUILD, str(results), str(folder / "site"), "", workers,
                                                cache=folder / "cache-unverified")))
        shutil.rmtree(folder / "cache-unverified", ignore_errors=True)
        builds.append(("full build, every ranking decoded", run_python(
            FULL_BUILD, str(results), str(folder / "site-decoded"), "decode", workers, cache=folder / "cache-unverified")))
        site = folder / "site"
    stages = run_python(STAGES, str(results), str(folder / "site-stages"), str(folder / "data") if args.verifying else "",
                        cache=folder / "cache" if args.verifying else None)
    sample = ",".join(str(path) for path in files[:: max(1, len(files) // args.sample)][: args.sample])
    reference = run_python(READERS, "json", sample)
    fast = run_python(READERS, "read_loaded", sample)
    home_kb = (site / "index.html").stat().st_size / 1024
    site_files = [path for path in site.rglob("*") if path.is_file()]
    site_mb = sum(path.stat().st_size for path in site_files) / 1e6
    count = len(sample.split(","))

    print(f"\nirboard build: {args.models} models x {args.datasets} datasets x {args.queries} queries, "
          f"{len(files)} result files ({data_mb:.0f} MB)\n")
    print(f"| {'measure':<62} | {'value':>14} | {'target':>10} |")
    print(f"|{'-' * 64}|{'-' * 16}|{'-' * 12}|")
    for name, build in builds:
        print(f"| {name + ', wall time':<62} | {build['seconds']:>12.1f} s | {'<= 60 s':>10} |")
        print(f"| {name + ', CPU time':<62} | {build['cpu']:>12.1f} s | {'':>10} |")
        print(f"| {name + ', peak RSS':<62} | {build['rss'] / 2**30:>10.2f} GiB | {'<= 2 GiB':>10} |")
        if build["worker_rss"]:
            print(f"| {name + ', peak RSS of a worker':<62} | {build['worker_rss'] / 2**30:>10.2f} GiB | {'':>10} |")
        print(f"| {name + ', load average before, after':<62} | {build['load'][0]:>6.1f}, {build['load'][1]:>5.1f} | "
              f"{'':>10} |")
    print(f"| {'home page HTML (index.html)':<62} | {home_kb:>11.0f} KB | {'<= 300 KB':>10} |")
    print(f"| {'site: files / size (with plotly.min.js)':<62} | {len(site_files):>5} / {site_mb:>4.0f} MB | {'':>10} |")
    for name, (seconds, cpu) in stages["times"].items():
        print(f"| {'  stage: ' + name + ' (wall, CPU)':<62} | {seconds:>5.1f}, {cpu:>5.1f} s | {'':>10} |")
    print(f"| {'  stages run, peak RSS':<62} | {stages['rss'] / 2**30:>10.2f} GiB | {'':>10} |")
    print(f"\nReading {count} of the same result files, one process each\n")
    print(f"| {'reader':<62} | {'ms per file':>14} | {'peak RSS':>10} |")
    print(f"|{'-' * 64}|{'-' * 16}|{'-' * 12}|")
    for name, measured in (("json.loads only (no validation)", reference),
                           ("leaderboard.submissions.load.read_loaded (validated)", fast)):
        print(f"| {name:<62} | {1000 * measured['seconds'] / count:>14.2f} | "
              f"{measured['rss'] / 2**20:>7.0f} MiB |")
    print(f"\nFull validation costs {fast['seconds'] / reference['seconds']:.1f}x the time of parsing alone.")


if __name__ == "__main__":
    main()
