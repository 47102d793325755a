"""The ledger reader (`reproductions.read_record`) on arbitrary bytes and on a real record with any field replaced
by any JSON value: a valid record, or an IrboardError of one line naming the file; never another exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.errors import IrboardError
from leaderboard.submissions.reproductions import FORMAT, Record, read_record, record_path

GOOD = {"format": FORMAT, "model_id": "bm25", "dataset_id": "beir/scifact", "result_sha256": "a" * 64,
        "artifact": {"spec": "bm25"}, "compared": {"queries": 300, "depth": 100,
                                                   "max_relative_score_difference": 0.0, "tolerance": 1e-6},
        "measured": {"parameters": None, "dim": None, "queries_per_s": 12.5},
        "reproduced_at": "2026-12-01T00:00:00Z", "irboard_commit": "ab" * 20,
        "isolation": "user, mount and PID namespaces (unshare), no capabilities"}
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)


def _outcome(content: bytes) -> Record | None:
    with tempfile.TemporaryDirectory() as folder:
        path = record_path(Path(folder) / "reproductions", "bm25", "beir/scifact")
        path.parent.mkdir(parents=True)
        path.write_bytes(content)
        try:
            return read_record(path)
        except IrboardError as error:
            message = str(error)
            assert message.startswith(f"{path}: ") and "\n" not in message and "\r" not in message, message
            return None


def test_the_real_record_reads():
    assert _outcome(json.dumps(GOOD).encode()) is not None


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_are_a_record_or_one_line(content):
    _outcome(content)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(GOOD)), JSON)
def test_any_field_replaced_is_a_record_or_one_line(field, value):
    record = _outcome(json.dumps({**GOOD, field: value}).encode())
    if record is not None:  # what is read is what was written
        assert getattr(record, field) is not None or value is None


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=12), JSON, max_size=3))
def test_extra_fields_of_any_name_are_one_line(extra):
    record = _outcome(json.dumps({**GOOD, **extra}).encode())
    assert record is None or set(extra) <= set(GOOD)


def test_deep_nesting_is_one_line():
    assert _outcome(b"[" * 3000 + b"]" * 3000) is None  # within the size cap, deeper than the parser goes
    assert _outcome(b'{"format": ' + b"[" * 2000 + b"]" * 2000 + b"}") is None
