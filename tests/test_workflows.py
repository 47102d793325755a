"""The GitHub Actions workflows: linted, least privilege, pinned actions, and their commands run on fixtures."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import make_scifact_result

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def _load(name: str) -> dict:
    data = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_actionlint_and_schema():
    assert {p.name for p in WORKFLOWS} == {"ci.yml", "results.yml", "results-comment.yml", "deploy.yml",
                                           "rounds.yml", "tooling-gate.yml", "reproduce.yml"}
    lint = subprocess.run([str(BIN / "actionlint"), *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    schema = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                             *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert schema.returncode == 0, schema.stdout + schema.stderr


def test_third_party_actions_pinned_to_full_commit_shas():
    for path in WORKFLOWS:
        for action in re.findall(r"uses:\s*(\S+)", path.read_text()):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), f"{path.name}: {action} is not pinned"


def test_least_privilege():
    for path in WORKFLOWS:
        text = path.read_text()
        # the gate alone runs on pull_request_target (from the base branch), and it checks out nothing
        assert ("pull_request_target" in text) == (path.name == "tooling-gate.yml"), path.name
        workflow = _load(path.name)
        assert workflow["permissions"] in ({"contents": "read"}, {}), path.name
    results = _load("results.yml")
    # every pull request (a required check of a path-filtered workflow stays pending): the job decides what to check
    # every pull request, and again when its description (which may name a benchmark of its own) is edited
    assert results["on"] == {"pull_request": {"types": ["opened", "synchronize", "reopened", "edited"]}}
    assert all("permissions" not in job for job in results["jobs"].values())
    comment = _load("results-comment.yml")
    assert set(comment["on"]) == {"workflow_run"}
    (job,) = comment["jobs"].values()
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert not any("uses" in step for step in job["steps"]), "the comment job must not check out or run PR code"
    deploy = _load("deploy.yml")
    assert deploy["on"]["push"]["branches"] == ["main"]
    assert "permissions" not in deploy["jobs"]["build"]
    assert deploy["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    build_steps = " ".join(step.get("run", "") for step in deploy["jobs"]["build"]["steps"])
    assert "irboard build --strict" in build_steps


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _result(model_id: str, seed: int, kind: str = "dense", section: str = "model", **fields) -> str:
    """A real-shaped SciFact result; `fields` replace readable fields of `section`."""
    text = make_scifact_result(model_id, seed, kind)
    if not fields:
        return text
    data = json.loads(text)
    data[section].update(fields)
    return json.dumps(data)


def _repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository whose main branch holds `files` (path -> text), on branch `pr` from there."""
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "main")
    _git(repo, "checkout", "-qb", "pr")
    return repo


def _commit(repo: Path, message: str = "pull request") -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)


def _list_changes(repo: Path, out: Path) -> subprocess.CompletedProcess:
    # As the workflow runs it: the script of this checkout (the "base"), the fixture repository as data.
    return subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "changed-results.sh"), "main", str(repo),
                           str(out)], cwd=repo, capture_output=True, text=True, env={**os.environ,
                                                                                     "IRBOARD_PYTHON": sys.executable})


def _rows(markdown: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith("| change |")]


def test_changed_results_lists_every_change_under_any_name(tmp_path):
    bm25, old, gone, kept = (f"results/{slug}/beir__scifact.json" for slug in ("bm25", "org__old", "org__gone",
                                                                                "org__kept"))
    repo = _repo(tmp_path, {bm25: _result("bm25", 1, "lexical"), old: _result("org/old", 2),
                            gone: _result("org/gone", 3), kept: _result("org/kept", 4), "README.md": "hi\n"})
    (repo / "results" / "org__new").mkdir()
    (repo / "results" / "org__new" / "beir__scifact.json").write_text(_result("org/new", 5))
    (repo / kept).write_text(_result("org/kept", 4, section="provenance", hardware="another machine"))  # same model version
    (repo / bm25).write_text(_result("bm25", 6, "lexical", revision="v2"))  # another version: replaced
    (repo / gone).unlink()
    (repo / "results" / "org__moved").mkdir()
    _git(repo, "mv", old, "results/org__moved/beir__scifact.json")
    odd = ["results/a b/beir__scifact.json", "results/bm25\n/beir__scifact.json", "results/x/q'u\"ote.json",
           "results/bm25/.beir__scifact.json.x1.tmp"]
    for path in odd:
        (repo / path).parent.mkdir(exist_ok=True)
        (repo / path).write_text(_result("org/new", 5))
    (repo / "results" / "org__link").mkdir()
    (repo / "results" / "org__link" / "beir__scifact.json").symlink_to("/etc/passwd")
    (repo / "README.md").write_text("changed\n")
    (repo / ".github").mkdir()
    (repo / ".github" / "evil.yml").write_text("x\n")
    _commit(repo)

    done = _list_changes(repo, tmp_path / "out")
    assert done.returncode == 1
    problems = done.stderr.splitlines()
    assert len(problems) == len(odd) + 1 and all("not a result file" in line for line in problems), done.stderr
    assert any(repr(odd[1]) in line for line in problems)  # the newline shown, not obeyed
    counts = json.loads((tmp_path / "out" / "counts.json").read_text())
    assert counts == {"added": 1, "changed": 1, "replaced": 1, "renamed": 1, "deleted": 1, "outside": 2,
                      "problems": len(odd) + 1}
    changed = (tmp_path / "out" / "changed.nul").read_bytes().split(b"\0")
    assert sorted(changed) == sorted([b"", bm25.encode(), kept.encode(), b"results/org__moved/beir__scifact.json",
                                      b"results/org__new/beir__scifact.json"])
    markdown = (tmp_path / "out" / "changes.md").read_text()
    rows = {row[0]: row for row in _rows(markdown)}
    assert set(rows) == {"added", "changed", "**replaced** (another model version)", "renamed", "deleted"}
    replaced = rows["**replaced** (another model version)"]
    assert replaced[1:5] == [bm25, "bm25", "beir/scifact", "nDCG@10"]
    old_value, new_value = (json.loads(_result("bm25", seed, "lexical"))["metrics"]["nDCG@10"] for seed in (1, 6))
    assert replaced[5:] == [f"{old_value:.4f}", f"{new_value:.4f}"] and old_value != new_value
    assert rows["deleted"][1] == gone and rows["deleted"][6] == "—"
    assert rows["renamed"][1] == f"{old} → results/org__moved/beir__scifact.json"
    assert rows["changed"][5] == rows["changed"][6]
    assert "- README.md" in markdown and "- .github/evil.yml" in markdown
    assert "results/bm25\\n/beir__scifact.json" in markdown and "bm25\n" not in markdown  # shown, not obeyed


@pytest.fixture
def pr_checkout(tmp_path, scifact_like_results):
    """A git repository shaped like a pull request: main with one result, a branch adding another."""
    base_file, new_file = scifact_like_results
    repo = _repo(tmp_path, {f"results/{base_file.parent.name}/{base_file.name}": base_file.read_text()})
    (repo / "results" / new_file.parent.name).mkdir()
    shutil.copy(new_file, repo / "results" / new_file.parent.name / new_file.name)
    _commit(repo, "add a result")
    return repo


@pytest.mark.slow
def test_results_workflow_commands_on_fixtures(tmp_path, pr_checkout, scifact_like_results):
    repo = pr_checkout
    listed = _list_changes(repo, tmp_path / "comparison")
    assert listed.returncode == 0, listed.stderr
    counts = json.loads((tmp_path / "comparison" / "counts.json").read_text())
    assert counts["added"] == 1 and counts["outside"] == 0 and sum(counts.values()) == 1
    changed = (tmp_path / "comparison" / "changed.nul").read_bytes().decode().split("\0")[:-1]
    new_file = scifact_like_results[1]
    assert changed == [f"results/{new_file.parent.name}/{new_file.name}"]
    base = _git(repo, "merge-base", "main", "HEAD").strip()
    irboard = str(BIN / "irboard")
    validate = subprocess.run([irboard, "validate", "--base", base, *changed], cwd=repo, capture_output=True,
                              text=True)
    assert validate.returncode == 0, validate.stderr
    compare = subprocess.run([irboard, "compare", "--results", "results", "--out", str(tmp_path / "comparison.md"),
                              *changed], cwd=repo, capture_output=True, text=True)
    assert compare.returncode == 0, compare.stderr
    markdown = (tmp_path / "comparison.md").read_text()
    assert "| org/new-model | beir/scifact | nDCG@10 |" in markdown and "vs bm25" in markdown
    build_step = _step("results.yml", "Build the site (the preview of the board after the merge)")["run"]
    assert build_step.endswith("--highlight") and "xargs -0 -a ../comparison/changed.nul" in build_step
    build = subprocess.run([irboard, "build", "--strict", "--results", "results", "--out", str(tmp_path / "_site"),
                            "--highlight", *changed], cwd=repo, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    assert (tmp_path / "_site" / "index.html").is_file()
    # the preview marks the new model's rows on every table, and says so on every page
    assert 'tr[data-id="org/new-model"] > *' in (tmp_path / "_site" / "css" / "highlight.css").read_text()
    for page in ("index.html", "datasets/beir__scifact.html"):
        text = (tmp_path / "_site" / page).read_text()
        assert "css/highlight.css" in text and "the rows of <code>org/new-model</code> are highlighted" in text
    assert 'data-id="org/new-model"' in (tmp_path / "_site" / "datasets" / "beir__scifact.html").read_text()
    (preview,) = [step for step in _load("results.yml")["jobs"]["check"]["steps"]
                  if step.get("with", {}).get("name") == "site-preview"]
    assert preview["with"]["path"] == "_site"


def _step(workflow: str, name: str) -> dict:
    (job,) = _load(workflow)["jobs"].values()
    return next(step for step in job["steps"] if step.get("name") == name)


def _run_step(step: dict, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """A workflow step's bash, with a recording `gh` first on PATH instead of GitHub's."""
    bin_dir = cwd / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text('#!/bin/bash\nprintf "%s\\n" "$*" >> gh.log\n'
                                '[ "$1 $2" = "pr list" ] && cat prs-from-github.json\nexit 0\n')
    (bin_dir / "gh").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "GITHUB_OUTPUT": str(cwd / "github-output"), **env}
    return subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=cwd, env=env, capture_output=True,
                          text=True)


def test_comment_goes_to_the_pull_request_whose_head_was_checked(tmp_path):
    sha = "a" * 40
    (tmp_path / "prs-from-github.json").write_text(json.dumps(
        [{"number": 7, "headRefOid": "b" * 40}, {"number": 12, "headRefOid": sha}]))
    step = _step("results-comment.yml", "Find the pull request of the checked commit")
    done = _run_step(step, tmp_path, {"HEAD_SHA": sha, "REPO": "o/r"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "github-output").read_text() == "number=12\n"
    (tmp_path / "github-output").unlink()
    (tmp_path / "prs-from-github.json").write_text(json.dumps([{"number": 7, "headRefOid": "b" * 40}]))
    assert _run_step(step, tmp_path, {"HEAD_SHA": sha, "REPO": "o/r"}).returncode == 1
    assert not (tmp_path / "github-output").exists()


SCOPE = "Does the pull request change anything under results/, datasets/ or judgments/?"


@pytest.mark.parametrize(("change", "checked"), [
    ({"Makefile": "x\n"}, False),  # tooling only: the required check passes, the gate holds it
    ({"results/bm25/beir__scifact.json": "{}\n"}, True),
    ({"results/README.md": "x\n", "Makefile": "y\n"}, True),  # anything under results/ is checked
    ({}, True),  # a deletion under results/ (below)
    ({"datasets/acme__claims.json": "{}\n"}, True),  # a declaration only: the results it defines are checked again
    ({"judgments/beir__scifact/extra.json": "{}\n"}, True),  # a judgment set only: its dataset's results again
])
def test_the_results_check_runs_on_every_pull_request_and_checks_only_result_changes(tmp_path, change, checked):
    """`results / check` is required, so it runs for every pull request (a required check of a workflow that a path
    filter skipped would stay pending): its scope step decides, and every later step runs only after changes under
    results/. The comment workflow then finds no counts and writes nothing."""
    repo = _repo(tmp_path, {"Makefile": "all:\n", "results/old/beir__scifact.json": "{}\n"})
    base = _git(repo, "rev-parse", "HEAD").strip()
    for path, text in change.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    if not change:
        (repo / "results" / "old" / "beir__scifact.json").unlink()
    _commit(repo)
    done = _run_step(_step("results.yml", SCOPE), repo, {"BASE_SHA": base})
    assert done.returncode == 0, done.stderr
    assert (repo / "github-output").read_text() == f"results={'true' if checked else 'false'}\n"
    steps = _load("results.yml")["jobs"]["check"]["steps"]
    at = next(i for i, step in enumerate(steps) if step.get("name") == SCOPE)
    assert all("if" not in step for step in steps[:at + 1])
    assert all(step.get("if") == "steps.scope.outputs.results == 'true'" for step in steps[at + 1:])
    comment = _load("results-comment.yml")["jobs"]["comment"]["steps"]
    assert comment[-1]["if"] == "steps.counts.outputs.found == 'true'"


COUNTS = {"added": 2, "changed": 0, "replaced": 1, "renamed": 0, "deleted": 3, "outside": 0, "problems": 0}


def _comment(tmp_path: Path, counts) -> subprocess.CompletedProcess:
    (tmp_path / "counts").mkdir(exist_ok=True)
    (tmp_path / "counts" / "counts.json").write_text(counts if isinstance(counts, str) else json.dumps(counts))
    step = _step("results-comment.yml", "Comment on the pull request")
    return _run_step(step, tmp_path, {"NUMBER": "12", "REPO": "o/r", "RUN_ID": "99", "SERVER": "https://github.com"})


def test_comment_is_the_fixed_template_filled_with_counts(tmp_path):
    done = _comment(tmp_path, COUNTS)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "gh.log").read_text() == "pr comment 12 --repo o/r --body-file body.md\n"
    body = (tmp_path / "body.md").read_text()
    assert "| added | 2 |" in body and "| deleted | 3 |" in body and "(approved by a maintainer) | 0 |" in body
    assert "| replaced (another model version takes the place of an existing result) | 1 |" in body
    assert "[the check](https://github.com/o/r/actions/runs/99)" in body
    template = re.sub(r"\| \d+ \|", "| N |", body)
    assert template == re.sub(r"\| \d+ \|", "| N |", _comment_body_for(tmp_path, {k: 0 for k in COUNTS}))


def _comment_body_for(tmp_path: Path, counts: dict) -> str:
    other = tmp_path / "other"
    other.mkdir()
    assert _comment(other, counts).returncode == 0
    return (other / "body.md").read_text()


@pytest.mark.parametrize("counts", [
    {**COUNTS, "added": "<img src=x onerror=alert(1)>"}, {**COUNTS, "added": "2\n@everyone"},
    {**COUNTS, "added": -1}, {**COUNTS, "added": 2.5}, {**COUNTS, "added": 10**9}, {**COUNTS, "added": [2]},
    {k: v for k, v in COUNTS.items() if k != "deleted"}, '{"added": 1e400}', "not json", "[]",
    json.dumps({**COUNTS, "padding": "x" * 5000}),
])
def test_comment_refuses_anything_but_counts(tmp_path, counts):
    done = _comment(tmp_path, counts)
    assert done.returncode == 1
    assert not (tmp_path / "gh.log").exists() and not (tmp_path / "body.md").exists()


def test_ci_verifies_split_results_from_the_project_store_only():
    """A submitted file's `full.url` is untrusted: the workflows that verify point IRBOARD_FULL_MIRROR at the
    project's store (the default of `irboard split --url-base`), so that address is never fetched in CI."""
    from leaderboard.submissions.full import FULL_STORE

    for name in ("results.yml", "deploy.yml"):
        mirrors = [job.get("env", {}).get("IRBOARD_FULL_MIRROR") for job in _load(name)["jobs"].values()
                   if "IRBOARD_CACHE" in job.get("env", {})]
        assert mirrors and all(mirror == f"${{{{ vars.IRBOARD_FULL_STORE || '{FULL_STORE}' }}}}"
                               for mirror in mirrors), name


def test_rounds_workflow_runs_only_base_branch_tooling_on_pull_request_data():
    workflow = _load("rounds.yml")
    # a required check: it runs for every pull request (a path filter would leave it pending)
    assert workflow["on"] == {"pull_request": None}
    assert workflow["permissions"] == {"contents": "read"}
    steps = workflow["jobs"]["check"]["steps"]
    tooling, pr = steps[0]["with"], steps[1]["with"]
    assert tooling["ref"] == "${{ github.event.pull_request.base.sha }}" and tooling["path"] == "tooling"
    assert pr["path"] == "pr" and pr["fetch-depth"] == 0  # merge times need the history
    assert all(step["with"].get("persist-credentials") is False for step in steps if "checkout" in step.get("uses", ""))
    commands = [step["run"] for step in steps if "run" in step]
    # the pull request's changes against its base, as its author: owner-only changes are checked
    assert any('"$IRBOARD" round check' in command and '--base "$BASE_SHA" --author "$AUTHOR"' in command
               for command in commands)
    env = workflow["jobs"]["check"]["env"]
    assert env["AUTHOR"] == "${{ github.event.pull_request.user.login }}"
    assert env["BASE_SHA"] == "${{ github.event.pull_request.base.sha }}"
    # nothing from the pull request is installed or run
    assert not any("pr/" in command or "pip install" in command for command in commands)


def test_deploy_attests_round_files_with_the_history_it_needs():
    jobs = _load("deploy.yml")["jobs"]
    attest_job = jobs["attest-rounds"]
    assert attest_job["permissions"] == {"contents": "read", "id-token": "write", "attestations": "write"}
    listing = [step["run"] for step in attest_job["steps"] if "run" in step]
    assert len(listing) == 1 and "irboard" not in listing[0] and ".py" not in listing[0]  # no code of the repository
    attest = next(step for step in attest_job["steps"] if "attest-build-provenance" in step.get("uses", ""))
    assert attest["with"] == {"subject-checksums": "${{ runner.temp }}/round-files.sha256"}
    assert attest["if"] == "steps.subjects.outputs.any == 'true'" and "hashFiles" not in str(attest_job)
    steps = jobs["build"]["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0
    build = next(step for step in steps if "irboard build" in step.get("run", ""))
    assert "--now" in build["run"]
    assert "schedule" in _load("deploy.yml")["on"]


def _attest_listing(workspace: Path) -> tuple[subprocess.CompletedProcess, Path]:
    step = next(step for step in _load("deploy.yml")["jobs"]["attest-rounds"]["steps"] if "run" in step)
    (workspace / "tmp").mkdir()
    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(workspace / "tmp"),
           "GITHUB_OUTPUT": str(workspace / "tmp" / "output")}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=workspace / "repo", env=env,
                          capture_output=True, text=True, timeout=60)
    return done, workspace / "tmp"


def test_the_attest_job_lists_only_plain_files_and_never_follows_a_link(tmp_path):
    """The files a round's attestation covers: plain files with plain names, each with its sha256 (as sha256sum
    writes them, the subject-checksums format); links (to /dev/zero: a reader that follows it never ends; to a
    folder of the runner), dot files and names with spaces, newlines or glob characters are left out."""
    import hashlib

    folder = tmp_path / "repo" / "rounds" / "r1"
    (folder / "commitments").mkdir(parents=True)
    (folder / "reveals").mkdir()
    plain = {"rounds/r1/round.yml": b"name: r1\n", "rounds/r1/commitments/ann~org__m@v1.json": b"{}",
             "rounds/r1/reveals/ann~org__m@v1.run": b"q Q0 d 1 1 x\n"}
    for name, data in plain.items():
        (tmp_path / "repo" / name).write_bytes(data)
    (folder / "scores.json").symlink_to("/dev/zero")
    (folder / "judgments").symlink_to("/etc")
    (folder / ".hidden").write_text("x")
    (folder / "a b*.run").write_text("x")
    (folder / "new\nline.run").write_text("x")
    done, temp = _attest_listing(tmp_path)
    assert done.returncode == 0, done.stderr
    expected = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(plain.items()))
    assert (temp / "round-files.sha256").read_text() == expected
    assert (temp / "output").read_text() == "any=true\n"


def test_the_attest_job_attests_nothing_without_rounds(tmp_path):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "rounds").symlink_to("/etc")  # a link in place of the folder lists nothing either
    done, temp = _attest_listing(tmp_path)
    assert done.returncode == 0, done.stderr
    assert (temp / "round-files.sha256").read_text() == "" and not (temp / "output").exists()


GATE = "tooling-gate.yml"


def test_the_tooling_gate_runs_from_the_base_branch_and_runs_nothing_of_the_pull_request():
    """What branch protection relies on (CONTRIBUTING.md): the gate's file is read from the base branch
    (pull_request_target), it checks out nothing and uses no action, interpolates nothing a pull request writes
    into a script, reads the file list with a read-only token, its `approval` job waits in `tooling-review`, and
    the required `verdict` job always runs, after both, so that no skipped job stands for a passed check."""
    gate = _load(GATE)
    assert gate["on"] == {"pull_request_target": {"types": ["opened", "synchronize", "reopened"]}}
    assert gate["permissions"] == {}
    assert set(gate["jobs"]) == {"changes", "approval", "verdict"}
    changes, approval, verdict = (gate["jobs"][name] for name in ("changes", "approval", "verdict"))
    assert changes["permissions"] == {"pull-requests": "read"} and approval["permissions"] == {}
    assert verdict["permissions"] == {}
    for job in (changes, approval, verdict):
        assert all("uses" not in step and "${{" not in step.get("run", "") for step in job["steps"])
        assert "environment" not in job or job is approval
    # the required check: never skipped (always(), not success()), and it reads both jobs' outcomes
    assert verdict["if"] == "always()" and verdict["needs"] == ["changes", "approval"]
    assert verdict["env"] == {"LISTED": "${{ needs.changes.result }}", "OUTSIDE": "${{ needs.changes.outputs.outside }}",
                              "APPROVAL": "${{ needs.approval.result }}"}
    # only numbers and the repository's name come from the event, into the environment, never into a script
    assert set(changes["env"]) == {"GH_TOKEN", "REPO", "NUMBER", "CHANGED"}
    assert changes["env"]["NUMBER"] == "${{ github.event.pull_request.number }}"
    assert changes["env"]["CHANGED"] == "${{ github.event.pull_request.changed_files }}"
    assert approval["needs"] == "changes" and approval["environment"] == "tooling-review"
    assert approval["if"] == "needs.changes.outputs.outside != '0'"
    # no workflow a pull request runs from its own branch holds the approval (it could edit it there)
    for path in WORKFLOWS:
        workflow = _load(path.name)
        if path.name != GATE:
            assert all(job.get("environment") != "tooling-review" for job in workflow["jobs"].values()), path.name


def _gate_step(tmp_path: Path, pages: list[list[dict]], changed: int) -> subprocess.CompletedProcess:
    """The gate's step with a `gh` that serves `pages` (the API's JSON, one list per page) through jq as gh does."""
    for i, page in enumerate(pages):
        (tmp_path / f"page{i}.json").write_text(json.dumps(page))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text('#!/bin/bash\nprintf "%s\\n" "$*" >> gh.log\n'
                                'expr="${@: -1}"\nfor page in page*.json; do jq -r "$expr" "$page"; done\n')
    (bin_dir / "gh").chmod(0o755)
    step = _load(GATE)["jobs"]["changes"]["steps"][0]
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "GITHUB_OUTPUT": str(tmp_path / "github-output"),
           "GH_TOKEN": "t", "REPO": "o/r", "NUMBER": "12", "CHANGED": str(changed)}
    return subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path, env=env,
                          capture_output=True, text=True)


def _files(*names: str, renamed_from: str | None = None) -> list[dict]:
    files = [{"filename": name} for name in names]
    if renamed_from is not None:
        files[-1]["previous_filename"] = renamed_from
    return files


@pytest.mark.parametrize(("pages", "changed", "outside"), [
    ([_files("results/bm25/beir__scifact.json", "results/org__m/beir__nfcorpus.json")], 2, 0),
    ([_files("results/bm25/beir__scifact.json", "Makefile")], 2, 1),
    ([_files("pyproject.toml", "conftest.py", ".ci/run", "tests/x.py")], 4, 4),
    ([_files("results/schema.json")], 1, 1),  # generated from the schema code: tooling
    # reproduction records are written by the maintainers' workflow only: a pull request adding one is held
    ([_files("reproductions/bm25/beir__scifact.json", "results/bm25/beir__scifact.json")], 2, 1),
    ([_files("results/org__m/beir__scifact.json", renamed_from="tests/data/x.json")], 1, 1),  # moved out of tests/
    ([_files("results/a\nb/beir__scifact.json", "results/../Makefile", "results/../x.json")], 3, 2),
    ([_files("results/README.md", "results/m/deep/x.json")], 2, 2),  # not result files: tooling
    ([_files(*[f"results/m{i}/beir__scifact.json" for i in range(100)]), _files("results/z/beir__scifact.json",
                                                                                  ".github/workflows/ci.yml")], 102, 1),
    ([_files("results/bm25/beir__scifact.json")], 3001, 1),  # the API lists 3,000 files at most: held
    # a sealed round's data (docs/rounds.md) is not tooling; its round.yml (the rules) and anything else there is
    ([_files("rounds/r1/commitments/bm25@v1.json", "rounds/r1/reveals/bm25@v1.run", "rounds/r1/reveals/bm25@v1.salt",
             "rounds/r1/pool.tsv", "rounds/r1/judgments/qrels.txt", "rounds/r1/judgments/provenance.yml",
             "rounds/r1/scores.json")], 7, 0),
    ([_files("rounds/r1/round.yml", "rounds/r1/commitments/x/y.json", "rounds/r1/../../Makefile",
             "rounds/R1/pool.tsv")], 4, 4),
])
def test_the_tooling_gate_counts_every_name_outside_results(tmp_path, pages, changed, outside):
    done = _gate_step(tmp_path, pages, changed)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "github-output").read_text() == f"outside={outside}\n"
    assert "repos/o/r/pulls/12/files?per_page=100" in (tmp_path / "gh.log").read_text()


@pytest.mark.parametrize(("number", "changed"), [("12; rm -rf /", "1"), ("12", "$(id)"), ("", "1")])
def test_the_tooling_gate_refuses_an_unexpected_event(tmp_path, number, changed):
    step = _load(GATE)["jobs"]["changes"]["steps"][0]
    env = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(tmp_path / "github-output"), "REPO": "o/r",
           "NUMBER": number, "CHANGED": changed}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 1 and not (tmp_path / "github-output").exists()


def _verdict(listed: str, outside: str, approval: str) -> subprocess.CompletedProcess:
    step = _load(GATE)["jobs"]["verdict"]["steps"][0]
    env = {"PATH": os.environ["PATH"], "LISTED": listed, "OUTSIDE": outside, "APPROVAL": approval}
    return subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], env=env, capture_output=True, text=True)


@pytest.mark.parametrize(("listed", "outside", "approval", "passes"), [
    ("success", "0", "skipped", True),  # only results/ changed: approval skipped, the verdict passes by itself
    ("success", "3", "success", True),  # tooling changed and a maintainer approved
    ("success", "3", "failure", False),  # a maintainer rejected the deployment
    ("success", "3", "cancelled", False),
    ("success", "3", "skipped", False),  # a skipped approval never counts as one
    ("success", "3", "", False),
    ("failure", "", "skipped", False),  # the file list could not be read: held, whatever approval did
    ("cancelled", "", "skipped", False),
    ("success", "", "skipped", False),
    ("success", "0; exit 0", "skipped", False),  # an output that is not a count
])
def test_the_gate_verdict_passes_only_for_data_or_an_approval(listed, outside, approval, passes):
    done = _verdict(listed, outside, approval)
    assert (done.returncode == 0) == passes, done.stdout + done.stderr
    assert len(done.stdout.strip().splitlines()) == 1  # one line saying why


def test_contributing_states_the_branch_protection_the_workflows_rely_on():
    """The required checks named there are jobs that exist, by the names GitHub gives them (workflow / job)."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text[text.index("## How the checks stay out of a pull request's hands"):]
    for workflow, job in (("ci", "test"), ("results", "check"), ("rounds", "check"), ("tooling-gate", "verdict")):
        assert f"`{workflow} / {job}`" in section
        assert job in _load(f"{workflow}.yml")["jobs"]
    # the approval job is skipped for results-only pull requests: it must not be the required check
    assert "`tooling-gate / approval`" not in text.replace("not `tooling-gate / approval`", "")
    for setting in ("Require review from Code Owners", "tooling-review", "Require status checks to pass",
                    "Do not allow bypassing"):
        assert setting in section, setting
    owners = (ROOT / ".github" / "CODEOWNERS").read_text()
    assert "tooling-gate / verdict" in owners and "tooling-gate / approval" not in owners and "/.github/" in owners


def test_look_alike_model_ids_are_flagged_in_the_summary(tmp_path):
    """The issue's look-alikes of `bm25`, and organisation claims without a matching model.url, are listed for the
    reviewer; a new id unlike any other, and an organisation shown by its model.url, are not."""
    repo = _repo(tmp_path, {"results/bm25/beir__scifact.json": _result("bm25", 1, "lexical")})
    new = {"bm25.": "", "brn25": "", "bm25-official": "", "irboard/bm25": "", "org/e5-tiny": "",
           "acme/retriever-x": "https://huggingface.co/acme/retriever-x"}
    for i, model_id in enumerate(new):
        path = repo / "results" / model_id.lower().replace("/", "__") / "beir__scifact.json"
        path.parent.mkdir(parents=True)
        path.write_text(_result(model_id, 10 + i, url=new[model_id]))
    _commit(repo)
    from leaderboard.review.changes import list_changes, markdown

    listing = list_changes(repo, "main")
    assert listing.problems == [] and len(listing.changes) == len(new)
    text = markdown(listing)
    flags = text[text.index("Model ids to check"):].splitlines()[2:]
    assert flags == [
        "- 'bm25-official' looks like 'bm25' (holds it whole)",
        "- 'bm25.' looks like 'bm25' (the same id but for case and punctuation)",
        "- 'brn25' looks like 'bm25' (the same id once letters that look alike are folded (rn/m, vv/w, cl/d, 0/o, "
        "1/i/l))",
        "- 'irboard/bm25' looks like 'bm25' (the same name under another organisation)",
        "- 'irboard/bm25' claims the organisation 'irboard' but model.url is not under https://huggingface.co/irboard/ "
        "or https://github.com/irboard/: a maintainer approves the claim",
        "- 'org/e5-tiny' claims the organisation 'org' but model.url is not under https://huggingface.co/org/ or "
        "https://github.com/org/: a maintainer approves the claim",
    ]


@pytest.mark.parametrize(("new", "existing", "why"), [
    ("BM25", "bm25", "case and punctuation"), ("bm_25", "bm25", "case and punctuation"),
    ("bm26", "bm25", "1 edit away"), ("mb25", "bm25", "1 edit away"), ("org/e5-large", "other/e5-large", "another"),
    ("bge-smal1", "bge-small", "folded"), ("splade-tiny-distilled", "splade-tiny", "holds it whole"),
    ("bge-small", "bge-base", None), ("e5-base", "e5-large", None), ("org/a", "org/b", None), ("bm25", "bm25", None),
    ("org/llama", "other/mistral", None),
])
def test_look_alike(new, existing, why):
    from leaderboard.review.identity import look_alike

    found = look_alike(new, existing)
    assert (found is None) == (why is None) and (why is None or why in found), found


@pytest.mark.parametrize(("model_id", "url", "matched"), [
    ("bm25", "", True), ("acme/x", "https://huggingface.co/acme/x", True), ("acme/x", "https://github.com/ACME/x", True),
    ("acme/x", "https://huggingface.co/other/x", False), ("acme/x", "http://huggingface.co/acme/x", False),
    ("acme/x", "https://huggingface.co.evil.org/acme/x", False), ("acme/x", "https://evil.org/acme/x", False),
    ("acme/x", "", False),
])
def test_an_organisation_claim_needs_a_model_url_in_its_space(model_id, url, matched):
    from leaderboard.review.identity import organisation_claim

    assert (organisation_claim(model_id, url) is None) == matched


def test_the_comment_links_the_preview_by_githubs_artifact_id_only(tmp_path):
    (tmp_path / "prs-from-github.json").write_text("[]")
    step = _step("results-comment.yml", "Find the preview of the board after the merge")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text('#!/bin/bash\ncat artifacts-from-github.json\n')
    (bin_dir / "gh").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "GITHUB_OUTPUT": str(tmp_path / "out"), "REPO": "o/r",
           "RUN_ID": "99"}
    for artifacts, found in [([{"name": "counts", "id": 5}, {"name": "site-preview", "id": 123}], "id=123\n"),
                             ([{"name": "site-preview", "id": "1; rm -rf /"}], ""), ([], "")]:
        (tmp_path / "artifacts-from-github.json").write_text(json.dumps({"artifacts": artifacts}))
        (tmp_path / "out").write_text("")
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "out").read_text() == found
    comment = _step("results-comment.yml", "Comment on the pull request")
    assert comment["env"]["PREVIEW"] == "${{ steps.preview.outputs.id }}"
    for preview, shown in [("123", True), ("x](https://evil)", False), ("", False)]:
        folder = tmp_path / f"c{len(preview)}"
        folder.mkdir()
        (folder / "counts").mkdir()
        (folder / "counts" / "counts.json").write_text(json.dumps(COUNTS))
        done = _run_step(comment, folder, {"NUMBER": "12", "REPO": "o/r", "RUN_ID": "99",
                                           "SERVER": "https://github.com", "PREVIEW": preview})
        assert done.returncode == 0, done.stderr
        body = (folder / "body.md").read_text()
        assert ("[site-preview](https://github.com/o/r/actions/runs/99/artifacts/123)" in body) == shown
        assert "evil" not in body


REPRODUCE = "reproduce.yml"


def _reproduce_step(job: str, name: str) -> dict:
    return next(step for step in _load(REPRODUCE)["jobs"][job]["steps"] if step.get("name") == name)


def test_the_reproduce_workflow_runs_main_code_and_its_writer_runs_nothing():
    """Reproduction runs main's irboard on merged results (never a pull request's code) with read rights; the only
    job that may write runs no irboard, no model and no code from the repository, only git and gh on checked
    records, and proposes them as a pull request (which the tooling gate holds: reproductions/ is not results/)."""
    workflow = _load(REPRODUCE)
    assert workflow["on"]["push"] == {"branches": ["main"], "paths": ["results/**"]}
    assert set(workflow["on"]) == {"push", "workflow_dispatch"} and workflow["permissions"] == {"contents": "read"}
    reproduce, record = workflow["jobs"]["reproduce"], workflow["jobs"]["record"]
    assert "permissions" not in reproduce and record["needs"] == "reproduce"
    assert record["permissions"] == {"contents": "write", "pull-requests": "write"}
    for step in reproduce["steps"]:
        assert "${{" not in step.get("run", "")
        if "checkout" in step.get("uses", ""):
            assert step["with"]["persist-credentials"] is False and "ref" not in step["with"]
    runs = " ".join(step.get("run", "") for step in reproduce["steps"])
    assert "irboard reproduce --data-dir ../shared/data --ledger records" in runs and "--max-docs" in runs
    assert "--no-isolation" not in runs  # submitted code runs in the sandbox, which a step before it allows
    names = [step.get("name", "") for step in reproduce["steps"]]
    allow = reproduce["steps"][names.index("Allow the sandbox for submitted code (unprivileged user namespaces)")]
    assert names.index(allow["name"]) < next(i for i, n in enumerate(names) if n.startswith("Reproduce"))
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in allow["run"] and "unshare -Urmn" in allow["run"]
    for step in record["steps"]:
        script = step.get("run", "")
        assert "${{" not in script and not any(word in script for word in (".venv", "irboard ", "make ", "python",
                                                                             "pip ", "bash "))
        assert step.get("uses", "").split("@")[0] in ("", "actions/checkout", "actions/download-artifact")
    checkout = next(step for step in record["steps"] if "checkout" in step.get("uses", ""))
    assert checkout["with"] == {"ref": "main"}


def _repo_with_results(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    (repo / "results" / "bm25").mkdir(parents=True)
    (repo / "results" / "bm25" / "beir__scifact.json").write_text("{}\n")
    _git(repo.parent, "init", "-q", str(repo))
    for args in (("add", "."), ("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "a")):
        _git(repo, *args)
    before = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "results" / "splade-tiny").mkdir()
    (repo / "results" / "splade-tiny" / "beir__scifact.json").write_text("{}\n")
    (repo / "Makefile").write_text("x\n")
    for args in (("add", "."), ("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "b")):
        _git(repo, *args)
    return repo, before


@pytest.mark.parametrize(("event", "requested", "chosen", "fails"), [
    ("push", "", ["results/splade-tiny/beir__scifact.json"], False),  # what the merge changed, within the budget
    ("workflow_dispatch", "results/bm25/beir__scifact.json", ["results/bm25/beir__scifact.json"], False),
    ("workflow_dispatch", "", ["results/bm25/beir__scifact.json", "results/splade-tiny/beir__scifact.json"], False),
    ("workflow_dispatch", "results/../Makefile", [], True),
    ("workflow_dispatch", "Makefile; id", [], True),
])
def test_the_reproduce_workflow_chooses_only_result_files(tmp_path, event, requested, chosen, fails):
    repo, before = _repo_with_results(tmp_path)
    step = _reproduce_step("reproduce", "Choose the results to reproduce")
    env = {"EVENT": event, "BEFORE": before, "REQUESTED": requested, "GITHUB_ENV": str(tmp_path / "env"),
           "MAX_DOCS": "100000"}
    done = _run_step(step, repo, env)
    assert (done.returncode != 0) == fails, done.stdout + done.stderr
    if not fails:
        assert (repo / "chosen.nul").read_text().split("\0")[:-1] == chosen
        # reported with each file's sha256 before anything runs: the record job accepts records of these only
        sha = hashlib.sha256(b"{}\n").hexdigest()
        assert (repo / "github-output").read_text() == "chosen=" + " ".join(f"{n}={sha}" for n in chosen) + "\n"
        budget = (tmp_path / "env").read_text() if (tmp_path / "env").exists() else ""
        assert ("MAX_DOCS=" in budget) == (event == "workflow_dispatch")


CHOSEN_SHA = "ab" * 32  # the sha256 the reproduce job reported for the result it chose


def test_the_reproduce_workflow_runs_submitted_code_for_one_result_only(tmp_path):
    repo, before = _repo_with_results(tmp_path)
    step = _reproduce_step("reproduce", "Choose the results to reproduce")
    env = {"EVENT": "workflow_dispatch", "BEFORE": before, "REQUESTED": "", "GITHUB_ENV": str(tmp_path / "env"),
           "SUBMITTED_CODE": "--run-submitted-code"}
    done = _run_step(step, repo, env)
    assert done.returncode == 1 and "name exactly one result to run submitted code" in done.stdout
    done = _run_step(step, repo, {**env, "REQUESTED": "results/bm25/beir__scifact.json"})
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("name", "content", "proposed"), [
    ("bm25/beir__scifact.json", {"format": "irboard-reproduction/1", "result_sha256": CHOSEN_SHA}, True),
    ("bm25/deep/beir__scifact.json", {"format": "irboard-reproduction/1", "result_sha256": CHOSEN_SHA}, False),
    ("BM25/beir__scifact.json", {"format": "irboard-reproduction/1", "result_sha256": CHOSEN_SHA}, False),
    ("bm25/beir__scifact.json", {"format": "other", "result_sha256": CHOSEN_SHA}, False),
    ("bm25/beir__scifact.json", {"format": "irboard-reproduction/1", "result_sha256": "x", "pad": "y" * 5000}, False),
    # a result this run did not choose (written by submitted code that found the records folder), or other bytes
    ("splade-tiny/beir__scifact.json", {"format": "irboard-reproduction/1", "result_sha256": CHOSEN_SHA}, False),
    ("bm25/beir__scifact.json", {"format": "irboard-reproduction/1", "result_sha256": "cd" * 32}, False),
])
def test_the_record_job_proposes_only_checked_records(tmp_path, name, content, proposed):
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    repo, _ = _repo_with_results(tmp_path)
    _git(repo, "remote", "add", "origin", str(remote))
    incoming = repo / "incoming" / name
    incoming.parent.mkdir(parents=True, exist_ok=True)
    incoming.write_text(json.dumps(content))
    done = _run_step(_reproduce_step("record", "Check the records and propose them"), repo,
                     {"GH_TOKEN": "t", "RUN_ID": "77", "HOME": str(tmp_path),
                      "CHOSEN": f"results/bm25/beir__scifact.json={CHOSEN_SHA}"})
    assert (done.returncode == 0) == proposed, done.stdout + done.stderr
    log = (repo / "gh.log").read_text() if (repo / "gh.log").exists() else ""
    assert ("pr create --base main --head reproductions/run-77" in log) == proposed
    if proposed:
        shown = _git(repo, "show", "--stat", "--format=%s", "reproductions/run-77")
        assert "reproductions/bm25/beir__scifact.json" in shown and "Makefile" not in shown
