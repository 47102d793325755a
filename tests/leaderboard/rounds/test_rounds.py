"""A sealed round played end to end on real data: BEIR SciFact with its judgments withheld, three real models'
rankings (the repository's results) committed, revealed, pooled at depth 10 and judged by "assessors" who are
the official judgments restricted to the pool. The clock is a table of instants at which files entered."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from functools import cache
from pathlib import Path

import pytest
import pytrec_eval

from evaluator.result import ModelBlock, read_result
from evaluator.trec import read_qrels, read_run, write_run
from leaderboard.rounds.ledger import commitment_binding, commitment_hash
from leaderboard.rounds.play import commit_run, reveal_run, round_status, write_pool, write_scores
from leaderboard.rounds.pool import top_documents
from leaderboard.rounds.spec import RoundError, read_round
from tests.conftest import SCIFACT

ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2027, 1, 1, tzinfo=timezone.utc)
OPEN, FROZEN, REVEALED, JUDGED, PUBLISHED = (T0 + timedelta(days=10 * i) for i in range(5))
MODELS = {  # repository result folder -> model id and type
    "bm25": ("bm25", "lexical"),
    "splade-tiny": ("naver/splade-tiny", "sparse"),
    "sentence-transformers__all-minilm-l6-v2": ("sentence-transformers/all-MiniLM-L6-v2", "dense"),
}
OWNERS = {"bm25": "ann", "splade-tiny": "bo", "sentence-transformers__all-minilm-l6-v2": "cy",
          "bm25-k1-1.5-b-0.75": "di"}
ROUND_YML = f"""name: scifact-blind
dataset: beir/scifact
split: test
description: SciFact with its judgments withheld until the pool of the revealed runs is judged.
phases:
  open: {OPEN.isoformat()}
  frozen: {FROZEN.isoformat()}
  revealed: {REVEALED.isoformat()}
  judged: {JUDGED.isoformat()}
  published: {PUBLISHED.isoformat()}
pool_depth: 10
metrics: [nDCG@10, P@10, RR@10]
seed: 20270101
"""


# Runs keep each query's top RUN_DEPTH of the stored 100: the round pools and scores the top 10 (pool_depth and
# every metric), and every round step reads each revealed run again, so deeper runs only cost time.
RUN_DEPTH = 20


@cache
def _rankings(folder: str) -> dict[str, list[tuple[str, float]]]:
    result = read_result(ROOT / "results" / folder / "beir__scifact.json")
    run = result.run
    return {q: run.ranking(i)[:RUN_DEPTH] for i, q in enumerate(result.query_ids) if run.lengths[i]}


def _run_file(folder: str, path: Path) -> Path:
    write_run(path, _rankings(folder), folder)
    return path


class Clock:
    """When each round file entered the repository (as the git history gives it on main)."""

    def __init__(self, folder: Path):
        self.folder, self.times = folder, {"round.yml": OPEN - timedelta(days=1)}

    def enter(self, instant: datetime, *paths: Path) -> None:
        for path in paths:
            self.times[path.relative_to(self.folder).as_posix()] = instant


@pytest.fixture
def played(tmp_path):
    """A round after its three real runs were committed and revealed, a fourth committed and never revealed,
    one committed too late and one committed twice."""
    folder = tmp_path / "rounds" / "scifact-blind"
    folder.mkdir(parents=True)
    (folder / "round.yml").write_text(ROUND_YML)
    clock = Clock(folder)
    private = tmp_path / "private"
    private.mkdir()
    runs = {name: _run_file(name, private / f"{name}.run") for name in MODELS}
    runs["bm25-k1-1.5-b-0.75"] = _run_file("bm25-k1-1.5-b-0.75", private / "bm25-k1.run")
    entries = {}
    for name, run in runs.items():
        model_id, kind = MODELS.get(name, ("org/bm25-tuned", "lexical"))
        model = ModelBlock(id=model_id, type=kind, revision="v1", license="apache-2.0")
        path = commit_run(folder, run, model, OWNERS[name], private / f"{name}.salt",
                          uses_models=["meta-llama/Llama-3.1-8B-Instruct"] if kind == "dense" else [])
        clock.enter(OPEN + timedelta(days=1), path)
        entries[name] = path.stem
    # someone copies bm25's hash under their own model, to reveal bm25's run once it is public: the hash binds
    # bm25's entry and owner, so the copy can never be opened, and is refused once bm25's reveal opens the original
    twin = folder / "commitments" / "eve~someone__bm25-copy.json"
    copied = json.loads((folder / "commitments" / f"{entries['bm25']}.json").read_text())
    twin.write_text(json.dumps({**copied, "model": {"id": "someone/bm25-copy", "type": "lexical"}, "owner": "eve"}))
    clock.enter(OPEN + timedelta(days=2), twin)
    # a second file for a model revision already committed: refused by its name
    again = folder / "commitments" / "ann~bm25@v1-again.json"
    again.write_text(json.dumps(copied))
    clock.enter(OPEN + timedelta(days=2), again)
    # committed after the freeze: refused, whatever the file says
    late = commit_run(folder, runs["bm25"], ModelBlock(id="late/model", type="lexical"), "fay", private / "late.salt")
    clock.enter(FROZEN + timedelta(hours=1), late)
    for name in MODELS:
        clock.enter(FROZEN + timedelta(days=1), *reveal_run(folder, entries[name], runs[name],
                                                            private / f"{name}.salt"))
    return folder, clock, runs, entries


def _status(folder, clock, now):
    return round_status(folder, now, clock.times)


def _statuses(status):
    return {entry.name: entry.status for entry in status.ledger.entries}


def test_commitments_and_reveals_are_judged_by_when_they_entered(played):
    folder, clock, runs, entries = played
    during = _status(folder, clock, FROZEN + timedelta(days=2))
    assert during.ledger.phase == "frozen"
    statuses = _statuses(during)
    assert {statuses[entries[name]] for name in MODELS} == {"revealed"}
    assert statuses[entries["bm25-k1-1.5-b-0.75"]] == "committed"  # may still reveal
    assert statuses["eve~someone__bm25-copy"] == "refused"
    assert statuses["fay~late__model"] == "refused"
    reasons = {entry.name: entry.reason for entry in during.ledger.entries}
    assert "a copy of the hash of ann~bm25@v1" in reasons["eve~someone__bm25-copy"]
    assert "accepted from" in reasons["fay~late__model"]
    assert statuses["ann~bm25@v1-again"] == "refused" and "named for another model" in reasons["ann~bm25@v1-again"]
    # once the reveals are closed, an unrevealed commitment is withdrawn, publicly
    after = _status(folder, clock, REVEALED + timedelta(hours=1))
    assert _statuses(after)[entries["bm25-k1-1.5-b-0.75"]] == "withdrawn"


def test_a_reveal_that_does_not_match_its_commitment_is_not_counted(played, tmp_path):
    folder, clock, runs, entries = played
    name = entries["bm25-k1-1.5-b-0.75"]
    (folder / "reveals" / f"{name}.run").write_bytes(runs["bm25"].read_bytes())  # another run than committed
    salt = (tmp_path / "private" / "bm25-k1-1.5-b-0.75.salt").read_text().strip()
    (folder / "reveals" / f"{name}.salt").write_text(salt + "\n")
    clock.enter(FROZEN + timedelta(days=3), folder / "reveals" / f"{name}.run", folder / "reveals" / f"{name}.salt")
    entry = {e.name: e for e in _status(folder, clock, REVEALED).ledger.entries}[name]
    assert entry.status == "mismatch" and "differs from the commitment" in entry.reason
    with pytest.raises(RoundError, match="differs from"):
        reveal_run(folder, name, runs["bm25"], tmp_path / "private" / "bm25-k1-1.5-b-0.75.salt")


def test_a_reveal_after_the_reveals_close_is_withdrawn(played, tmp_path):
    folder, clock, runs, entries = played
    name = entries["bm25-k1-1.5-b-0.75"]
    paths = reveal_run(folder, name, runs["bm25-k1-1.5-b-0.75"], tmp_path / "private" / "bm25-k1-1.5-b-0.75.salt")
    clock.enter(REVEALED + timedelta(minutes=1), *paths)
    entry = {e.name: e for e in _status(folder, clock, JUDGED).ledger.entries}[name]
    assert entry.status == "withdrawn" and "reveal entered at" in entry.reason


def test_uncommitted_reveals_and_unknown_files_are_problems(played):
    folder, clock, runs, entries = played
    stray = folder / "reveals" / "nobody.run"
    stray.write_text("1 Q0 d 1 1.0 x\n")
    (folder / "notes.txt").write_text("hello")
    problems = _status(folder, clock, REVEALED).problems
    assert any("nobody: reveals no accepted commitment" in p for p in problems)
    assert any("notes.txt: not part of a round" in p for p in problems)


def test_a_pull_request_is_checked_against_the_phase_it_would_enter(played, tmp_path):
    folder, clock, runs, entries = played
    pending = ["commitments/new__model.json", "reveals/x.run", "judgments/qrels.txt"]
    problems = round_status(folder, FROZEN + timedelta(days=1), clock.times, pending=[]).problems
    assert len(problems) == 2 and "ann~bm25@v1-again.json: is named for another model" in problems[0]
    assert "eve~someone__bm25-copy.json: copies the hash of ann~bm25@v1" in problems[1]
    from leaderboard.rounds.ledger import pending_problems

    problems = pending_problems(read_round(folder), pending, FROZEN + timedelta(days=1))
    assert len(problems) == 2  # the reveal is allowed while frozen; nothing else is
    assert any("commitments/new__model.json: would enter at" in p for p in problems)
    assert any("judgments/qrels.txt: would enter at" in p for p in problems)


def _pooled_qrels(folder: Path) -> dict[str, dict[str, int]]:
    """The assessors: every pooled pair gets its official label (0 where the official judgments have none)."""
    official = read_qrels(SCIFACT / "qrels" / "test.tsv").to_dict()
    judged: dict[str, dict[str, int]] = {}
    for line in (folder / "pool.tsv").read_text().splitlines():
        query_id, doc_id = line.split("\t")
        judged.setdefault(query_id, {})[doc_id] = official.get(query_id, {}).get(doc_id, 0)
    return judged


def test_pool_judge_and_score_equal_trec_eval(played):
    folder, clock, runs, entries = played
    with pytest.raises(RoundError, match="the pool is made once the reveals close"):
        write_pool(folder, FROZEN + timedelta(days=2), clock.times)
    pool_path = write_pool(folder, REVEALED + timedelta(hours=1), clock.times)
    first = pool_path.read_bytes()
    clock.enter(REVEALED + timedelta(hours=2), pool_path)
    # the pool: the union of the revealed runs' top 10, each pair once, the same bytes when made again
    lines = first.decode().splitlines()
    expected = set()
    for name in MODELS:
        for query_id, doc_ids in top_documents(read_run(runs[name]), 10).items():
            expected |= {(query_id, d) for d in doc_ids}
    assert len(lines) == len(set(lines)) and {tuple(line.split("\t")) for line in lines} == expected
    assert write_pool(folder, REVEALED + timedelta(hours=3), clock.times).read_bytes() == first
    assert lines != sorted(lines)  # shuffled: the order does not show which run ranked a document high

    judged = _pooled_qrels(folder)
    (folder / "judgments").mkdir()
    with open(folder / "judgments" / "qrels.txt", "w") as stream:
        for query_id in sorted(judged):
            for doc_id, label in sorted(judged[query_id].items()):
                stream.write(f"{query_id} 0 {doc_id} {label}\n")
    (folder / "judgments" / "provenance.yml").write_text(
        "assessors: model\ndescription: the official SciFact judgments restricted to the pool, as a stand-in\n"
        "judge: {model: meta-llama/Llama-3.1-8B-Instruct, revision: 0e9e39f, prompt: 'Is the passage relevant?'}\n")
    clock.enter(REVEALED + timedelta(days=2), folder / "judgments" / "qrels.txt",
                folder / "judgments" / "provenance.yml")
    with pytest.raises(RoundError):
        write_scores(folder, REVEALED + timedelta(days=3), {})
    scores_path = write_scores(folder, JUDGED + timedelta(hours=1), clock.times)
    clock.enter(JUDGED + timedelta(hours=2), scores_path)
    board = json.loads(scores_path.read_text())
    assert [row["entry"] for row in board["runs"]] and len(board["runs"]) == 3
    measures = {"ndcg_cut_10": "nDCG@10", "P_10": "P@10", "recip_rank": "RR@10"}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "P.10", "recip_rank"})
    for row in board["runs"]:
        name = next(n for n in MODELS if entries[n] == row["entry"])
        run = {q: {d: float(s) for d, s in docs.items()} for q, docs in read_run(runs[name]).items()}
        # RR@10 is RR on the top 10
        top10 = {q: dict(sorted(docs.items(), key=lambda item: -item[1])[:10]) for q, docs in run.items()}
        per_query = evaluator.evaluate(run)
        per_query_top = evaluator.evaluate(top10)
        for oracle, ours in measures.items():
            source = per_query_top if oracle == "recip_rank" else per_query
            expected = sum(source.get(q, {}).get(oracle, 0.0) for q in judged) / len(judged)
            assert row["metrics"][ours] == pytest.approx(expected, abs=1e-9), (name, ours)
        assert row["judged_share"] == 1.0  # every revealed run is pooled
        assert row["leave_one_out"] <= row["metrics"]["nDCG@10"] + 1e-12
        assert row["shares_judge"] == (name == "sentence-transformers__all-minilm-l6-v2")
    # the pool's bias shows: some run found relevant documents no other run found, and loses them when left out
    assert any(row["unique_relevant"] > 0 and row["leave_one_out"] < row["metrics"]["nDCG@10"]
               for row in board["runs"])
    status = _status(folder, clock, PUBLISHED)
    # only the misnamed commitment and the copied hash
    assert len(status.problems) == 2 and "ann~bm25@v1-again" in status.problems[0] and "copies" in status.problems[1]
    assert status.board is not None and status.board.to_json() == scores_path.read_text()


def test_edited_pool_or_judgments_outside_it_are_caught(played):
    folder, clock, runs, entries = played
    pool_path = write_pool(folder, REVEALED + timedelta(hours=1), clock.times)
    clock.enter(REVEALED + timedelta(hours=2), pool_path)
    pool_path.write_text(pool_path.read_text() + "1 extra-doc\n")
    assert any("pool.tsv: differs from the pool" in p for p in _status(folder, clock, REVEALED).problems)
    write_pool(folder, REVEALED + timedelta(hours=1), clock.times)
    (folder / "judgments").mkdir()
    (folder / "judgments" / "qrels.txt").write_text("1 0 not-pooled 1\n")
    (folder / "judgments" / "provenance.yml").write_text("assessors: human\ndescription: two assessors\n")
    clock.enter(REVEALED + timedelta(days=1), folder / "judgments" / "qrels.txt",
                folder / "judgments" / "provenance.yml")
    assert any("judges 1 pairs outside the pool" in p for p in _status(folder, clock, JUDGED).problems)


def test_commitment_hash_binds_round_entry_model_and_owner_then_run_then_salt():
    model = ModelBlock(id="Org/Model", type="dense", revision="v2")
    binding = commitment_binding("scifact-blind", model, "Ann")
    assert binding == b"irboard sealed-round commitment v3\nscifact-blind\nann~org__model@v2\nOrg/Model\nv2\nann\n"
    assert commitment_hash(b"run", "00ff", binding) == hashlib.sha256(binding + b"run\x00\xff").hexdigest()
    other = commitment_binding("scifact-blind", model, "eve")
    assert commitment_hash(b"run", "00ff", other) != commitment_hash(b"run", "00ff", binding)


def test_merge_times_come_from_the_first_parent_history(tmp_path):
    """A pull request's own commit may claim any date; the round counts the time of the merge on main."""
    repo = tmp_path / "repo"
    folder = repo / "rounds" / "scifact-blind"
    folder.mkdir(parents=True)
    (folder / "round.yml").write_text(ROUND_YML)

    def git(*args, at: datetime):
        env = {"GIT_AUTHOR_DATE": at.isoformat(), "GIT_COMMITTER_DATE": at.isoformat(), "HOME": str(tmp_path),
               "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.org", "GIT_COMMITTER_NAME": "a",
               "GIT_COMMITTER_EMAIL": "a@example.org", "PATH": "/usr/bin:/bin"}
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)

    git("init", "-q", "-b", "main", at=OPEN)
    git("add", ".", at=OPEN)
    git("commit", "-q", "-m", "round", at=OPEN - timedelta(days=1))
    git("checkout", "-q", "-b", "submission", at=OPEN)
    commitment = folder / "commitments" / "xy~x__y.json"
    commitment.parent.mkdir()
    commitment.write_text(json.dumps({"model": {"id": "x/y", "type": "dense"}, "owner": "xy", "sha256": "0" * 64}))
    git("add", ".", at=OPEN)
    git("commit", "-q", "-m", "commit", at=OPEN + timedelta(days=1))  # claims to be on time
    git("checkout", "-q", "main", at=OPEN)
    git("merge", "-q", "--no-ff", "-m", "merge", "submission", at=FROZEN + timedelta(days=1))  # merged late
    status = round_status(folder, REVEALED)
    assert status.ledger.entries[0].committed_at == FROZEN + timedelta(days=1)
    assert status.ledger.entries[0].status == "refused"


@pytest.mark.slow
def test_the_command_line_plays_a_round_in_a_git_repository(tmp_path):
    """commit, reveal, check and pool through `irboard`, each step merged on main at a controlled instant."""
    repo = tmp_path / "repo"
    folder = repo / "rounds" / "scifact-blind"
    folder.mkdir(parents=True)
    (folder / "round.yml").write_text(ROUND_YML)
    run = _run_file("bm25", tmp_path / "bm25.run")

    def git(*args, at: datetime):
        env = {"GIT_AUTHOR_DATE": at.isoformat(), "GIT_COMMITTER_DATE": at.isoformat(), "HOME": str(tmp_path),
               "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.org", "GIT_COMMITTER_NAME": "a",
               "GIT_COMMITTER_EMAIL": "a@example.org", "PATH": "/usr/bin:/bin"}
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)

    def merge(at: datetime):
        git("add", "-A", at=at)
        git("commit", "-q", "-m", "step", at=at)

    def irboard(*args, now: datetime):
        return subprocess.run([sys.executable, "-m", "leaderboard.cli", *args, "--now", now.isoformat()],
                              capture_output=True, text=True, cwd=repo)

    def irboard_plain(*args):
        return subprocess.run([sys.executable, "-m", "leaderboard.cli", *args], capture_output=True, text=True,
                              cwd=repo)

    git("init", "-q", "-b", "main", at=OPEN)
    merge(OPEN - timedelta(days=1))
    done = irboard_plain("round", "commit", str(folder), "--run", str(run), "--model-id", "bm25", "--revision", "v1",
                         "--type", "lexical", "--owner", "ann", "--salt-out", str(tmp_path / "bm25.salt"))
    assert done.returncode == 0, done.stderr
    inside = irboard_plain("round", "commit", str(folder), "--run", str(run), "--model-id", "x", "--owner", "ann",
                           "--salt-out", str(folder / "x.salt"))
    assert inside.returncode == 1 and "write it outside" in inside.stderr
    # a pull request adding the commitment is fine while open, refused once frozen
    pending = str(folder / "commitments" / "ann~bm25@v1.json")
    assert irboard("round", "check", str(folder), "--pending", pending, now=OPEN + timedelta(days=1)).returncode == 0
    late = irboard("round", "check", str(folder), "--pending", pending, now=FROZEN + timedelta(days=1))
    assert late.returncode == 1 and "would enter at" in late.stderr and "Traceback" not in late.stderr
    merge(OPEN + timedelta(days=1))
    early = irboard("pool", str(folder), now=FROZEN + timedelta(days=1))
    assert early.returncode == 1 and "the pool is made once the reveals close" in early.stderr
    done = irboard_plain("round", "reveal", str(folder), "--entry", "ann~bm25@v1", "--run", str(run), "--salt",
                         str(tmp_path / "bm25.salt"))
    assert done.returncode == 0, done.stderr
    merge(FROZEN + timedelta(days=1))
    check = irboard("round", "check", str(folder), now=REVEALED)
    assert check.returncode == 0 and "ann~bm25@v1 revealed" in check.stdout
    done = irboard("pool", str(folder), now=REVEALED + timedelta(hours=1))
    assert done.returncode == 0 and (folder / "pool.tsv").stat().st_size > 0


@pytest.mark.parametrize("text, message", [
    ("name: scifact-blind\n", "dataset"),
    (ROUND_YML.replace("frozen: 2027-01-11", "frozen: 2026-01-11"), "must come after phases.open"),
    (ROUND_YML.replace("nDCG@10, ", "nDGC@10, "), "metrics"),
    (ROUND_YML.replace("T00:00:00+00:00", "T00:00:00", 1), "time zone"),
    ("[1, 2", "not valid YAML"),
    # a reviewer reads the first key; PyYAML would keep the second
    (ROUND_YML + "seed: 1\n", "line 14: is not valid YAML \\(the key 'seed' is given twice\\)"),
    (ROUND_YML.replace("open: 2027-01-01T00:00:00+00:00", "open: 2026-12-31T23:59:60+00:00"), "impossible date"),
    (ROUND_YML.replace("judged: 2027-01-31", "judged: 2027-02-30"), "impossible date"),
    ("[" * 50_000, "nested too deeply"),
    (ROUND_YML.replace("name: scifact-blind", "name: other"), "differs from its folder"),
])
def test_bad_round_files_get_one_line(tmp_path, text, message):
    folder = tmp_path / "scifact-blind"
    folder.mkdir()
    (folder / "round.yml").write_text(text)
    with pytest.raises(RoundError, match=message) as caught:
        read_round(folder)
    assert "\n" not in str(caught.value) and "round.yml" in str(caught.value)


@pytest.mark.slow
def test_round_page_shows_phase_commitments_and_board(played, tmp_path):
    """The site's round page, built by `irboard build` from a real git history: merge times, statuses, the
    board once published, and text from the files escaped."""
    from leaderboard.web.build import build_site

    folder, clock, runs, entries = played
    pool_path = write_pool(folder, REVEALED + timedelta(hours=1), clock.times)
    clock.enter(REVEALED + timedelta(hours=2), pool_path)
    (folder / "judgments").mkdir()
    with open(folder / "judgments" / "qrels.txt", "w") as stream:
        for query_id, judged in sorted(_pooled_qrels(folder).items()):
            for doc_id, label in sorted(judged.items()):
                stream.write(f"{query_id} 0 {doc_id} {label}\n")
    (folder / "judgments" / "provenance.yml").write_text(
        "assessors: human\ndescription: two assessors <script>alert(1)</script>\n")
    clock.enter(REVEALED + timedelta(days=1), folder / "judgments" / "qrels.txt",
                folder / "judgments" / "provenance.yml")
    clock.enter(JUDGED + timedelta(hours=1), write_scores(folder, JUDGED + timedelta(hours=1), clock.times))
    import leaderboard.rounds.play as play
    from leaderboard.rounds.history import tree_history

    original = play.git_history
    play.git_history = lambda _folder, rev="HEAD": tree_history(_folder, clock.times)
    try:
        before = build_site(ROOT / "results", tmp_path / "site-judged", rounds_dir=folder.parent,
                            now=JUDGED + timedelta(days=1))
        after = build_site(ROOT / "results", tmp_path / "site", rounds_dir=folder.parent, now=PUBLISHED)
    finally:
        play.git_history = original
    judged_page = (tmp_path / "site-judged" / "rounds" / "scifact-blind.html").read_text()
    assert "The board is shown once the round is published" in judged_page
    page = (tmp_path / "site" / "rounds" / "scifact-blind.html").read_text()
    assert "<strong>published</strong>" in page
    assert "withdrawn: not revealed before the reveals closed" in page
    assert "naver/splade-tiny" in page and "Leave-one-out nDCG@10" in page
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert page.count("⚠") == 1  # only the caption's key: human judges share no model with a system
    index = (tmp_path / "site" / "rounds" / "index.html").read_text()
    assert 'href="scifact-blind.html"' in index
    assert any("ann~bm25@v1-again" in w for w in after.round_notes) and before.pages == after.pages
    assert not any("ann~bm25@v1-again" in w for w in after.warnings)  # a round's files never fail --strict
