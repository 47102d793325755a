"""Benchmark: bytes per query of a result file in the stored form and in the alternatives we weighed.

Usage: python benchmarks/result_size.py RESULT.json [RESULT.json ...]
       python benchmarks/result_size.py --ranking RESULT.json [--run RUN]

For each result (any schema version), prints the bytes per query of:
- v3 as stored (what `irboard evaluate` / `irboard migrate` write), and each of its parts;
- v3 with 12-bit instead of 16-bit score-sample codes (files migrated from version 2), and with zlib's default
  strategy at several levels for every column (numeric columns are written with Z_RLE);
- expanded JSON (everything as JSON numbers and strings, as versions 1 and 2 stored all but the samples);
- that expanded JSON compressed with zlib (level 6), as a .json.gz would hold it;
- parquet (pyarrow, zstd): per-query values, run and score samples as three tables, the header as JSON.

With `--ranking`: what the result's whole ranking takes stored (its columns, bytes a query and an entry; read from
`--run` when the result keeps only depth 100 and the judged documents below), against the same run as a gzipped
TREC file (`--run`'s text, else the stored ranking written out with six-decimal scores, as Pyserini writes them,
gzip level 6), and the wall time of `irboard validate RESULT` in a fresh process with a fresh cache (official
judgments from $IRBOARD_MIRROR when set). With `--run` and a result stored to depth 100, also the full-run route:
`irboard split RESULT --run RUN` (on a copy), then `irboard validate` fetching the run from a mirror folder.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluator import columns  # noqa: E402
from evaluator.result import dump_result, expand_result, read_result  # noqa: E402
from evaluator.score_samples import DEFAULT_LEVELS, LEGACY_LEVELS  # noqa: E402


def expanded_json(result) -> str:
    """Versions 1/2's layout: per-query values, rankings and score samples as plain JSON."""
    data = expand_result(result)
    samples = data.pop("score_samples")
    if samples is not None:
        data["score_samples"] = {q: {"relevant": v.relevant.tolist(), "nonrelevant": v.nonrelevant.tolist()}
                                 for q, v in samples.queries.items()}
    return json.dumps(data, sort_keys=True, indent=1)


def parquet_bytes(result) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def size(table) -> int:
        sink = io.BytesIO()
        pq.write_table(table, sink, compression="zstd")
        return sink.tell()

    names = sorted(result.per_query)
    total = size(pa.table({"query_id": list(result.query_ids), **{n: result.per_query[n] for n in names}}))
    if result.run is not None:
        run = result.run
        queries = np.repeat(np.arange(len(result.query_ids)), run.lengths)
        total += size(pa.table({
            "query_id": pa.DictionaryArray.from_arrays(queries.astype(np.int32), list(result.query_ids)),
            "doc_id": pa.DictionaryArray.from_arrays(run.docs.astype(np.int32), list(run.doc_ids)),
            "score": run.scores}))
    if result.score_samples is not None:
        samples = result.score_samples
        rows = [(q, v) for q, v in samples.queries.items()]
        total += size(pa.table({
            "query_id": [q for q, v in rows for _ in range(v.nonrelevant.size)],
            "code": np.concatenate([np.rint((v.nonrelevant - v.nonrelevant.min(initial=0)) /
                                            max(np.ptp(v.nonrelevant) if v.nonrelevant.size else 1, 1e-300) *
                                            samples.levels).astype(np.uint16) for _, v in rows])}))
        total += size(pa.table({"query_id": [q for q, v in rows for _ in range(len(v.relevant))],
                                "relevant": np.concatenate([np.asarray(v.relevant, float) for _, v in rows])}))
    header = result.header.model_dump(mode="json")
    return total + len(json.dumps(header, sort_keys=True, indent=1))


def part_bytes(text: str) -> dict[str, int]:
    data = json.loads(text)
    parts = {key: len(json.dumps(data.get(key), sort_keys=True, indent=1))
             for key in ("per_query", "run", "score_samples") if data.get(key) is not None}
    parts["readable header"] = len(text) - sum(parts.values())
    return parts


def report(path: Path) -> None:
    result = read_result(path)
    n = len(result.query_ids)
    stored = dump_result(result)
    rows = {"v3 as written now (numeric columns Z_RLE)": len(stored)}
    rows |= {f"  of which {k}": v for k, v in part_bytes(stored).items()}
    if result.score_samples is not None and result.score_samples.levels == LEGACY_LEVELS:
        # 16-bit codes (migrated from version 2) re-quantised to the 12 bits a fresh result gets; the other way
        # round would only spread 12-bit values over a 16-bit grid
        rows["v3 with 12-bit sample codes"] = len(dump_result(replace(
            result, score_samples=replace(result.score_samples, levels=DEFAULT_LEVELS))))
    stored = columns.ZLIB_LEVEL, columns.NUMERIC_STRATEGY
    columns.NUMERIC_STRATEGY = zlib.Z_DEFAULT_STRATEGY  # deflate's string search on every column
    for level in (1, 4, 6, 9):
        columns.ZLIB_LEVEL = level
        rows[f"v3 with zlib level {level} throughout"] = len(dump_result(result))
    columns.ZLIB_LEVEL, columns.NUMERIC_STRATEGY = stored
    expanded = expanded_json(result)
    rows["expanded JSON (samples as numbers)"] = len(expanded)
    rows["expanded JSON + zlib 6"] = len(zlib.compress(expanded.encode(), 6))
    rows["parquet (zstd) + JSON header"] = parquet_bytes(result)
    samples = result.score_samples
    print(f"\n{path} (schema {result.source_version}, {n} queries, run depth "
          f"{result.run.depth if result.run else '-'}, "
          f"samples {f'{samples.samples_per_query}/query, {samples.levels + 1} levels' if samples else '-'}); "
          f"file on disk {path.stat().st_size:,} bytes")
    for label, size in rows.items():
        print(f"  {label:<34} {size:>11,} bytes {size / n:>9,.0f} per query")


def _timed_irboard(*arguments: str, env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds and last output line of `irboard ARGUMENTS` in a fresh process."""
    import os
    import subprocess
    import time

    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "leaderboard.cli", *arguments], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"irboard {' '.join(arguments)} failed:\n{done.stdout}{done.stderr}")
    return wall, done.stdout.strip().splitlines()[-1]


def ranking_report(path: Path, run_path: Path | None) -> None:
    import gzip
    import shutil
    import tempfile

    from evaluator.result import encode_ids
    from evaluator.trec import input_bytes, rank_trec_run
    from leaderboard.submissions.verify import qrels_for

    result = read_result(path)
    n, run = len(result.query_ids), result.run
    whole = run.below is None and run.depth >= result.settings.top_k
    if not whole:
        if run_path is None:
            raise SystemExit(f"{path}: stores depth {run.depth} and the judged documents below; give --run")
        qrels = qrels_for(result.dataset.id, result.dataset.split, {}, None)
        run = rank_trec_run(run_path, qrels, result.settings.ignore_identical_ids, keep_top=None)[1]
    entries = int(run.docs.size)
    parts = {"doc_ids": len(encode_ids(run.doc_ids)), "docs": len(columns.encode_array(run.docs, "<u4")),
             "scores": len(columns.encode_array(run.scores, "<f8")),
             "lengths": len(columns.encode_array(run.lengths, "<u4"))}
    if run_path is not None:
        with input_bytes(run_path) as (content, _, _):
            text = bytes(content)
    else:
        text = "".join(f"{q} Q0 {doc} {rank} {score:.6f} irboard\n" for q, ranking in result.rankings().items()
                       for rank, (doc, score) in enumerate(ranking, 1)).encode()
    gz = len(gzip.compress(text, 6))
    stored = sum(parts.values())
    print(f"\n{path}: {n:,} queries, {entries:,} entries (depth {int(run.lengths.max(initial=0))}), the whole "
          f"ranking {'stored' if whole else 'not stored (over the cap)'}; file {path.stat().st_size:,} bytes, cap "
          f"{columns_cap(n):,}")
    print(f"  whole ranking as stored columns {stored:>13,} bytes {stored / n:>9,.0f} a query {stored / entries:6.2f} "
          "an entry")
    for name, size in parts.items():
        print(f"    of which {name:<20} {size:>13,} bytes {size / n:>9,.0f} a query {size / entries:6.2f} an entry")
    print(f"  TREC run, gzip -6                {gz:>13,} bytes {gz / n:>9,.0f} a query {gz / entries:6.2f} an entry "
          f"(stored / gzip = {stored / gz:.2f}; plain TREC {len(text) / n:,.0f} a query)")
    with tempfile.TemporaryDirectory() as work:
        wall, line = _timed_irboard("validate", str(path), env={"IRBOARD_CACHE": f"{work}/cache"})
        print(f"  irboard validate: {wall:.2f} s wall ({line})")
        if not whole and run_path is not None:
            copy = Path(work) / "results" / path.parent.name / path.name
            copy.parent.mkdir(parents=True)
            shutil.copy(path, copy)
            _timed_irboard("split", str(copy), "--run", str(run_path), "--out-dir", f"{work}/upload",
                           env={"IRBOARD_CACHE": f"{work}/cache-split"})
            wall, line = _timed_irboard("validate", str(copy), env={"IRBOARD_CACHE": f"{work}/cache-full",
                                                                    "IRBOARD_FULL_MIRROR": f"{work}/upload"})
            print(f"  irboard validate with run.full (split --run; the run from a mirror folder): {wall:.2f} s "
                  f"wall ({line})")


def columns_cap(num_queries: int) -> int:
    from evaluator.result import size_limit

    return size_limit(num_queries)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--ranking", action="store_true", help="the whole ranking's cost against a gzipped TREC run")
    parser.add_argument("--run", type=Path, help="with --ranking: the run file the result was evaluated from")
    args = parser.parse_args()
    for path in args.paths:
        ranking_report(path, args.run) if args.ranking else report(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
