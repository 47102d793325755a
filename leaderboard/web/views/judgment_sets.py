"""The dataset page under each judgment set: a switcher of plain links on every dataset page that has declared
sets (the official page first), and one page per declared set, `datasets/<slug>~<set name>.html` (a `~` is in no
dataset slug), whose downloads name the set (docs/datasets.md, "Judgment sets")."""

from __future__ import annotations

from dataclasses import dataclass, replace

from leaderboard.analysis.aggregate import DatasetBoard, Leaderboard
from leaderboard.web.contexts import DatasetContext, Download

SEPARATOR = "~"


@dataclass(frozen=True)
class SetLink:
    """One entry of the switcher."""

    name: str
    kind: str  # official, post-hoc, machine
    sha256: str
    href: str
    current: bool
    judge: str = ""  # a machine set's "model at revision, prompt sha256 …"
    source: str = ""
    license: str = ""
    description: str = ""  # the declaration's words, shown under the switcher on the set's own page


MACHINE_NOTE = ("Machine judgments are a judge model's grades, not people's: a system built like the judge, or the "
                "judge itself, can be favoured by them.")


def set_slug(dataset_slug: str, name: str | None) -> str:
    """The file stem of the dataset's page under the set `name` (None: the official set's page)."""
    return dataset_slug if name is None else f"{dataset_slug}{SEPARATOR}{name}"


def _links(board: Leaderboard, dataset: DatasetBoard, current: str | None) -> tuple[SetLink, ...]:
    from evaluator.datasets.judgment_sets import official_set

    root = "../"
    official = official_set(dataset.info.id)
    links = [SetLink("official", "official", official.sha256 if official else "", f"{root}datasets/{dataset.slug}.html",
                     current is None, source=official.source if official else "the dataset's judgments",
                     license=official.license if official else "")]
    for set_board in board.judgment_sets.get(dataset.info.id, ()):
        found = set_board.judgment_set
        judge = "" if found.judge is None else (f"{found.judge[0]} at {found.judge[1]}, prompt sha256 "
                                               f"{found.judge[2][:12]}…")
        links.append(SetLink(found.name, found.kind, found.sha256,
                             f"{root}datasets/{set_slug(dataset.slug, found.name)}.html", current == found.name,
                             judge, found.source, found.license, _description(found)))
    return tuple(links)


def _description(found) -> str:
    return " ".join(part for part in (found.description, MACHINE_NOTE if found.kind == "machine" else "") if part)


def with_switcher(board: Leaderboard, dataset: DatasetBoard, context: DatasetContext) -> DatasetContext:
    """The official page with the switcher, when the dataset has declared sets."""
    if not board.judgment_sets.get(dataset.info.id):
        return context
    links = _links(board, dataset, None)
    return replace(context, set_links=links, shown_set={"name": "official", "kind": "official",
                                                        "sha256": links[0].sha256, "source": links[0].source,
                                                        "license": links[0].license, "judge": None})


def build(board: Leaderboard, dataset: DatasetBoard, evidence) -> list[tuple[str, DatasetContext]]:
    """(file stem, page) of the dataset under each declared set."""
    from leaderboard.web.views import dataset as dataset_view

    out = []
    # predictions are the official results', never shown beside another set's values
    plain = replace(board, predictions={})
    for set_board in board.judgment_sets.get(dataset.info.id, ()):
        found = set_board.judgment_set
        stem = set_slug(dataset.slug, found.name)
        context = dataset_view.build(plain, set_board.board, evidence)
        left = (f" {len(set_board.left_out)} model(s) whose stored ranking does not determine "
                f"{dataset.info.main_metric} against these judgments are left out: "
                f"{', '.join(set_board.left_out)}.") if set_board.left_out else ""
        note = (f"Judgments: {found.name} ({found.kind}, sha256 {found.sha256}), from {found.source}; licence "
                f"{found.license}. Every value is the stored ranking scored against these judgments: only the "
                f"metrics the stored ranking determines by itself, over the same queries.{left}")
        root = context.page.root
        context = replace(
            context, page=replace(context.page, path=f"datasets/{stem}.html",
                                  title=f"{context.page.title} ({found.name} judgments)"),
            methods=(note, *context.methods),
            downloads=tuple(Download(d.label, f"{root}downloads/datasets/{stem}.{d.href.rsplit('.', 1)[1]}")
                            for d in context.downloads),
            set_links=_links(board, dataset, found.name),
            shown_set={"name": found.name, "kind": found.kind, "sha256": found.sha256, "source": found.source,
                       "license": found.license,
                       "judge": None if found.judge is None else dict(zip(("model", "revision", "prompt_sha256"),
                                                                          found.judge, strict=True))})
        out.append((stem, context))
    return out
