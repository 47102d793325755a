"""Reproduce a result whose artifact is a script at a pinned commit or a container image pinned by digest.

irboard cannot run such a model itself: it fetches the script's repository and checks out the declared commit (or
pulls the image by its digest), runs the script's `setup` command there if it declares one (with the network, before
the dataset's copy exists), then the declared command without a shell and without network, the dataset's folder as
`{data}` and a fresh file as `{run}`, reads that run file as `irboard evaluate --run` reads any run file, and
compares it with the stored ranking exactly as a re-run of a spec is compared (`reproduce.compare_runs`). A commit
the repository does not hold (moved, force-pushed away), a setup or command that fails, a command that writes no run
file, and a run file irboard refuses are each one line: the result is not reproduced. A container needs a runtime
(Docker or Podman) with its daemon; where there is none, the result cannot be reproduced here and the line says that
the maintainers' workflow runs it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from evaluator.artifact import ContainerArtifact, ScriptArtifact
from evaluator.errors import IrboardError, one_line
from evaluator.result import ResultFile
from leaderboard.submissions import sandbox

COMMAND_TIMEOUT_S = 6 * 3600  # the maintainers' workflow allows a day; one command gets a quarter of it
GIT_TIMEOUT_S = 600
_STDERR_TAIL = 4096  # bytes of a failed command's stderr read for its last line
# git may reach the declared repository over https:// or git:// only (no file://, ssh or helpers), without prompts
_GIT = ["git", "-c", "protocol.allow=never", "-c", "protocol.https.allow=always", "-c", "protocol.git.allow=always",
        "-c", "credential.helper=", "-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false"]


class NotReproduced(IrboardError):
    """The declared artifact ran (or could not) without giving the stored ranking: the first reason, one line."""


def set_up_declared(artifact: ScriptArtifact | ContainerArtifact, work: Path, timeout_s: float = COMMAND_TIMEOUT_S,
                    isolated: bool = True) -> str:
    """Everything the artifact's command needs before the dataset is there: how it will be isolated, said before
    anything is fetched; for a script, its checkout at the declared commit in `work`, then its `setup` command run there
    with the network (in the sandbox unless `isolated` is False, with no dataset in it); for a container, a runtime.
    NotReproduced when the checkout or the setup fails."""
    work.mkdir(exist_ok=True)
    if isinstance(artifact, ContainerArtifact):
        return f"{_runtime(artifact)} container without network"  # its image is its setup
    isolation = sandbox.isolation() if isolated else sandbox.NOT_ISOLATED
    checkout = work / "checkout"
    _checkout(artifact, checkout)
    if artifact.setup is not None:
        what = f"the script's setup {' '.join(artifact.setup)!r}"
        if isolated:
            _run(sandbox.wrap(list(artifact.setup), None, work, offline=False), checkout, timeout_s, what,
                 sandbox.environment())
        else:
            _run(list(artifact.setup), checkout, timeout_s, what)
    return isolation


def run_declared(artifact: ScriptArtifact | ContainerArtifact, data_folder: Path, work: Path,
                 timeout_s: float = COMMAND_TIMEOUT_S, isolated: bool = True) -> Path:
    """Run the artifact's command on `data_folder`, once `set_up_declared` has prepared `work`, with no network: the
    run file it wrote; NotReproduced when it wrote none. A script runs in the sandbox (`sandbox`) in a network
    namespace of its own unless `isolated` is False (a local check, not blind)."""
    run_file = work / "run.trec"
    if isinstance(artifact, ScriptArtifact):
        checkout = work / "checkout"
        what = f"the script's command {' '.join(artifact.command)!r}"
        if isolated:
            argv = sandbox.wrap(_filled(artifact.command, sandbox.DATA, f"{sandbox.WORK}/{run_file.name}"),
                                data_folder, work, offline=True)
            _run(argv, checkout, timeout_s, what, sandbox.environment())
        else:
            _run(_filled(artifact.command, str(data_folder.resolve()), str(run_file)), checkout, timeout_s, what)
    else:
        work.joinpath("out").mkdir()
        # the blind copy (read-only) and the output folder are its only mounts, and it has no network
        argv = [_runtime(artifact), "run", "--rm", "--network", "none", "--pull", "missing",
                "-v", f"{data_folder.resolve()}:/data:ro", "-v", f"{work.resolve() / 'out'}:/out", artifact.image,
                *_filled(artifact.command, "/data", "/out/run.trec")]
        _run(argv, work, timeout_s, f"the container's command {' '.join(artifact.command)!r}")
        run_file = work / "out" / "run.trec"
    if run_file.is_symlink() or not run_file.is_file() or run_file.stat().st_size == 0:
        raise NotReproduced("the command exited 0 but wrote no run file at {run}")
    return run_file


def _runtime(artifact: ContainerArtifact) -> str:
    runtime = container_runtime()
    if runtime is None:
        raise IrboardError(f"the container {artifact.image} needs a container runtime (docker or podman with its "
                           "daemon), which this machine lacks; the maintainers' reproduce workflow runs it "
                           "(docs/reproduction.md)")
    return runtime


def container_runtime() -> str | None:
    """docker or podman, when one is installed and its daemon answers."""
    for name in ("docker", "podman"):
        if shutil.which(name) is None:
            continue
        try:
            answer = subprocess.run([name, "info"], capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if answer.returncode == 0:
            return name
    return None


def _filled(command: list[str], data: str, run: str) -> list[str]:
    return [arg.replace("{data}", data).replace("{run}", run) for arg in command]


def _checkout(artifact: ScriptArtifact, checkout: Path) -> None:
    """Clone the repository and check out exactly the declared commit."""
    env = {**_plain_env(checkout.parent), "GIT_TERMINAL_PROMPT": "0"}
    _git(["clone", "--quiet", "--no-checkout", "--", artifact.repository, str(checkout)], env, checkout.parent,
         f"cannot fetch {artifact.repository}")
    found = subprocess.run([*_GIT, "-C", str(checkout), "cat-file", "-e", f"{artifact.commit}^{{commit}}"], env=env,
                           capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    if found.returncode != 0:
        raise NotReproduced(f"commit {artifact.commit} is not in {artifact.repository} (moved or removed from its "
                            "history?); declare a commit the repository holds")
    _git(["-C", str(checkout), "checkout", "--quiet", "--detach", artifact.commit], env, checkout.parent,
         f"cannot check out {artifact.commit}")


def _git(args: list[str], env: dict, cwd: Path, what: str) -> None:
    try:
        answer = subprocess.run([*_GIT, *args], env=env, cwd=cwd, capture_output=True, text=True,
                                timeout=GIT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise NotReproduced(f"{what}: git gave no answer in {GIT_TIMEOUT_S} s") from None
    if answer.returncode != 0:
        raise NotReproduced(f"{what}: {_last_line(answer.stderr) or f'git exited with {answer.returncode}'}")


def _run(argv: list[str], cwd: Path, timeout_s: float, what: str, env: dict | None = None) -> None:
    # stderr goes to a file and only its end is read: a submitted command can print without bound. It runs in a
    # session of its own, ended with the command, so no process it left in the background outlives it.
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env or _plain_env(cwd), stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True)
        except OSError as error:
            raise NotReproduced(f"{what} could not start: {error.strerror or error}") from None
        try:
            returncode = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise NotReproduced(f"{what} ran past {timeout_s:g} s") from None
        finally:
            _end_session(process)
        if returncode != 0:
            errors.seek(max(errors.seek(0, os.SEEK_END) - _STDERR_TAIL, 0))
            said = _last_line(errors.read().decode("utf-8", errors="replace"))
            raise NotReproduced(f"{what} failed (exit status {returncode}){': ' + said if said else ''}")


def _end_session(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _plain_env(home: Path) -> dict:
    """The environment a declared command sees: a path and a home of its own, nothing of the caller's secrets."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return one_line(lines[-1])[:300] if lines else ""


def rescore_run_file(stored: ResultFile, run_file: Path, dataset) -> ResultFile:
    """The run file read and ranked as `irboard evaluate --run` does, with the stored result's settings and ids."""
    from dataclasses import replace

    from evaluator.assemble import RunMetadata, assemble_result, needs_below
    from evaluator.metrics import evaluate, parse_measures
    from evaluator.run_formats import read_run_file
    from evaluator.trec import Qrels

    measures = parse_measures(sorted(stored.metrics))
    qrels = Qrels.from_dict(dataset.qrels)
    cutoffs = [m.cutoff for m in measures]
    settings = stored.settings
    # stored as the result was: whole, or to its depth with the judged documents below
    keep = stored.run.depth if stored.run is not None and stored.run.depth < settings.top_k else None
    try:
        reading = read_run_file(run_file, qrels, None, ignore_identical_ids=settings.ignore_identical_ids,
                                keep_top=keep, label_depth=None if None in cutoffs else max(cutoffs),
                                judged_below=keep is not None and needs_below(measures, keep))
    except IrboardError as error:
        raise NotReproduced(f"the run file the command wrote is refused: {one_line(str(error))}") from None
    ranked, top = reading.ranking.ranked, reading.ranking.top
    if keep is None:
        top = replace(top, depth=settings.top_k)  # read whole
    meta = RunMetadata(model=stored.model.model_dump(mode="json"), dataset_id=stored.dataset.id,
                       split=stored.dataset.split, num_docs=stored.dataset.num_docs, top_k=settings.top_k,
                       ignore_identical_ids=settings.ignore_identical_ids, relevance_level=settings.relevance_level)
    values = evaluate(ranked, qrels, measures, settings.relevance_level)
    return assemble_result(ranked, qrels, measures, top, meta, values=values, keep_depth=keep)


def rerun_declared(stored: ResultFile, data_dir: Path | str | None, cache_dir=None,
                   timeout_s: float = COMMAND_TIMEOUT_S, isolated: bool = True) -> tuple[ResultFile, str]:
    """Run the stored result's script or container artifact on its dataset: (the re-run as a result to compare, how
    the submitted code was isolated)."""
    from evaluator.datasets import load_dataset
    from evaluator.index.cache import local_cache_dir

    if data_dir is None or not Path(data_dir).is_dir():
        raise IrboardError(f"{stored.dataset.id}: a script or container reads its dataset from a folder: pass "
                           "--data-dir with the dataset's folder (BEIR layout)")
    if isolated and isinstance(stored.model.artifact, ScriptArtifact):
        sandbox.isolation()  # refused in one line before the dataset is read
    dataset = load_dataset(stored.dataset.id, data_dir=data_dir, cache_dir=local_cache_dir(cache_dir),
                           split=stored.dataset.split)
    from leaderboard.submissions.disguise import NotBlind, map_back, max_run_bytes, write_blind_copy

    with tempfile.TemporaryDirectory(prefix="irboard-reproduce-") as work:
        work = Path(work)
        # the setup step, with the network, runs before the blind copy exists; the command, offline, after
        isolation = set_up_declared(stored.model.artifact, work / "run", timeout_s, isolated)
        disguise = write_blind_copy(dataset, work / "data")  # corpus and queries only, renamed and shuffled
        run_file = run_declared(stored.model.artifact, work / "data", work / "run", timeout_s, isolated)
        try:
            mapped = map_back(run_file, disguise, work / "mapped.trec", max_run_bytes(stored))
        except NotBlind as error:
            raise NotReproduced(str(error)) from None
        return rescore_run_file(stored, mapped, dataset), isolation
