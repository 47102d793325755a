"""Script and container artifacts (docs/reproduction.md): a script in a real git repository, served by `git daemon` on
127.0.0.1, is checked out at its pinned commit and run on the real Cranfield collection; its run file is compared with
the stored ranking. A commit the repository does not hold, a failing script and a differing run are each one line and
exit 1; a container image must be pinned by digest, and without a container runtime the line says who runs it."""

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.errors import ResultValidationError
from evaluator.result import expand_result, parse_result, read_result, result_path, write_result
from leaderboard.cli import main
from leaderboard.submissions.reproductions import read_record, record_path
from leaderboard.submissions.sandbox import isolation
from tests.conftest import SHARED
from tests.leaderboard.submissions.hostile_scripts import BY_WALKING_UP, HOSTILE, STORED

CRANFIELD = SHARED / "data" / "classic" / "cranfield"

# A small model irboard cannot run: word overlap between query and document, written as a TREC run (stdlib only).
RANKER = '''import hashlib, json, sys
data, out = sys.argv[1], sys.argv[2]
read = lambda name: [json.loads(line) for line in open(f"{data}/{name}", encoding="utf-8")]
def ranked_text(d):  # ties broken by the text, never by id or corpus order (both differ on the blind copy)
    text = d.get("title", "") + " " + d["text"]
    return set(text.lower().split()), int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2**32 / 1000
docs = [(d["_id"], *ranked_text(d)) for d in read("corpus.jsonl")]
with open(out, "w") as run:
    for query in read("queries.jsonl"):
        words = set(query["text"].lower().split())
        scored = sorted(((len(words & terms) + tie, doc) for doc, terms, tie in docs), reverse=True)
        ranked = [doc for _, doc in scored[:100]]
        if SWAP:
            ranked[0], ranked[9] = ranked[9], ranked[0]  # the tenth document put first, the scores left in place
        for rank, (score, _) in enumerate(scored[:100], 1):
            run.write(f"{query['_id']} Q0 {ranked[rank - 1]} {rank} {score:.9f} overlap\\n")
'''

PEEK = '''import pathlib, sys
seen = [p for top in (pathlib.Path(sys.argv[1]), pathlib.Path.cwd().parent) for p in top.rglob("*")
        if "qrels" in p.name or p.suffix == ".tsv"]
if seen:
    sys.exit(f"judgments in reach: {seen[0]}")
'''

# the ranker whose first argument says where its weights are: a URL it fetches, or a file
WEIGHTED = '''import json, sys, urllib.request
source = sys.argv.pop(1)
SWAP = json.loads(urllib.request.urlopen(source, timeout=20).read() if "://" in source else open(source).read())["swap"]
'''

# a setup step: fails if it can reach the dataset (the blind copy or any corpus), then downloads its weights
FETCH = BY_WALKING_UP + '''import pathlib, sys, urllib.request
seen = by_walking_up(lambda folder: (folder / "corpus.jsonl").exists() or (folder / "queries.jsonl").exists())
if seen is not None or pathlib.Path("/blind/data").exists():
    sys.exit(f"the setup step reaches a dataset: {seen or '/blind/data'}")
pathlib.Path(sys.argv[2]).write_bytes(urllib.request.urlopen(sys.argv[1], timeout=20).read())
'''


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _commit(work: Path, message: str, **files: str) -> str:
    for name, text in files.items():
        (work / name).write_text(text)
    _git(work, "add", "-A")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", message)
    return _git(work, "rev-parse", "HEAD")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(repository URL, {name: commit}) of a repository served by `git daemon`: the honest ranker, one that swaps
    two documents, one that fails, and a commit made locally and never pushed (unknown to the server)."""
    root = tmp_path_factory.mktemp("git")
    work = root / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    commits = {"honest": _commit(work, "ranker", **{"rank.py": "SWAP = False\n" + RANKER})}
    commits["swapped"] = _commit(work, "swap", **{"rank.py": "SWAP = True\n" + RANKER})
    commits["failing"] = _commit(work, "fail", **{"rank.py": "import sys\nsys.exit('no index found: run setup first')\n"})
    # looks for judgments beside its data and in its working folder's parent; runs honestly when there are none
    commits["peek"] = _commit(work, "peek", **{"rank.py": PEEK + "SWAP = False\n" + RANKER})
    # a ranking kept in the repository, copied to {run}: the honest ranking, made in advance on the real data
    ranking, ranker = root / "ranking.trec", root / "honest.py"
    ranker.write_text("SWAP = False\n" + RANKER)
    subprocess.run([sys.executable, str(ranker), str(CRANFIELD), str(ranking)], check=True)
    commits["fixed"] = _commit(work, "fixed", **{"ranking.trec": ranking.read_text()})
    # hostile scripts (test_reproduce_isolated.py): each looks for the real judgments or the ledger
    for name in ("proc", "walk", "ledger"):
        commits[name] = _commit(work, name, **{"rank.py": HOSTILE[name] + "SWAP = False\n" + RANKER})
    # its "weights" (whether to swap) from a URL or a file (fetched by fetch.py in a setup step): test_..._offline
    commits["weighted"] = _commit(work, "weighted", **{"rank.py": WEIGHTED + RANKER, "fetch.py": FETCH})
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(root / "model.git")], check=True)
    commits["unpushed"] = _commit(work, "local only", **{"rank.py": "SWAP = False\n" + RANKER + "\n"})
    port = _free_port()
    daemon = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all", f"--base-path={root}",
                               "--listen=127.0.0.1", f"--port={port}", str(root)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):  # until it listens
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"git://127.0.0.1:{port}/model.git", commits, work
    finally:
        daemon.terminate()
        daemon.wait(10)


@pytest.fixture(scope="module")
def scripted(served, tmp_path_factory) -> Path:
    """The honest ranker's result on Cranfield (`irboard evaluate --run`), declaring its script artifact."""
    url, commits, work = served
    root = tmp_path_factory.mktemp("results")
    run = root / "run.trec"
    _git(work, "checkout", "-q", commits["honest"])
    subprocess.run([sys.executable, str(work / "rank.py"), str(CRANFIELD), str(run)], check=True)
    out = root / "made.json"
    assert main(["evaluate", "--run", str(run), "--model-id", "org/overlap", "--dataset-id", "classic/cranfield",
                          "--qrels", str(CRANFIELD / "qrels" / "test.tsv"), "--metrics", "nDCG@10,R@100",
                          "--out", str(out), "--quiet"]) == 0
    return _declaring(out, result_path("org/overlap", "classic/cranfield", root), url, commits["honest"])


def _declaring(source: Path, target: Path, url: str, commit: str, command: tuple = ("python3", "rank.py", "{data}",
                                                                                 "{run}"), setup: tuple = ()) -> Path:
    data = expand_result(read_result(source))
    data["model"]["artifact"] = {"repository": url, "commit": commit, "command": list(command),
                                 **({"setup": list(setup)} if setup else {})}
    write_result(parse_result(data), target, force=True)
    return target


def test_a_script_at_its_commit_reproduces_and_each_failure_is_one_line(served, scripted, tmp_path, capsys):
    url, commits, _ = served
    others = {name: _declaring(scripted, tmp_path / name / "classic__cranfield.json", url, commits[name])
              for name in ("swapped", "failing", "unpushed")}
    ledger = tmp_path / "ledger"
    code = main(["reproduce", str(scripted), *map(str, others.values()), "--data-dir",
                 f"classic/cranfield={CRANFIELD}", "--ledger", str(ledger), "--run-submitted-code", "--quiet"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1 and len(lines) == 5  # the record is written once every re-run has ended
    assert lines[4] == f"{scripted}: recorded in {record_path(ledger, 'org/overlap', 'classic/cranfield')}"
    assert lines[0].startswith(f"{scripted}: reproduced by script {url} (225 queries to depth 100"), lines[0]
    assert lines[1] == (f"{others['swapped']}: not reproduced by script {url}: query '1' rank 1: the result has "
                        f"{_first_doc(scripted)!r}, the re-run {_tenth_doc(scripted)!r}")
    assert lines[2] == (f"{others['failing']}: not reproduced by script {url}: the script's command "
                        "'python3 rank.py {data} {run}' failed (exit status 1): no index found: run setup first")
    assert lines[3] == (f"{others['unpushed']}: not reproduced by script {url}: commit {commits['unpushed']} is not "
                        f"in {url} (moved or removed from its history?); declare a commit the repository holds")
    record = read_record(record_path(ledger, "org/overlap", "classic/cranfield"))
    assert (record.artifact.repository, record.artifact.commit) == (url, commits["honest"])
    assert record.isolation == isolation()  # which sandbox the script ran in
    assert [p.relative_to(ledger).as_posix() for p in ledger.rglob("*.json")] == [
        "org__overlap/classic__cranfield.json"]
    # without --run-submitted-code (a push to main in the workflow) the submitter's code is not run: skipped, exit 0
    assert main(["reproduce", str(others["swapped"]), "--quiet"]) == 0
    assert capsys.readouterr().out == (f"{others['swapped']}: skipped: script {url} runs the submitter's code; a "
                                       "maintainer reproduces it on request (--run-submitted-code)\n")


def _ranking(path: Path) -> list:
    return next(iter(expand_result(read_result(path))["run"]["rankings"].items()))


def _first_doc(path: Path) -> str:
    query, ranking = _ranking(path)
    assert query == "1"
    return ranking[0][0]


def _tenth_doc(path: Path) -> str:
    return _ranking(path)[1][9][0]


@pytest.mark.parametrize(("image", "said"), [
    ("ghcr.io/org/model:latest", "pinned by its digest"),
    ("ghcr.io/org/model:v1@sha256:" + "a" * 64, "pinned by its digest"),  # a tag beside the digest could mislead
    ("ghcr.io/org/model@sha256:" + "a" * 63, "pinned by its digest"),
])
def test_a_container_must_be_pinned_by_digest(scripted, image, said):
    data = expand_result(read_result(scripted))
    data["model"]["artifact"] = {"image": image, "command": ["rank", "{data}", "{run}"]}
    with pytest.raises(ResultValidationError, match=said) as error:
        parse_result(data)
    assert "model.artifact" in str(error.value) and "\n" not in str(error.value)


def test_a_setup_step_cannot_name_the_data_or_the_run(scripted):
    data = expand_result(read_result(scripted))
    data["model"]["artifact"] = {"repository": "https://example.org/x.git", "commit": "a" * 40,
                                 "setup": ["fetch", "{data}"], "command": ["run", "{run}"]}
    with pytest.raises(ResultValidationError, match=r"setup: .*before the dataset is there") as error:
        parse_result(data)
    assert "model.artifact" in str(error.value) and "\n" not in str(error.value)


def test_a_script_commit_must_be_pinned(scripted):
    data = expand_result(read_result(scripted))
    data["model"]["artifact"] = {"repository": "https://example.org/x.git", "commit": "main",
                                 "command": ["run", "{run}"]}
    with pytest.raises(ResultValidationError, match="full 40-hex-digit id"):
        parse_result(data)


def test_without_a_container_runtime_a_container_says_who_runs_it(scripted, tmp_path, capsys, monkeypatch):
    data = expand_result(read_result(scripted))
    image = "ghcr.io/org/model@sha256:" + "b" * 64
    data["model"]["artifact"] = {"image": image, "command": ["rank", "{data}", "{run}"]}
    path = write_result(parse_result(data), tmp_path / "org__overlap" / "classic__cranfield.json")
    assert json.loads(path.read_text())["model"]["artifact"]["image"] == image
    monkeypatch.setenv("PATH", str(tmp_path / "no-runtime"))  # neither docker nor podman to be found
    code = main(["reproduce", str(path), "--data-dir", f"classic/cranfield={CRANFIELD}", "--run-submitted-code",
                 "--quiet"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1 and lines == [
        f"{path}: the container {image} needs a container runtime (docker or podman with its daemon), which this "
        "machine lacks; the maintainers' reproduce workflow runs it (docs/reproduction.md)"]


# A stand-in for `docker`, since this machine runs no container daemon: it answers `info`, checks the options
# irboard passes (no network, read-only data), maps the two mounts and runs the image's "entry point" (a script
# named by the image's digest in images.json beside it). What it tests is irboard's side of the contract.
FAKE_DOCKER = '''import json, pathlib, subprocess, sys
args = sys.argv[1:]
if args == ["info"]:
    sys.exit(0)
assert args[:6] == ["run", "--rm", "--network", "none", "--pull", "missing"], args
mounts, rest = {}, args[6:]
while rest[0] == "-v":
    host, inside, *mode = rest[1].split(":")
    assert inside != "/data" or mode == ["ro"], rest[1]
    mounts[inside], rest = host, rest[2:]
assert sorted(mounts) == ["/data", "/out"] and not rest[0].startswith("-"), args  # no other mount or option
assert not any(p.name == "qrels" for m in mounts.values() for p in pathlib.Path(m).rglob("*")), mounts
images = json.loads((pathlib.Path(__file__).parent / "images.json").read_text())
outside = [next((mounts[m] + a[len(m):] for m in mounts if a.startswith(m)), a) for a in rest[2:]]  # rest[1]: the program
sys.exit(subprocess.call([sys.executable, images[rest[0]], *outside]))
'''


def test_a_container_at_its_digest_reproduces_through_the_runtime(served, scripted, tmp_path, capsys, monkeypatch):
    _, commits, work = served
    runtime = tmp_path / "bin"
    runtime.mkdir()
    images = {}
    for name, digest in (("honest", "c" * 64), ("swapped", "d" * 64)):
        entry = tmp_path / f"{name}.py"
        _git(work, "checkout", "-q", commits[name])
        entry.write_text((work / "rank.py").read_text())
        images[f"ghcr.io/org/overlap@sha256:{digest}"] = str(entry)
    (runtime / "images.json").write_text(json.dumps(images))
    (runtime / "docker").write_text(f"#!{sys.executable}\n" + FAKE_DOCKER)
    (runtime / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", f"{runtime}:/usr/bin:/bin")
    paths = []
    for image in images:
        data = expand_result(read_result(scripted))
        data["model"]["artifact"] = {"image": image, "command": ["rank", "{data}", "{run}"]}
        paths.append(write_result(parse_result(data), tmp_path / image[-3:] / "classic__cranfield.json"))
    ledger = tmp_path / "ledger"
    code = main(["reproduce", *map(str, paths), "--data-dir", f"classic/cranfield={CRANFIELD}", "--ledger",
                 str(ledger), "--run-submitted-code", "--quiet"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1 and len(lines) == 3 and lines[2].startswith(f"{paths[0]}: recorded in ")
    assert lines[0].startswith(f"{paths[0]}: reproduced by container ghcr.io/org/overlap (225 queries"), lines[0]
    assert lines[1] == (f"{paths[1]}: not reproduced by container ghcr.io/org/overlap: query '1' rank 1: the result "
                        f"has {_first_doc(scripted)!r}, the re-run {_tenth_doc(scripted)!r}")
    record = read_record(record_path(ledger, "org/overlap", "classic/cranfield"))
    assert record.artifact.image == next(iter(images)) and record.isolation == "docker container without network"


def test_a_command_that_floods_stderr_still_fails_in_one_line(tmp_path):
    # 64 MB of stderr before its last line: only the file's end is read, and the line names the failure
    from leaderboard.submissions.reproduce_declared import NotReproduced, _run

    flood = "import sys\nsys.stderr.write('x' * 80 + '\\n') or [sys.stderr.write('y' * 1023 + '\\n') for _ in range(65536)]\n" \
            "sys.exit('index missing: run setup first')\n"
    (tmp_path / "flood.py").write_text(flood)
    with pytest.raises(NotReproduced) as error:
        _run([sys.executable, "flood.py"], tmp_path, 60, "the script's command 'flood'")
    assert str(error.value) == ("the script's command 'flood' failed (exit status 1): index missing: run setup "
                                "first")


def _reproduce(paths: list[Path], capsys) -> tuple[int, list[str]]:
    code = main(["reproduce", *map(str, paths), "--data-dir", f"classic/cranfield={CRANFIELD}",
                 "--run-submitted-code", "--quiet"])
    return code, capsys.readouterr().out.splitlines()


def test_the_re_run_sees_the_corpus_and_queries_never_the_judgments(served, scripted, tmp_path, capsys):
    url, commits, _ = served
    peek = _declaring(scripted, tmp_path / "peek" / "classic__cranfield.json", url, commits["peek"])
    code, lines = _reproduce([peek], capsys)
    assert code == 0 and lines[0].startswith(f"{peek}: reproduced by script {url} (225 queries"), lines


def test_a_ranking_made_in_advance_is_not_reproduced(served, scripted, tmp_path, capsys):
    """The repository holds the stored ranking itself; the command copies it to {run}. On the blind copy its ids
    name nothing, so it is refused; the honest ranker, on the same blind copy, is reproduced."""
    url, commits, _ = served
    fixed = _declaring(scripted, tmp_path / "fixed" / "classic__cranfield.json", url, commits["fixed"],
                       ("cp", "ranking.trec", "{run}"))
    code, lines = _reproduce([fixed, scripted], capsys)
    assert code == 1 and lines[0] == (
        f"{fixed}: not reproduced by script {url}: the run file's line 1 names query '1', which is not in the copy "
        "of the dataset the command was given (a ranking made in advance?); rank the documents of {data}")
    assert lines[1].startswith(f"{scripted}: reproduced by script {url} (225 queries"), lines[1]


def test_relevant_documents_lifted_within_the_tolerance_are_not_reproduced(served, scripted, tmp_path, capsys):
    """The honest ranking with every relevant document's score raised by 1e-4 (relative, within the score
    tolerance) and re-sorted, then re-scored: its metrics rise, and the honest script's re-run refuses it."""
    url, commits, _ = served
    relevant = {tuple(row.split("\t")[:2]) for row in (CRANFIELD / "qrels" / "test.tsv").read_text().splitlines()[1:]
                if int(row.split("\t")[2]) > 0}
    rows: dict[str, list] = {}
    for line in (scripted.parents[1] / "run.trec").read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        lift = 1 + 1e-4 if (query, doc) in relevant else 1.0
        rows.setdefault(query, []).append((float(score) * lift, doc))
    lifted_run = tmp_path / "lifted.trec"
    lifted_run.write_text("".join(f"{q} Q0 {doc} {rank} {score!r} lifted\n" for q, ranking in rows.items()
                                  for rank, (score, doc) in enumerate(sorted(ranking, reverse=True), 1)))
    made = tmp_path / "made.json"
    assert main(["evaluate", "--run", str(lifted_run), "--model-id", "org/overlap", "--dataset-id",
                 "classic/cranfield", "--qrels", str(CRANFIELD / "qrels" / "test.tsv"), "--metrics", "nDCG@10,R@100",
                 "--out", str(made), "--quiet"]) == 0
    assert read_result(made).metrics["nDCG@10"] > read_result(scripted).metrics["nDCG@10"]
    lifted = _declaring(made, tmp_path / "lifted" / "classic__cranfield.json", url, commits["honest"])
    code, lines = _reproduce([lifted], capsys)
    assert code == 1 and "re-scored values must be equal; scores within the tolerance only decide ties" in lines[0]
    assert lines[0].startswith(f"{lifted}: not reproduced by script {url}: query "), lines[0]


def test_a_huge_sparse_run_file_is_refused_before_it_is_read(served, scripted, tmp_path, capsys):
    url, commits, _ = served
    sparse = _declaring(scripted, tmp_path / "sparse" / "classic__cranfield.json", url, commits["honest"],
                        ("truncate", "-s", "2G", "{run}"))
    code, lines = _reproduce([sparse], capsys)
    assert code == 1 and lines == [
        f"{sparse}: not reproduced by script {url}: the run file the command wrote holds 2,147,483,648 bytes, over "
        f"the {225 * 1000 * 256:,} a ranking of this dataset can take; write one line per ranked document"]


def test_a_run_line_without_end_is_never_read_whole(tmp_path):
    from leaderboard.submissions.disguise import Disguise, NotBlind, map_back

    run = tmp_path / "run.trec"
    with open(run, "wb") as out:
        out.truncate(10**7)  # ten million zero bytes, no newline
    with pytest.raises(NotBlind, match="^the run file's line 1 is over 4096 bytes"):
        map_back(run, Disguise({}, {}), tmp_path / "mapped.trec", 10**8)


# --- submitted code reaches the blind copy, its checkout and a scratch folder only (leaderboard/submissions/sandbox.py)
# irboard runs as its own process here, as in the workflow, so that its command line (--data-dir, --ledger) and
# environment are there to be read by a command that can see its parent. Each test runs the same hostile script once
# more with --no-isolation: there it does find what it looks for, which shows the test can fail.

ROOT = Path(__file__).resolve().parents[3]


def _irboard(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "leaderboard.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=600, check=False)


def _cheating(served, name: str, root: Path) -> Path:
    """A result whose stored ranking puts the relevant documents first (the cheat run on the real folder, with its
    judgments), declaring the hostile script `name`, which gives that ranking again only if it finds the judgments."""
    url, commits, _ = served
    (root / "stored.py").write_text(STORED)
    subprocess.run([sys.executable, str(root / "stored.py"), str(CRANFIELD), str(root / "cheat.trec")], check=True)
    assert main(["evaluate", "--run", str(root / "cheat.trec"), "--model-id", "org/overlap", "--dataset-id",
                 "classic/cranfield", "--qrels", str(CRANFIELD / "qrels" / "test.tsv"), "--metrics", "nDCG@10,R@100",
                 "--out", str(root / "made.json"), "--quiet"]) == 0
    assert read_result(root / "made.json").metrics["nDCG@10"] > 0.99  # what the judgments buy
    return _declaring(root / "made.json", result_path("org/overlap", "classic/cranfield", root / "results"), url,
                      commits[name])


def _repository(root: Path) -> Path:
    """A working folder laid out as the workflow's: the dataset's folder, the ledger and the temporary folder (where
    irboard writes the blind copy and the checkout) all inside it."""
    repo = root / "repo"
    (repo / "data" / "classic" / "cranfield" / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        (repo / "data" / "classic" / "cranfield" / name).write_bytes((CRANFIELD / name).read_bytes())
    (repo / "reproductions").mkdir()
    (repo / "tmp").mkdir()
    return repo


def test_a_script_reading_its_parents_command_line_and_environment_finds_no_judgments(served, tmp_path):
    url = served[0]
    cheat = _cheating(served, "proc", tmp_path)
    args = ("reproduce", str(cheat), "--data-dir", f"classic/cranfield={CRANFIELD}", "--run-submitted-code", "--quiet")
    isolated = _irboard(*args, cwd=tmp_path, IRBOARD_DATA=str(CRANFIELD))  # the path in its environment too
    assert isolated.returncode == 1, isolated.stdout + isolated.stderr
    assert isolated.stdout.startswith(f"{cheat}: not reproduced by script {url}: query "), isolated.stdout
    # the same script beside irboard, seeing its parent: it finds --data-dir, reads the judgments and cheats
    bare = _irboard(*args, "--no-isolation", cwd=tmp_path)
    assert bare.returncode == 0 and bare.stdout == (
        f"{cheat}: reproduced by script {url} (225 queries to depth 100, scores within 0.0e+00 relative); not blind: "
        "run without isolation (--no-isolation), never recorded\n"), bare.stdout + bare.stderr


def test_a_script_walking_up_from_its_folder_finds_no_judgments(served, tmp_path):
    url = served[0]
    cheat, repo = _cheating(served, "walk", tmp_path), _repository(tmp_path)
    args = ("reproduce", str(cheat), "--data-dir", f"classic/cranfield={repo / 'data' / 'classic' / 'cranfield'}",
            "--run-submitted-code", "--quiet")
    isolated = _irboard(*args, cwd=repo, TMPDIR=str(repo / "tmp"))
    assert isolated.returncode == 1, isolated.stdout + isolated.stderr
    assert isolated.stdout.startswith(f"{cheat}: not reproduced by script {url}: query "), isolated.stdout
    bare = _irboard(*args, "--no-isolation", cwd=repo, TMPDIR=str(repo / "tmp"))  # its checkout lies in repo/tmp
    assert bare.returncode == 0 and "; not blind: run without isolation" in bare.stdout, bare.stdout + bare.stderr


def test_a_script_cannot_write_a_ledger_record(served, scripted, tmp_path):
    """It looks for the ledger through the processes it sees and above its folder; isolated, it finds neither, and
    only the record irboard writes for its honest re-run is in the ledger."""
    url, commits, _ = served
    repo = _repository(tmp_path)
    forger = _declaring(scripted, tmp_path / "forger" / "classic__cranfield.json", url, commits["ledger"])
    data = f"classic/cranfield={repo / 'data' / 'classic' / 'cranfield'}"
    isolated = _irboard("reproduce", str(forger), "--data-dir", data, "--ledger", str(repo / "reproductions"),
                        "--run-submitted-code", "--quiet", cwd=repo, TMPDIR=str(repo / "tmp"))
    ledger = repo / "reproductions"
    assert isolated.returncode == 0 and isolated.stdout.splitlines()[1] == (
        f"{forger}: recorded in {record_path(ledger, 'org/overlap', 'classic/cranfield')}"), isolated.stdout
    assert [p.relative_to(ledger).as_posix() for p in ledger.rglob("*")] == [
        "org__overlap", "org__overlap/classic__cranfield.json"]
    assert read_record(record_path(ledger, "org/overlap", "classic/cranfield")).isolation == isolation()
    (record_path(ledger, "org/overlap", "classic/cranfield")).unlink()
    bare = _irboard("reproduce", str(forger), "--data-dir", data, "--run-submitted-code", "--no-isolation", "--quiet",
                    cwd=repo, TMPDIR=str(repo / "tmp"))
    assert bare.returncode == 0 and "not blind" in bare.stdout, bare.stdout + bare.stderr
    assert (ledger / "org__other" / "classic__cranfield.json").is_file()  # beside irboard, it writes there


def test_without_isolation_submitted_code_is_refused_in_one_line(scripted, tmp_path):
    (tmp_path / "bin").mkdir()  # a PATH without unshare and setpriv
    args = ("reproduce", str(scripted), "--data-dir", f"classic/cranfield={CRANFIELD}", "--run-submitted-code",
            "--quiet")
    refused = _irboard(*args, cwd=tmp_path, PATH=str(tmp_path / "bin"))
    assert refused.returncode == 1 and refused.stdout == (
        f"{scripted}: running submitted code isolated needs unshare and setpriv (util-linux), which this machine "
        "lacks; install util-linux, or pass --no-isolation for a local check that is not blind and is never "
        "recorded\n"), refused.stdout + refused.stderr
    ledger = _irboard(*args, "--no-isolation", "--ledger", str(tmp_path / "ledger"), cwd=tmp_path)
    assert ledger.returncode == 1 and ledger.stdout == "" and ledger.stderr == (
        "error: --no-isolation runs submitted code where it can reach the judgments and the ledger: its outcomes are "
        "not blind and are never recorded; leave out --ledger, or --no-isolation\n")
    assert not (tmp_path / "ledger").exists()


def _outcome(isolation: str):
    from evaluator.artifact import ScriptArtifact
    from leaderboard.submissions.reproduce import Reproduction

    artifact = ScriptArtifact(repository="https://example.org/m.git", commit="a" * 40, command=["r", "{run}"])
    return Reproduction(path="results/org__m/classic__cranfield.json", result_sha256="b" * 64, model_id="org/m",
                        dataset_id="classic/cranfield", spec=artifact.spec, revision="", reproduced=True,
                        difference="", queries=225, depth=100, max_score_difference=0.0, artifact=artifact,
                        isolation=isolation)


def test_a_re_run_without_isolation_is_never_recorded(tmp_path):
    from evaluator.errors import IrboardError
    from leaderboard.submissions.reproductions import write_record
    from leaderboard.submissions.sandbox import NOT_ISOLATED

    with pytest.raises(IrboardError, match=r"reproduced without isolation \(--no-isolation\), so not blind"):
        write_record(_outcome(NOT_ISOLATED), tmp_path / "ledger", 1e-4)
    assert not (tmp_path / "ledger").exists()
    written = write_record(_outcome(isolation()), tmp_path / "ledger", 1e-4)
    assert read_record(written).isolation == isolation()


def test_a_ledger_changed_while_artifacts_ran_gets_no_record(tmp_path):
    """A second guard behind the sandbox: anything written under the ledger while the re-runs ran stops the writing."""
    from evaluator.errors import IrboardError
    from leaderboard.commands.reproduce import _ledger_files, _record

    ledger = tmp_path / "ledger"
    ledger.mkdir()
    before = _ledger_files(ledger)
    (ledger / "org__other").mkdir()
    (ledger / "org__other" / "classic__cranfield.json").write_text("{}")
    with pytest.raises(IrboardError, match="the ledger changed while the artifacts ran"):
        _record([_outcome(isolation())], ledger, before)
    assert [p.name for p in ledger.rglob("*.json")] == ["classic__cranfield.json"]
    assert not (ledger / "org__m").exists()


# --- the command runs offline, in a network namespace of its own; only the setup step, before the data exist, has one

@pytest.fixture()
def weights_server():
    """(its URL, the paths asked for) of an HTTP server on 127.0.0.1 serving the weights {"swap": false}."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked = []

    class Weights(BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            body = b'{"swap": false}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Weights)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/weights.json", asked
    finally:
        server.shutdown()
        server.server_close()


def test_the_command_runs_offline_and_the_setup_step_fetches_its_weights(served, scripted, weights_server, tmp_path,
                                                                         capsys):
    """The same server, the same download: the setup step gets the weights (before the blind copy exists, which it
    cannot see) and the command uses them offline, reproduced; a command that fetches them itself reaches nothing."""
    url, commits, _ = served
    weights, asked = weights_server
    set_up = _declaring(scripted, tmp_path / "set-up" / "classic__cranfield.json", url, commits["weighted"],
                        ("python3", "rank.py", "weights.json", "{data}", "{run}"),
                        setup=("python3", "fetch.py", f"{weights}?by=setup", "weights.json"))
    online = _declaring(scripted, tmp_path / "online" / "classic__cranfield.json", url, commits["weighted"],
                        ("python3", "rank.py", f"{weights}?by=command", "{data}", "{run}"))
    ledger = tmp_path / "ledger"
    code = main(["reproduce", str(set_up), str(online), "--data-dir", f"classic/cranfield={CRANFIELD}", "--ledger",
                 str(ledger), "--run-submitted-code", "--quiet"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1 and len(lines) == 3, lines
    assert lines[0].startswith(f"{set_up}: reproduced by script {url} (225 queries"), lines[0]
    # refused by its own loopback (up where `ip` is installed), or unreachable (down)
    assert re.fullmatch(re.escape(f"{online}: not reproduced by script {url}: the script's command 'python3 rank.py "
                                  f"{weights}?by=command {{data}} {{run}}' failed (exit status 1): urllib.error."
                                  "URLError: <urlopen error [Errno ") + r"(111\] Connection refused|101\] Network is "
                        r"unreachable)>", lines[1]), lines[1]
    assert asked == ["/weights.json?by=setup"]  # the command's request never left its namespace
    record = read_record(record_path(ledger, "org/overlap", "classic/cranfield"))
    assert record.artifact.setup == ["python3", "fetch.py", f"{weights}?by=setup", "weights.json"]
    assert record.isolation == isolation() and record.isolation.endswith("run offline (network namespace)")
