"""Loading BEIR-layout folders: the shared real data, local:<dir>, and bad data."""

import csv
import dataclasses
import gzip
import json
import shutil
from pathlib import Path

import pytest

from evaluator.datasets import get_spec, load_dataset, query_ids_sha256
from evaluator.errors import DatasetLoadError, InputFormatError

from .conftest import SHARED_DATA, TINY_DOCS, TINY_QRELS, write_beir_folder

SCIFACT = SHARED_DATA / "beir" / "scifact"
CLASSIC = ["cranfield", "cisi", "cacm"]


def read_with_stdlib(folder: Path, split: str = "test"):
    """Oracle: the folder read with json and csv, BEIR's way (queries restricted to the qrels)."""
    corpus = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            corpus[obj["_id"]] = (obj.get("title", ""), obj["text"])
    qrels = {}
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(reader)
        for query_id, doc_id, score in reader:
            qrels.setdefault(query_id, {})[doc_id] = int(score)
    with open(folder / "queries.jsonl", encoding="utf-8") as f:
        queries = {obj["_id"]: obj["text"] for obj in map(json.loads, f) if obj["_id"] in qrels}
    return corpus, queries, qrels


def test_scifact_matches_the_official_counts_and_query_fingerprint():
    dataset = load_dataset("beir/scifact", data_dir=SCIFACT)
    spec = get_spec("beir/scifact")
    assert dataset.num_docs == 5183
    assert dataset.num_queries == 300
    assert sum(len(judged) for judged in dataset.qrels.values()) == 339
    assert query_ids_sha256(dataset.queries) == spec.query_ids_sha256
    assert dataset.spec is spec


@pytest.mark.slow
def test_scifact_equals_a_plain_json_and_csv_reading_in_file_order():
    dataset = load_dataset("beir/scifact", data_dir=SCIFACT)
    corpus, queries, qrels = read_with_stdlib(SCIFACT)
    assert list(dataset.corpus) == list(corpus)  # document order = file order
    assert dict(dataset.corpus.items()) == corpus
    assert dataset.queries == queries
    assert dataset.qrels == qrels
    first = json.loads(SCIFACT.joinpath("corpus.jsonl").open(encoding="utf-8").readline())
    assert dataset.corpus.ids[0] == first["_id"]
    assert dataset.corpus[first["_id"]] == (first["title"], first["text"])


def test_scifact_train_split_has_its_own_queries_and_no_official_fingerprint():
    dataset = load_dataset("beir/scifact", data_dir=SCIFACT, split="train")
    _, queries, qrels = read_with_stdlib(SCIFACT, split="train")
    assert dataset.spec.split == "train"
    assert dataset.spec.num_queries is None and dataset.spec.query_ids_sha256 is None
    assert dataset.queries == queries and dataset.qrels == qrels


@pytest.mark.parametrize("name", CLASSIC)
def test_classic_collections_load_under_their_registered_ids(name):
    folder = SHARED_DATA / "classic" / name
    dataset = load_dataset(f"classic/{name}", data_dir=folder)
    corpus, queries, qrels = read_with_stdlib(folder)
    spec = get_spec(f"classic/{name}")
    assert (dataset.num_docs, dataset.num_queries) == (spec.num_docs, spec.num_queries)
    assert query_ids_sha256(dataset.queries) == spec.query_ids_sha256
    assert dataset.queries == queries and dataset.qrels == qrels
    assert dict(dataset.corpus.items()) == corpus


def test_classic_without_a_copy_says_where_to_put_one(tmp_path):
    with pytest.raises(DatasetLoadError, match=r"classic/cacm: no copy found at .*--data-dir"):
        load_dataset("classic/cacm", cache_dir=tmp_path)


def test_local_id_reads_the_folder_under_a_slug_id():
    folder = SHARED_DATA / "classic" / "cranfield"
    dataset = load_dataset(f"local:{folder}")
    assert dataset.spec.id == "local/cranfield"
    assert dataset.spec.group == "Local" and dataset.spec.split == "test"
    assert dataset.qrels == load_dataset("classic/cranfield", data_dir=folder).qrels


def test_local_id_slugs_awkward_folder_names(tmp_path, tiny_folder):
    awkward = tiny_folder.rename(tmp_path / "My Data (v2)")
    assert get_spec(f"local:{awkward}").id == "local/my-data-v2"


def test_local_folder_with_one_qrels_split_uses_it(tmp_path):
    folder = write_beir_folder(tmp_path / "devonly", TINY_DOCS, [("q1", "x")], [("q1", "d1", 1)], split="dev")
    dataset = load_dataset(f"local:{folder}")
    assert dataset.spec.split == "dev"
    assert dataset.qrels == {"q1": {"d1": 1}}


def test_tiny_folder_keeps_only_judged_queries_and_zero_grades(tiny_folder):
    dataset = load_dataset(f"local:{tiny_folder}")
    assert dataset.queries == {"q1": "purring animals", "q2": "barking"}  # q3 has no qrels
    assert dataset.qrels == {"q1": {"d1": 2, "d3": 0}, "q2": {"d2": 1}}
    assert dataset.corpus["d2"] == ("", "dogs bark")


def test_gzipped_corpus_reads_the_same_as_plain(tmp_path):
    folder = tmp_path / "cacm"
    shutil.copytree(SHARED_DATA / "classic" / "cacm", folder)
    with open(folder / "corpus.jsonl", "rb") as src, gzip.open(folder / "corpus.jsonl.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    (folder / "corpus.jsonl").unlink()
    gzipped = load_dataset("classic/cacm", data_dir=folder)
    plain = load_dataset("classic/cacm", data_dir=SHARED_DATA / "classic" / "cacm")
    assert list(gzipped.corpus.items()) == list(plain.corpus.items())
    assert gzipped.qrels == plain.qrels


def test_nfcorpus_without_corpus_names_the_missing_file():
    folder = SHARED_DATA / "beir" / "nfcorpus"
    with pytest.raises(
        DatasetLoadError, match=r"nfcorpus/corpus\.jsonl: file not found \(nor corpus\.jsonl\.gz or corpus\.arrow\)"
    ):
        load_dataset("beir/nfcorpus", data_dir=folder)


def test_missing_queries_file_is_named(tiny_folder):
    (tiny_folder / "queries.jsonl").unlink()
    with pytest.raises(DatasetLoadError, match=r"tiny/queries\.jsonl: file not found"):
        load_dataset(f"local:{tiny_folder}")


def test_missing_split_lists_the_splits_present(tiny_folder):
    with pytest.raises(DatasetLoadError, match=r"qrels/dev\.tsv: file not found .*splits with qrels: test"):
        load_dataset(f"local:{tiny_folder}", split="dev")


def test_missing_folder_is_named(tmp_path):
    with pytest.raises(DatasetLoadError, match="does not exist"):
        load_dataset(f"local:{tmp_path / 'absent'}")


def test_malformed_json_line_is_reported_with_its_line_number(tiny_folder):
    lines = (tiny_folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    lines[1] = '{"_id": "d2", "text": "dogs bark"'  # line 2 loses its closing brace
    (tiny_folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"tiny/corpus\.jsonl:2: malformed JSON"):
        load_dataset(f"local:{tiny_folder}")


def test_record_without_text_is_reported_with_its_line_number(tiny_folder):
    with open(tiny_folder / "queries.jsonl", "a", encoding="utf-8") as f:
        f.write('{"_id": "q9"}\n')
    with pytest.raises(InputFormatError, match=r"queries\.jsonl:4: missing field 'text'"):
        load_dataset(f"local:{tiny_folder}")


def test_qrels_naming_an_unknown_document_give_file_and_line(tiny_folder):
    with open(tiny_folder / "qrels" / "test.tsv", "a", encoding="utf-8") as f:
        f.write("q2\tnot-a-doc\t1\n")  # line 5: header + 3 rows before it
    with pytest.raises(
        InputFormatError, match=r"qrels/test\.tsv:5: document 'not-a-doc' is not in corpus\.jsonl"
    ):
        load_dataset(f"local:{tiny_folder}")


def test_qrels_naming_an_unknown_query_give_file_and_line(tiny_folder):
    with open(tiny_folder / "qrels" / "test.tsv", "a", encoding="utf-8") as f:
        f.write("q404\td1\t1\n")
    with pytest.raises(InputFormatError, match=r"qrels/test\.tsv:5: query 'q404' is not in queries\.jsonl"):
        load_dataset(f"local:{tiny_folder}")


def test_qrels_with_a_bad_score_or_field_count_give_file_and_line(tiny_folder):
    qrels = tiny_folder / "qrels" / "test.tsv"
    original = qrels.read_text(encoding="utf-8")
    qrels.write_text(original + "q2\td1\thigh\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"test\.tsv:5: score 'high' is not an integer"):
        load_dataset(f"local:{tiny_folder}")
    qrels.write_text(original + "q2 d1 1\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"test\.tsv:5: expected 3 tab-separated fields"):
        load_dataset(f"local:{tiny_folder}")


def test_conflicting_judgments_of_one_pair_are_refused(tiny_folder):
    with open(tiny_folder / "qrels" / "test.tsv", "a", encoding="utf-8") as f:
        f.write("q1\td1\t0\n")
    with pytest.raises(InputFormatError, match=r"test\.tsv:5: \(q1, d1\) is judged 0 here and 2 on line 2"):
        load_dataset(f"local:{tiny_folder}")


def test_repeated_document_id_names_both_lines(tiny_folder):
    with open(tiny_folder / "corpus.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"_id": "d1", "title": "", "text": "again"}) + "\n")
    with pytest.raises(InputFormatError, match=r"corpus\.jsonl:4: document id 'd1' repeats line 1"):
        load_dataset(f"local:{tiny_folder}")


def test_qrels_without_header_and_with_crlf_endings_are_read(tiny_folder):
    rows = "".join(f"{q}\t{d}\t{s}\r\n" for q, d, s in TINY_QRELS)
    (tiny_folder / "qrels" / "test.tsv").write_text(rows, encoding="utf-8", newline="")
    assert load_dataset(f"local:{tiny_folder}").qrels == {"q1": {"d1": 2, "d3": 0}, "q2": {"d2": 1}}


def test_a_modified_copy_is_refused_under_the_official_id(tmp_path):
    folder = tmp_path / "scifact"
    shutil.copytree(SCIFACT, folder)
    qrels = folder / "qrels" / "test.tsv"
    lines = qrels.read_text(encoding="utf-8").splitlines(keepends=True)
    first_query = lines[1].split("\t")[0]
    qrels.write_text("".join(line for line in lines if line.split("\t")[0] != first_query), encoding="utf-8")
    with pytest.raises(DatasetLoadError, match=r"has 299 queries with qrels, expected 300 for beir/scifact"):
        load_dataset("beir/scifact", data_dir=folder)
    assert load_dataset(f"local:{folder}").num_queries == 299  # fine under its own id


def test_arguana_keeps_qrels_of_documents_missing_from_its_corpus(tiny_folder):
    with open(tiny_folder / "qrels" / "test.tsv", "a", encoding="utf-8") as f:
        f.write("q2\tmissing-doc\t1\n")
    spec = dataclasses.replace(get_spec("beir/arguana"), num_queries=None, num_docs=None)
    dataset = load_dataset(spec, data_dir=tiny_folder)
    assert dataset.qrels["q2"] == {"d2": 1, "missing-doc": 1}


def test_a_copy_with_other_query_ids_is_refused_by_the_fingerprint(tmp_path):
    folder = tmp_path / "scifact"
    shutil.copytree(SCIFACT, folder)
    qrels = folder / "qrels" / "test.tsv"
    lines = qrels.read_text(encoding="utf-8").splitlines(keepends=True)
    renamed = lines[1].split("\t")[0]  # same count, one query id changed in qrels and queries
    qrels.write_text(
        "".join(f"x{line}" if line.split("\t")[0] == renamed else line for line in lines), encoding="utf-8"
    )
    with open(folder / "queries.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"_id": f"x{renamed}", "text": "renamed query"}) + "\n")
    with pytest.raises(
        DatasetLoadError, match=r"query ids of split 'test' differ from those of beir/scifact"
    ):
        load_dataset("beir/scifact", data_dir=folder)
