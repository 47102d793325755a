"""Reproduction: a result's declared artifact run again on real data gives its ranking, and a tampered ranking does not
(docs/reproduction.md). The runs are real: BM25 on BEIR SciFact, SPLADE-tiny and all-MiniLM-L6-v2 on a slice of
Cranfield (its first queries, their judged documents and others up to 300, as a local BEIR-layout folder)."""

import json
from pathlib import Path

import pytest

from evaluator.metrics import parse_measures
from evaluator.pipeline import evaluate_model
from evaluator.result import expand_result, parse_result, read_result, result_path, write_atomic, write_result
from leaderboard.cli import main
from leaderboard.submissions.reproduce import (
    RELATIVE_TOLERANCE,
    ReproductionError,
    compare_runs,
    reproduce_result,
)
from leaderboard.submissions.reproductions import read_record, record_path, reproduced_records, write_record
from tests.conftest import SCIFACT, SHARED

CRANFIELD = SHARED / "data" / "classic" / "cranfield"
MEASURES = parse_measures(["nDCG@10", "R@100", "AP"])  # AP: the result keeps judged documents below the depth


@pytest.fixture(scope="module")
def cranfield_slice(tmp_path_factory) -> tuple[str, Path]:
    """(dataset id, folder): Cranfield's first 30 queries, their judged documents, then other documents in corpus
    order up to 300 in all, named for this process as `--data-dir local:DIR` names a folder. A neural model encodes
    this in a fifth of the time the whole collection takes, through the same code."""
    from evaluator.datasets.declared import declare_local

    folder = tmp_path_factory.mktemp("data") / "cranfield-slice"
    (folder / "qrels").mkdir(parents=True)
    header, *rows = (CRANFIELD / "qrels" / "test.tsv").read_text().splitlines()
    queries = (CRANFIELD / "queries.jsonl").read_text().splitlines()
    keep = {json.loads(line)["_id"] for line in queries[:30]}
    rows = [row for row in rows if row.split("\t")[0] in keep]
    judged = {row.split("\t")[1] for row in rows}
    corpus = (CRANFIELD / "corpus.jsonl").read_text().splitlines()
    docs = [line for line in corpus if json.loads(line)["_id"] in judged]
    docs += [line for line in corpus if json.loads(line)["_id"] not in judged][:300 - len(docs)]
    (folder / "corpus.jsonl").write_text("".join(line + "\n" for line in docs))
    (folder / "queries.jsonl").write_text("".join(line + "\n" for line in queries if json.loads(line)["_id"] in keep))
    (folder / "qrels" / "test.tsv").write_text("\n".join([header, *rows]) + "\n")
    return declare_local(folder), folder


@pytest.fixture(scope="module")
def bm25_scifact(tmp_path_factory) -> Path:
    """BM25 on the whole of BEIR SciFact, as `irboard evaluate --model bm25 --stored-depth 100` writes it (the ranks
    below 100 as claims, which the reproduction checks too)."""
    root = tmp_path_factory.mktemp("results")
    result = evaluate_model("bm25", "beir/scifact", MEASURES, data_dir=SCIFACT, keep_depth=100)
    return write_result(result, result_path(result.model.id, result.dataset.id, root))


def _tampered(source: Path, target: Path, edit) -> Path:
    data = expand_result(read_result(source))
    edit(data)
    write_result(parse_result(data), target, force=True)
    return target


def _swap_first_two(data: dict) -> None:
    """The documents at ranks 1 and 2 of the first query change places, scores staying in place (still in order)."""
    ranking = next(r for r in data["run"]["rankings"].values() if r[0][1] > r[1][1])
    ranking[0][0], ranking[1][0] = ranking[1][0], ranking[0][0]


def _lift_a_judged_document(data: dict) -> None:
    """A judged document below the stored depth is claimed one rank higher than the run put it."""
    entries = next(e for e in data["run"]["below"]["judged"].values() if e[0][0] > 101)
    entries[0][0] -= 1


def test_evaluate_declares_the_artifact_it_ran(bm25_scifact):
    header = json.loads(bm25_scifact.read_text())["model"]
    assert header["artifact"] == {"spec": "bm25", "revision": ""}


def test_bm25_on_scifact_reproduces_and_is_recorded(bm25_scifact, tmp_path):
    outcome = reproduce_result(bm25_scifact, data_dir=SCIFACT)
    assert outcome.reproduced, outcome.difference
    assert (outcome.queries, outcome.depth, outcome.spec) == (300, 100, "bm25")
    assert outcome.max_score_difference <= RELATIVE_TOLERANCE
    where = write_record(outcome, tmp_path / "reproductions", RELATIVE_TOLERANCE, "ab" * 20)
    assert where == record_path(tmp_path / "reproductions", "bm25", "beir/scifact")
    record = read_record(where)
    assert record.result_sha256 == outcome.result_sha256 and record.artifact.spec == "bm25"
    assert reproduced_records([(str(bm25_scifact), "bm25", "beir/scifact")], tmp_path / "reproductions", []) == {
        str(bm25_scifact): record}


@pytest.mark.parametrize(("edit", "said"), [
    (_swap_first_two, "rank 1: the result has"),
    # one score moved by ten times the tolerance, the order unchanged
    (lambda data: next(iter(data["run"]["rankings"].values()))[-1].__setitem__(
        1, next(iter(data["run"]["rankings"].values()))[-1][1] * (1 - 10 * RELATIVE_TOLERANCE)),
     "beyond the relative tolerance"),
    (_lift_a_judged_document, "below the depth"),
    (lambda data: data["model"].update(artifact={"spec": "bm25", "revision": "forged"}), "loads revision ''"),
    (lambda data: data["model"].update(artifact={"spec": "bm25:k1=1.2", "revision": ""}), "runs model 'bm25-k1-1.2'"),
])
def test_a_tampered_result_is_not_reproduced(bm25_scifact, tmp_path, edit, said):
    tampered = _tampered(bm25_scifact, tmp_path / "bm25" / "beir__scifact.json", edit)
    outcome = reproduce_result(tampered, data_dir=SCIFACT)
    assert not outcome.reproduced and said in outcome.difference, outcome.difference
    with pytest.raises(Exception, match="not reproduced"):
        write_record(outcome, tmp_path / "reproductions", RELATIVE_TOLERANCE)
    assert not (tmp_path / "reproductions").exists()


def test_the_command_records_only_what_it_reproduced(bm25_scifact, tmp_path, capsys):
    tampered = _tampered(bm25_scifact, tmp_path / "other" / "beir__scifact.json", _swap_first_two)
    no_artifact = _tampered(bm25_scifact, tmp_path / "bare" / "beir__scifact.json",
                            lambda data: data["model"].pop("artifact"))
    ledger = tmp_path / "ledger"
    code = main(["reproduce", str(bm25_scifact), str(tampered), str(no_artifact), "--data-dir", f"beir/scifact={SCIFACT}",
                 "--ledger", str(ledger), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 4 and lines[3] == f"{bm25_scifact}: recorded in {ledger / 'bm25' / 'beir__scifact.json'}"
    assert lines[0].startswith(f"{bm25_scifact}: reproduced by bm25 (300 queries to depth 100")
    assert lines[1].startswith(f"{tampered}: not reproduced by bm25: query ") and " rank 1: " in lines[1]
    assert lines[2].startswith(f"{no_artifact}: model.artifact: no artifact declared")
    assert err.strip() == "error: 2 of 3 result(s) not reproduced; each line above names the first difference"
    assert [p.relative_to(ledger).as_posix() for p in ledger.rglob("*.json")] == ["bm25/beir__scifact.json"]
    # over the budget: listed as skipped, exit 0, nothing run
    assert main(["reproduce", str(tampered), "--max-docs", "5000", "--quiet"]) == 0
    assert "skipped: 5183 documents, over --max-docs 5000" in capsys.readouterr().out


def test_a_record_names_the_bytes_of_its_result(bm25_scifact, tmp_path):
    """A record stands for exactly the bytes it names: one changed byte in the result, or a record moved to another
    result's place, counts for nothing; a malformed record is a problem naming the file."""
    ledger = tmp_path / "reproductions"
    outcome = reproduce_result(bm25_scifact, data_dir=SCIFACT)
    where = write_record(outcome, ledger, RELATIVE_TOLERANCE)
    changed = tmp_path / "changed.json"
    changed.write_bytes(bm25_scifact.read_bytes().replace(b'"license": ""', b'"license": "x"'))
    problems = []
    assert reproduced_records([(str(changed), "bm25", "beir/scifact")], ledger, problems) == {}
    moved = record_path(ledger, "bm25-k1-1.2", "beir/scifact")
    moved.parent.mkdir(parents=True)
    moved.write_text(where.read_text())
    assert reproduced_records([(str(bm25_scifact), "bm25-k1-1.2", "beir/scifact")], ledger, problems) == {}
    assert len(problems) == 1 and "whose record lies at" in problems[0]
    write_atomic(where, where.read_text().replace('"irboard-reproduction/1"', '"<script>"'))
    problems = []
    assert reproduced_records([(str(bm25_scifact), "bm25", "beir/scifact")], ledger, problems) == {}
    assert problems == [f"{where}: not a reproduction record (format: String should match pattern "
                        "'^irboard-reproduction/1$'); records are written by irboard reproduce --ledger"]


def test_a_split_or_run_file_result_says_why_it_cannot_be_reproduced(bm25_scifact, tmp_path):
    bare = _tampered(bm25_scifact, tmp_path / "x.json", lambda data: data["model"].pop("artifact"))
    with pytest.raises(ReproductionError, match="no artifact declared"):
        reproduce_result(bare, data_dir=SCIFACT)
    no_run = _tampered(bm25_scifact, tmp_path / "y.json", lambda data: data.pop("run"))
    with pytest.raises(ReproductionError, match="no stored ranking"):
        reproduce_result(no_run, data_dir=SCIFACT)


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "declared", "revision"), [
    # documents cut at 64 word pieces (an option the declared spec keeps): a third of the encoding, the same code
    (f"splade:{SHARED / 'models' / 'splade-tiny'},threads=2,doc_max_length=64",
     f"splade:{SHARED / 'models' / 'splade-tiny'},doc_max_length=64", "sha256:"),
    ("dense:all-MiniLM-L6-v2,batch_size=16,max_length=64", "dense:all-MiniLM-L6-v2,max_length=64,dtype=float32",
     ""),  # the dtype it ran in
])
def test_neural_models_on_cranfield_reproduce(cranfield_slice, tmp_path, spec, declared, revision):
    """SPLADE-tiny (../shared/models) and the packaged all-MiniLM-L6-v2, each run twice on the real Cranfield
    slice; the second run encodes the corpus again (no encoding cache) and gives the same ranking."""
    dataset_id, folder = cranfield_slice
    result = evaluate_model(spec, dataset_id, MEASURES, data_dir=folder, top_k=1000)
    artifact = result.model.artifact
    assert artifact.revision == result.model.revision and artifact.revision.startswith(revision)
    assert artifact.revision and artifact.spec == declared  # the machine's options left out
    path = write_result(result, result_path(result.model.id, result.dataset.id, tmp_path))
    outcome = reproduce_result(path, data_dir=folder, batch_size=16)
    assert outcome.reproduced, outcome.difference
    assert outcome.max_score_difference <= RELATIVE_TOLERANCE
    # the stored ranking with two documents swapped differs from the same re-run (compared without running again)
    fresh = evaluate_model(outcome.spec, dataset_id, MEASURES, data_dir=folder, reuse_encodings=True)
    assert compare_runs(read_result(path), fresh)[0] == ""
    tampered = read_result(_tampered(path, tmp_path / "tampered.json", _swap_first_two))
    assert " rank 1: the result has " in compare_runs(tampered, fresh)[0]



def test_documents_tied_within_the_tolerance_may_change_places(bm25_scifact, tmp_path):
    """A re-run whose last bits differ may order two documents tied within the tolerance the other way (dense
    encoding on another thread count does): still the same ranking. Moved apart by more, it is not."""
    def near_tie(data: dict) -> None:  # rank 2 scores 1e-5 (relative) below rank 1: within the tolerance
        ranking = next(r for r in data["run"]["rankings"].values() if r[0][1] > r[1][1])
        ranking[1][1] = ranking[0][1] * (1 - 1e-5)

    def near_tie_swapped(data: dict) -> None:
        near_tie(data)
        ranking = next(r for r in data["run"]["rankings"].values() if r[0][1] > r[1][1])
        ranking[0][0], ranking[1][0] = ranking[1][0], ranking[0][0]

    tied = read_result(_tampered(bm25_scifact, tmp_path / "tied.json", near_tie))
    swapped = read_result(_tampered(bm25_scifact, tmp_path / "swapped.json", near_tie_swapped))
    assert compare_runs(tied, swapped)[0] == ""
    moved = read_result(_tampered(bm25_scifact, tmp_path / "moved.json", _swap_first_two))
    assert " rank 1: the result has " in compare_runs(read_result(bm25_scifact), moved)[0]
