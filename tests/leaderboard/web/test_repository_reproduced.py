"""The repository's own results are reproduced (issue 33, item 1): each declares its pinned artifact, and the
ledger in reproductions/ (written by `irboard reproduce --ledger`, docs/reproduction.md) names its bytes, so the site
built from them as the README says shows every one "reproduced"; a result whose bytes differ from those a record
names by one byte (its hardware line) shows "re-scored"."""

import hashlib
import re
import shutil

import pytest

from evaluator.result import read_result
from leaderboard.cli import main
from leaderboard.submissions.reproductions import read_record
from tests.conftest import ROOT, SHARED

ALL_RESULTS = sorted((ROOT / "results").glob("*/*.json"))
# the results irboard ran itself (a declared artifact); the others are re-scored published runs (provenance.source)
RESULTS = [p for p in ALL_RESULTS if read_result(p, with_run=False, with_samples=False).model.artifact is not None]
CHANGED = "bm25/classic__cacm.json"  # the copy changed by one byte


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("repository")
    shutil.copytree(ROOT / "results", root / "results")
    changed = root / "results" / CHANGED
    changed.write_bytes(changed.read_bytes().replace(b'"hardware": "Linux', b'"hardware": "linux', 1))
    assert changed.read_bytes() != (ROOT / "results" / CHANGED).read_bytes()
    assert main(["build", "--strict", "--results", str(root / "results"), "--out", str(root / "_site"),
                 "--data-dir", str(SHARED / "data"), "--reproductions", str(ROOT / "reproductions")]) == 0
    return root / "_site"


def _recorded() -> set[str]:
    """The committed results a ledger record names (as results/<model>/<dataset>.json relative paths)."""
    return {p.relative_to(ROOT / "reproductions").as_posix() for p in (ROOT / "reproductions").glob("*/*.json")}


def test_each_record_names_a_committed_result_that_declares_its_artifact():
    assert len(RESULTS) == 16
    assert all(read_result(p, with_run=False, with_samples=False).provenance.source is not None
               for p in ALL_RESULTS if p not in RESULTS)
    recorded = _recorded()
    assert {f"{model}/{p.name}" for model in ("bm25", "bm25-k1-1.5-b-0.75")
            for p in (ROOT / "results" / model).glob("*.json")} <= recorded  # at least every BM25 result
    for name in recorded:
        result = read_result(ROOT / "results" / name, with_run=False, with_samples=False)
        record = read_record(ROOT / "reproductions" / name)
        assert result.model.artifact is not None and record.artifact == result.model.artifact, name
        assert record.result_sha256 == hashlib.sha256((ROOT / "results" / name).read_bytes()).hexdigest(), name


def _tiers(page: str) -> dict[str, str]:
    """{dataset id: tier} of a model page's dataset table."""
    return dict(re.findall(r'<th scope="row"><a href="[^"]*">([a-z-]+/[a-z0-9-]+)</a></th>.*?<td><span class="tag tier-([a-z-]+)"',
                           page, re.S))


def test_the_site_shows_them_reproduced_and_a_changed_one_re_scored(site):
    recorded = _recorded()
    for path in RESULTS:
        name = path.relative_to(ROOT / "results").as_posix()
        tiers = _tiers((site / "models" / f"{path.parent.name}.html").read_text(encoding="utf-8"))
        dataset = read_result(path, with_run=False, with_samples=False).dataset.id
        expected = "reproduced" if name in recorded and name != CHANGED else "re-scored"
        assert tiers[dataset] == expected, (name, tiers)
    for path in ALL_RESULTS:  # a published run was re-scored, never reproduced: no artifact ran again
        if path not in RESULTS:
            dataset = read_result(path, with_run=False, with_samples=False).dataset.id
            assert _tiers((site / "models" / f"{path.parent.name}.html").read_text(encoding="utf-8"))[dataset] != \
                "reproduced", path
    # the changed file's dataset page: re-scored there, though its record still names the committed bytes
    page = (site / "datasets" / "classic__cacm.html").read_text(encoding="utf-8")
    row = page[page.index(">bm25</a>"):]
    assert 'data-tier="re-scored"' in page and "tier-re-scored" in row[:row.index("</tr>")]
