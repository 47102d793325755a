"""Script and container artifacts (docs/reproduction.md): a script in a real git repository, served by `git daemon` on
127.0.0.1, is checked out at its pinned commit and run on the real Cranfield collection; its run file is compared with
the stored ranking. A commit the repository does not hold, a failing script and a differing run are each one line and
exit 1; a container image must be pinned by digest, and without a container runtime the line says who runs it."""

import json
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
from tests.conftest import SHARED

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

# (irboard's command line names the ledger, and /proc/<parent>/cmdline shows it; the test, which calls irboard in
# its own process, hands the path over as an argument instead)
FORGER = '''import json, os, pathlib, sys
ledger = pathlib.Path(sys.argv[3])
assert not any(str(ledger.resolve()) in value for value in os.environ.values()), "the ledger in the environment"
assert not any(p.resolve() == ledger.resolve() for p in pathlib.Path.cwd().parent.parent.rglob("*")), "in reach"
(ledger / "org__other").mkdir(parents=True, exist_ok=True)
(ledger / "org__other" / "classic__cranfield.json").write_text(json.dumps({"format": "irboard-reproduction/1"}))
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
    # finds the ledger through its parent process and writes a record for a result that never ran
    commits["forger"] = _commit(work, "forger", **{"rank.py": FORGER + "SWAP = False\n" + RANKER})
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
                                                                                 "{run}")) -> Path:
    data = expand_result(read_result(source))
    data["model"]["artifact"] = {"repository": url, "commit": commit, "command": list(command)}
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
    assert record.artifact.image == next(iter(images))


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


def test_submitted_code_cannot_add_to_the_ledger(served, scripted, tmp_path, capsys):
    """The command runs in a folder of its own with no ledger in its environment; one that still finds the ledger
    (through its parent process) and writes there gets nothing recorded, its own honest re-run included."""
    url, commits, _ = served
    ledger = tmp_path / "ledger"
    forger = _declaring(scripted, tmp_path / "forger" / "classic__cranfield.json", url, commits["forger"],
                        ("python3", "rank.py", "{data}", "{run}", str(ledger)))
    code = main(["reproduce", str(forger), "--data-dir", f"classic/cranfield={CRANFIELD}", "--ledger", str(ledger),
                 "--run-submitted-code", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 1 and out.startswith(f"{forger}: reproduced by script {url}"), out + err
    assert err.strip() == (f"error: {ledger / 'org__other' / 'classic__cranfield.json'}: the ledger changed while "
                           "the artifacts ran (submitted code writing records?); no record written: remove what this "
                           "run did not write and reproduce again")
    assert [p.relative_to(ledger).as_posix() for p in ledger.rglob("*.json")] == ["org__other/classic__cranfield.json"]
