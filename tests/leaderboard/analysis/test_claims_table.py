"""docs/statistics.md's tables of pooled claims on unequal, non-normal boards are simulate_claims.py's stored run
(claims_table.json), and a few of its cells rerun with their seeds give the stored numbers."""

import json
from pathlib import Path

import pytest

from leaderboard.analysis import meta
from tests.leaderboard.analysis import simulate_claims

DOCS = Path(__file__).resolve().parents[3] / "docs" / "statistics.md"
TABLE = json.loads(simulate_claims.TABLE.read_text())


def test_the_docs_tables_are_the_stored_simulation():
    text = DOCS.read_text()
    lines = simulate_claims.doc_tables(TABLE)
    assert len(lines) > 20
    missing = [line for line in lines if line not in text]
    assert not missing, missing[:3]


def test_the_stored_table_covers_the_whole_grid():
    found = {(c["k"], c["tau"], c["effect"], c["per_query"]) for c in TABLE["cells"]}
    assert found == set(simulate_claims.grid())
    assert {c["k"] for c in TABLE["cells"]} >= {3, 30} and min(c["replicates"] for c in TABLE["cells"]) >= 400


@pytest.mark.parametrize("index", [0, 40])
def test_a_cell_rerun_with_its_seed_gives_the_stored_numbers(index):
    stored = TABLE["cells"][index]
    k, tau, effect, per_query = simulate_claims.grid()[index]
    assert (stored["k"], stored["tau"], stored["effect"], stored["per_query"]) == (k, tau, effect, per_query)
    again = simulate_claims.cell(k, tau, effect, per_query, stored["replicates"],
                                 simulate_claims.seed_of(k, tau, effect, per_query))
    assert json.loads(json.dumps(again)) == stored


def test_equivalence_is_withheld_where_the_table_shows_false_claims_above_alpha():
    """Below meta.MIN_EQUIVALENCE_UNITS the chosen interval's false-claim rate may exceed alpha (so no claim is made);
    from it on, it stays within alpha plus three Monte Carlo SE in every cell."""
    for c in TABLE["cells"]:
        if c["k"] >= meta.MIN_EQUIVALENCE_UNITS:
            rate, n = c["false_equivalent"]["chosen"], c["replicates"]
            assert rate <= 0.05 + 3 * (0.05 * 0.95 / n) ** 0.5, c


def test_equivalence_needs_the_smallest_k_at_which_the_pooled_interval_covers_90_percent_everywhere():
    lowest = {k: min(c["coverage"]["chosen"] for c in TABLE["cells"] if c["k"] == k) for k in simulate_claims.KS}
    assert meta.MIN_EQUIVALENCE_UNITS == min(k for k in simulate_claims.KS
                                             if all(lowest[j] >= 0.90 for j in simulate_claims.KS if j >= k))
