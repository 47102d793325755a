"""The declaration reader (`declared.read_declaration`) on arbitrary bytes and on a valid declaration with any
field replaced by any JSON value: a valid declaration that takes no name of the board, or a DatasetLoadError of one
line naming the file; never another exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.datasets.declared import Declaration, clash, declaration_path, read_declaration
from evaluator.errors import DatasetLoadError, one_line

GOOD = {"id": "acme/claims", "name": "Acme claims", "group": "Acme", "main_metric": "nDCG@10", "split": "test",
        "language": "en", "num_queries": 300, "num_docs": 5183, "query_ids_sha256": "a" * 64,
        "qrels_sha256": "b" * 64, "relevance_level": 1, "ignore_identical_ids": False, "license": "cc-by-4.0",
        "description": "claims"}
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)


def _outcome(content: bytes, dataset_id: str = "acme/claims") -> Declaration | None:
    with tempfile.TemporaryDirectory() as folder:
        path = declaration_path(dataset_id, Path(folder))
        path.write_bytes(content)
        try:
            declaration = read_declaration(path)
        except DatasetLoadError as error:
            message = str(error)
            assert message.startswith(one_line(f"{path}: ")) and "\n" not in message and "\r" not in message, message
            return None
        assert clash(declaration) is None and path == declaration_path(declaration.id, Path(folder))
        return declaration


def test_the_valid_declaration_reads():
    assert _outcome(json.dumps(GOOD).encode()) == Declaration(**GOOD)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_are_a_declaration_or_one_line(content):
    _outcome(content)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(GOOD)), JSON)
def test_any_field_replaced_is_a_declaration_or_one_line(field, value):
    declaration = _outcome(json.dumps({**GOOD, field: value}).encode())
    assert declaration is None or getattr(declaration, field) == value


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["id", "name", "group"]), st.text(max_size=40))
def test_any_name_is_a_declaration_or_one_line(field, text):
    data = {**GOOD, field: text}
    _outcome(json.dumps(data).encode(), text if field == "id" and text.strip() and "\0" not in text else "acme/claims")


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=12), JSON, max_size=3))
def test_extra_fields_of_any_name_are_one_line(extra):
    declaration = _outcome(json.dumps({**GOOD, **extra}).encode())
    assert declaration is None or set(extra) <= set(GOOD)


def test_deep_nesting_and_other_shapes_are_one_line():
    for content in (b"[" * 3000 + b"]" * 3000, b'{"id": ' + b"[" * 5000 + b"]" * 5000 + b"}", b"null", b"[]",
                    b"\xff\xfe", b"", json.dumps({**GOOD, "main_metric": "nDCG@0"}).encode(),
                    json.dumps({**GOOD, "a\nb": 1}).encode()):
        assert _outcome(content) is None, content
