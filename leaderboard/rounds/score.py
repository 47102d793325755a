"""`irboard round score`: every revealed run scored against the pool's judgments, with the pool's statistics.

Scores follow trec_eval (`evaluator.metrics`): unjudged documents count as not relevant, and the mean is over
the judged queries. Beside each run's scores the board gives what tells a reader how far to trust them:
- `judged_share`: the share of the run's top `pool_depth` documents that were judged (1.0 for a run pooled at
  the full depth, unless the assessors skipped documents; below it for a run the pool share cap pooled less deep);
- `unique` and `unique_relevant`: pooled documents only this run's participant (its owner, or the owner's
  group) contributed, and the relevant ones among them;
- `leave_one_out`: the first metric when those documents are treated as unjudged, as if the participant had
  not been pooled (leave-one-group-out, as TREC measures pool bias: Zobel 1998; Buckley et al. 2007); the
  difference is the pool's bias in this run's favour, and what a run scored later against these judgments
  would lose;
- `shares_judge`: the run's system names the judge model among the models it uses (a judge favours its own
  model's output).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import orjson

from evaluator.metrics import Qrels, evaluate, parse_measures, rank_run
from evaluator.trec import read_qrels
from leaderboard.rounds.ledger import JUDGMENTS, QRELS_FILE, SCORES_FILE, Ledger, plain_file, read_limited
from leaderboard.rounds.pool import Pool, participants, read_runs, top_documents
from leaderboard.rounds.spec import RoundError


@dataclass(frozen=True)
class RunScore:
    entry: str
    model_id: str
    revision: str
    metrics: dict[str, float]
    judged_share: float
    unique: int
    unique_relevant: int
    leave_one_out: float
    shares_judge: bool
    participant: str = ""
    pooled_depth: int = 0  # below the round's pool_depth where the pool share cap cut it
    per_query: list[float] = field(default_factory=list)  # the first metric on each judged query (Board.query_ids)


@dataclass(frozen=True)
class Board:
    round: str
    metrics: list[str]
    pool_depth: int
    pool_pairs: int
    queries: int
    relevant: int
    judge: str
    runs: list[RunScore]
    query_ids: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        """scores.json: everything but the per-query values (the judgments and runs remake them)."""
        data = asdict(self)
        del data["query_ids"]
        for run in data["runs"]:
            del run["per_query"]
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def _mean(values: np.ndarray) -> float:
    return round(float(values.mean()) if values.size else 0.0, 10)


def read_judgments(ledger: Ledger, pool: Pool) -> Qrels:
    """The round's qrels; every judged pair must be in the pool."""
    path: Path = ledger.round.folder / JUDGMENTS / QRELS_FILE
    if ledger.judged_at is None:
        raise RoundError(f"{ledger.round.folder}: no accepted judgments yet ({path} and its provenance.yml, "
                         f"accepted from {ledger.round.spec.phases.revealed.isoformat()})")
    qrels = read_qrels(path)
    outside = [(q, d) for q, judged in zip(qrels.query_ids, qrels.judgments, strict=True) for d in judged
               if (q, d) not in pool.contributors]
    if outside:
        q, d = outside[0]
        raise RoundError(f"{path}: judges {len(outside)} pairs outside the pool, e.g. query {q!r} document {d!r}; "
                         "judge exactly the pairs of pool.tsv")
    return qrels


def _shares_judge(uses: list[str], model_id: str, judge: str) -> bool:
    if not judge:
        return False
    judge = judge.lower()
    return any(judge == name.lower() or judge.split("/")[-1] == name.lower().split("/")[-1]
               for name in [*uses, model_id])


def score_round(ledger: Ledger, pool: Pool) -> Board:
    spec = ledger.round.spec
    qrels = read_judgments(ledger, pool)
    measures = parse_measures(spec.metrics)
    first = str(measures[0])
    judge = ledger.provenance.judge.model if ledger.provenance and ledger.provenance.judge else ""
    runs = read_runs(ledger)
    judged_pairs = {(q, d) for q, judged in zip(qrels.query_ids, qrels.judgments, strict=True) for d in judged}
    relevant = {(q, d) for q, judged in zip(qrels.query_ids, qrels.judgments, strict=True) for d, label in judged.items()
                if label >= 1}
    owners = participants(ledger)
    rows = []
    for entry in ledger.revealed():
        run = runs[entry.name]
        values = evaluate(rank_run(run, qrels), qrels, measures)
        unique = pool.unique_to([name for name, owner in owners.items() if owner == owners[entry.name]])
        reduced = Qrels.from_dict({q: {d: label for d, label in judged.items() if (q, d) not in unique}
                                   for q, judged in zip(qrels.query_ids, qrels.judgments, strict=True)})
        left_out = evaluate(rank_run(run, reduced), reduced, measures[:1])[first]
        # over the run's own top pool_depth, not its pooled pairs: below a depth the share cap cut, its
        # documents went unjudged, and the share says so
        top = [(q, d) for q, docs in top_documents(run, spec.pool_depth).items() for d in docs]
        commitment = entry.commitment
        rows.append(RunScore(
            entry=entry.name, model_id=commitment.model.id, revision=commitment.model.revision,
            metrics={name: _mean(value) for name, value in values.items()},
            judged_share=round(sum(pair in judged_pairs for pair in top) / max(len(top), 1), 10),
            unique=len(unique), unique_relevant=len(unique & relevant), leave_one_out=_mean(left_out),
            shares_judge=_shares_judge(commitment.uses_models, commitment.model.id, judge),
            participant=owners[entry.name], pooled_depth=pool.depths.get(entry.name, spec.pool_depth),
            per_query=[float(v) for v in values[first]]))
    rows.sort(key=lambda row: (-row.metrics[first], row.entry))
    return Board(spec.name, [str(m) for m in measures], spec.pool_depth, len(pool.contributors),
                 len(qrels.query_ids), len(relevant), judge, rows, list(qrels.query_ids))


def check_scores_file(ledger: Ledger, board: Board) -> list[str]:
    path: Path = ledger.round.folder / SCORES_FILE
    if not path.exists() and not path.is_symlink():
        return []
    expected = board.to_json().encode("utf-8")
    if plain_file(ledger.round.folder, SCORES_FILE) is None or read_limited(path, len(expected)) != expected:
        return [f"{path}: differs from the scores of the revealed runs against the judgments; write it with "
                f"`irboard round score {ledger.round.folder}`"]
    return []
