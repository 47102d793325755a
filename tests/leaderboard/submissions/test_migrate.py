"""`irboard migrate`: files of schema versions 1 and 2 become version 3 without losing anything."""

import json

import numpy as np

from evaluator.result import SCHEMA_VERSION, expand_result, parse_result_text, read_result, result_path
from evaluator.score_samples import LEGACY_LEVELS, collect_score_samples
from leaderboard.cli import main
from tests.conftest import make_scifact_result


def _version_2_file(root, with_samples: bool):
    """A result in the expanded form of version 2, with 16-bit (`irboard-score-samples/1`) samples."""
    from evaluator.columns import encode_array
    from evaluator.score_samples import FORMAT_V1

    result = parse_result_text(make_scifact_result("org/model", 0))
    data = expand_result(result)
    data["schema_version"] = 2
    for key in ("git_commit", "versions"):
        data["provenance"].pop(key)
    data["dataset"].pop("revision")
    data["score_samples"] = None
    if with_samples:
        samples = collect_score_samples(list(result.query_ids), [f"d{i}" for i in range(5183)],
                                        np.random.default_rng(0).normal(size=(300, 5183)) - 10, {}, n_samples=50)
        stored = {}  # version 2 stored one object per query, with 16-bit codes
        for query_id in result.query_ids:
            q = samples.queries[query_id]
            lo, hi = float(q.nonrelevant[0]), float(q.nonrelevant[-1])
            codes = np.rint((q.nonrelevant - lo) / (hi - lo) * LEGACY_LEVELS).astype(np.int64)
            stored[query_id] = {"n_relevant": q.n_relevant, "n_nonrelevant": q.n_nonrelevant,
                                "relevant": q.relevant.tolist(),
                                "nonrelevant": {"count": int(codes.size), "lo": lo, "hi": hi,
                                                "data": encode_array(np.diff(codes, prepend=0), "<u2")}}
        data["score_samples"] = {"format": FORMAT_V1, "num_docs": 5183, "relevance_level": 1, "seed": 0,
                                 "samples_requested": 50, "samples_per_query": 50, "queries": stored}
    path = result_path("org/model", "beir/scifact", root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_migrate_rewrites_version_2_losslessly_and_only_once(tmp_path, capsys):
    path = _version_2_file(tmp_path, with_samples=True)
    before = read_result(path)
    assert before.source_version == 2 and before.score_samples.levels == LEGACY_LEVELS
    assert main(["migrate", "--results", str(tmp_path)]) == 0
    after = read_result(path)
    assert after.source_version == SCHEMA_VERSION and json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION
    means = {name: round(value, 10) for name, value in before.metrics.items()}  # as every writer stores them
    assert after.header == before.header.model_copy(update={"metrics": means})
    assert after.query_ids == before.query_ids
    assert all((after.per_query[m] == before.per_query[m]).all() for m in before.per_query)
    assert after.rankings() == before.rankings()
    assert after.score_samples.levels == LEGACY_LEVELS  # 16-bit samples stay 16-bit
    for query_id, q in before.score_samples.queries.items():
        np.testing.assert_array_equal(after.score_samples.queries[query_id].nonrelevant, q.nonrelevant)
        np.testing.assert_array_equal(after.score_samples.queries[query_id].relevant, q.relevant)
    text = path.read_text()
    capsys.readouterr()
    assert main(["migrate", "--results", str(tmp_path)]) == 0  # already version 3: left alone
    assert path.read_text() == text and "0 of 1 result file(s) rewritten" in capsys.readouterr().out


def test_a_file_that_does_not_validate_is_one_line_and_left_untouched(tmp_path, capsys):
    path = _version_2_file(tmp_path, with_samples=False)
    broken = json.loads(path.read_text())
    broken["metrics"]["nDCG@10"] += 0.5  # no longer the mean of its per-query values
    path.write_text(json.dumps(broken))
    text = path.read_text()
    assert main(["migrate", "--results", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "mean of its per_query values" in err and "Traceback" not in err
    assert path.read_text() == text
