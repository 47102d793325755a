"""A table download as Parquet (pyarrow, a core dependency): the CSV's columns, each typed by what it holds
(booleans, whole numbers, numbers, else text; null when no row fills it), None as null; the table's metadata as JSON under the key "irboard".
The same rows give the same bytes."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq


def _column(values: list) -> pa.Array:
    present = [value for value in values if value is not None]
    if not present:  # nothing to type it by (a column no row fills on this board)
        return pa.nulls(len(values))
    if all(type(value) is bool for value in present):
        return pa.array(values, type=pa.bool_())
    if all(type(value) is int for value in present):
        return pa.array(values, type=pa.int64())
    if all(type(value) in (int, float) for value in present):
        return pa.array([None if value is None else float(value) for value in values], type=pa.float64())
    return pa.array([None if value is None else str(value) for value in values], type=pa.string())


def parquet_bytes(header: list[str], rows: list[list], meta: dict) -> bytes:
    columns = [_column([row[i] for row in rows]) for i in range(len(header))]
    table = pa.Table.from_arrays(columns, names=header).replace_schema_metadata(
        {"irboard": json.dumps(meta, sort_keys=True, ensure_ascii=False, allow_nan=False, default=str)})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()
