"""`irboard pool`: the pool of a round's revealed runs, as an assessment file anyone can remake.

Each revealed run's top `pool_depth` documents per query (trec_eval's order: score as float32 descending, ties
by document id descending) are pooled. The assessment file lists each (query, document) pair once, one
`query_id<TAB>doc_id` line each, in an order that hides which run ranked what and how high: pairs sorted by
sha256 of "<seed>\t<query_id>\t<doc_id>", with the round's published seed. The same reveals and seed give
the same bytes on any machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.trec import read_run
from leaderboard.rounds.ledger import POOL_FILE, Ledger
from leaderboard.rounds.spec import RoundError

Pair = tuple[str, str]


@dataclass(frozen=True)
class Pool:
    depth: int
    seed: int
    contributors: Mapping[Pair, tuple[str, ...]]  # each pooled pair -> the entries whose top-k hold it

    def pairs(self) -> list[Pair]:
        return sorted(self.contributors, key=lambda pair: _shuffle_key(self.seed, pair))

    def unique_to(self, name: str) -> set[Pair]:
        return {pair for pair, names in self.contributors.items() if names == (name,)}


def _shuffle_key(seed: int, pair: Pair) -> bytes:
    return hashlib.sha256(f"{seed}\t{pair[0]}\t{pair[1]}".encode()).digest()


def top_documents(run: Mapping[str, Mapping[str, float]], depth: int) -> dict[str, list[str]]:
    """Each query's first `depth` documents in trec_eval's order."""
    top = {}
    for query_id, ranking in run.items():
        doc_ids = list(ranking)
        scores = np.array([ranking[d] for d in doc_ids], dtype=np.float32)
        # ties by document id descending (byte order), then score descending, stably
        by_id = sorted(range(len(doc_ids)), key=lambda i: doc_ids[i].encode("utf-8"), reverse=True)
        order = sorted(by_id, key=lambda i: -scores[i])
        top[query_id] = [doc_ids[i] for i in order[:depth]]
    return top


def read_runs(ledger: Ledger) -> dict[str, dict[str, dict[str, float]]]:
    """The revealed runs, by entry name."""
    return {entry.name: read_run(entry.run_path) for entry in ledger.revealed()}


def make_pool(runs: Mapping[str, Mapping[str, Mapping[str, float]]], depth: int, seed: int) -> Pool:
    contributors: dict[Pair, list[str]] = {}
    for name in sorted(runs):
        for query_id, doc_ids in top_documents(runs[name], depth).items():
            for doc_id in doc_ids:
                contributors.setdefault((query_id, doc_id), []).append(name)
    return Pool(depth, seed, {pair: tuple(names) for pair, names in contributors.items()})


def assessment_text(pool: Pool) -> str:
    return "".join(f"{query_id}\t{doc_id}\n" for query_id, doc_id in pool.pairs())


def round_pool(ledger: Ledger) -> Pool:
    """The pool of the round's revealed runs; refused before the reveals close (a pool made earlier would leak
    the revealed runs' documents while others could still reveal)."""
    if ledger.phase in ("announced", "open", "frozen"):
        raise RoundError(f"{ledger.round.folder}: the pool is made once the reveals close, at "
                         f"{ledger.round.spec.phases.revealed.isoformat()} (phase now: {ledger.phase})")
    if not ledger.revealed():
        raise RoundError(f"{ledger.round.folder}: no revealed run to pool")
    spec = ledger.round.spec
    return make_pool(read_runs(ledger), spec.pool_depth, spec.seed)


def check_pool_file(ledger: Ledger, pool: Pool) -> list[str]:
    """The committed assessment file must be the pool remade from the reveals, byte for byte."""
    path: Path = ledger.round.folder / POOL_FILE
    if not path.exists():
        return []
    if path.read_bytes() != assessment_text(pool).encode("utf-8"):
        return [f"{path}: differs from the pool of the revealed runs; write it with `irboard pool "
                f"{ledger.round.folder}`"]
    return []
