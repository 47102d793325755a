"""Sealed rounds against their own participants, each attack played in a real git repository: every file enters
main through a merge commit at a set instant, and a pull request's `rounds` check is run as the workflow runs it
(on GitHub's test merge of the pull request, against its base commit, as its author). Runs are the repository's
real SciFact rankings; the round's queries are SciFact's registered test queries."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from evaluator.result import ModelBlock
from evaluator.trec import read_qrels, read_run
from leaderboard.rounds.play import (
    RoundStatus,
    commit_run,
    reveal_run,
    round_status,
    write_pool,
    write_scores,
)
from tests.conftest import SCIFACT
from tests.leaderboard.rounds.test_rounds import (
    FROZEN,
    JUDGED,
    OPEN,
    PUBLISHED,
    REVEALED,
    ROOT,
    ROUND_YML,
    _run_file,
)

RULES = ROUND_YML + "maintainers: [maint]\n"
DAY = timedelta(days=1)


class Repo:
    """A repository holding one round; `main` moves only by merge commits made at the instants given."""

    def __init__(self, root: Path, rules: str | None = RULES):
        """`rules`: the round.yml on main from the start (None: the round is not declared yet)."""
        self.root, self.private = root / "repo", root / "private"
        self.folder = self.root / "rounds" / "scifact-blind"
        self.folder.mkdir(parents=True)
        self.private.mkdir()
        self.authors: dict[str, str] = {}
        if rules is not None:
            (self.folder / "round.yml").write_text(rules)
        self.git("init", "-q", "-b", "main")
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", "round", at=OPEN - 10 * DAY)

    def git(self, *args: str, at: datetime = OPEN) -> str:
        env = {"GIT_AUTHOR_DATE": at.isoformat(), "GIT_COMMITTER_DATE": at.isoformat(), "HOME": str(self.root.parent),
               "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.org", "GIT_COMMITTER_NAME": "a",
               "GIT_COMMITTER_EMAIL": "a@example.org", "PATH": "/usr/bin:/bin"}
        return subprocess.run(["git", "-C", str(self.root), *args], check=True, capture_output=True, text=True,
                              env=env).stdout

    def pull_request(self, branch: str, author: str, write: Callable[[], object], at: datetime) -> None:
        """A branch from main with `write`'s edits, by `author`; its own commit date is never read."""
        self.git("checkout", "-q", "-b", branch, "main")
        write()
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", branch, at=at)
        self.git("checkout", "-q", "main")
        self.authors[branch] = author

    def check(self, branch: str, now: datetime) -> RoundStatus:
        """The `rounds` workflow's check of the pull request at `now`."""
        base = self.git("rev-parse", "main").strip()
        self.git("checkout", "-q", "--detach", "main")
        try:
            self.git("merge", "-q", "--no-ff", "-m", "test merge", branch, at=now)
            return round_status(self.folder, now, base=base, author=self.authors[branch])
        finally:
            self.git("checkout", "-q", "-f", "main")

    def merge(self, branch: str, at: datetime) -> None:
        self.git("merge", "-q", "--no-ff", "-m", f"Merge {branch}", branch, at=at)

    def status(self, now: datetime) -> RoundStatus:
        return round_status(self.folder, now)

    def run(self, name: str) -> Path:
        path = self.private / f"{name}.run"
        return path if path.exists() else _run_file(name, path)

    def commit(self, result: str, model_id: str, owner: str) -> Callable[[], Path]:
        model = ModelBlock(id=model_id, type="other", revision="v1")
        return lambda: commit_run(self.folder, self.run(result), model, owner, self.private / f"{owner}-{model_id}.salt")

    def reveal(self, entry: str, result: str, salt: str) -> Callable[[], object]:
        return lambda: reveal_run(self.folder, entry, self.run(result), self.private / salt)


def _entries(status: RoundStatus) -> dict:
    return {entry.name: entry for entry in status.ledger.entries}


def _judge(repo: Repo, at: datetime) -> None:
    """Maintainers add the pool, then judgments (the official SciFact labels of the pooled pairs), then scores."""
    official = read_qrels(SCIFACT / "qrels" / "test.tsv").to_dict()
    repo.pull_request("pool", "maint", lambda: write_pool(repo.folder, at), at)
    repo.merge("pool", at)

    def judgments():
        lines = [line.split("\t") for line in (repo.folder / "pool.tsv").read_text().splitlines()]
        (repo.folder / "judgments").mkdir()
        (repo.folder / "judgments" / "qrels.txt").write_text(
            "".join(f"{q} 0 {d} {official.get(q, {}).get(d, 0)}\n" for q, d in sorted(lines)))
        (repo.folder / "judgments" / "provenance.yml").write_text("assessors: human\ndescription: two assessors\n")

    repo.pull_request("judgments", "maint", judgments, at + DAY)
    repo.merge("judgments", at + DAY)


@pytest.fixture
def repo(tmp_path):
    return Repo(tmp_path)


def test_a_front_run_hash_is_worthless_and_never_refuses_the_original(repo):
    """The attacker copies the victim's hash from the victim's open pull request and gets merged first; the
    victim's later commitment still counts, and the copier cannot reveal the victim's run under its own name."""
    repo.pull_request("victim", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    victim = json.loads(subprocess.run(["git", "-C", str(repo.root), "show", "victim:rounds/scifact-blind/"
                                        "commitments/ann~ann__bm25@v1.json"], capture_output=True, check=True).stdout)

    def copy():
        path = repo.folder / "commitments" / "eve~eve__bm25@v1.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({**victim, "model": {"id": "eve/bm25", "type": "other", "revision": "v1"},
                                    "owner": "eve"}))

    repo.pull_request("copier", "eve", copy, OPEN + DAY)
    assert repo.check("copier", OPEN + 2 * DAY).problems == []
    repo.merge("copier", OPEN + 2 * DAY)
    assert repo.check("victim", OPEN + 3 * DAY).problems == []  # the copy merged first blocks nothing
    repo.merge("victim", OPEN + 3 * DAY)
    entries = _entries(repo.status(OPEN + 4 * DAY))
    assert entries["ann~ann__bm25@v1"].status == "committed" and "the same hash as eve~eve__bm25@v1" in \
        entries["ann~ann__bm25@v1"].reason
    # after the freeze the victim reveals; the copier re-publishes the victim's run and salt under its own entry
    repo.pull_request("ann-reveal", "ann", repo.reveal("ann~ann__bm25@v1", "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    repo.merge("ann-reveal", FROZEN + DAY)

    def steal():
        for suffix in ("run", "salt"):
            (repo.folder / "reveals" / f"eve~eve__bm25@v1.{suffix}").write_bytes(
                (repo.folder / "reveals" / f"ann~ann__bm25@v1.{suffix}").read_bytes())

    repo.pull_request("eve-reveal", "eve", steal, FROZEN + 2 * DAY)
    repo.merge("eve-reveal", FROZEN + 2 * DAY)
    status = repo.status(REVEALED + DAY)
    entries = _entries(status)
    assert entries["ann~ann__bm25@v1"].status == "revealed"
    assert entries["eve~eve__bm25@v1"].status == "refused" and "a copy of the hash of ann~ann__bm25@v1" in \
        entries["eve~eve__bm25@v1"].reason
    assert [entry.name for entry in status.ledger.revealed()] == ["ann~ann__bm25@v1"]
    # the copy's own reveal cannot open it: the hash binds ann's entry and account
    from leaderboard.rounds.ledger import commitment_binding, commitment_hash

    salt = (repo.folder / "reveals" / "ann~ann__bm25@v1.salt").read_text().strip()
    run = (repo.folder / "reveals" / "ann~ann__bm25@v1.run").read_bytes()
    eve = ModelBlock(id="eve/bm25", type="other", revision="v1")
    assert commitment_hash(run, salt, commitment_binding("scifact-blind", eve, "eve")) != victim["sha256"]


def test_another_participants_commitment_cannot_be_rewritten(repo):
    """A pull request replacing someone else's hash fails the check; merged anyway, the entry shows as tampered
    with its original, and the attacker's run is never scored under the victim's name."""
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    original = (repo.folder / "commitments" / "ann~ann__bm25@v1.json").read_text()
    # eve commits her own run for ann's entry: the commitment says owner ann, the hash is eve's
    from leaderboard.rounds.ledger import commitment_binding, commitment_hash

    salt = "ab" * 32
    run = repo.run("splade-tiny").read_bytes()
    model = ModelBlock(id="ann/bm25", type="other", revision="v1")

    def rewrite():
        data = json.loads(original)
        data["sha256"] = commitment_hash(run, salt, commitment_binding("scifact-blind", model, "ann"))
        (repo.folder / "commitments" / "ann~ann__bm25@v1.json").write_text(json.dumps(data))

    repo.pull_request("eve", "eve", rewrite, OPEN + 2 * DAY)
    problems = repo.check("eve", OPEN + 2 * DAY).problems
    assert any("ann~ann__bm25@v1.json: is the entry of ann, but the pull request is by eve" in p for p in problems)
    repo.merge("eve", OPEN + 2 * DAY)  # a maintainer merges it anyway

    def reveal():
        (repo.folder / "reveals").mkdir()
        (repo.folder / "reveals" / "ann~ann__bm25@v1.run").write_bytes(run)
        (repo.folder / "reveals" / "ann~ann__bm25@v1.salt").write_text(salt + "\n")

    repo.pull_request("eve-reveal", "eve", reveal, FROZEN + DAY)
    assert any("is the entry of ann" in p for p in repo.check("eve-reveal", FROZEN + DAY).problems)
    repo.merge("eve-reveal", FROZEN + DAY)
    status = repo.status(REVEALED + DAY)
    entry = _entries(status)["ann~ann__bm25@v1"]
    assert entry.status == "tampered" and entry.commitment.sha256 == json.loads(original)["sha256"]
    assert status.ledger.revealed() == [] and status.pool is None
    assert any("ann~ann__bm25@v1.json: changed at" in p and "never changes" in p for p in status.problems)


def test_postponing_the_round_is_refused_and_an_extension_only_delays(repo):
    """Moving every phase a year later while open is a problem, ignored: existing commitments keep their status.
    Moving the judgments' close later before it begins is the one permitted change."""
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    later = RULES
    for instant in (OPEN, FROZEN, REVEALED, JUDGED, PUBLISHED):
        later = later.replace(instant.isoformat(), instant.replace(year=instant.year + 1).isoformat())

    repo.pull_request("postpone", "maint", lambda: (repo.folder / "round.yml").write_text(later), OPEN + 2 * DAY)
    assert any("moves phases.open" in p for p in repo.check("postpone", OPEN + 2 * DAY).problems)
    repo.merge("postpone", OPEN + 2 * DAY)
    status = repo.status(OPEN + 3 * DAY)
    assert _entries(status)["ann~ann__bm25@v1"].status == "committed"
    assert status.ledger.round.spec.phases.open == OPEN
    assert any("round.yml: changed at" in p and "the change is ignored" in p for p in status.problems)
    assert status.ledger.phase == "open"

    # an extension of the judging window, merged before it closes
    extended = RULES.replace(JUDGED.isoformat(), (JUDGED + 5 * DAY).isoformat()).replace(
        PUBLISHED.isoformat(), (PUBLISHED + 5 * DAY).isoformat())
    repo.pull_request("extend", "maint", lambda: (repo.folder / "round.yml").write_text(extended), JUDGED - DAY)
    assert not any("round.yml" in p for p in repo.check("extend", JUDGED - DAY).problems)
    repo.merge("extend", JUDGED - DAY)
    status = repo.status(JUDGED + DAY)
    assert status.ledger.phase == "revealed" and status.ledger.round.spec.phases.judged == JUDGED + 5 * DAY
    # moving a phase earlier, or one that has begun, is not an extension
    earlier = extended.replace((PUBLISHED + 5 * DAY).isoformat(), (PUBLISHED + 4 * DAY).isoformat())
    repo.pull_request("earlier", "maint", lambda: (repo.folder / "round.yml").write_text(earlier), JUDGED)
    assert any("moves phases.published earlier" in p for p in repo.check("earlier", JUDGED).problems)
    begun = extended.replace((REVEALED).isoformat(), (REVEALED + DAY).isoformat())
    repo.pull_request("begun", "maint", lambda: (repo.folder / "round.yml").write_text(begun), JUDGED)
    assert any("moves phases.revealed, which had begun" in p for p in repo.check("begun", JUDGED).problems)


def test_an_extension_never_changes_the_status_of_a_file_that_entered_before_it(repo):
    """Judgments merged after the judging window closed stay refused when a later extension would have admitted
    them; judgments merged after the extension, inside its window, count."""
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("reveal", "ann", repo.reveal("ann~ann__bm25@v1", "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    repo.merge("reveal", FROZEN + DAY)
    extended = RULES.replace(PUBLISHED.isoformat(), (PUBLISHED + 5 * DAY).isoformat())
    repo.pull_request("extend", "maint", lambda: (repo.folder / "round.yml").write_text(extended), JUDGED + DAY)
    repo.merge("extend", JUDGED + DAY)
    _judge(repo, REVEALED + DAY)
    status = repo.status(PUBLISHED + DAY)
    assert status.ledger.round.spec.phases.published == PUBLISHED + 5 * DAY
    assert status.ledger.judged_at is not None and status.ledger.phase == "judged"


def test_a_deleted_or_changed_commitment_never_vanishes(repo):
    """The ledger reads the history: a commitment deleted after the freeze is withdrawn, shown with its original;
    one changed after it entered is tampered."""
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("bo", "bo", repo.commit("splade-tiny", "bo/splade", "bo"), OPEN + DAY)
    repo.merge("bo", OPEN + 2 * DAY)
    original = json.loads((repo.folder / "commitments" / "ann~ann__bm25@v1.json").read_text())
    repo.pull_request("delete", "ann", lambda: (repo.folder / "commitments" / "ann~ann__bm25@v1.json").unlink(),
                      FROZEN + DAY)
    assert repo.check("delete", FROZEN + DAY).problems == []  # withdrawing one's own entry is allowed
    repo.merge("delete", FROZEN + DAY)

    def change():
        path = repo.folder / "commitments" / "bo~bo__splade@v1.json"
        path.write_text(path.read_text().replace('"other"', '"dense"'))

    repo.pull_request("change", "bo", change, FROZEN + DAY)
    assert any("bo~bo__splade@v1.json: is on main already" in p for p in repo.check("change", FROZEN + DAY).problems)
    repo.merge("change", FROZEN + 2 * DAY)
    # once the reveals are closed the pool is made of them: nothing of an entry may be deleted any more
    repo.pull_request("late-delete", "bo", lambda: (repo.folder / "commitments" / "bo~bo__splade@v1.json").unlink(),
                      REVEALED + DAY)
    assert any("bo~bo__splade@v1.json: deleted once the reveals closed" in p
               for p in repo.check("late-delete", REVEALED + DAY).problems)
    entries = _entries(repo.status(REVEALED + DAY))
    assert entries["ann~ann__bm25@v1"].status == "withdrawn" and "deleted at" in entries["ann~ann__bm25@v1"].reason
    assert entries["ann~ann__bm25@v1"].commitment.sha256 == original["sha256"]
    assert entries["ann~ann__bm25@v1"].committed_at == OPEN + DAY
    assert entries["bo~bo__splade@v1"].status == "tampered" and entries["bo~bo__splade@v1"].commitment.model.type == "other"
    from leaderboard.web.views.rounds import build_round

    rows = {row.name: row for row in build_round(repo.status(REVEALED + DAY)).entries}
    assert (rows["ann~ann__bm25@v1"].model_id, rows["ann~ann__bm25@v1"].owner, rows["ann~ann__bm25@v1"].status) == \
        ("ann/bm25", "ann", "withdrawn")
    assert rows["bo~bo__splade@v1"].status == "tampered"


def test_the_pool_judgments_and_scores_are_the_maintainers(repo):
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("reveal", "ann", repo.reveal("ann~ann__bm25@v1", "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    repo.merge("reveal", FROZEN + DAY)
    repo.pull_request("ann-pool", "ann", lambda: write_pool(repo.folder, REVEALED + DAY), REVEALED + DAY)
    problems = repo.check("ann-pool", REVEALED + DAY).problems
    assert any("pool.tsv: only the round's maintainers (maint)" in p and "ann is not one" in p for p in problems)
    repo.pull_request("maint-pool", "maint", lambda: write_pool(repo.folder, REVEALED + DAY), REVEALED + DAY)
    assert repo.check("maint-pool", REVEALED + DAY).problems == []


def test_reveal_entry_names_cannot_leave_the_round(repo, tmp_path):
    """`irboard round reveal --entry ../…` writes nothing outside reveals/, and says why in one line."""
    repo.commit("bm25", "ann/bm25", "ann")()
    for entry in ("../../../outside", "../commitments/ann~ann__bm25@v1", "/tmp/x", "ann~ann__bm25@v1/../../x", ".hidden"):
        done = subprocess.run([sys.executable, "-m", "leaderboard.cli", "round", "reveal", str(repo.folder),
                               "--entry", entry, "--run", str(repo.run("bm25")), "--salt",
                               str(repo.private / "ann-ann/bm25.salt")], capture_output=True, text=True)
        assert done.returncode == 1 and "is not an entry name" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.rglob("*.run")) == ["bm25.run"]
    assert not (repo.folder / "reveals").exists()


def _bad_round(repo: Repo) -> None:
    """Four participants: two honest, one revealing a run with a repeated document line, one revealing 200,000
    pairs on invented queries."""
    honest = {"ann": "bm25", "bo": "splade-tiny"}
    duplicate = repo.private / "dup.run"
    duplicate.write_text(repo.run("bm25").read_text() + repo.run("bm25").read_text().splitlines()[0] + "\n")
    invented = repo.private / "invented.run"
    invented.write_text("".join(f"q{q} Q0 doc{d} {d + 1} {1000 - d} x\n" for q in range(2000) for d in range(100)))
    runs = {**{owner: repo.run(result) for owner, result in honest.items()}, "cy": duplicate, "di": invented}
    for owner, run in runs.items():
        model = ModelBlock(id=f"{owner}/model", type="other", revision="v1")
        repo.pull_request(f"{owner}-c", owner, lambda run=run, model=model, owner=owner: commit_run(
            repo.folder, run, model, owner, repo.private / f"{owner}.salt"), OPEN + DAY)
        repo.merge(f"{owner}-c", OPEN + DAY)
    for owner, run in runs.items():
        repo.pull_request(f"{owner}-r", owner, lambda run=run, owner=owner: reveal_run(
            repo.folder, f"{owner}~{owner}__model@v1", run, repo.private / f"{owner}.salt"), FROZEN + DAY)
        repo.merge(f"{owner}-r", FROZEN + DAY)


def test_an_unreadable_or_off_query_reveal_is_a_problem_left_out_of_the_pool(repo):
    _bad_round(repo)
    status = repo.status(REVEALED + DAY)
    entries = _entries(status)
    assert entries["cy~cy__model@v1"].status == "invalid" and "appears a second time" in entries["cy~cy__model@v1"].reason
    assert entries["di~di__model@v1"].status == "invalid" and "2,000 queries that are not the round's" in \
        entries["di~di__model@v1"].reason
    assert any("cy~cy__model@v1.run: cannot be read as a TREC run" in p and "left out of the pool" in p
               for p in status.problems)
    assert {entry.name for entry in status.ledger.revealed()} == {"ann~ann__model@v1", "bo~bo__model@v1"}
    pooled = {q for q, _ in status.pool.contributors}
    queries = set(read_qrels(SCIFACT / "qrels" / "test.tsv").query_ids)
    assert pooled <= queries and not any(q.startswith("q") and q[1:].isdigit() and q not in queries for q in pooled)
    assert len(status.pool.contributors) <= 2 * 10 * len(queries)
    path = write_pool(repo.folder, REVEALED + DAY)  # the pool is made whatever the other reveals hold
    assert path.stat().st_size > 0


def test_an_oversized_reveal_is_refused_unread(repo, monkeypatch):
    import leaderboard.rounds.ledger as ledger

    _bad_round(repo)
    monkeypatch.setattr(ledger, "MAX_RUN_BYTES", repo.run("bm25").stat().st_size + 10)
    entries = _entries(repo.status(REVEALED + DAY))
    assert entries["di~di__model@v1"].status == "mismatch" and "over the" in entries["di~di__model@v1"].reason
    assert entries["ann~ann__model@v1"].status == "revealed"


def test_the_strict_build_succeeds_whatever_a_round_contains(repo, tmp_path):
    """Unreadable reveals, a broken round.yml change, a stray file and a symbolic link: the strict build (what
    deploy.yml runs) succeeds, and the round page lists each problem."""
    from leaderboard.web.build import build_site

    _bad_round(repo)
    _judge(repo, REVEALED + DAY)

    def vandalise():
        (repo.folder / "round.yml").write_text("name: [broken\n")
        (repo.folder / "notes <script>.txt").write_text("x")
        (repo.folder / "reveals" / "link.run").symlink_to("/etc/passwd")
        (repo.folder / "scores.json").symlink_to("/dev/zero")  # a reader that follows it never ends

    repo.pull_request("vandal", "eve", vandalise, JUDGED + DAY)
    repo.merge("vandal", JUDGED + DAY)
    report = build_site(ROOT / "results", tmp_path / "site", strict=True, rounds_dir=repo.folder.parent,
                        now=PUBLISHED + DAY)
    page = (tmp_path / "site" / "rounds" / "scifact-blind.html").read_text()
    assert "cy~cy__model@v1.run: cannot be read as a TREC run" in page and "not valid YAML" in page
    assert "notes &lt;script&gt;.txt: not part of a round" in page and "<script>.txt" not in page
    assert "link.run" in page and "passwd" not in page.replace("link.run", "")
    assert "scores.json: differs from the scores" in page
    assert any("cy~cy__model@v1" in note for note in report.round_notes) and report.pages > 2


def test_runs_per_participant_groups_and_the_pool_share_cap(tmp_path):
    """A third commitment of one participant is refused; two accounts of one group share their unique documents
    for leave-one-group-out; perturbed runs flooding the pool with their own documents are pooled less deep."""
    rules = RULES + "runs_per_participant: 2\ngroups: {lab: [ann, bo]}\npool_share_cap: 0.4\n"
    repo = Repo(tmp_path, rules)
    lines = [line.split() for line in repo.run("bm25").read_text().splitlines()]
    noise = {}
    for prefix in ("noise", "other"):  # bm25's ranking with documents no one else ranks
        noise[prefix] = repo.private / f"{prefix}.run"
        noise[prefix].write_text("".join(f"{q} Q0 {prefix}-{d} {r} {s} x\n" for q, _, d, r, s, _ in lines))
    plan = [("ann", "bm25", repo.run("bm25")), ("bo", "splade", repo.run("splade-tiny")),
            ("cy", "minilm", repo.run("sentence-transformers__all-minilm-l6-v2")), ("eve", "noise", noise["noise"]),
            ("eve", "other", noise["other"]), ("ann", "second", repo.run("bm25-k1-1.5-b-0.75")),
            ("eve", "third", repo.run("bm25"))]
    for i, (owner, name, run) in enumerate(plan):
        model = ModelBlock(id=f"{owner}/{name}", type="other", revision="v1")
        repo.pull_request(f"c{i}", owner, lambda run=run, model=model, owner=owner: commit_run(
            repo.folder, run, model, owner, repo.private / f"{owner}-{model.id.replace('/', '_')}.salt"), OPEN + DAY)
        repo.merge(f"c{i}", OPEN + DAY + i * timedelta(hours=1))
    entries = _entries(repo.status(OPEN + 2 * DAY))
    assert entries["eve~eve__third@v1"].status == "refused" and "eve already has 2" in entries["eve~eve__third@v1"].reason
    # ann and bo are one participant: lab
    assert entries["ann~ann__second@v1"].status == "refused" and "group lab already has 2" in \
        entries["ann~ann__second@v1"].reason
    for i, (owner, name, run) in enumerate(plan[:5]):
        entry = f"{owner}~{owner}__{name}@v1"
        repo.pull_request(f"r{i}", owner, lambda run=run, entry=entry, owner=owner, name=name: reveal_run(
            repo.folder, entry, run, repo.private / f"{owner}-{owner}_{name}.salt"), FROZEN + DAY)
        repo.merge(f"r{i}", FROZEN + DAY)
    status = repo.status(REVEALED + DAY)
    pool = status.pool
    eve = ["eve~eve__noise@v1", "eve~eve__other@v1"]
    assert pool.depths[eve[0]] == pool.depths[eve[1]] < 10
    assert {pool.depths[name] for name in ("ann~ann__bm25@v1", "bo~bo__splade@v1", "cy~cy__minilm@v1")} == {10}
    eve_only = pool.unique_to(eve)
    assert 0 < len(eve_only) <= 0.4 * len(pool.contributors)
    # the cut is the smallest: one rank deeper would pass the cap
    from leaderboard.rounds.pool import top_documents

    others = set(pool.contributors) - eve_only
    deeper = {(q, d) for name in ("noise", "other")
              for q, docs in top_documents(read_run(noise[name]), pool.depths[eve[0]] + 1).items() for d in docs}
    assert len(deeper - others) > 0.4 * len(deeper | others)
    # leave-one-group-out: ann's and bo's documents found by no one outside the lab are one group's
    lab = pool.unique_to(["ann~ann__bm25@v1", "bo~bo__splade@v1"])
    assert lab > pool.unique_to(["ann~ann__bm25@v1"]) | pool.unique_to(["bo~bo__splade@v1"])
    _judge(repo, REVEALED + DAY)
    scores = {row.entry: row for row in repo.status(JUDGED + DAY).board.runs}
    relevant = {(q, d) for q, docs in read_qrels(repo.folder / "judgments" / "qrels.txt").to_dict().items()
                for d, label in docs.items() if label >= 1}
    assert scores["ann~ann__bm25@v1"].unique == scores["bo~bo__splade@v1"].unique == len(lab)
    assert scores["ann~ann__bm25@v1"].unique_relevant == len(lab & relevant)
    assert scores["ann~ann__bm25@v1"].participant == "group lab" and scores["cy~cy__minilm@v1"].participant == "cy"


@pytest.mark.slow
def test_the_round_page_states_blindness_rules_statistics_and_a_pinned_attestation(repo, tmp_path):
    """Three real runs published: the board gives each run's interval, its Holm-corrected paired t-test against
    the best (scipy's ttest_rel on pytrec_eval's per-query nDCG@10) and its tie band; the page says SciFact's
    judgments were public (a rehearsal), shows the anti-probing rules, and pins the attestation's signer."""
    import numpy as np
    import pytrec_eval
    from scipy import stats as scipy_stats

    from leaderboard.web.build import build_site
    from leaderboard.web.provenance import BuildStamp
    from leaderboard.web.views.rounds import board_rows

    results = {"ann": "bm25", "bo": "bm25-k1-1.5-b-0.75", "cy": "splade-tiny"}
    for owner, result in results.items():
        repo.pull_request(f"{owner}-c", owner, repo.commit(result, f"{owner}/model", owner), OPEN + DAY)
        repo.merge(f"{owner}-c", OPEN + DAY)
        repo.pull_request(f"{owner}-r", owner, repo.reveal(f"{owner}~{owner}__model@v1", result, f"{owner}-{owner}/model.salt"),
                          FROZEN + DAY)
        repo.merge(f"{owner}-r", FROZEN + DAY)
    _judge(repo, REVEALED + DAY)
    repo.pull_request("scores", "maint", lambda: write_scores(repo.folder, JUDGED + DAY), JUDGED + DAY)
    assert repo.check("scores", JUDGED + DAY).problems == []
    repo.merge("scores", JUDGED + DAY)
    status = repo.status(PUBLISHED + DAY)
    rows = board_rows(status.board)
    qrels = read_qrels(repo.folder / "judgments" / "qrels.txt").to_dict()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    per_query = {}
    for owner, result in results.items():
        run = {q: {d: float(s) for d, s in docs.items()} for q, docs in read_run(repo.run(result)).items()}
        found = evaluator.evaluate(run)
        per_query[f"{owner}~{owner}__model@v1"] = np.array([found.get(q, {}).get("ndcg_cut_10", 0.0) for q in sorted(qrels)])
    best = max(per_query, key=lambda name: per_query[name].mean())
    assert rows[0].score.entry == best and rows[0].p_vs_best is None and rows[0].band == 1
    names = sorted(per_query)
    raw = {(a, b): scipy_stats.ttest_rel(per_query[a], per_query[b]).pvalue for i, a in enumerate(names)
           for b in names[i + 1:]}
    order = sorted(raw, key=raw.get)
    holm, running = {}, 0.0
    for k, pair in enumerate(order):  # Holm: max over the smaller p-values of min(1, (m - j) p_(j))
        running = max(running, min(1.0, (len(order) - k) * raw[pair]))
        holm[pair] = running
    for row in rows[1:]:
        pair = tuple(sorted((best, row.score.entry)))
        assert row.p_vs_best == pytest.approx(holm[pair], rel=1e-6)
        assert row.band == (1 if holm[pair] >= 0.05 else 2)
        assert row.low < row.score.metrics["nDCG@10"] < row.high
    build_site(ROOT / "results", tmp_path / "site", rounds_dir=repo.folder.parent, now=PUBLISHED + DAY,
               stamp=BuildStamp(repository="https://github.com/irboard/irboard"))
    page = (tmp_path / "site" / "rounds" / "scifact-blind.html").read_text()
    assert "Not blind: a rehearsal only" in page and "beir/scifact were public before this round" in page
    assert "At most 3 commitments per participant" in page and "No participant groups" in page
    assert ("gh attestation verify rounds/scifact-blind/commitments/ann~ann__model@v1.json --repo irboard/irboard "
            "--signer-workflow irboard/irboard/.github/workflows/deploy.yml --source-ref refs/heads/main") in page
    assert "<th scope=\"col\">Band</th>" in page and "p vs best" in page and "95% interval" in page
    index = (tmp_path / "site" / "rounds" / "index.html").read_text()
    assert "not blind: its dataset's judgments were public, a rehearsal only" in index


def _irboard(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "leaderboard.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_the_workflows_check_command_refuses_a_change_to_anothers_entry(repo):
    """`irboard round check --base --author`, as rounds.yml runs it on GitHub's test merge."""
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("eve", "eve", lambda: (repo.folder / "commitments" / "ann~ann__bm25@v1.json").write_text(
        (repo.folder / "commitments" / "ann~ann__bm25@v1.json").read_text().replace('"ann"', '"eve"')), OPEN + 2 * DAY)
    base = repo.git("rev-parse", "main").strip()
    repo.git("checkout", "-q", "--detach", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "test merge", "eve", at=OPEN + 2 * DAY)
    now = (OPEN + 2 * DAY).isoformat()
    done = _irboard("round", "check", "rounds/scifact-blind", "--base", base, "--author", "eve", "--now", now,
                    cwd=repo.root)
    assert done.returncode == 1 and "ann~ann__bm25@v1.json: is the entry of ann, but the pull request is by eve" in \
        done.stderr and "Traceback" not in done.stderr
    alone = _irboard("round", "check", "rounds/scifact-blind", "--base", base, "--now", now, cwd=repo.root)
    assert alone.returncode == 1 and "--base and --author go together" in alone.stderr


@pytest.mark.parametrize("args, message", [
    (["--owner", "not a login"], "not a GitHub account name"),
    (["--owner", "ann", "--run", "/nonexistent.run"], "--run /nonexistent.run: cannot be read"),
])
def test_commit_refuses_bad_input_in_one_line(repo, args, message):
    base = ["round", "commit", str(repo.folder), "--model-id", "ann/x", "--salt-out", str(repo.private / "x.salt")]
    if "--run" not in args:
        base += ["--run", str(repo.run("bm25"))]
    done = _irboard(*base, *args)
    assert done.returncode == 1 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_reveal_refuses_a_bad_salt_in_one_line(repo):
    repo.commit("bm25", "ann/bm25", "ann")()
    (repo.private / "bad.salt").write_bytes(b"\xff\xfe not hex")
    done = _irboard("round", "reveal", str(repo.folder), "--entry", "ann~ann__bm25@v1", "--run", str(repo.run("bm25")),
                    "--salt", str(repo.private / "bad.salt"))
    assert done.returncode == 1 and "must hold the 32 to 128 lower-case hex digits" in done.stderr
    assert "Traceback" not in done.stderr
