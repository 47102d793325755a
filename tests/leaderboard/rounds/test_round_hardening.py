"""Sealed rounds attacked again, as a hostile participant and as an outsider: each attack is played in a real git
repository (tests.leaderboard.rounds.test_round_attacks.Repo), every file entering main by a merge commit at a
set instant and each pull request checked as the `rounds` workflow checks it."""

from __future__ import annotations

import json

import pytest

from evaluator.result import ModelBlock
from leaderboard.rounds.play import commit_run
from tests.leaderboard.rounds.test_round_attacks import DAY, RULES, Repo, _entries, _judge
from tests.leaderboard.rounds.test_rounds import FROZEN, JUDGED, OPEN, PUBLISHED, REVEALED, ROOT


@pytest.fixture
def repo(tmp_path):
    return Repo(tmp_path)


def test_squatting_anothers_model_id_never_blocks_its_owner(repo):
    """Eve commits first under ann's model id and revision: it is eve's own entry, named for her account, so ann's
    commitment of her model still enters, is checked clean and counts; each is shown with its owner."""
    repo.pull_request("eve", "eve", repo.commit("splade-tiny", "ann/bm25", "eve"), OPEN + DAY)
    assert repo.check("eve", OPEN + DAY).problems == []
    repo.merge("eve", OPEN + DAY)
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + 2 * DAY)
    assert repo.check("ann", OPEN + 2 * DAY).problems == []
    repo.merge("ann", OPEN + 2 * DAY)
    repo.pull_request("ann-r", "ann", repo.reveal("ann~ann__bm25@v1", "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    assert repo.check("ann-r", FROZEN + DAY).problems == []
    repo.merge("ann-r", FROZEN + DAY)
    entries = _entries(repo.status(REVEALED + DAY))
    assert entries["ann~ann__bm25@v1"].status == "revealed" and entries["ann~ann__bm25@v1"].owner == "ann"
    assert entries["eve~ann__bm25@v1"].status == "withdrawn" and entries["eve~ann__bm25@v1"].owner == "eve"


def test_a_commitment_named_for_another_owner_is_refused(repo):
    """A file named for ann's entry but saying owner eve (or the reverse) is refused by its name."""
    def squat():
        commit_run(repo.folder, repo.run("bm25"), ModelBlock(id="ann/bm25", type="other", revision="v1"), "eve",
                   repo.private / "eve.salt")
        (repo.folder / "commitments" / "eve~ann__bm25@v1.json").rename(repo.folder / "commitments" /
                                                                       "ann~ann__bm25@v1.json")

    repo.pull_request("eve", "eve", squat, OPEN + DAY)
    assert any("ann~ann__bm25@v1.json: is named for another model or owner; name it eve~ann__bm25@v1.json" in p
               for p in repo.check("eve", OPEN + DAY).problems)


@pytest.mark.parametrize("content, message", [
    (b"[" * 60_000, "is not valid JSON"),  # nested past the parser's recursion limit
    (None, "is not valid JSON (the key 'owner' is given twice)"),
    (b"\x00\xff" * 1000, "is not valid JSON"),
])
def test_a_malformed_commitment_stops_neither_the_check_nor_the_strict_build(repo, tmp_path, content, message):
    """A participant's commitment that no JSON reader can take (nesting past the recursion limit, binary) or that
    says two things (a key twice: a reviewer reads the first, json keeps the last) is one refused entry with a
    one-line reason; the check answers and the strict build publishes the round's page."""
    from leaderboard.web.build import build_site

    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    if content is None:  # ann's name first, eve's last
        content = (b'{"owner": "ann", "model": {"id": "eve/x", "type": "other", "revision": "v1"}, "sha256": "'
                   + b"0" * 64 + b'", "owner": "eve"}')

    def write():
        (repo.folder / "commitments" / "eve~eve__x@v1.json").write_bytes(content)

    repo.pull_request("eve", "eve", write, OPEN + 2 * DAY)
    problems = repo.check("eve", OPEN + 2 * DAY).problems
    assert any("eve~eve__x@v1.json: " + message in p for p in problems), problems
    repo.merge("eve", OPEN + 2 * DAY)
    entries = _entries(repo.status(OPEN + 3 * DAY))
    assert entries["eve~eve__x@v1"].status == "refused" and message in entries["eve~eve__x@v1"].reason
    assert entries["ann~ann__bm25@v1"].status == "committed"
    report = build_site(ROOT / "results", tmp_path / "site", strict=True, rounds_dir=repo.folder.parent,
                        now=OPEN + 3 * DAY)
    page = (tmp_path / "site" / "rounds" / "scifact-blind.html").read_text()
    assert "eve~eve__x@v1.json: is not valid JSON" in page
    assert any("eve~eve__x@v1.json" in note for note in report.round_notes)


@pytest.mark.parametrize("change, message", [
    (lambda rules: rules.replace(REVEALED.isoformat(), "2027-01-21T23:59:60+00:00"), "impossible date"),
    (lambda rules: rules.replace(JUDGED.isoformat(), "2027-02-30T00:00:00+00:00"), "impossible date"),
    (lambda rules: rules + f"phases: {{open: {OPEN.isoformat()}, frozen: {FROZEN.isoformat()}, revealed: "
                           f"{(REVEALED + 300 * DAY).isoformat()}, judged: {(JUDGED + 300 * DAY).isoformat()}, "
                           f"published: {(PUBLISHED + 300 * DAY).isoformat()}}}\n", "the key 'phases' is given twice"),
    (lambda rules: "x: " + "[" * 30_000 + "\n", "nested too deeply"),
])
def test_a_round_yml_change_that_cannot_be_read_leaves_the_rules_as_they_were(repo, change, message):
    """A version of round.yml after the open that holds a leap second, a 30 February, a second `phases:` (the
    reviewer reads the first, a YAML reader would keep the last) or nesting too deep: a problem, and the round
    keeps its rules; nothing stops."""
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    path = repo.folder / "round.yml"
    repo.pull_request("rules", "maint", lambda: path.write_text(change(path.read_text())), OPEN + 2 * DAY)
    assert any(message in p for p in repo.check("rules", OPEN + 2 * DAY).problems)
    repo.merge("rules", OPEN + 2 * DAY)
    status = repo.status(FROZEN + DAY)
    assert status.ledger.round.spec.phases.revealed == REVEALED and status.ledger.phase == "frozen"
    assert any("round.yml" in p and message in p and "the round keeps its earlier rules" in p
               for p in status.problems)
    assert _entries(status)["ann~ann__bm25@v1"].status == "committed"


def test_only_maintainers_may_change_the_rules(repo):
    """A participant proposing an extension (more time to reveal, once the others' reveals are public) fails the
    check; the same extension from a maintainer passes."""
    extended = RULES.replace(REVEALED.isoformat(), (REVEALED + 5 * DAY).isoformat())
    path = repo.folder / "round.yml"
    repo.pull_request("eve", "eve", lambda: path.write_text(extended), FROZEN + DAY)
    assert any("round.yml: only the round's maintainers (maint) change its rules; eve is not one" in p
               for p in repo.check("eve", FROZEN + DAY).problems)
    repo.pull_request("maint", "Maint", lambda: path.write_text(extended), FROZEN + DAY)
    assert repo.check("maint", FROZEN + DAY).problems == []


def test_a_reveals_link_to_a_folder_of_the_machine_lists_nothing_of_it(repo, tmp_path):
    """`reveals` committed as a link to a folder outside the repository: a problem, and the round's check and page
    never list (or read) what that folder holds."""
    from leaderboard.web.build import build_site

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret-name.run").write_text("x")
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)

    def vandalise():
        (repo.folder / "reveals").symlink_to(outside)
        (repo.folder / "notes.txt").write_text("x")

    repo.pull_request("eve", "eve", vandalise, FROZEN + DAY)
    problems = repo.check("eve", FROZEN + DAY).problems
    assert any("reveals: not part of a round" in p for p in problems) and not any("secret" in p for p in problems)
    assert any("notes.txt: not part of a round" in p for p in problems)  # the check's own tree has it already
    repo.merge("eve", FROZEN + DAY)
    status = repo.status(REVEALED + DAY)
    assert not any("secret" in p for p in status.problems)
    build_site(ROOT / "results", tmp_path / "site", strict=True, rounds_dir=repo.folder.parent, now=REVEALED + DAY)
    assert "secret" not in (tmp_path / "site" / "rounds" / "scifact-blind.html").read_text()


def test_a_bot_account_is_never_a_participant(repo):
    """A commitment owned by a bot (e.g. the account a maintainers' workflow opens pull requests as) is refused:
    a participant is a person's account, and a bot's entries would pass as the maintainers'."""
    fair = repo.commit("bm25", "ann/bm25", "ann")()
    data = json.loads(fair.read_text())
    (repo.folder / "commitments" / "github-actions~ann__bm25@v1.json").write_text(
        json.dumps({**data, "owner": "github-actions[bot]"}))
    fair.unlink()
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "bot", at=OPEN + DAY)
    entry = repo.status(OPEN + 2 * DAY).ledger.entries[0]
    assert entry.status == "refused" and "is a bot account" in entry.reason
    with pytest.raises(Exception, match="is a bot account"):
        commit_run(repo.folder, repo.run("bm25"), ModelBlock(id="x", type="other"), "github-actions[bot]",
                   repo.private / "bot.salt")


def test_squatting_changes_nothing_of_the_board_for_the_owner(repo):
    """End to end: with a squatter's entry of the same model id revealed beside it, ann's run is scored as her own."""
    repo.pull_request("eve", "eve", repo.commit("splade-tiny", "ann/bm25", "eve"), OPEN + DAY)
    repo.merge("eve", OPEN + DAY)
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + 2 * DAY)
    repo.pull_request("eve-r", "eve", repo.reveal("eve~ann__bm25@v1", "splade-tiny", "eve-ann/bm25.salt"),
                      FROZEN + DAY)
    repo.merge("eve-r", FROZEN + DAY)
    repo.pull_request("ann-r", "ann", repo.reveal("ann~ann__bm25@v1", "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    repo.merge("ann-r", FROZEN + DAY)
    _judge(repo, REVEALED + DAY)
    runs = {row.entry: row for row in repo.status(JUDGED + DAY).board.runs}
    assert runs["ann~ann__bm25@v1"].participant == "ann" and runs["eve~ann__bm25@v1"].participant == "eve"
    assert runs["ann~ann__bm25@v1"].metrics != runs["eve~ann__bm25@v1"].metrics


def test_squash_and_rebase_merges_count_at_the_merge_and_a_backdated_push_is_shown(repo):
    """GitHub's squash and rebase merges make new commits on main, dated when it makes them: a commitment counts
    then, whatever its pull request's own commits say. A commit that reaches main with a date of its own (a push or
    a fast-forward, which branch protection forbids) and goes back in time is a problem on the page."""
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)  # claims to be on time
    repo.git("checkout", "-q", "ann")
    repo.git("commit", "-q", "--allow-empty", "-m", "second commit", at=OPEN + DAY)
    repo.git("checkout", "-q", "main")
    repo.pull_request("bo", "bo", repo.commit("splade-tiny", "bo/splade", "bo"), OPEN + DAY)
    repo.git("merge", "-q", "--squash", "bo")
    repo.git("commit", "-q", "-m", "bo (#2)", at=OPEN + 2 * DAY)
    for commit in repo.git("rev-list", "--reverse", "main..ann").split():  # rebase-merged late, as GitHub does
        repo.git("cherry-pick", "--allow-empty", commit, at=FROZEN + DAY)
    status = repo.status(FROZEN + 2 * DAY)
    entries = _entries(status)
    assert entries["ann~ann__bm25@v1"].committed_at == FROZEN + DAY and entries["ann~ann__bm25@v1"].status == "refused"
    assert entries["bo~bo__splade@v1"].committed_at == OPEN + 2 * DAY
    assert not any("before the commit before it" in p for p in status.problems)
    # a commit pushed with its own date: main now goes back in time
    repo.pull_request("cy", "cy", repo.commit("bm25", "cy/bm25", "cy"), OPEN + DAY)
    repo.git("merge", "-q", "--ff-only", "cy")
    problems = repo.status(FROZEN + 2 * DAY).problems
    assert any(f"is dated {(OPEN + DAY).isoformat()}, before the commit before it ({(FROZEN + DAY).isoformat()})" in p
               for p in problems)


def test_a_dotted_revision_reveals_cleanly_and_a_withdrawn_entrys_reveal_is_a_problem(repo):
    """A revision such as 1.0 puts a dot in the entry's name: its reveal is its own, never 'no accepted
    commitment'. A reveal of a commitment its owner deleted is listed, and never pooled."""
    model = ModelBlock(id="ann/bm25", type="other", revision="1.0")
    repo.pull_request("ann", "ann", lambda: commit_run(repo.folder, repo.run("bm25"), model, "ann",
                                                       repo.private / "ann.salt"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("bo", "bo", repo.commit("splade-tiny", "bo/splade", "bo"), OPEN + DAY)
    repo.merge("bo", OPEN + DAY)
    repo.pull_request("ann-r", "ann", repo.reveal("ann~ann__bm25@1.0", "bm25", "ann.salt"), FROZEN + DAY)
    assert repo.check("ann-r", FROZEN + DAY).problems == []
    repo.merge("ann-r", FROZEN + DAY)
    repo.pull_request("bo-w", "bo", lambda: (repo.folder / "commitments" / "bo~bo__splade@v1.json").unlink(),
                      FROZEN + DAY)
    repo.merge("bo-w", FROZEN + DAY)

    def reveal_anyway():
        (repo.folder / "reveals" / "bo~bo__splade@v1.run").write_bytes(repo.run("splade-tiny").read_bytes())
        (repo.folder / "reveals" / "bo~bo__splade@v1.salt").write_bytes((repo.private / "bo-bo/splade.salt").read_bytes())

    repo.pull_request("bo-r", "bo", reveal_anyway, FROZEN + 2 * DAY)
    repo.merge("bo-r", FROZEN + 2 * DAY)
    status = repo.status(REVEALED + DAY)
    assert [entry.name for entry in status.ledger.revealed()] == ["ann~ann__bm25@1.0"]
    assert not any("ann~ann__bm25@1.0" in p for p in status.problems), status.problems
    assert any("reveals/bo~bo__splade@v1: reveals a commitment its owner deleted at" in p for p in status.problems)


def test_the_pages_shell_command_never_names_a_stray_file(repo, tmp_path):
    """The round page offers `gh attestation verify FILE …` to paste into a shell. A stray file named `$(…)` sorts
    before every round file: it is a problem on the page, never the FILE of that command."""
    from leaderboard.web.build import build_site

    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("eve", "eve", lambda: (repo.folder / "$(touch pwned)").write_text("x"), OPEN + DAY)
    assert any("$(touch pwned): not part of a round" in p for p in repo.check("eve", OPEN + DAY).problems)
    repo.merge("eve", OPEN + 2 * DAY)
    build_site(ROOT / "results", tmp_path / "site", strict=True, rounds_dir=repo.folder.parent, now=OPEN + 3 * DAY)
    page = (tmp_path / "site" / "rounds" / "scifact-blind.html").read_text()
    command = next(line for line in page.splitlines() if "gh attestation verify" in line and "<code>" in line)
    assert "gh attestation verify rounds/scifact-blind/commitments/ann~ann__bm25@v1.json --repo" in command
    assert "$(touch pwned): not part of a round" in page


def _reopened(rules: str) -> str:
    return rules.replace(JUDGED.isoformat(), (JUDGED + 5 * DAY).isoformat()).replace(
        PUBLISHED.isoformat(), (PUBLISHED + 5 * DAY).isoformat())


def _revealed_round(repo: Repo) -> None:
    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("reveal", "ann", repo.reveal("ann~ann__bm25@v1", "bm25", "ann-ann/bm25.salt"), FROZEN + DAY)
    repo.merge("reveal", FROZEN + DAY)


def test_late_judgments_may_reopen_the_judging_window_before_publication(repo):
    """The judges are late: no judgments entered by phases.judged. An extension merged after it, before the board
    is published, reopens the window, and judgments merged then count."""
    _revealed_round(repo)
    path = repo.folder / "round.yml"
    repo.pull_request("reopen", "maint", lambda: path.write_text(_reopened(path.read_text())), JUDGED + DAY)
    assert repo.check("reopen", JUDGED + DAY).problems == []
    repo.merge("reopen", JUDGED + DAY)
    status = repo.status(JUDGED + DAY)
    assert status.ledger.round.spec.phases.judged == JUDGED + 5 * DAY and status.ledger.phase == "revealed"
    _judge(repo, JUDGED + 2 * DAY)
    status = repo.status(JUDGED + 6 * DAY)
    assert status.ledger.judged_at == JUDGED + 3 * DAY and status.board is not None


def test_the_judging_window_never_reopens_once_judgments_entered_or_the_board_is_out(repo):
    """Judgments in the window, then an extension after it closed: refused, so that no judgment is made again once
    the scores could be seen; and nothing reopens once the board is published."""
    _revealed_round(repo)
    _judge(repo, REVEALED + DAY)
    path = repo.folder / "round.yml"
    repo.pull_request("reopen", "maint", lambda: path.write_text(_reopened(path.read_text())), JUDGED + DAY)
    assert any("moves phases.judged, which had begun" in p for p in repo.check("reopen", JUDGED + DAY).problems)
    bare = Repo(repo.root.parent / "bare")
    _revealed_round(bare)
    path = bare.folder / "round.yml"
    bare.pull_request("reopen", "maint", lambda: path.write_text(_reopened(path.read_text())), PUBLISHED + DAY)
    assert any("moves phases.judged, which had begun" in p for p in bare.check("reopen", PUBLISHED + DAY).problems)


def test_a_round_whose_declaration_is_deleted_keeps_its_page(repo, tmp_path):
    """Deleting round.yml (refused by the check, merged anyway) hides nothing: the page is built from the rules
    in history and lists the deletion; a link in rounds/ in place of a round folder is never read."""
    from leaderboard.web.build import build_site

    repo.pull_request("ann", "ann", repo.commit("bm25", "ann/bm25", "ann"), OPEN + DAY)
    repo.merge("ann", OPEN + DAY)
    repo.pull_request("eve", "eve", lambda: (repo.folder / "round.yml").unlink(), OPEN + DAY)
    assert any("round.yml: only the round's maintainers" in p for p in repo.check("eve", OPEN + DAY).problems)
    repo.merge("eve", OPEN + 2 * DAY)
    (repo.folder.parent / "elsewhere").symlink_to(tmp_path / "private")
    report = build_site(ROOT / "results", tmp_path / "site", strict=True, rounds_dir=repo.folder.parent,
                        now=OPEN + 3 * DAY)
    page = (tmp_path / "site" / "rounds" / "scifact-blind.html").read_text()
    assert "ann~ann__bm25@v1" in page and "round.yml: deleted at" in page
    assert not any("elsewhere" in note for note in report.round_notes)
