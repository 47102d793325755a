"""The dataset facts a result states (its `dataset` block and the relevance level it scored with), checked against
the registry or the declaration of its dataset: a stated fact that differs is refused with one line naming the field
and the expected value. A fact the definition leaves out is never trusted from the file: `num_docs` decides whether
a shallow ranking covers the whole corpus (evaluator.metrics.depth), so only the definition's count does.

The query count and ids are the query-set checks' (`validate.check_result`, `load`): `dataset.num_queries` equals the
stored queries (the reader checks), whose count and fingerprint are held to the definition's."""

from __future__ import annotations

from dataclasses import dataclass

from evaluator.datasets.spec import DatasetSpec


@dataclass(frozen=True)
class StatedFacts:
    """What a result says of its dataset (from a ResultFile or a LoadedResult)."""

    split: str
    num_docs: int | None
    qrels_sha256: str
    relevance_level: int


@dataclass(frozen=True)
class DatasetFacts:
    """What a dataset's definition (registered spec or declaration) states; None: left unstated."""

    dataset_id: str
    split: str
    relevance_level: int
    num_docs: int | None = None  # the corpus size, the only one a depth check relies on
    qrels_sha256: str | None = None  # the judgments a declaration names (a registered dataset's: its official ones)
    source: str = ""  # the declaration, for messages


def definition_facts(spec: DatasetSpec) -> DatasetFacts:
    """The facts of `spec`, with the judgments its declaration names (evaluator.datasets.declared)."""
    from evaluator.datasets.declared import find_declared
    from evaluator.datasets.spec import registry

    # a registered id is the registry's: a declaration file of its name is refused (declared.clash), never read
    declared = None if spec in registry().all() else find_declared(spec.id)
    qrels, source = (declared.qrels_sha256, declared.source) if declared is not None else (None, "")
    return DatasetFacts(spec.id, spec.split, spec.relevance_level, spec.num_docs, qrels, source)


def fact_problems(facts: DatasetFacts, stated: StatedFacts) -> list[str]:
    """Each stated fact that differs from the definition's, one line each naming the field and the expected value."""
    problems = []
    name = facts.dataset_id
    if stated.split != facts.split:
        problems.append(f"dataset.split is {stated.split!r}; {name} is scored on {facts.split!r}")
    if stated.num_docs is not None and facts.num_docs is not None and stated.num_docs != facts.num_docs:
        problems.append(f"dataset.num_docs is {stated.num_docs}, expected {facts.num_docs} (the corpus of {name}); "
                        "re-run `irboard evaluate`, which records it")
    if facts.qrels_sha256 is not None and stated.qrels_sha256 != facts.qrels_sha256:
        problems.append(f"dataset.qrels_sha256 is not the judgments {facts.source} declares for {name} (expected "
                        f"{facts.qrels_sha256}); re-run `irboard evaluate` with its judgments")
    if stated.relevance_level != facts.relevance_level:
        problems.append(f"settings.relevance_level is {stated.relevance_level}; {name} counts grades >= "
                        f"{facts.relevance_level} as relevant: re-run `irboard evaluate` with the dataset's settings")
    return problems
