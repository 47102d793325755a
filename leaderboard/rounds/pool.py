"""`irboard pool`: the pool of a round's revealed runs, as an assessment file anyone can remake.

Each revealed run's top `pool_depth` documents per query (trec_eval's order: score as float32 descending, ties
by document id descending) are pooled. The assessment file lists each (query, document) pair once, one
`query_id<TAB>doc_id` line each, in an order that hides which run ranked what and how high: pairs sorted by
sha256 of "<seed>\t<query_id>\t<doc_id>", with the round's published seed. The same reveals and seed give
the same bytes on any machine.

Only revealed runs that were read whole and rank only the round's queries reach the pool (the ledger leaves
the others out, as problems). A participant (an account, or a group of them, `round.yml`'s `groups`) whose runs
alone would add more than `pool_share_cap` of the pool has its runs pooled less deep, one rank at a time, until
they do not (participants taken in name order; never below depth 1): one participant cannot fill the judges'
work with its own documents.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.trec import read_run
from leaderboard.rounds.ledger import POOL_FILE, Ledger, plain_file, read_limited
from leaderboard.rounds.spec import RoundError

Pair = tuple[str, str]


@dataclass(frozen=True)
class Pool:
    depth: int
    seed: int
    contributors: Mapping[Pair, tuple[str, ...]]  # each pooled pair -> the entries whose top-k hold it
    depths: Mapping[str, int]  # each entry's pooled depth (below `depth` where the share cap cut it)

    def pairs(self) -> list[Pair]:
        return sorted(self.contributors, key=lambda pair: _shuffle_key(self.seed, pair))

    def unique_to(self, names: Collection[str]) -> set[Pair]:
        """The pairs only the entries `names` (one participant's) contributed."""
        names = set(names)
        return {pair for pair, found in self.contributors.items() if names.issuperset(found)}


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
    """The revealed runs, by entry name (as the ledger read them)."""
    return {entry.name: entry.run if entry.run is not None else read_run(entry.run_path)
            for entry in ledger.revealed()}


def participants(ledger: Ledger) -> dict[str, str]:
    """Each revealed entry's participant: its owner's group, else its owner."""
    spec = ledger.round.spec
    return {entry.name: spec.participant(entry.owner) for entry in ledger.revealed()}


def make_pool(runs: Mapping[str, Mapping[str, Mapping[str, float]]], depth: int, seed: int,
              owners: Mapping[str, str] | None = None, cap: float = 1.0) -> Pool:
    """The pool of `runs` at `depth`; `owners` (entry -> participant) and `cap` limit the share of the pool one
    participant's runs alone may add."""
    tops = {name: top_documents(runs[name], depth) for name in sorted(runs)}
    depths = dict.fromkeys(tops, depth)

    def pooled(names, at=None) -> set[Pair]:
        return {(q, d) for name in names for q, docs in tops[name].items() for d in docs[:at or depths[name]]}

    if owners is not None and cap < 1:
        for participant in sorted(set(owners.values())):
            members = [name for name in tops if owners[name] == participant]
            others = pooled(name for name in tops if owners[name] != participant)
            at = depth
            while at > 1:
                own = pooled(members, at)
                if len(own - others) <= cap * len(own | others):
                    break
                at -= 1
            depths.update(dict.fromkeys(members, at))
    contributors: dict[Pair, list[str]] = {}
    for name, top in tops.items():
        for query_id, doc_ids in top.items():
            for doc_id in doc_ids[:depths[name]]:
                contributors.setdefault((query_id, doc_id), []).append(name)
    return Pool(depth, seed, {pair: tuple(names) for pair, names in contributors.items()}, depths)


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
    return make_pool(read_runs(ledger), spec.pool_depth, spec.seed, participants(ledger), spec.pool_share_cap)


def check_pool_file(ledger: Ledger, pool: Pool) -> list[str]:
    """The committed assessment file must be the pool remade from the reveals, byte for byte."""
    path: Path = ledger.round.folder / POOL_FILE
    if not path.exists() and not path.is_symlink():
        return []
    expected = assessment_text(pool).encode("utf-8")
    if plain_file(ledger.round.folder, POOL_FILE) is None or read_limited(path, len(expected)) != expected:
        return [f"{path}: differs from the pool of the revealed runs; write it with `irboard pool "
                f"{ledger.round.folder}`"]
    return []
