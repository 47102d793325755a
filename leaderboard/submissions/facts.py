"""The dataset facts a result states (its `dataset` block and the relevance level it scored with), checked against
the registry or the declaration of its dataset: a stated fact that differs is refused with one line naming the field
and the expected value. A fact the definition leaves out is never trusted from the file: `num_docs` decides whether
a shallow ranking covers the whole corpus (evaluator.metrics.depth), so only the definition's count does.
`dataset.revision` names the data a result was scored on (`irboard evaluate` writes it): empty (unstated), or one of
the revisions its definition pins (`known_revisions`): a declared dataset pins none.

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
    revision: str = ""  # "": not stated


@dataclass(frozen=True)
class DatasetFacts:
    """What a dataset's definition (registered spec or declaration) states; None: left unstated."""

    dataset_id: str
    split: str
    relevance_level: int
    num_docs: int | None = None  # the corpus size, the only one a depth check relies on
    qrels_sha256: str | None = None  # the judgments a declaration names (a registered dataset's: its official ones)
    source: str = ""  # the declaration, for messages
    revisions: tuple[str, ...] = ()  # the data's revisions a result may state (`known_revisions`)


def definition_facts(spec: DatasetSpec) -> DatasetFacts:
    """The facts of `spec`, with the judgments its declaration names (evaluator.datasets.declared)."""
    from evaluator.datasets.declared import find_declared
    from evaluator.datasets.spec import registry

    # a registered id is the registry's: a declaration file of its name is refused (declared.clash), never read
    declared = None if spec in registry().all() else find_declared(spec.id)
    qrels, source = (declared.qrels_sha256, declared.source) if declared is not None else (None, "")
    return DatasetFacts(spec.id, spec.split, spec.relevance_level, spec.num_docs, qrels, source,
                        known_revisions(spec) if declared is None else ())


def known_revisions(spec: DatasetSpec) -> tuple[str, ...]:
    """What `irboard evaluate` writes as `dataset.revision` for `spec`'s data: the pinned revision or the archive's
    md5 (`--model`, evaluator.pipeline), the commit of the hub copy it may read instead (beir_hub), and the pinned
    official judgments it scores a run file on (`--run`, evaluator.datasets.official.SOURCE)."""
    from evaluator.datasets.beir_hub import hub_copy
    from evaluator.datasets.official import SOURCE, official_judgments

    copy = hub_copy(spec) if spec.family == "beir" else None
    found = [spec.revision, spec.md5, copy.revision if copy is not None else None,
             SOURCE if official_judgments(spec.id) is not None else None]
    return tuple(dict.fromkeys(value for value in found if value))


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
    if stated.revision and stated.revision not in facts.revisions:
        pinned = " or ".join(repr(value) for value in facts.revisions) or "none"
        problems.append(f"dataset.revision is {stated.revision[:80]!r}; the data of {name} is pinned at {pinned}: "
                        "leave it as `irboard evaluate` writes it (empty when unstated)")
    if stated.relevance_level != facts.relevance_level:
        problems.append(f"settings.relevance_level is {stated.relevance_level}; {name} counts grades >= "
                        f"{facts.relevance_level} as relevant: re-run `irboard evaluate` with the dataset's settings")
    return problems
