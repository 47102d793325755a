"""What every page says about itself: where it was built from, the build's notes without the builder's paths, true
empty states, the home page's answer to "which model is best, and how sure", and crossings claimed only beyond
the prediction's measured error."""

import subprocess

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.submissions.load import load_results
from leaderboard.web.build import build_site
from leaderboard.web.provenance import BuildStamp, build_stamp, web_address
from leaderboard.web.render import public_note
from leaderboard.web.views.home import best_answer
from leaderboard.web.views.home import build as build_home
from leaderboard.web.views.ranks import build as build_ranks


def _git(folder, *args):
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def test_stamp_comes_from_git_in_the_results_folder(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("x")
    _git(tmp_path, "add", "a.txt")
    env = {"GIT_AUTHOR_DATE": "2025-03-04T05:06:07Z", "GIT_COMMITTER_DATE": "2025-03-04T05:06:07Z"}
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm",
                    "x"], check=True, env={**env, "PATH": "/usr/bin:/bin"})
    _git(tmp_path, "remote", "add", "origin", "git@github.com:org/board.git")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    stamp = build_stamp(tmp_path, environ={})
    assert stamp == BuildStamp("https://github.com/org/board", head, "2025-03-04")
    assert stamp.commit_href == f"https://github.com/org/board/commit/{head}"
    # GitHub Actions' environment wins; SOURCE_DATE_EPOCH sets the date
    ci = build_stamp(tmp_path, environ={"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
                                        "GITHUB_SHA": "ab" * 20, "SOURCE_DATE_EPOCH": "0"})
    assert ci == BuildStamp("https://github.com/o/r", "ab" * 20, "1970-01-01")
    assert build_stamp(tmp_path / "nowhere", environ={}) == BuildStamp()


def test_remotes_become_web_addresses_without_credentials():
    assert web_address("https://user:token@github.com/org/repo.git") == "https://github.com/org/repo"
    assert web_address("/srv/git/repo") is None and web_address(None) is None


def test_every_page_names_the_repository_commit_and_date(tmp_path, synth):
    stamp = BuildStamp("https://github.com/org/board", "c0ffee" * 6 + "abcd", "2025-03-04")
    out = tmp_path / "_site"
    build_site(synth.GOLDEN_RESULTS, out, lookup=synth.golden_lookup, stamp=stamp)
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        text = page.read_text()
        assert 'Repository: <a href="https://github.com/org/board">' in text, page
        assert "Built from commit" in text and "c0ffeec0ffee" in text and "of 2025-03-04" in text, page
    assert 'pull request at <a href="https://github.com/org/board">' in (out / "submit.html").read_text()


def test_build_notes_leave_out_the_builders_paths_and_system_errors():
    note = public_note("judgments of beir/scifact: cannot download to /root/.cache/irboard/qrels/scifact.tsv: "
                       "<urlopen error [Errno -3] Temporary failure in name resolution>; shown unverified")
    assert "/root" not in note and "Errno" not in note and "…/scifact.tsv" in note
    assert public_note("results/bm25/x.json: no nDCG@10") == "results/bm25/x.json: no nDCG@10"


def test_nothing_verified_says_so_on_the_ranks_and_home_pages(synth):
    results = load_results(synth.GOLDEN_RESULTS).results  # no verification: nothing is ranked
    board = build_leaderboard(results, SiteSettings(), synth.golden_lookup)
    ranks = build_ranks(board)
    assert ranks.verified == 0
    assert all(not table.rows for table in ranks.tables) and any(table.complete for table in ranks.tables)
    home = build_home(board)
    assert home.answer.startswith("No model is ranked on All datasets")


def test_home_answer_names_who_could_be_first(synth):
    results = load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification).results
    board = build_leaderboard(results, SiteSettings(), synth.golden_lookup)
    overall = next(g for g in board.groups if g.name == "All datasets")
    tied = [m for m, s in overall.scores.items() if s.mean_rank is not None and s.rank_interval[0] == 1]
    ranked = sum(s.mean_rank is not None for s in overall.scores.values())
    # who could be #1 at 95%: the confidence set for the best, never larger than the top group here
    assert overall.best_set and len(overall.best_set) <= len(tied)
    answer = best_answer(board, overall)  # one sentence, naming its group, the ★ of the table
    assert answer.startswith(f"Who could be #1 on All datasets ({len(overall.dataset_ids)} datasets) at 95%")
    assert f"({len(overall.best_set)} of {ranked}, marked ★" in answer and f"α / {ranked - 1}" in answer
    assert all(model_id in answer for model_id in overall.best_set)

