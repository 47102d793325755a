"""Shared fixtures: paths to ../shared and result files shaped like real SciFact results."""

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = (ROOT / ".." / "shared").resolve()
SCIFACT = SHARED / "data" / "beir" / "scifact"


def write_scifact_slice(folder: Path, num_queries: int, num_docs: int):
    """A BEIR-layout SciFact slice in `folder`: the first `num_queries` test queries (by id), their judged
    documents, then other documents in corpus order up to `num_docs` in all.
    Returns (qrels, documents as BEIR rows, query texts by id)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, score = line.split("\t")
        qrels.setdefault(query_id, {})[doc_id] = int(score)
    keep = sorted(qrels)[:num_queries]
    judged = {d for q in keep for d in qrels[q]}
    corpus = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").read_text().splitlines()]
    docs = [d for d in corpus if d["_id"] in judged]
    docs += [d for d in corpus if d["_id"] not in judged][: num_docs - len(docs)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [json.loads(line) for line in (SCIFACT / "queries.jsonl").read_text().splitlines()]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries if q["_id"] in keep))
    (folder / "qrels").mkdir()
    rows = [f"{q}\t{d}\t{s}" for q in keep for d, s in qrels[q].items()]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    return {q: qrels[q] for q in keep}, docs, {q["_id"]: q["text"] for q in queries}


@lru_cache(maxsize=8)
def make_scifact_result(model_id: str, seed: int, model_type: str = "dense", compact: bool = False) -> str:
    """Result text for beir/scifact from a synthetic ranking: judged documents by label plus noise, some
    queries missing, two unjudged documents per query. Real query ids, so it validates against the spec.
    In the expanded JSON form (easy to edit in a test) unless `compact` asks for the stored form."""
    from evaluator.assemble import RunMetadata, assemble_result
    from evaluator.metrics import parse_measures, rank_run
    from evaluator.result import dump_result, expand_result
    from evaluator.trec import read_qrels

    qrels = read_qrels(SCIFACT / "qrels" / "test.tsv")
    rng = np.random.default_rng(seed)
    run = {}
    for query_id, judged in zip(qrels.query_ids, qrels.judgments, strict=True):
        if rng.random() < 0.1:
            continue
        ranking = {doc: float(label) * rng.random() + float(rng.random()) for doc, label in judged.items()}
        ranking.update({f"x{query_id}a": 0.5, f"x{query_id}b": 0.25})
        run[query_id] = ranking
    top = {q: sorted(r.items(), key=lambda item: -item[1]) for q, r in run.items()}
    meta = RunMetadata(model={"id": model_id, "type": model_type, "license": "mit"}, dataset_id="beir/scifact",
                       num_docs=5183, command="irboard evaluate --run x")
    result = assemble_result(rank_run(run, qrels), qrels, parse_measures("nDCG@10,R@100,AP,RR@10,P@5"), top, meta)
    if compact:
        return dump_result(result)
    expanded = expand_result(result)
    del expanded["score_samples"]
    return json.dumps(expanded, indent=1, sort_keys=True) + "\n"


@pytest.fixture
def scifact_like_results(tmp_path) -> tuple[Path, Path]:
    """(baseline result, new model's result), written under tmp_path/results."""
    from evaluator.result import result_path

    paths = []
    for model_id, seed, kind in [("bm25", 1, "lexical"), ("org/new-model", 2, "dense")]:
        path = result_path(model_id, "beir/scifact", tmp_path / "fixture-results")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make_scifact_result(model_id, seed, kind))
        paths.append(path)
    return paths[0], paths[1]
