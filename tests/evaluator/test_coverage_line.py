"""The evaluate command's coverage line writes every count the same way: "median 1,000" beside "max 1,000"."""

from types import SimpleNamespace

import pytest

from evaluator.cli import report_coverage


@pytest.mark.parametrize(("median", "shown"), [(1000.0, "1,000"), (12500.5, "12,500.5"), (7.0, "7")])
def test_the_median_depth_is_written_like_min_and_max(capsys, median, shown):
    coverage = SimpleNamespace(judged_queries=1200, covered_queries=1200, unjudged_run_queries=0, depth_min=1000,
                               depth_median=median, depth_max=1000)
    report_coverage(coverage, required=False, quiet=False)
    line = capsys.readouterr().err
    assert f"ranking depth min 1,000, median {shown}, max 1,000" in line and "1,200 of 1,200" in line
