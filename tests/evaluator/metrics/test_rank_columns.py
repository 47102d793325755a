"""`rank_columns` (one sort of (query, float32 score) keys, doc ids ordered only within ties) ranks exactly as
`rank_arrays` with every doc id's byte-order key: trec_eval's order, for ids beyond ASCII, ids ending in NUL,
long ids, -0.0 against 0.0 and scores equal only as float32."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evaluator.metrics.ranking import byte_order_keys, rank_arrays, rank_columns

names = st.text(alphabet=["a", "b", "é", "z", "ａ", "\U0001F600", "\x00", "0", " "], min_size=1, max_size=4) | \
    st.text(alphabet="ab", min_size=65, max_size=70)
scores = st.sampled_from([0.0, -0.0, 1.0, 1.0 + 1e-9, -2.5, 3e38, -3e38, 1e-45, 0.5])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), names, scores, st.integers(-1, 3)), max_size=40,
                unique_by=lambda row: (row[0], row[1])))
@example([(0, "a\x00", 1.0, 1), (0, "a", 1.0, 0)])  # equal once a fixed-width text drops the NUL
@example([(0, "b", 0.0, 1), (0, "a", -0.0, 0), (1, "é", 1.0, 1), (1, "z", 1.0 + 1e-9, 0)])
def test_rank_columns_ranks_like_byte_order_keys(rows):
    query_index = np.array([r[0] for r in rows], dtype=np.int64)
    doc_ids = [r[1] for r in rows]
    values = np.array([r[2] for r in rows], dtype=np.float64)
    labels = np.array([r[3] for r in rows], dtype=np.int32)
    matrix, lengths = rank_columns(query_index, doc_ids, values, labels, 3)
    expected, expected_lengths, _ = rank_arrays(query_index, byte_order_keys(np.array(doc_ids, dtype=object)),
                                                values, labels, 3)
    assert matrix.tolist() == expected.tolist() and lengths.tolist() == expected_lengths.tolist()
