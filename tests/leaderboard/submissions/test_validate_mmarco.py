"""An mMARCO result (all 6,980 MS MARCO dev-small queries) verifies against qrels in BEIR layout under
`--data-dir DIR` (DIR/mmarco/en/qrels/dev.tsv), and against the official judgments without it."""

import pytest

from evaluator.result import read_result, result_path
from evaluator.trec import read_qrels
from leaderboard.cli import main
from leaderboard.submissions.validate import validate_paths
from tests.conftest import OFFICIAL

MSMARCO_QRELS = OFFICIAL / "qrels" / "qrels.msmarco-passage.dev-subset.txt"


@pytest.fixture(scope="module")
def mmarco_result(tmp_path_factory):
    """A shallow synthetic run over every official query: a judged passage first for two queries in three,
    then two unjudged ones; evaluated as mmarco/en with the official judgments (from IRBOARD_MIRROR)."""
    folder = tmp_path_factory.mktemp("mmarco")
    qrels = read_qrels(MSMARCO_QRELS)
    lines = []
    for i, (query_id, judged) in enumerate(zip(qrels.query_ids, qrels.judgments, strict=True)):
        docs = ([min(judged)] if i % 3 else []) + [f"9{i}01", f"9{i}02"]
        lines += [f"{query_id} Q0 {doc} {rank} {10 - rank} synthetic\n" for rank, doc in enumerate(docs, 1)]
    (folder / "run.txt").write_text("".join(lines))
    results = folder / "results"
    assert main(["evaluate", "--run", str(folder / "run.txt"), "--model-id", "org/model", "--dataset-id",
                 "mmarco/en", "--results-dir", str(results), "--quiet"]) == 0
    return results, qrels


def _beir_layout(root, qrels, changed: bool = False):
    """`root/mmarco/en/qrels/dev.tsv` from `qrels`; `changed`: the second query judged differently."""
    path = root / "mmarco" / "en" / "qrels" / "dev.tsv"
    path.parent.mkdir(parents=True)
    rows = [f"{q}\t{d}\t{label}\n" for i, (q, judged) in enumerate(zip(qrels.query_ids, qrels.judgments, strict=True))
            for d, label in judged.items() if not (changed and i == 1)]
    rows += [f"{qrels.query_ids[1]}\tnot-retrieved\t1\n"] if changed else []
    path.write_text("query-id\tcorpus-id\tscore\n" + "".join(rows))
    return root


def test_data_dir_in_beir_layout_verifies_an_mmarco_result(mmarco_result, tmp_path, monkeypatch, capsys):
    results, qrels = mmarco_result
    path = result_path("org/model", "mmarco/en", results)
    assert len(read_result(path).query_ids) == 6980
    # no official judgments to fall back on: what verifies is the folder's copy
    monkeypatch.setenv("IRBOARD_MIRROR", str(tmp_path / "empty-mirror"))
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "empty-cache"))
    data = _beir_layout(tmp_path / "data", qrels)
    assert main(["validate", "--results", str(results), "--data-dir", str(data)]) == 0
    assert "1 result file(s) valid, 1 verified" in capsys.readouterr().out
    report = validate_paths([], results, data_root=_beir_layout(tmp_path / "changed", qrels, changed=True))
    assert len(report.problems) == 1 and "qrels_sha256 does not match" in report.problems[0]  # that copy was read
    assert report.verified == set()


def test_mmarco_result_verifies_against_the_official_judgments(mmarco_result):
    results, _ = mmarco_result
    report = validate_paths([], results)  # official judgments, here from IRBOARD_MIRROR
    assert report.problems == [] and len(report.verified) == 1
