"""The corpus as an Arrow file: the same documents, ids and order as the source; BM25 streamed chunk by chunk
gives the same index and the same result file as before, bit for bit."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from evaluator.datasets import layout
from evaluator.datasets.corpus import Corpus
from evaluator.datasets.layout import read_corpus
from evaluator.errors import InputFormatError
from evaluator.metrics import DEFAULT_MEASURES
from evaluator.metrics.ranking import byte_order_keys
from evaluator.models import bm25 as bm25_module
from evaluator.models.analyzers import TermIndexer
from evaluator.models.bm25 import BM25Model, bm25_weights
from evaluator.pipeline import evaluate_model
from evaluator.result import write_result
from tests.conftest import ROOT, SCIFACT

GOLDEN = ROOT / "tests" / "data" / "golden" / "bm25-scifact.json"  # written by the evaluator before Arrow corpora


def _source_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _arrow_peak(path, statement: str = "") -> int:
    """Peak Arrow memory of a fresh process that opens the corpus at `path` as `c` and runs `statement`."""
    import subprocess
    import sys

    script = ("import sys, pyarrow as pa\nfrom evaluator.datasets.corpus import Corpus, find_positions, take_ids\n"
              f"c = Corpus(sys.argv[1])\n{statement}\nprint(pa.default_memory_pool().max_memory())")
    return int(subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout)


def test_opening_a_corpus_reads_no_ids_and_the_id_table_never_holds_its_texts(tmp_path):
    """Opening a corpus reads its footer and last batch; ids found by id or read by position over 40,000
    documents (ten batches) take one batch of Arrow memory at a time; the local engine's lookup table holds
    about the ids, never the titles and texts beside them."""
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": f"doc-{i}", "title": "T", "text": "word " * 60}) + "\n"
                            for i in range(40_000)))
    corpus = read_corpus(path)
    id_bytes = sum(len(i.encode()) for i in corpus.ids) + 4 * (len(corpus) + 1)
    batch_bytes = corpus.path.stat().st_size / 10  # ten batches of 4,096 documents (the last shorter)
    assert _arrow_peak(corpus.path) < batch_bytes
    assert _arrow_peak(corpus.path, "find_positions(sys.argv[1], ['doc-5', 'doc-39999'])") < 2.2 * batch_bytes
    assert _arrow_peak(corpus.path, "take_ids(sys.argv[1], list(range(0, 40_000, 7)))") < 2.2 * batch_bytes
    assert id_bytes <= _arrow_peak(corpus.path, "c.position('doc-5')") < 3 * id_bytes < 2 * batch_bytes


def test_ids_on_demand_answer_like_the_lookup_table():
    """The Ray driver's view of the ids (`IdsOnDemand`) gives the positions, ids and tie-break order of the
    corpus's own lookup table, without building it."""
    corpus = read_corpus(SCIFACT / "corpus.jsonl")
    table = Corpus(corpus.path)
    wanted = [table.ids[5], table.ids[4096], table.ids[5182], "no-such-id"]
    ids = corpus.ids_on_demand(wanted)
    positions_of = ids.positions_of()
    assert len(ids) == len(positions_of) == len(table) == 5183 and "no-such-id" not in positions_of
    assert {d: positions_of[d] for d in wanted[:3]} == {d: table.position(d) for d in wanted[:3]}
    assert corpus.find(wanted) == table.find(wanted) == dict(positions_of)
    at = np.array([5182, 3, 4096, 3, 4095, 77])
    assert ids.take_ids(at) == table.take_ids(at) == [table.ids[int(p)] for p in at]
    keys, reference = ids.keys_of(at), table.keys_of(at)
    assert (np.argsort(keys, kind="stable") == np.argsort(reference, kind="stable")).all() and keys[1] == keys[3]
    assert corpus._table is None  # noqa: SLF001 - the point: nothing above built it


def test_scifact_corpus_round_trips_and_is_reused(monkeypatch):
    rows = _source_rows(SCIFACT / "corpus.jsonl")
    corpus = read_corpus(SCIFACT / "corpus.jsonl")
    assert isinstance(corpus, Corpus) and corpus.path.suffix == ".arrow" and len(corpus) == len(rows) == 5183
    assert corpus.ids == [r["_id"] for r in rows]
    assert corpus.view()[100:103] == [(r.get("title") or "", r["text"]) for r in rows[100:103]]
    assert list(corpus.view()) == [(r.get("title") or "", r["text"]) for r in rows]  # batch by batch
    assert corpus.position(rows[4321]["_id"]) == 4321 and "no-such-id" not in corpus
    assert corpus[rows[7]["_id"]] == (rows[7]["title"], rows[7]["text"])
    assert corpus.take_ids(np.array([5, 0, 5182])) == [rows[5]["_id"], rows[0]["_id"], rows[5182]["_id"]]
    assert corpus.byte_order_keys().tolist() == byte_order_keys(np.array(corpus.ids, dtype=object)).tolist()
    monkeypatch.setattr(layout, "_documents", None)  # a second read opens the Arrow file: nothing is parsed
    assert read_corpus(SCIFACT / "corpus.jsonl").path == corpus.path


def test_changed_source_is_read_again_and_duplicates_name_both_lines(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": f"d{i % 5 if i in (6, 9) else i}", "text": f"t{i}"}) + "\n"
                            for i in range(12)))
    with pytest.raises(InputFormatError, match=r"corpus.jsonl:7: document id 'd1' repeats line 2; ids must be unique"):
        read_corpus(path)
    assert not list(tmp_path.glob("*.partial"))
    path.write_text("".join(json.dumps({"_id": f"e{i}", "title": "T", "text": f"u{i}"}) + "\n" for i in range(9000)))
    corpus = read_corpus(path)
    assert len(corpus) == 9000 and corpus.ids[8999] == "e8999" and corpus.view()[4095:4097] == [("T", "u4095"),
                                                                                               ("T", "u4096")]


def test_repeated_ids_are_found_across_spill_buckets_and_colliding_hashes(tmp_path, monkeypatch):
    """The duplicate check spills hashes to buckets; here ten documents a bucket and hashes that collide for
    every two ids of the same length, so only the ids themselves tell a repeat from a collision."""
    from evaluator.datasets import corpus as corpus_module

    monkeypatch.setattr(corpus_module, "BUCKET_ROWS", 10)
    monkeypatch.setattr(corpus_module, "_id_hash", len)
    path = tmp_path / "corpus.jsonl"
    ids = [f"d{i}" for i in range(60)]
    ids[41], ids[57] = "d13", "d7"  # d13 repeats at line 42, d7 at line 58: the first repeat in file order is 41
    path.write_text("".join(json.dumps({"_id": i, "text": "t"}) + "\n" for i in ids))
    with pytest.raises(InputFormatError, match=r"corpus.jsonl:42: document id 'd13' repeats line 14; ids must be unique"):
        read_corpus(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"] and not any(
        p.name.startswith(".duplicates-") for p in corpus_module.corpus_root().iterdir())
    ids[41], ids[57] = "x41", "x57"
    path.write_text("".join(json.dumps({"_id": i, "text": "t"}) + "\n" for i in ids))
    assert read_corpus(path).take_ids(np.array([41, 57])) == ["x41", "x57"]


@pytest.mark.slow
def test_bm25_streamed_in_chunks_equals_the_whole_corpus_at_once(monkeypatch):
    corpus = read_corpus(SCIFACT / "corpus.jsonl")
    monkeypatch.setattr(bm25_module, "CHUNK", 777)  # chunks that end inside the Arrow batches
    monkeypatch.setattr(bm25_module, "_WEIGH_ROWS", 1000)
    model = BM25Model()
    streamed = model.encode_corpus(corpus.view())
    # the counts as the evaluator built them from one list of every text
    reference_model = BM25Model()
    indexer = TermIndexer(reference_model.analyzer, reference_model.vocabulary)
    rows, terms = [], []
    for row, (title, text) in enumerate(corpus.view()):
        ids = [i for i in indexer.ids(f"{title} {text}" if title else text) if i >= 0]
        rows += [row] * len(ids)
        terms += ids
    counts = sp.csr_matrix((np.ones(len(terms), np.float32), (rows, terms)), shape=(len(corpus), len(indexer.vocabulary)))
    counts.sum_duplicates()
    expected = bm25_weights(counts, 0.9, 0.4, lucene_norms=True)
    assert model.vocabulary == reference_model.vocabulary
    assert streamed.indptr.tolist() == expected.indptr.tolist() and streamed.indices.tolist() == expected.indices.tolist()
    assert streamed.data.tobytes() == expected.data.tobytes()


@pytest.mark.slow
def test_bm25_result_on_scifact_equals_the_one_before_arrow_corpora(tmp_path):
    # the golden file stores depth 100 and the judged ranks below it, as results did before whole rankings
    result = evaluate_model("bm25", "beir/scifact", list(DEFAULT_MEASURES), data_dir=SCIFACT, top_k=1000,
                            keep_depth=100)
    write_result(result, tmp_path / "out.json")
    got, expected = json.loads((tmp_path / "out.json").read_text()), json.loads(GOLDEN.read_text())
    for field in ("metrics", "per_query", "run", "score_samples"):  # the columns as stored: bit for bit
        assert got[field] == expected[field], field


@pytest.mark.slow
def test_bm25_index_from_streamed_counts_equals_indexing_the_matrix(tmp_path, monkeypatch):
    from evaluator.index.sparse import SparseIndex

    corpus = read_corpus(SCIFACT / "corpus.jsonl")
    monkeypatch.setattr(bm25_module, "CHUNK", 1000)
    for options in ({}, {"norms": "exact", "k1": 1.2, "b": 0.75}):
        expected = SparseIndex.from_documents(BM25Model(**options).encode_corpus(corpus.view()))
        index = BM25Model(**options).index_corpus(corpus.view(), spill_dir=tmp_path)
        for name in ("indptr", "indices", "data"):
            assert getattr(index.postings, name).tobytes() == getattr(expected.postings, name).tobytes(), name
        assert index.max_weights.tobytes() == expected.max_weights.tobytes()
    assert not list(tmp_path.iterdir())  # the spill file is gone


def test_a_range_is_read_by_path_or_uri_without_the_id_table():
    """What a Ray worker reads of its shard: a local path, or a URI through pyarrow.fs (file:// here)."""
    from evaluator.datasets.corpus import read_documents

    corpus = read_corpus(SCIFACT / "corpus.jsonl")
    expected = corpus.view()[4090:4100]  # across the first batch boundary (4,096)
    assert read_documents(str(corpus.path), 4090, 4100) == expected
    assert read_documents(corpus.path.as_uri(), 4090, 4100) == expected
    assert read_documents(str(corpus.path), 5180, 6000) == corpus.view()[5180:5183]


def test_a_corpus_already_in_arrow_is_opened_in_place(tmp_path):
    """`corpus.arrow` in a BEIR-layout folder (irboard's format) is read where it lies: no conversion, no copy,
    and the same result as its JSON lines; a wrong layout or a repeated id is refused naming the file."""
    import shutil

    import pyarrow as pa

    from evaluator.datasets.corpus import SCHEMA, corpus_root
    from tests.conftest import write_scifact_slice

    jsonl, arrow = tmp_path / "jsonl", tmp_path / "arrow"
    jsonl.mkdir()
    write_scifact_slice(jsonl, num_queries=10, num_docs=80)
    shutil.copytree(jsonl, arrow)
    (arrow / "corpus.jsonl").unlink()
    shutil.copyfile(read_corpus(jsonl / "corpus.jsonl").path, arrow / "corpus.arrow")
    before = sorted(corpus_root().glob("*.arrow"))
    from_jsonl = evaluate_model("bm25", f"local:{jsonl}", list(DEFAULT_MEASURES), top_k=100)
    from_arrow = evaluate_model("bm25", f"local:{arrow}", list(DEFAULT_MEASURES), top_k=100)
    assert sorted(corpus_root().glob("*.arrow")) == before  # nothing converted
    assert from_arrow.values("nDCG@10") == from_jsonl.values("nDCG@10") and from_arrow.rankings() == from_jsonl.rankings()

    def write(table, batch_rows=4096):
        with pa.OSFile(str(arrow / "corpus.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=batch_rows)

    ids = [f"d{i}" for i in range(5000)]
    write(pa.table({"id": ids, "text": ["t"] * 5000}))
    with pytest.raises(InputFormatError, match=r"corpus.arrow: columns \['id', 'text'\] .*string columns id, title, text"):
        read_corpus(arrow / "corpus.arrow")
    table = pa.table([ids, [""] * 5000, ["t"] * 5000], schema=SCHEMA)
    write(table, 1000)
    with pytest.raises(InputFormatError, match=r"corpus.arrow: record batch 0 has 1000 documents, not 4096"):
        read_corpus(arrow / "corpus.arrow")
    ids[4500] = "d17"
    write(pa.table([ids, [""] * 5000, ["t"] * 5000], schema=SCHEMA))
    with pytest.raises(InputFormatError, match=r"corpus.arrow: document id 'd17' at row 4500 repeats row 17; ids must"):
        read_corpus(arrow / "corpus.arrow")
