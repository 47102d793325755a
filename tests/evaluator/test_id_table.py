"""The stored ranking's ids as one Arrow array (`IdTable`): read like the tuple it replaces, checked and written the
same, and no Python string per document while `irboard evaluate --model` builds, checks and writes a result."""

import json
import sys
import tracemalloc
from bisect import bisect_left

import numpy as np
import pyarrow as pa
import pytest

from evaluator import id_table
from evaluator.errors import ResultValidationError
from evaluator.id_table import IdTable
from evaluator.result import Run, build_result, dump_result, parse_result
from tests.evaluator.test_result import valid_data

IDS = ["b", "a10", "a9", "Z", "é", "e", "𝔸", "ｚ", "a", "東京_(都)", "<dbpedia:Zürich>"]


def test_an_id_table_reads_like_the_sorted_tuple(monkeypatch):
    table, rank = IdTable.sorted_from(pa.array(IDS))
    expected = sorted(IDS)  # code point order, as a result stores its ids
    assert list(table) == expected and len(table) == len(IDS) and table == tuple(expected) and tuple(expected) == table
    assert [table[int(r)] for r in rank] == IDS  # each input id's place in the table
    assert table[-1] == expected[-1] and table[2:5] == expected[2:5]
    with pytest.raises(IndexError):
        table[len(IDS)]
    assert table.joined() == "\n".join(expected).encode()
    for chunk in (1, 2, 4):  # the bytes are placed a chunk of ids at a time
        monkeypatch.setattr(id_table, "JOIN_CHUNK", chunk)
        assert table.joined() == "\n".join(expected).encode() and table.take(np.arange(1, 4)).joined() == \
            "\n".join(expected[1:4]).encode()
    assert list(table.take(np.array([1, 4]))) == [expected[1], expected[4]]
    assert [bisect_left(table, x) for x in ("a1", "é", "zz")] == [bisect_left(expected, x) for x in ("a1", "é", "zz")]
    assert table.is_sorted_unique() and not IdTable(pa.array(IDS)).is_sorted_unique()
    assert not IdTable(pa.array(["a", "a"])).is_sorted_unique()
    assert table.longest() == max(map(len, IDS)) and not table.has_empty() and IdTable(pa.array(["", "a"])).has_empty()
    assert IdTable(pa.array([], pa.string())).joined() == b"" and not IdTable(pa.array([], pa.string())).has_empty()


def _with_table(result, ids=None):
    """`result` with its stored ranking's ids as an IdTable (`ids`: other ids in their place)."""
    run = result.run
    table = IdTable(pa.array(list(ids if ids is not None else run.doc_ids), pa.string()))
    return build_result(result.header, result.query_ids, result.per_query,
                        Run(run.depth, table, run.lengths, run.docs, run.scores, run.below), source="r.json")


def test_a_result_with_an_id_table_is_checked_and_written_as_with_the_tuple():
    data = valid_data()
    data["run"]["depth"] = 3
    data["run"]["rankings"] = {"q1": [["Ελλάδα", 3.0], ["d1", 2.0], ["<dbpedia:Zürich>", 2.0]], "q3": [["d1", 1.0]]}
    result = parse_result(data)
    assert isinstance(result.run.doc_ids, tuple)
    assert dump_result(_with_table(result)) == dump_result(result)
    cut = _with_table(result).run.cut(1)
    assert list(cut.doc_ids) == list(result.run.cut(1).doc_ids) == ["d1", "Ελλάδα"]
    for bad in ["a b", "a\nb", "a\x00", "a\u2028b", "", "x" * 501]:
        with pytest.raises(ResultValidationError, match=r"^r.json: run.doc_ids: id"):
            _with_table(result, sorted(["<dbpedia:Zürich>", "d1", bad]))
    with pytest.raises(ResultValidationError, match="run.doc_ids must be sorted and unique"):
        _with_table(result, ["d1", "Ελλάδα", "<dbpedia:Zürich>"])


def _entries_per_query(tmp_path, num_docs: int, num_queries: int, k: int):
    """A corpus file of `num_docs` ids and search output naming mostly distinct documents."""
    from evaluator.datasets.layout import read_corpus
    from evaluator.metrics import Qrels

    path = tmp_path / "corpus.jsonl"
    if not path.exists():  # written once: a second call reads the Arrow file the first one converted it to
        path.write_text("".join(json.dumps({"_id": f"passage-{i:07d}", "text": "t"}) + "\n" for i in range(num_docs)))
    corpus = read_corpus(path)
    rng = np.random.default_rng(7)
    # each row k distinct documents from its own random start (k * 1401 < num_docs)
    positions = (rng.integers(0, num_docs, size=(num_queries, 1)) + np.arange(k) * 1401) % num_docs
    scores = np.sort(rng.random((num_queries, k), dtype=np.float32), axis=1)[:, ::-1].copy()
    query_ids = [f"q{i:05d}" for i in range(num_queries)]
    qrels = Qrels.from_dict({q: {f"passage-{int(positions[i, 3 * k // 4]):07d}": 1} for i, q in enumerate(query_ids)})
    return corpus, positions, scores, query_ids, qrels


def test_the_stored_ranking_holds_no_python_string_per_document(tmp_path):
    """Ranking, assembling, checking and writing a result whose stored top-100 names 40,000 mostly distinct
    documents (as the Ray driver does at 7,000 queries, where they reach 700,000): the Run kept holds a few
    objects, not one string per document (`sys.getallocatedblocks`), and no step makes all the ids as strings at
    once (tracemalloc's peak, which sees Python objects and numpy arrays: a string is at least 49 bytes)."""
    from evaluator.assemble import RunMetadata, assemble_result
    from evaluator.metrics import parse_measures
    from evaluator.pipeline import ranked_from_topk

    num_queries, depth, k = 400, 100, 101
    corpus, positions, scores, query_ids, qrels = _entries_per_query(tmp_path, 150_000, num_queries, k)
    on_demand = corpus.ids_on_demand([d for judged in qrels.judgments for d in judged])
    measures = parse_measures("nDCG@10,R@100")
    meta = RunMetadata(model={"id": "org/m", "type": "lexical"}, dataset_id="local/x", num_docs=len(corpus), top_k=k,
                       command="irboard evaluate")
    entries = num_queries * depth
    blocks = sys.getallocatedblocks()
    tracemalloc.start()
    try:
        ranked, top, _ = ranked_from_topk(scores, positions, query_ids, on_demand, qrels, False, depth=depth, top_k=k,
                                          block=50)
        kept, distinct = sys.getallocatedblocks() - blocks, len(top.doc_ids)
        held, ranking_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        text = dump_result(assemble_result(ranked, qrels, measures, top, meta))
        writing_peak = tracemalloc.get_traced_memory()[1] - held
    finally:
        tracemalloc.stop()
    assert distinct > 0.8 * entries and len(text) > 0
    assert kept < distinct / 50, (kept, distinct)  # a string per id: kept > distinct
    # ranking: the stored arrays (docs, scores: 16 bytes an entry) and their scratch (a few int64 arrays); writing:
    # the columns' bytes and the text (about 10 bytes an entry). Strings made for the ids would add over 57 each.
    assert ranking_peak < 150 * entries, (ranking_peak, entries)
    assert writing_peak < 64 * entries, (writing_peak, entries)


def test_ranking_and_writing_from_a_corpus_file_import_no_pandas(tmp_path):
    """What the Ray driver does with a corpus (find the judged ids, rank with ids read on demand, build, check and
    write the result) makes its Arrow arrays from buffers: `pa.array` and `to_numpy` would import pandas (28 MB)."""
    import subprocess

    _entries_per_query(tmp_path, 3000, 20, 2)  # the corpus file converted here: the script reads it as converted
    script = f"""
import sys
from pathlib import Path
import numpy as np
from tests.evaluator.test_id_table import _entries_per_query
from evaluator.assemble import RunMetadata, assemble_result
from evaluator.metrics import parse_measures
from evaluator.pipeline import ranked_from_topk
from evaluator.result import dump_result
corpus, positions, scores, query_ids, qrels = _entries_per_query(Path({str(tmp_path)!r}), 3000, 20, 2)
assert "pandas" not in sys.modules, "imported before the work began"
on_demand = corpus.ids_on_demand([d for judged in qrels.judgments for d in judged])
ranked, top, below = ranked_from_topk(scores, positions, query_ids, on_demand, qrels, False, True, depth=1, top_k=2)
meta = RunMetadata(model={{"id": "org/m", "type": "lexical"}}, dataset_id="local/x", num_docs=3000, top_k=2)
dump_result(assemble_result(ranked, qrels, parse_measures("nDCG@2,P@1"), top, meta, below=below))
print("pandas" in sys.modules)
"""
    from tests.evaluator.test_result import ROOT

    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_converting_a_corpus_imports_no_pandas_and_writes_what_pa_array_would(tmp_path):
    """A first run converts the corpus to Arrow in the process that loads it (a Ray driver too): its string columns
    are made from buffers, since `pa.array` would import pandas (about 30 MB kept to the process's end). The file
    holds what `pa.array` would have made of the same documents."""
    import subprocess

    from tests.evaluator.test_result import ROOT

    docs = [{"_id": doc_id, "title": "" if i % 3 else f"title {i} ☃", "text": f"text of {doc_id} " * (i % 5)}
            for i, doc_id in enumerate(IDS)]
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "text"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\t{IDS[0]}\t1\n")
    script = f"""
import sys
from evaluator.datasets import load_dataset
dataset = load_dataset("local:{folder}", cache_dir={str(tmp_path / "cache")!r})
print("pandas" in sys.modules, dataset.corpus.path)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    imported, path = done.stdout.split()
    assert imported == "False"
    with pa.memory_map(path) as source:
        table = pa.ipc.open_file(source).read_all()
    for i, key in enumerate(("_id", "title", "text")):
        assert table.column(i).combine_chunks().equals(pa.array([d[key] for d in docs], pa.string()))


def test_a_batch_of_more_text_than_int32_offsets_hold_is_refused(monkeypatch):
    """Arrow string arrays offset their bytes with int32: a batch past that is an error, not wrapped offsets."""
    assert id_table.string_array(["ab", "c"]).to_pylist() == ["ab", "c"]
    monkeypatch.setattr(id_table, "MAX_STRING_BYTES", 2)
    with pytest.raises(OverflowError, match="3 bytes of text in one batch of 2"):
        id_table.string_array(["ab", "c"])
