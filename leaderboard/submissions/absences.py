"""Absence claims (`score_samples.absent_ids`) checked against the dataset's corpus, wherever one can be had.

The checks that need no corpus (`sample_checks._absence_problem`) run on every file; this one needs the corpus's
ids. The corpus is looked for, in order, in the folder `--data-dir` names for the dataset, under the data root,
and in the cache where `irboard evaluate` keeps downloaded BEIR datasets; a registered dataset whose judgments are
known to name missing documents (ArguAna, `allow_unknown_qrels_docs`) is downloaded there when missing, checked by
its published md5, as the official judgments are fetched and cached. When none can be had the claim stays unchecked,
which costs the file nothing it could have gained: the recall-at-scale prediction counts every claimed-absent
document as a miss anyway (`analysis.scale.absent_as_misses`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluator.errors import IrboardError, one_line
from evaluator.result import ResultFile
from leaderboard.submissions.sample_checks import absent_in_corpus


@dataclass(frozen=True)
class AbsenceCheck:
    """The outcome: `problems` (claims the corpus contradicts; the file is refused), or `unchecked` (why no corpus
    was at hand; None when the claims were looked up)."""

    problems: tuple[str, ...] = ()
    unchecked: str | None = None


def corpus_file(dataset_id: str, data_dirs: dict[str, Path], data_root: Path | None) -> tuple[Path | None, str]:
    """(the dataset's corpus file and where it came from, or None and the reason why there is none)."""
    from evaluator.datasets.layout import find_file

    folders = [data_dirs[dataset_id]] if dataset_id in data_dirs else []
    if data_root is not None:
        folders.append(data_root / dataset_id)
    for folder in folders:
        if (found := find_file(folder, "corpus.jsonl")) is not None:
            return found, "the corpus of --data-dir"
    return _cached_beir_corpus(dataset_id)


def _cached_beir_corpus(dataset_id: str) -> tuple[Path | None, str]:
    """The corpus of a registered BEIR dataset in the download cache, fetched there first for a dataset whose
    judgments name missing documents (the only registered ones where a file may claim absences)."""
    from urllib.parse import urlparse

    from evaluator.datasets import get_spec
    from evaluator.datasets.beir import FAMILY, dataset_folder
    from evaluator.datasets.download import cache_root
    from evaluator.datasets.layout import find_file

    try:
        spec = get_spec(dataset_id)
    except IrboardError:
        return None, "an unregistered dataset: pass its folder with --data-dir"
    if spec.family != FAMILY:
        return None, f"no corpus of {dataset_id} at hand: pass its folder with --data-dir"
    archive = Path(urlparse(spec.source).path).name.removesuffix(".zip")
    cached = cache_root() / FAMILY / archive
    if not cached.is_dir() and not spec.allow_unknown_qrels_docs:
        return None, f"no corpus of {dataset_id} at hand: pass its folder with --data-dir"
    try:
        folder = dataset_folder(spec, None, None)
    except IrboardError as error:
        return None, f"its corpus cannot be fetched ({one_line(str(error))})"
    found = find_file(folder, "corpus.jsonl")
    return (found, "the corpus in the download cache") if found is not None else \
        (None, f"no corpus.jsonl in {folder}")


def check_absences(result: ResultFile, data_dirs: dict[str, Path], data_root: Path | None) -> AbsenceCheck:
    """Each id `absent_ids` names looked up in the dataset's corpus (`absent_in_corpus`), when one can be had."""
    from evaluator.datasets.layout import read_corpus

    found, said = corpus_file(result.dataset.id, data_dirs, data_root)
    if found is None:
        return AbsenceCheck(unchecked=said)
    try:
        corpus = read_corpus(found)
    except IrboardError as error:
        return AbsenceCheck((f"cannot check absent_ids against {found}: {one_line(str(error))}",))
    return AbsenceCheck(tuple(absent_in_corpus(result, corpus, said)))
