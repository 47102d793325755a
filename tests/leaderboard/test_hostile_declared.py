"""Hostile declarations and dataset facts (issue 45): a declaration cannot shadow the board, and every dataset fact
a result states is held to its dataset's definition. Each case runs `irboard validate` (cold and warm cache) and
`irboard build --strict` in-process, as CI does, on a real-shaped SciFact result (tests/conftest.py)."""

import json
import math
from pathlib import Path

import pytest

from evaluator.datasets import all_specs, query_ids_sha256
from evaluator.trec import read_qrels
from tests.conftest import SCIFACT
from tests.leaderboard.test_hostile import irboard, write_results

QRELS = read_qrels(SCIFACT / "qrels" / "test.tsv")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A repository of its own: results/, datasets/ (the declarations) and a cache of its own, cold at first."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IRBOARD_DATASETS", str(tmp_path / "datasets"))
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    write_results(tmp_path / "results")
    return tmp_path


def declare(folder: Path, slug: str, **fields) -> Path:
    path = folder / "datasets" / f"{slug}.json"
    path.parent.mkdir(exist_ok=True)
    data = {"id": slug.replace("__", "/"), "name": "Acme claims", "group": "Acme", "main_metric": "nDCG@10",
            "query_ids_sha256": query_ids_sha256(QRELS.query_ids), "qrels_sha256": QRELS.sha256(), **fields}
    path.write_text(json.dumps(data))
    return path


def refused_everywhere(folder: Path, path: Path, expected: str, in_build: str | None = None) -> None:
    """validate refuses with a line naming `path` and `expected` (each problem one line), cold and then warm, and
    build --strict too (with `in_build` when the build's first reason is another: it re-scores before it reads
    the facts)."""
    for attempt in ("cold", "warm"):
        done = irboard("validate", "--results", folder / "results")
        lines = [line for line in done.stderr.splitlines() if str(path) in line]
        assert done.returncode == 1 and "Traceback" not in done.stderr, (attempt, done.stderr)
        assert [line for line in lines if expected in line], (attempt, done.stderr)
    build = irboard("build", "--strict", "--results", folder / "results", "--out", folder / "_site",
                    "--now", "2026-12-01T00:00:00Z")
    assert build.returncode == 1 and "Traceback" not in build.stderr, build.stderr
    assert any(str(path) in line and (in_build or expected) in line for line in build.stderr.splitlines()), \
        build.stderr
    assert not (folder / "_site").exists()


def test_the_board_builds_before_any_declaration(folder):
    assert irboard("validate", "--results", folder / "results").returncode == 0
    done = irboard("build", "--strict", "--results", folder / "results", "--out", folder / "_site",
                   "--now", "2026-12-01T00:00:00Z")
    assert done.returncode == 0, done.stderr


def test_a_declaration_of_a_registered_id_is_refused_cold_and_warm(folder):
    assert irboard("validate", "--results", folder / "results").returncode == 0  # the warm cache: checked clean
    path = declare(folder, "beir__scifact", qrels_sha256="0" * 64, relevance_level=2)
    refused_everywhere(folder, path, "'beir/scifact' is the registered dataset beir/scifact")


@pytest.mark.parametrize(("slug", "fields", "expected"), [
    ("beir__scifact-v2", {"group": "BEIR"}, "'beir' is a registered family"),  # would change BEIR's mean
    ("acme__claims", {"group": "BEIR"}, "'BEIR' is the registered group 'BEIR'"),
    ("acme__claims", {"group": "beir!"}, "is the registered group 'BEIR'"),  # the same page key
    ("acme__claims", {"group": "All datasets"}, "is the site's own ('All datasets')"),  # pareto.html twice
    ("acme__claims", {"group": "All"}, "is the site's own"),
    ("acme__claims", {"group": "Other"}, "is the site's own ('Other')"),
    ("acme__claims", {"group": "..."}, "has no letter or digit"),
    ("acme__claims", {"name": "SciFact"}, "names the registered dataset beir/scifact"),
    ("acme__claims", {"name": "BEIR/SciFact"}, "names the registered dataset beir/scifact"),
    ("local__claims", {}, "reserved for the folders named with --data-dir local:DIR"),
])
def test_a_declaration_cannot_take_a_name_of_the_board(folder, slug, fields, expected):
    path = declare(folder, slug, **fields)
    refused_everywhere(folder, path, expected)


def test_every_registered_dataset_is_protected():
    """Read from the registry, so that datasets registered later (TREC DL) are covered without a list here."""
    from evaluator.datasets.declared import Declaration, clash

    sha = "0" * 64
    for spec in all_specs():
        for declaration in (Declaration(id=spec.id, query_ids_sha256=sha, qrels_sha256=sha),
                            Declaration(id=f"{spec.id.split('/')[0]}/new", query_ids_sha256=sha, qrels_sha256=sha),
                            Declaration(id="acme/x", group=spec.group, query_ids_sha256=sha, qrels_sha256=sha),
                            Declaration(id="acme/x", name=spec.name, query_ids_sha256=sha, qrels_sha256=sha)):
            assert clash(declaration) is not None, (spec.id, declaration)
    assert clash(Declaration(id="acme/x", group="Acme", name="Acme", query_ids_sha256=sha, qrels_sha256=sha)) is None


def test_the_site_keys_of_reserved_groups_are_the_ones_refused():
    from evaluator.datasets.declared import RESERVED_GROUP_KEYS, RESERVED_GROUPS, group_key
    from leaderboard.analysis.aggregate import ALL_GROUP, GROUP_ORDER
    from leaderboard.submissions.catalog import dataset_info
    from leaderboard.web.views import ranks as ranks_view

    assert ALL_GROUP in RESERVED_GROUPS and dataset_info("acme/nobody").group in RESERVED_GROUPS
    assert ranks_view.group_key(ALL_GROUP) in RESERVED_GROUP_KEYS and ranks_view.group_key("!") in RESERVED_GROUP_KEYS
    for name in ("Acme", "BEIR", "mMARCO", "Some group 2"):
        assert ranks_view.group_key(name) == group_key(name)
    assert set(GROUP_ORDER) - {"Local"} <= {spec.group for spec in all_specs()} | set(RESERVED_GROUPS)


def test_two_declared_groups_sharing_a_page_are_refused(folder):
    declare(folder, "acme__one", group="Acme")
    path = declare(folder, "acme__two", group="ACME", name="Two")
    refused_everywhere(folder, path, "would share one page")


def test_a_changed_declaration_is_checked_again_warm(folder):
    """The declaration is part of the cache keys: changing its judgments' sha256 after a clean (cached) check
    refuses the result that no longer matches, at once."""
    results = folder / "results"
    data = json.loads((results / "bm25" / "beir__scifact.json").read_text())
    for path in results.rglob("*.json"):
        moved = json.loads(path.read_text())
        moved["dataset"]["id"] = "acme/claims"
        target = path.with_name("acme__claims.json")
        target.write_text(json.dumps(moved))
        path.unlink()
    declared = declare(folder, "acme__claims", num_docs=data["dataset"]["num_docs"])
    data_dir = f"acme/claims={SCIFACT}"
    assert irboard("validate", "--results", results, "--data-dir", data_dir).returncode == 0
    assert (folder / "cache" / "checked").is_dir()
    declare(folder, "acme__claims", num_docs=data["dataset"]["num_docs"], qrels_sha256="1" * 64)
    done = irboard("validate", "--results", results, "--data-dir", data_dir)
    assert done.returncode == 1 and f"the judgments {declared} declares for acme/claims (expected {'1' * 64})" \
        in done.stderr, done.stderr
    build = irboard("build", "--strict", "--results", results, "--out", folder / "_site", "--data-dir", data_dir,
                    "--now", "2026-12-01T00:00:00Z")
    assert build.returncode == 1 and "expected " + "1" * 64 in build.stderr, build.stderr


# --- dataset facts -------------------------------------------------------------------------------------------------


def _depth_lie(data: dict, num_docs) -> None:
    """A depth-100 result with R@1000 added (its values those of R@100: nothing below 100 is ranked)."""
    data["settings"]["top_k"] = data["run"]["depth"] = 100  # (a fresh result stores its ranking whole, at top_k)
    data["per_query"]["R@1000"] = dict(data["per_query"]["R@100"])
    data["metrics"]["R@1000"] = math.fsum(data["per_query"]["R@1000"].values()) / len(data["per_query"]["R@1000"])
    if num_docs is None:
        data["dataset"].pop("num_docs")
    else:
        data["dataset"]["num_docs"] = num_docs


def test_a_corpus_size_lie_cannot_make_a_shallow_ranking_whole(folder):
    path = write_results(folder / "results", lambda data: _depth_lie(data, 100))
    refused_everywhere(folder, path, "dataset.num_docs is 100, expected 5183 (the corpus of beir/scifact)")


@pytest.mark.parametrize("num_docs", [5183, None])
def test_a_shallow_ranking_never_determines_a_deeper_metric(folder, num_docs):
    path = write_results(folder / "results", lambda data: _depth_lie(data, num_docs))
    refused_everywhere(folder, path, "AP, R@1000 need a ranking of depth 1,000 but the run is ranked to 100")


def test_a_declared_corpus_size_is_the_only_one_trusted(folder):
    """A declaration without num_docs: the result's own count decides nothing."""
    from evaluator.metrics.depth import undetermined
    from leaderboard.submissions.facts import DatasetFacts, StatedFacts, fact_problems

    facts = DatasetFacts("acme/claims", "test", 1)
    assert fact_problems(facts, StatedFacts("test", 100, "a" * 64, 1)) == []
    assert undetermined(["R@1000"], 100, facts.num_docs) == ["R@1000"]


@pytest.mark.parametrize(("edit", "expected", "in_build"), [
    (lambda data: data["dataset"].update(split="train"), "dataset.split is 'train'; beir/scifact is scored on 'test'",
     None),
    (lambda data: data["dataset"].update(num_docs=5184), "dataset.num_docs is 5184, expected 5183", None),
    (lambda data: data["settings"].update(relevance_level=2),
     "settings.relevance_level is 2; beir/scifact counts grades >= 1", "re-scoring the stored ranking gives"),
    (lambda data: data["dataset"].update(revision="scifact-v2"),
     "dataset.revision is 'scifact-v2'; the data of beir/scifact is pinned at '5f7d1de60b170fc8027bb7898e2efca1' or "
     "'cf10ab6856b15b0e670ef8ae5dae4e266c12d035' or 'castorini/anserini-tools@5b819c1'", None),
])
def test_every_stated_fact_is_held_to_the_registry(folder, edit, expected, in_build):
    path = write_results(folder / "results", edit)
    refused_everywhere(folder, path, expected, in_build)


def test_each_revision_evaluate_writes_is_accepted(folder):
    """The archive's md5 (`evaluate --model` on BEIR's zip), the hub copy's commit (on the hub copy), the official
    judgments' pin (`evaluate --run`) and none at all: the revisions the registry pins, read from it."""
    from evaluator.datasets import get_spec
    from evaluator.datasets.beir_hub import hub_copy
    from evaluator.datasets.official import SOURCE

    spec = get_spec("beir/scifact")
    for revision in (spec.md5, hub_copy(spec).revision, SOURCE, ""):
        write_results(folder / "results", lambda data, revision=revision: data["dataset"].update(revision=revision))
        done = irboard("validate", "--results", folder / "results")
        assert done.returncode == 0, (revision, done.stderr)


def test_a_declared_dataset_pins_no_revision(folder):
    from leaderboard.submissions.facts import DatasetFacts, StatedFacts, fact_problems

    facts = DatasetFacts("acme/claims", "test", 1, source="datasets/acme__claims.json")
    assert fact_problems(facts, StatedFacts("test", None, "a" * 64, 1, "")) == []
    assert fact_problems(facts, StatedFacts("test", None, "a" * 64, 1, "v2")) == [
        "dataset.revision is 'v2'; the data of acme/claims is pinned at none: leave it as `irboard evaluate` writes it "
        "(empty when unstated)"]


def test_evaluate_never_declares_what_validate_refuses(folder):
    run = folder / "run.trec"
    judged = [line.split("\t") for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    run.write_text("".join(f"{q} Q0 {d} 1 1.0 x\n" for q, d, _ in judged))
    done = irboard("evaluate", "--run", run, "--qrels", SCIFACT / "qrels" / "test.tsv", "--model-id", "org/x",
                   "--dataset-id", "beir/scifact-v2", "--declare", "--results-dir", folder / "mine", "--quiet")
    assert done.returncode == 1 and "'beir' is a registered family" in done.stderr, done.stderr
    assert not (folder / "datasets").exists() and not (folder / "mine").exists()
