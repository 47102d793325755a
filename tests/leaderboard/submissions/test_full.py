"""Split results: `irboard split` keeps the readable part and the main metric in git, and validate and build fetch
the full file from a real HTTP server on 127.0.0.1, check it against the split file and re-score it."""

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from evaluator.result import (
    build_result,
    dump_result,
    read_result,
    size_limit,
    split_size_limit,
)
from leaderboard.cli import main
from leaderboard.submissions.load import load_results
from leaderboard.submissions.validate import validate_paths
from leaderboard.submissions.verify import verifier
from leaderboard.web.build import BuildError, build_site
from tests.conftest import ROOT

ORIGINAL = ROOT / "results" / "bm25" / "beir__scifact.json"  # a real result, verified against official judgments


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh cache per test, so that every test fetches its full files itself."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("IRBOARD_CACHE", str(folder))
    return folder


@pytest.fixture
def split(tmp_path, server, cache, monkeypatch) -> Path:
    """results/bm25/beir__scifact.json split, its full file served under <server>/full/, the store (as CI sets it)."""
    monkeypatch.setenv("IRBOARD_FULL_MIRROR", f"{server.base_url}/full")
    path = tmp_path / "results" / "bm25" / "beir__scifact.json"
    path.parent.mkdir(parents=True)
    shutil.copy(ORIGINAL, path)
    upload = tmp_path / "upload"
    assert main(["split", str(path), "--url-base", f"{server.base_url}/full", "--out-dir", str(upload)]) == 0
    server.folders["/full/"] = upload
    return path


def _validate(capsys, path: Path, *options: str) -> tuple[int, list[str], list[str]]:
    code = main(["validate", str(path), *options])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def _readdress(path: Path, full_text: str, server, **changes) -> None:
    """Serve `full_text` as the full file of the split file at `path`, with its address rewritten to match it."""
    data = full_text.encode()
    sha256 = hashlib.sha256(data).hexdigest()
    server.files[f"/other/{sha256}.json"] = data
    document = json.loads(path.read_text())
    document["full"] = {"url": f"{server.base_url}/other/{sha256}.json", "sha256": sha256, "bytes": len(data),
                        **changes}
    path.write_text(json.dumps(document, indent=1, sort_keys=True))


def test_split_keeps_the_readable_part_and_main_metric_and_validate_verifies_via_url(split, server, cache, capsys):
    original, result = read_result(ORIGINAL), read_result(split)
    assert result.header == original.header and result.query_ids == original.query_ids
    assert set(result.per_query) == {"nDCG@10"} and result.run is None and result.score_samples is None
    np.testing.assert_array_equal(result.per_query["nDCG@10"], original.per_query["nDCG@10"])
    uploaded = split.parent.parent.parent / "upload" / f"{result.full.sha256}.json"
    assert uploaded.read_bytes() == ORIGINAL.read_bytes()  # the full file exactly as evaluate wrote it
    assert result.full.sha256 == hashlib.sha256(ORIGINAL.read_bytes()).hexdigest()
    assert result.full.bytes == ORIGINAL.stat().st_size
    assert result.full.url == f"{server.base_url}/full/{result.full.sha256}.json"
    assert split.stat().st_size <= split_size_limit(300) < ORIGINAL.stat().st_size / 4

    code, out, err = _validate(capsys, split)
    assert (code, err) == (0, [])
    assert out == ["irboard: 1 result file(s) valid, 1 verified by re-scoring every metric"]
    assert server.requests == [f"/full/{result.full.sha256}.json"]
    assert (cache / "full" / f"{result.full.sha256}.json").read_bytes() == ORIGINAL.read_bytes()


def test_a_cached_full_file_needs_no_server(split, server, capsys):
    assert _validate(capsys, split)[0] == 0
    server.stop()
    code, out, _ = _validate(capsys, split)
    assert code == 0 and out[-1].endswith("1 verified by re-scoring every metric")
    assert len(server.requests) == 1


def test_a_full_file_that_cannot_be_fetched_leaves_the_result_valid_but_unverified(split, server, tmp_path, capsys):
    server.folders.clear()
    code, out, err = _validate(capsys, split)
    assert (code, err) == (0, [])
    assert len(out) == 2 and out[0].startswith(f"{split}: not verified: its full file cannot be fetched (")
    assert "HTTP 404" in out[0] and out[1].endswith("0 verified by re-scoring every metric")
    built = build_site(split.parent.parent, tmp_path / "site", is_verified=verifier({}, None))
    assert any("full file not available" in warning and "unverified" in warning for warning in built.warnings)
    with pytest.raises(BuildError, match="full file not available"):
        build_site(split.parent.parent, tmp_path / "site", strict=True, is_verified=verifier({}, None))


def test_another_file_at_the_address_is_rejected_and_not_cached(split, server, cache, capsys):
    sha256 = read_result(split).full.sha256
    bad = ORIGINAL.read_bytes().replace(b'"bm25"', b'"bm26"', 1)  # same length, other bytes
    server.files[f"/full/{sha256}.json"] = bad
    code, out, err = _validate(capsys, split)
    assert code == 1 and len(err) == 2
    assert err[0].startswith(f"{split}: full: ")
    assert f"sha256 of the download is {hashlib.sha256(bad).hexdigest()}, expected {sha256}" in err[0]
    assert not (cache / "full").exists() or list((cache / "full").iterdir()) == []


def test_a_full_file_with_another_readable_part_is_rejected(split, server, capsys):
    full = read_result(ORIGINAL)
    other = full.header.model_copy(update={"provenance": full.provenance.model_copy(update={"hardware": "elsewhere"})})
    text = dump_result(build_result(other, full.query_ids, full.per_query, full.run, full.score_samples))
    _readdress(split, text, server)
    code, _, err = _validate(capsys, split, "--allow-any-full-url")
    assert code == 1
    assert err[0] == (f"{split}: full file {json.loads(split.read_text())['full']['url']}: its provenance differ "
                      "from the split file's; split the full file again with `irboard split`")


def test_a_full_file_with_other_main_metric_values_is_rejected(split, server, capsys):
    result = read_result(split)
    values = result.per_query["nDCG@10"].copy()
    low, high = int(np.argmin(values)), int(np.argmax(values))
    values[[low, high]] = values[[high, low]]  # the same mean, other per-query values
    swapped = build_result(result.header, result.query_ids, {"nDCG@10": values}, full=result.full)
    split.write_text(dump_result(swapped))
    code, _, err = _validate(capsys, split)
    assert code == 1
    assert err[0] == (f"{split}: full file {result.full.url}: per_query['nDCG@10'] differs from the split file's; "
                      "split the full file again with `irboard split`")


def test_full_bytes_over_the_cap_or_under_the_download_are_rejected(split, server, capsys):
    document = json.loads(split.read_text())
    document["full"]["bytes"] = size_limit(300) + 1
    split.write_text(json.dumps(document))
    code, _, err = _validate(capsys, split)
    assert code == 1 and "full.bytes is 2228801, over the cap of 2228800 bytes for 300 queries" in err[0]
    assert server.requests == []

    document["full"]["bytes"] = ORIGINAL.stat().st_size - 1
    split.write_text(json.dumps(document))
    code, _, err = _validate(capsys, split)
    assert code == 1 and len(err) == 2
    assert err[0].startswith(f"{split}: full: ") and f"more than the {ORIGINAL.stat().st_size - 1} expected" in err[0]


def test_the_split_file_has_its_own_cap(split, capsys):
    text = split.read_text()
    limit = split_size_limit(300)
    assert limit == 65_536 + 64 * 300
    split.write_text(text.rstrip("\n") + " " * (limit + 1 - len(text)) + "\n")  # one byte over, still valid JSON
    code, _, err = _validate(capsys, split)
    assert code == 1 and err[0] == (f"{split}: split file is {limit + 1} bytes, over its cap of {limit} bytes for 300 "
                                    "queries (64 KB + 64 bytes a query); keep only the main metric's per-query "
                                    "values (irboard split)")


def test_a_split_file_without_the_main_metric_is_a_problem(split, tmp_path):
    result = read_result(split)
    other = build_result(result.header, result.query_ids, {"R@100": read_result(ORIGINAL).per_query["R@100"]},
                         full=result.full)
    split.write_text(dump_result(other))
    problems = validate_paths([split], tmp_path).problems
    assert problems == [f"{split}: per_query holds ['R@100'], not the main metric nDCG@10 of beir/scifact; "
                        "split the full file again with `irboard split`"]


def test_splitting_a_split_file_is_refused(split, tmp_path, capsys):
    assert main(["split", str(split), "--url-base", "https://example.org", "--out-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"error: {split}: already a split file (its full file: " \
                                      f"{read_result(split).full.url})\n"


def test_build_with_a_split_result(split, tmp_path):
    other = split.parent.parent / "splade-tiny" / "beir__scifact.json"
    other.parent.mkdir()
    shutil.copy(ROOT / "results" / "splade-tiny" / "beir__scifact.json", other)
    report = build_site(split.parent.parent, tmp_path / "site", strict=True, is_verified=verifier({}, None))
    assert (report.results, report.warnings) == (2, [])
    loaded = {r.model.id: r for r in load_results(split.parent.parent, is_verified=verifier({}, None)).results}
    assert loaded["bm25"].verified and loaded["splade-tiny"].verified
    assert set(loaded["bm25"].per_query) == {"nDCG@10"} and loaded["bm25"].has_run
    assert loaded["bm25"].metrics == read_result(ORIGINAL).metrics
    page = (tmp_path / "site" / "index.html").read_text()
    assert "bm25" in page and "splade-tiny" in page


def test_a_mirror_folder_stands_in_for_the_address(split, server, monkeypatch, capsys):
    server.stop()
    monkeypatch.setenv("IRBOARD_FULL_MIRROR", str(split.parent.parent.parent / "upload"))
    code, out, _ = _validate(capsys, split)
    assert code == 0 and out[-1].endswith("1 verified by re-scoring every metric")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.pop("full"), "per_query.metrics: only a split file (with full) names its per-query metrics"),
    (lambda d: d["per_query"].pop("metrics"), "per_query.metrics: a split file names the metrics whose per-query"),
    (lambda d: d["per_query"].update(metrics=["R@100", "nDCG@10"]), "per_query.values: "),
    (lambda d: d["per_query"].update(metrics=["R@100"]), r"metrics\[.R@100.\] = 0.925.* mean of its per_query"),
    (lambda d: d["full"].update(url="ftp://x/y.json"), "full.url: String should match pattern"),
    (lambda d: d["full"].update(sha256="ABC"), "full.sha256: String should match pattern"),
    (lambda d: d.update(run=json.loads(ORIGINAL.read_text())["run"]), "a split file holds no run or score_samples"),
])
def test_split_files_are_read_strictly(split, edit, message):
    from evaluator.errors import ResultValidationError
    from evaluator.result import parse_result_text

    document = json.loads(split.read_text())
    edit(document)
    with pytest.raises(ResultValidationError, match="^<result>: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_result_text(json.dumps(document))


def test_the_expanded_form_keeps_the_address(split):
    from evaluator.result import expand_result, parse_result

    result = read_result(split)
    again = parse_result(expand_result(result))
    assert again.full == result.full and dump_result(again) == split.read_text()
    assert "full" not in expand_result(read_result(ORIGINAL))


def test_a_split_result_on_other_queries_is_rejected_without_fetching(split, server, tmp_path):
    result = read_result(split)
    keep = result.query_ids[:-1]
    header = result.header.model_copy(update={"dataset": result.dataset.model_copy(update={"num_queries": 299})})
    values = result.per_query["nDCG@10"][:-1]
    header = header.model_copy(update={"metrics": {**result.metrics, "nDCG@10": float(values.mean())}})
    split.write_text(dump_result(build_result(header, keep, {"nDCG@10": values}, full=result.full)))
    problems = validate_paths([split], tmp_path).problems
    assert f"{split}: per_query has 299 queries, expected 300 (the test qrels of beir/scifact)" in problems
    assert f"{split}: per_query's queries differ from the queries of the qrels of beir/scifact" in problems
    assert server.requests == []
    loaded = load_results(split.parent.parent, is_verified=verifier({}, None))
    assert loaded.problems == [f"{split}: per_query's queries differ from the queries of the qrels of beir/scifact"]
    assert server.requests == []


@pytest.mark.parametrize(("options", "message"), [
    (["--url-base", "https://x.org/a b", "--out-dir", "upload"], "error: --url-base 'https://x.org/a b': expected an "
     "http:// or https:// address without spaces or quotes\n"),
    (["--url-base", "https://x.org", "--out-dir", "taken"], "error: {tmp}/taken: cannot write (File exists); "
     "check --out-dir and the result's folder\n"),
])
def test_split_refuses_bad_options_in_one_line_and_leaves_the_result(tmp_path, options, message, capsys):
    path = tmp_path / "results" / "bm25" / "beir__scifact.json"
    path.parent.mkdir(parents=True)
    shutil.copy(ORIGINAL, path)
    (tmp_path / "taken").write_text("a file, not a folder")
    options = [str(tmp_path / o) if o in ("upload", "taken") else o for o in options]
    assert main(["split", str(path), *options]) == 1
    err = capsys.readouterr().err
    assert err.startswith(message.format(tmp=tmp_path)) and err.count("\n") == 1
    assert path.read_bytes() == ORIGINAL.read_bytes() and not (tmp_path / "upload").exists()


def test_split_addresses_the_project_store_by_default(tmp_path):
    from leaderboard.submissions.full import FULL_STORE

    path = tmp_path / "results" / "bm25" / "beir__scifact.json"
    path.parent.mkdir(parents=True)
    shutil.copy(ORIGINAL, path)
    assert main(["split", str(path), "--out-dir", str(tmp_path / "upload")]) == 0
    full = json.loads(path.read_text())["full"]
    assert full["url"] == f"{FULL_STORE}/{full['sha256']}.json"
    assert (tmp_path / "upload" / f"{full['sha256']}.json").read_bytes() == ORIGINAL.read_bytes()


def test_validate_fetches_only_from_the_store_unless_allowed(split, server, capsys, monkeypatch):
    """A file's `full.url` is an address its submitter chose (127.0.0.1 included): validate fetches `<store>/<sha256>.json`
    instead, and the named address only with --allow-any-full-url."""
    _readdress(split, ORIGINAL.read_text() + " ", server)  # served only at <server>/other/<sha256>.json
    code, out, err = _validate(capsys, split)
    assert (code, err) == (0, []) and out[0].startswith(f"{split}: not verified: its full file cannot be fetched (")
    assert not any(request.startswith("/other/") for request in server.requests)
    full = read_result(split).full
    assert server.requests == [f"/full/{full.sha256}.json"]
    code, out, err = _validate(capsys, split, "--allow-any-full-url")
    assert server.requests[-1] == f"/other/{full.sha256}.json" and code == 0

    from leaderboard.submissions.full import FULL_STORE, _full_urls

    monkeypatch.delenv("IRBOARD_FULL_MIRROR")
    assert _full_urls(full) == [f"{FULL_STORE}/{full.sha256}.json"] != [full.url]  # 127.0.0.1 is no allowed host
    assert _full_urls(full, any_url=True) == [full.url]
