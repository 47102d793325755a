"""Benchmark: bytes per query of a result file in the stored form and in the alternatives we weighed.

Usage: python benchmarks/result_size.py RESULT.json [RESULT.json ...]

For each result (any schema version), prints the bytes per query of:
- v3 as stored (what `irboard evaluate` / `irboard migrate` write), and each of its parts;
- v3 with 12-bit instead of 16-bit score-sample codes (files migrated from version 2), and with zlib's default
  strategy at several levels for every column (numeric columns are written with Z_RLE);
- expanded JSON (everything as JSON numbers and strings, as versions 1 and 2 stored all but the samples);
- that expanded JSON compressed with zlib (level 6), as a .json.gz would hold it;
- parquet (pyarrow, zstd): per-query values, run and score samples as three tables, the header as JSON.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path)
    for path in parser.parse_args().paths:
        report(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
