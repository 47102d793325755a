"""`irboard evaluate --model ... --dataset ...` end to end, on real data and real models."""


import numpy as np
import pytest
import pytrec_eval

from evaluator.result import read_result
from leaderboard.cli import main
from leaderboard.submissions.verify import rescore_problems
from tests.conftest import SCIFACT, SHARED, write_scifact_slice

SPLADE = SHARED / "models" / "splade-tiny"


def _evaluate(*args):
    return main(["evaluate", "--quiet", *map(str, args)])


@pytest.mark.slow
def test_bm25_on_scifact_reproduces_pyserini(tmp_path):
    out = tmp_path / "bm25.json"
    assert _evaluate("--model", "bm25", "--dataset", "beir/scifact", "--data-dir", SCIFACT, "--out", out) == 0
    result = read_result(out)
    assert result.metrics["nDCG@10"] == pytest.approx(0.6789, abs=0.005)  # Pyserini BM25-flat
    assert result.dataset.num_queries == 300 and result.dataset.num_docs == 5183
    assert result.model.type == "lexical" and result.settings.top_k == 1000
    assert result.provenance.index_bytes > 0 and result.provenance.timings["queries_per_s"] > 0
    assert result.provenance.command.startswith("irboard evaluate --quiet --model bm25")
    assert result.score_samples is not None and len(result.score_samples.queries) == 300
    # the default metrics hold BEIR's published R@1000: the whole depth-1,000 ranking fits the file's size cap, so
    # it is stored whole and R@1000 re-scores from it
    assert result.metrics["R@1000"] == pytest.approx(0.9767, abs=0.005) and result.run.depth == 1000
    assert result.run.below is None and int(result.run.lengths.max()) == 1000
    assert result.provenance.coverage.covered_queries == 300
    from evaluator.trec import read_qrels

    assert rescore_problems(result, read_qrels(SCIFACT / "qrels" / "test.tsv")) == []


@pytest.fixture(scope="module")
def small_scifact(tmp_path_factory):
    """A BEIR-layout folder: 15 SciFact test queries, their judged documents and others, 120 in all (more than
    the 100 that R@100 reads)."""
    folder = tmp_path_factory.mktemp("small-scifact")
    return folder, *write_scifact_slice(folder, num_queries=15, num_docs=120)


@pytest.fixture(scope="module")
def splade_run(tmp_path_factory, small_scifact):
    """(exit code, result file, the folder under the file:// --cache-dir) of SPLADE evaluated on the slice, once
    for the tests that read it."""
    folder, *_ = small_scifact
    where = tmp_path_factory.mktemp("splade")
    out = where / "splade.json"
    code = _evaluate("--model", f"splade:{SPLADE}", "--dataset", f"local:{folder}", "--out", out,
                     "--cache-dir", f"file://{where}/c")
    return code, out, where / "c"


def _brute_force_check(result, model, folder_docs, qrels, query_texts, dense: bool):
    """The pipeline's per-query values equal pytrec_eval on an exhaustive ranking from the same encodings."""
    docs = [(d.get("title", ""), d["text"]) for d in folder_docs]
    query_ids = sorted(qrels)
    encoded = model.encode_corpus(docs)
    queries = model.encode_queries([query_texts[q] for q in query_ids]) if dense else \
        model.encode_queries([query_texts[q] for q in query_ids], encoded)
    scores = queries @ encoded.T
    scores = scores.toarray() if hasattr(scores, "toarray") else np.asarray(scores)
    run = {q: {d["_id"]: float(s) for d, s in zip(folder_docs, row, strict=True) if s > 0 or dense}
           for q, row in zip(query_ids, scores, strict=True)}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
    for query_id in query_ids:
        assert result.values("nDCG@10")[query_id] == pytest.approx(oracle[query_id]["ndcg_cut_10"], abs=1e-5)
        assert result.values("R@100")[query_id] == pytest.approx(oracle[query_id]["recall_100"], abs=1e-5)


@pytest.mark.slow
def test_splade_on_real_model(small_scifact, splade_run):
    _, qrels, docs, query_texts = small_scifact
    code, out, _ = splade_run
    assert code == 0
    result = read_result(out)
    assert result.model.type == "sparse" and result.dataset.id.startswith("local/")
    from evaluator.models import load_model

    _brute_force_check(result, load_model(f"splade:{SPLADE}"), docs, qrels, query_texts, dense=False)


@pytest.mark.slow
def test_dense_on_real_model_with_cache_reuse(tmp_path, small_scifact, monkeypatch):
    folder, qrels, docs, query_texts = small_scifact
    args = ["--model", "dense:all-MiniLM-L6-v2", "--dataset", f"local:{folder}", "--cache-dir", tmp_path / "cache"]
    assert _evaluate(*args, "--out", tmp_path / "a.json") == 0
    result = read_result(tmp_path / "a.json")
    assert result.model.id == "sentence-transformers/all-MiniLM-L6-v2" and result.model.dim == 384
    from evaluator.models import load_model

    model = load_model("dense:all-MiniLM-L6-v2")
    _brute_force_check(result, model, docs, qrels, query_texts, dense=True)

    from evaluator.models import dense

    calls = []
    original = dense.DenseEncoder.encode_corpus
    monkeypatch.setattr(dense.DenseEncoder, "encode_corpus", lambda self, d: calls.append(len(d)) or original(self, d))
    assert _evaluate(*args, "--out", tmp_path / "b.json") == 0
    assert calls == []  # the corpus encoding came from the cache
    cached = read_result(tmp_path / "b.json")
    assert all((cached.per_query[m] == result.per_query[m]).all() for m in result.per_query)
    assert "encode_docs_per_s" in result.provenance.timings
    assert "encode_docs_per_s" not in cached.provenance.timings  # no throughput claimed for a cache hit


@pytest.mark.slow
def test_cache_dir_takes_a_file_uri(splade_run):
    """Encodings go under the URI's path; the dataset (a local folder here) is read as without one."""
    code, _, cache = splade_run
    assert code == 0
    assert len(list((cache / "encodings").glob("*/complete"))) == 1


def test_pipeline_errors_are_one_line(tmp_path, capsys):
    cases = [
        (["--model", "bm25", "--dataset", "beir/scifakt", "--data-dir", SCIFACT], "did you mean"),
        (["--model", "bm26", "--dataset", "beir/scifact", "--data-dir", SCIFACT], "unknown model kind"),
        (["--model", "bm25:k1=abc", "--dataset", "beir/scifact", "--data-dir", SCIFACT], "k1"),
        (["--model", "splade:/nonexistent/model", "--dataset", "beir/scifact", "--data-dir", SCIFACT], "splade"),
        (["--model", "bm25", "--dataset", f"local:{tmp_path / 'missing'}"], "does not exist"),
        (["--model", "bm25"], "--dataset"),
        (["--model", "bm25", "--dataset", "beir/scifact", "--data-dir", SCIFACT, "--cache-dir", "nosuch://bucket"],
         "--cache-dir nosuch://bucket: cannot open it"),
    ]
    for args, message in cases:
        out = tmp_path / "out.json"
        assert _evaluate(*args, "--out", out) == 1, args
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (args, err)
        assert not out.exists()


def test_ranking_from_ids_read_on_demand_equals_the_lookup_tables(tmp_path):
    """What the Ray driver ranks with (`IdsOnDemand`: the ids read from the corpus file, tie-break keys among a
    block's documents only) gives the ranking, stored tops and judged entries below the depth of the local
    engine's lookup table, and both agree with the dict-based reference `rank_run`: score ties broken by the ids'
    bytes, each query's own document dropped."""
    import json

    from evaluator.datasets.layout import read_corpus
    from evaluator.metrics import Qrels
    from evaluator.metrics.ranking import rank_run
    from evaluator.pipeline import ranked_from_topk
    from evaluator.result import Run

    ids = ["b", "a10", "a9", "q1", "Z", "a1", "é", "q2", "c", "a"] + [f"x{i}" for i in range(5000)]  # two batches
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": d, "text": "t"}) + "\n" for d in ids))
    corpus = read_corpus(path)
    rng = np.random.default_rng(3)
    query_ids = ["q1", "q2", "q3"]
    positions = np.stack([rng.permutation(len(ids))[:40] for _ in query_ids])
    positions[:, :10] = np.arange(10)  # the short ids, in every list, with the queries' own documents
    scores = rng.choice(np.float32([1.0, 2.0, 3.0]), size=positions.shape).astype(np.float32)  # many ties
    positions[2, -3:] = -1  # empty slots
    qrels_dict = {q: {ids[int(p)]: 1 for p in rng.choice(positions[i][positions[i] >= 0], 6, replace=False)}
                  for i, q in enumerate(query_ids)}
    qrels_dict["q1"]["not-in-corpus"] = 1
    qrels = Qrels.from_dict(qrels_dict)
    wanted = [d for judged in qrels_dict.values() for d in judged] + query_ids
    on_demand = corpus.ids_on_demand(wanted)
    assert corpus._table is None  # noqa: SLF001 - nothing so far built the lookup table
    got = ranked_from_topk(scores, positions, query_ids, on_demand, qrels, True, True, depth=5, top_k=35, block=2)
    expected = ranked_from_topk(scores, positions, query_ids, corpus, qrels, True, True, depth=5, top_k=35, block=2)
    assert got[0].labels.tolist() == expected[0].labels.tolist() and got[0].lengths.tolist() == expected[0].lengths.tolist()
    for field in ("doc_ids", "lengths", "docs", "scores"):  # the stored tops, as arrays
        assert np.array_equal(np.asarray(getattr(got[1], field)), np.asarray(getattr(expected[1], field)))
    assert got[2].doc_ids == expected[2].doc_ids and got[2].ranks.tolist() == expected[2].ranks.tolist()
    run = {q: {ids[int(p)]: float(s) for p, s in zip(positions[i], scores[i], strict=True) if p >= 0}
           for i, q in enumerate(query_ids)}
    reference = rank_run(run, qrels, ignore_identical_ids=True)
    width = got[0].labels.shape[1]
    assert got[0].labels.tolist() == reference.labels[:, :width].tolist()
    assert got[0].lengths.tolist() == np.minimum(reference.lengths, 35).tolist()
    # the stored tops: each query's first 5 in trec_eval order (score, then id bytes, descending), less its own
    tops = {q: [(d, s) for d, s in sorted(run[q].items(), key=lambda item: (item[1], item[0].encode()), reverse=True)
                if d != q][:5] for q in query_ids}
    stored = Run.from_rankings(qrels.query_ids, tops, 5)
    assert got[1].doc_ids == stored.doc_ids and got[1].docs.tolist() == stored.docs.tolist()
    assert got[1].lengths.tolist() == stored.lengths.tolist() and got[1].scores.tolist() == stored.scores.tolist()


def test_the_label_matrix_is_only_as_wide_as_the_deepest_cutoff(tmp_path):
    """`label_depth` (the deepest rank a measure reads) keeps that many label columns, the lengths whole, and the
    measures' values those of the full matrix."""
    import json

    from evaluator.datasets.layout import read_corpus
    from evaluator.metrics import Qrels, evaluate, parse_measures
    from evaluator.pipeline import _deepest_rank, ranked_from_topk

    ids = [f"d{i}" for i in range(60)]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": d, "text": "t"}) + "\n" for d in ids))
    corpus = read_corpus(path)
    rng = np.random.default_rng(5)
    positions = np.stack([rng.permutation(60)[:30] for _ in range(4)])
    scores = rng.random(positions.shape).astype(np.float32)
    qrels = Qrels.from_dict({f"q{i}": {ids[int(p)]: 1 + i % 2 for p in positions[i, ::4]} for i in range(4)})
    measures = parse_measures("nDCG@10,P@5,R@12,Judged@10")
    assert _deepest_rank(measures) == 12 and _deepest_rank(parse_measures("nDCG@10,AP")) is None
    whole = ranked_from_topk(scores, positions, list(qrels.query_ids), corpus, qrels, False, depth=5, top_k=30)[0]
    narrow = ranked_from_topk(scores, positions, list(qrels.query_ids), corpus, qrels, False, depth=5, top_k=30,
                              label_depth=12)[0]
    assert narrow.labels.shape[1] == 12 and whole.labels.shape[1] == 30
    assert narrow.labels.tolist() == whole.labels[:, :12].tolist() and narrow.lengths.tolist() == whole.lengths.tolist()
    expected, got = evaluate(whole, qrels, measures), evaluate(narrow, qrels, measures)
    assert all(np.array_equal(expected[m], got[m]) for m in expected)
