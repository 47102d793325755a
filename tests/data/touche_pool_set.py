"""A test-only post-hoc judgment set of Touché 2020 (beir/webis-touche2020), made the way a sealed round makes
its judgments: the published runs' stored rankings pooled at depth 10 (`leaderboard.rounds.pool.make_pool`),
every pooled pair the official qrels judge keeps its official grade, and every hole in the pool is "judged" by a
rule of this file (grade 1 when the first byte of sha256("<query>\\t<doc>") is below 64, about a quarter of
them, else 0). The rule stands in for assessors so that the tests exercise the mechanism; these are not
judgments of anyone and never leave tests/ (no such set is declared in the repository)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from evaluator.result import read_result
from evaluator.trec import read_qrels
from leaderboard.rounds.pool import make_pool

DATASET = "beir/webis-touche2020"
SLUG = "beir__webis-touche2020"
NAME = "pool-test"
QRELS = "qrels.beir-v1.0.0-webis-touche2020.test.txt"
DEPTH = 10
SEED = 43


def touche_results(root: Path) -> list[Path]:
    """The repository's result files on Touché (the published runs of castorini/touche-error-analysis)."""
    return sorted((root / "results").glob(f"*/{SLUG}.json"))


def rule_grade(query_id: str, doc_id: str) -> int:
    return int(hashlib.sha256(f"{query_id}\t{doc_id}".encode()).digest()[0] < 64)


def pooled_qrels(result_files: list[Path], official: Path) -> dict[str, dict[str, int]]:
    """The official judgments plus the pool's holes graded by `rule_grade`."""
    runs = {}
    for path in result_files:
        result = read_result(path)
        runs[result.model.id] = {q: dict(ranking) for q, ranking in result.rankings().items()}
    pool = make_pool(runs, DEPTH, SEED)
    judged = read_qrels(official).to_dict()
    out = {query_id: dict(docs) for query_id, docs in judged.items()}
    for query_id, doc_id in pool.pairs():
        if query_id in out and doc_id not in out[query_id]:
            out[query_id][doc_id] = rule_grade(query_id, doc_id)
    return out


def write_set(folder: Path, qrels: dict[str, dict[str, int]], name: str = NAME, **fields) -> Path:
    """The qrels file and its declaration under `folder` (a judgments folder); returns the declaration."""
    where = folder / SLUG
    where.mkdir(parents=True, exist_ok=True)
    text = "".join(f"{q} 0 {d} {g}\n" for q in sorted(qrels) for d, g in sorted(qrels[q].items()))
    (where / f"{name}.qrels.txt").write_text(text)
    declaration = {"dataset": DATASET, "name": name, "kind": "post-hoc", "file": f"{name}.qrels.txt",
                   "sha256": hashlib.sha256(text.encode()).hexdigest(), "license": "test only",
                   "source": "tests/data/touche_pool_set.py: the published runs' pool at depth 10, holes graded by a rule"}
    declaration.update(fields)
    path = where / f"{name}.json"
    path.write_text(json.dumps(declaration, indent=1))
    return path
