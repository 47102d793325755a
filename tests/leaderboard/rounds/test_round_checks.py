"""The `rounds` pull-request check judges each file a pull request adds or changes on its own, whatever main
holds already (docs/rounds.md): played in real git repositories (`Repo`), each check run on the test merge
against its base commit, as its author, as the workflow runs it."""

from __future__ import annotations

import json
import subprocess

import pytest

from evaluator.trec import read_qrels, read_run
from leaderboard.rounds.play import round_status
from tests.leaderboard.rounds.test_round_attacks import DAY, RULES, Repo, _entries, _irboard, _judge
from tests.leaderboard.rounds.test_rounds import FROZEN, JUDGED, OPEN, REVEALED

ANN = "ann~ann__bm25@v1"
EVE = "eve~eve__bm25@v1"


@pytest.fixture
def repo(tmp_path):
    return Repo(tmp_path)


def _cli_check(repo: Repo, branch: str, now) -> subprocess.CompletedProcess:
    """`irboard round check --base --author` on GitHub's test merge of `branch`, as rounds.yml runs it."""
    base = repo.git("rev-parse", "main").strip()
    repo.git("checkout", "-q", "--detach", "main")
    try:
        repo.git("merge", "-q", "--no-ff", "-m", "test merge", branch, at=now)
        return _irboard("round", "check", "rounds/scifact-blind", "--base", base, "--author", repo.authors[branch],
                        "--now", now.isoformat(), cwd=repo.root)
    finally:
        repo.git("checkout", "-q", "-f", "main")


def _copy_merged_first(repo: Repo) -> None:
    """Eve copies the hash of ann's open pull request into her own entry and is merged first; ann follows."""
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    victim = json.loads(repo.git("show", f"ann:rounds/scifact-blind/commitments/{ANN}.json"))

    def copy():
        path = repo.folder / "commitments" / f"{EVE}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({**victim, "model": {"id": "eve/bm25", "type": "other", "revision": "v1"},
                                    "owner": "eve"}))

    repo.pull_request("eve", "eve", copy, OPEN + DAY)
    repo.merge("eve", OPEN + 2 * DAY)
    repo.merge("ann", OPEN + 3 * DAY)


def test_an_honest_reveal_passes_when_a_copy_of_its_commitment_was_merged_first(repo):
    """Ann's reveal opens her commitment, which refuses eve's copy: the refusal is a problem of eve's file, on the
    round's page, never of ann's pull request."""
    _copy_merged_first(repo)
    repo.pull_request("ann-r", "ann", repo.reveal(ANN, "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    assert repo.check("ann-r", FROZEN + DAY).problems == []
    repo.merge("ann-r", FROZEN + DAY)
    status = repo.status(FROZEN + 2 * DAY)
    entries = _entries(status)
    assert entries[ANN].status == "revealed" and entries[EVE].status == "refused"
    assert any(f"{EVE}.json: copies the hash of {ANN}" in p for p in status.problems)


def test_a_reveal_of_a_refused_copy_fails_its_check_though_main_refuses_the_copy_already(repo):
    """Eve's entry is refused on main once ann revealed; her reveal republishing ann's run and salt is judged on
    its own, though the same problem would be found on main with the reveal's files in the tree."""
    _copy_merged_first(repo)
    repo.pull_request("ann-r", "ann", repo.reveal(ANN, "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    repo.merge("ann-r", FROZEN + DAY)

    def steal():
        for suffix in ("run", "salt"):
            (repo.folder / "reveals" / f"{EVE}.{suffix}").write_bytes(
                (repo.folder / "reveals" / f"{ANN}.{suffix}").read_bytes())

    repo.pull_request("eve-r", "eve", steal, FROZEN + 2 * DAY)
    problems = repo.check("eve-r", FROZEN + 2 * DAY).problems
    assert [p for p in problems if f"reveals/{EVE}: reveals no accepted commitment" in p] == problems != []


def test_a_reveal_of_a_commitment_its_owner_deleted_fails_its_check(repo):
    repo.pull_request("bo", "bo", repo.commit("splade-tiny", "bo/splade", "bo"), OPEN + DAY)
    repo.merge("bo", OPEN + DAY)
    repo.pull_request("bo-w", "bo", lambda: (repo.folder / "commitments" / "bo~bo__splade@v1.json").unlink(),
                      FROZEN + DAY)
    repo.merge("bo-w", FROZEN + DAY)

    def reveal_anyway():
        (repo.folder / "reveals").mkdir()
        (repo.folder / "reveals" / "bo~bo__splade@v1.run").write_bytes(repo.run("splade-tiny").read_bytes())
        (repo.folder / "reveals" / "bo~bo__splade@v1.salt").write_bytes((repo.private / "bo-bo/splade.salt").read_bytes())

    repo.pull_request("bo-r", "bo", reveal_anyway, FROZEN + 2 * DAY)
    problems = repo.check("bo-r", FROZEN + 2 * DAY).problems
    assert len(problems) == 1 and "reveals/bo~bo__splade@v1: reveals a commitment its owner deleted at" in problems[0]


def test_the_maintainers_pull_request_declaring_a_round_passes_its_check(tmp_path):
    """round.yml is not on main yet: the check judges it, entering now, and the round it declares works."""
    repo = Repo(tmp_path, rules=None)
    repo.pull_request("declare", "maint", lambda: (repo.folder / "round.yml").write_text(RULES), OPEN - 5 * DAY)
    assert repo.check("declare", OPEN - 5 * DAY).problems == []
    repo.merge("declare", OPEN - 5 * DAY)
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    assert repo.check("ann", OPEN + DAY).problems == []
    # a declaration that cannot be read is the declaring pull request's problem, in one line
    fresh = Repo(tmp_path / "fresh", rules=None)
    fresh.pull_request("declare", "maint", lambda: (fresh.folder / "round.yml").write_text("name: [x\n"), OPEN)
    done = _cli_check(fresh, "declare", OPEN)
    assert done.returncode == 1 and "round.yml line 2: is not valid YAML" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_commitment_over_runs_per_participant_fails_its_check_in_one_line(tmp_path):
    repo = Repo(tmp_path, RULES + "runs_per_participant: 1\n")
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("ann-2", "ann", repo.commit("splade-tiny", "ann/splade", "ann"), OPEN + 2 * DAY)
    done = _cli_check(repo, "ann-2", OPEN + 2 * DAY)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: rounds/scifact-blind/commitments/ann~ann__splade@v1.json: is refused: ann already has 1 commitments, the "
        "round's runs_per_participant"]


def test_a_reveal_that_does_not_open_its_commitment_fails_its_check_in_one_line(repo):
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)

    def reveal_another_run():
        repo.reveal(ANN, "bm25", "ann-ann/bm25.salt")()
        (repo.folder / "reveals" / f"{ANN}.run").write_bytes(repo.run("splade-tiny").read_bytes())

    repo.pull_request("ann-r", "ann", reveal_another_run, FROZEN + DAY)
    done = _cli_check(repo, "ann-r", FROZEN + DAY)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: rounds/scifact-blind/reveals/{ANN}: does not open its commitment: sha256(binding + run + salt) differs from "
        "the commitment: not the run and salt this entry and owner committed"]
    # the honest reveal passes
    repo.pull_request("ann-r2", "ann", repo.reveal(ANN, "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    assert _cli_check(repo, "ann-r2", FROZEN + DAY).returncode == 0


def test_the_judged_share_is_over_the_runs_top_pool_depth_when_the_share_cap_cut_it(tmp_path):
    """Eve's two runs hold only documents no one else ranks; the share cap pools them less deep, so of each
    one's top pool_depth only the pooled ranks were judged: the share is sum_q min(n_q, d) / sum_q min(n_q, 10)
    for pooled depth d, never 1.0."""
    repo = Repo(tmp_path, RULES + "pool_share_cap: 0.6\n")
    lines = [line.split() for line in repo.run("bm25").read_text().splitlines()]
    for prefix in ("noise", "other"):
        (repo.private / f"{prefix}.run").write_text("".join(f"{q} Q0 {prefix}-{d} {r} {s} x\n"
                                                            for q, _, d, r, s, _ in lines))
    plan = [("ann", "bm25"), ("eve", "noise"), ("eve", "other")]
    for owner, name in plan:
        repo.pull_request(f"{name}-c", owner, repo.commit(name, f"{owner}/{name}", owner), OPEN + DAY)
        repo.merge(f"{name}-c", OPEN + DAY)
        repo.pull_request(f"{name}-r", owner, repo.reveal(f"{owner}~{owner}__{name}@v1", name,
                                                          f"{owner}-{owner}/{name}.salt"), FROZEN + DAY)
        repo.merge(f"{name}-r", FROZEN + DAY)
    _judge(repo, REVEALED + DAY)
    status = round_status(repo.folder, JUDGED + DAY)
    rows = {row.entry: row for row in status.board.runs}
    judged = {(q, d) for q, docs in read_qrels(repo.folder / "judgments" / "qrels.txt").to_dict().items() for d in docs}
    sizes = [len(docs) for docs in read_run(repo.run("bm25")).values()]
    depth = rows["eve~eve__noise@v1"].pooled_depth
    assert 1 <= depth < 10 and rows["ann~ann__bm25@v1"].pooled_depth == 10
    expected = sum(min(n, depth) for n in sizes) / sum(min(n, 10) for n in sizes)
    assert rows["eve~eve__noise@v1"].judged_share == rows["eve~eve__other@v1"].judged_share
    assert abs(rows["eve~eve__noise@v1"].judged_share - expected) < 1e-9 and expected < 1
    assert rows["ann~ann__bm25@v1"].judged_share == 1.0
    # every pair eve's runs pooled was judged: the pooled pairs alone would say 1.0
    assert all(pair in judged for pair, names in status.pool.contributors.items() if "eve~eve__noise@v1" in names)
