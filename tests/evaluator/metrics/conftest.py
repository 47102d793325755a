import re
from pathlib import Path

import pytest

from tests.conftest import CONFORMANCE

CASES = CONFORMANCE / "cases"

# trec_eval measure names used in the fixtures -> irboard names
_TREC_NAMES = [
    (r"ndcg_cut_(\d+)", r"nDCG@\1"), (r"recall_(\d+)", r"R@\1"), (r"P_(\d+)", r"P@\1"),
    (r"map_cut_(\d+)", r"AP@\1"), (r"map", "AP"), (r"recip_rank", "RR"), (r"Rprec", "Rprec"),
    (r"bpref", "Bpref"), (r"success_(\d+)", r"Success@\1"),
]


def irboard_name(trec_name: str) -> str:
    for pattern, replacement in _TREC_NAMES:
        if re.fullmatch(pattern, trec_name):
            return re.sub(pattern, replacement, trec_name)
    raise KeyError(trec_name)


def read_qrels_text(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        query_id, _, doc_id, label = line.split()
        qrels.setdefault(query_id, {})[doc_id] = int(label)
    return qrels


@pytest.fixture(scope="session")
def conformance_cases() -> list[Path]:
    cases = sorted(p for p in CASES.iterdir() if p.is_dir())
    assert len(cases) >= 10, f"conformance fixtures missing under {CASES}"
    return cases
