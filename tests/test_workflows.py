"""The GitHub Actions workflows: linted, least privilege, pinned actions, and their commands run on fixtures."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def _load(name: str) -> dict:
    data = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_actionlint_and_schema():
    assert {p.name for p in WORKFLOWS} == {"ci.yml", "results.yml", "results-comment.yml", "deploy.yml"}
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
        assert "pull_request_target" not in text, path.name
        workflow = _load(path.name)
        assert workflow["permissions"] in ({"contents": "read"}, {}), path.name
    results = _load("results.yml")
    assert set(results["on"]) == {"pull_request"} and results["on"]["pull_request"]["paths"] == ["results/**"]
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


@pytest.fixture
def pr_checkout(tmp_path, scifact_like_results):
    """A git repository shaped like a pull request: main with one result, a branch adding another."""
    repo = tmp_path / "repo"
    (repo / "results").mkdir(parents=True)
    shutil.copytree(ROOT / ".github", repo / ".github")
    base_file, new_file = scifact_like_results
    target = repo / "results" / base_file.parent.name
    target.mkdir()
    shutil.copy(base_file, target / base_file.name)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "main")
    _git(repo, "checkout", "-qb", "pr")
    (repo / "results" / new_file.parent.name).mkdir()
    shutil.copy(new_file, repo / "results" / new_file.parent.name / new_file.name)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "add a result")
    return repo


def test_results_workflow_commands_on_fixtures(pr_checkout, scifact_like_results):
    repo = pr_checkout
    changed = subprocess.run(["bash", ".github/scripts/changed-results.sh", "main"], cwd=repo, check=True,
                             capture_output=True, text=True).stdout.split()
    new_file = scifact_like_results[1]
    assert changed == [f"results/{new_file.parent.name}/{new_file.name}"]
    base = _git(repo, "merge-base", "main", "HEAD").strip()
    irboard = str(BIN / "irboard")
    validate = subprocess.run([irboard, "validate", "--base", base, *changed], cwd=repo, capture_output=True,
                              text=True)
    assert validate.returncode == 0, validate.stderr
    compare = subprocess.run([irboard, "compare", "--out", "comparison/comparison.md", *changed], cwd=repo,
                             capture_output=True, text=True)
    assert compare.returncode == 0, compare.stderr
    markdown = (repo / "comparison" / "comparison.md").read_text()
    assert "| org/new-model | beir/scifact | nDCG@10 |" in markdown and "vs bm25" in markdown
    build = subprocess.run([irboard, "build", "--strict", "--out", "_site"], cwd=repo, capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stderr
    assert (repo / "_site" / "index.html").is_file()
