"""The home page: every model's group means and dataset scores in one table, ordered by the mean that leads it, with
who could be #1 in each column for any view (`build`).
"""

from __future__ import annotations

from evaluator.result import slugify
from leaderboard.analysis import best_words
from leaderboard.analysis.aggregate import ALL_GROUP, DatasetBoard, GroupBoard, Leaderboard, ModelBoard
from leaderboard.analysis.judged_words import group_holds
from leaderboard.analysis.predictions import Evidence
from leaderboard.web.best_data import best_sentence, column_entry, dataset_sizes, group_sizes
from leaderboard.web.contexts import (
    Column,
    DatasetCell,
    Download,
    GroupCell,
    GroupHeader,
    HomeContext,
    HomeRow,
    Page,
)
from leaderboard.web.judged_data import add_flips, group_set_clause, judged_cells
from leaderboard.web.render import public_note
from leaderboard.web.views import common
from leaderboard.web.views.common import (
    GROUP_MEANS,
    MODEL_TYPES,
    VERIFIED_RULE,
    describe_tests,
    group_ci_text,
    group_method,
    ordered_groups,
)
from leaderboard.web.views.ranks import (
    RANKS_PAGE,
    band_rule,
    group_key,
    group_where,
    rank_rule,
    rank_tables,
    separability_row,
)
from leaderboard.web.views.scale import home_predictions, prediction_method

HOME_ROWS = 50  # rows in the home page's own HTML (its first page); data/board.js holds every row and dataset column
PARAMETER_BOUNDS = (50_000_000, 150_000_000, 500_000_000, 1_000_000_000, 10_000_000_000)


def _dataset_column(board: DatasetBoard, root: str, multilingual: bool = False) -> Column:
    return Column(key=f"d-{board.slug}", dataset_id=board.info.id, label=board.info.id.split("/", 1)[-1],
                  title=board.info.name,
                  href=f"{root}datasets/{board.slug}.html", metric=board.info.main_metric,
                  language=board.info.language if multilingual else "")


BEST_SET_PAGE = "method.html#best-set"


def home_order(board: Leaderboard) -> tuple[list[ModelBoard], str]:
    """Verified models (every result verified) before the others; within each, models with a mean over every
    dataset first, best first, then the rest by id."""
    overall = _sorted_group(board)
    if overall is None:
        return sorted(board.models, key=lambda m: (m.verified != "all", m.info.id)), "Models are listed by id."
    ordered = sorted(board.models, key=lambda m: (
        m.verified != "all", m.info.id not in overall.scores,
        -overall.scores[m.info.id].mean if m.info.id in overall.scores else 0.0, m.info.id))
    text = (f"Default order: re-scored models first, then the others apart; in each, models with a result on all "
            f"{len(overall.dataset_ids)} datasets by their {overall.name} mean (best first), then the rest by id. "
            "Sorting by a column keeps the two apart.")
    return ordered, text


def build(board: Leaderboard, evidence: Evidence | None = None) -> HomeContext:
    page = Page("index.html", "Leaderboard", "", "home")
    boards = {d.info.id: d for d in board.datasets}
    means = {(d.info.id, model_id): float(mean) for d in board.datasets for model_id, mean in zip(d.model_ids, d.means,
                                                                                                 strict=True)}
    checked = {(d.info.id, r.model.id): d.info.main_metric in r.verified_metrics for d in board.datasets
               for r in d.results}
    judged = judged_cells(board)
    # the mean the rows are ordered by comes first, beside the model names: on a phone it is on the first screen
    sorted_group = _sorted_group(board)
    groups = sorted(ordered_groups(board), key=lambda g: g.name != (sorted_group.name if sorted_group else ALL_GROUP))
    headers = tuple(GroupHeader(g.name, group_key(g.name), (), len(g.dataset_ids)) for g in groups)
    dataset_groups = tuple(
        GroupHeader(g.name, group_key(g.name), tuple(_dataset_column(boards[d], "", multilingual) for d in g.dataset_ids),
                    len(g.dataset_ids))
        for g in groups if g.name != ALL_GROUP
        for multilingual in [len({boards[d].info.language for d in g.dataset_ids}) > 1]
    )
    languages = tuple(sorted({c.language for header in dataset_groups for c in header.columns if c.language}))
    ordered_ids = [column.dataset_id for header in dataset_groups for column in header.columns]
    models, order_text = home_order(board)
    column, predicted = home_predictions(board, [m.info.id for m in models], evidence)
    # who could be #1 in each column (the ★ and the bold), for every view: best_data
    best_level = best_words.level(board.settings.tests.alpha)
    row_of = {model.info.id: i for i, model in enumerate(models)}
    best_columns: dict[str, list] = {}
    sized = [(f"g-{group_key(g.name)}", group_sizes(board, g)) for g in groups]
    sized += [(f"d-{d.slug}", dataset_sizes(board, d)) for d in board.datasets]
    for key, found in sized:
        if found is not None:
            best_columns[key] = column_entry(*found, row_of)
    add_flips(best_columns, board, groups, row_of)
    # with no filter the page shows the build's own best sets, which the script finds again from the same tests
    best = {(d.info.id, model_id): bool(flag)
            for d in board.datasets for model_id, flag in zip(d.model_ids, d.best_set, strict=True)}
    rows = []
    for model in models:
        model_id = model.info.id
        group_cells = []
        for group in groups:
            score = group.scores.get(model_id)
            ranked = score is not None and score.mean_rank is not None  # unranked: no range, no band (not 0)
            group_cells.append(GroupCell(
                mean=score.mean if score else None, ci=score.ci if score else None,
                mean_rank=score.mean_rank if score else None,
                covered=group.coverage.get(model_id, 0), total=len(group.dataset_ids),
                rank_interval=score.rank_interval if ranked else None, band=score.band if ranked else None,
                top=ranked and model_id in group.best_set,
                **dict(zip(("rank_holds", "best_holds"), group_holds(group, model_id), strict=True))))
        cells = tuple(
            DatasetCell(means.get((d, model_id)), best.get((d, model_id), False),
                        model.zero_shot.get(d) is False, checked.get((d, model_id), False), judged.get((d, model_id)))
            for d in ordered_ids
        )
        rows.append(HomeRow(model_id=model_id, href=f"models/{model.slug}.html", type=model.info.type,
                            parameters=model.info.parameters, license=model.info.license,
                            open_weights=model.info.open_weights, zero_shot=model.zero_shot_all,
                            verified=model.verified, is_baseline=model_id == board.baseline_id,
                            groups=tuple(group_cells), cells=cells, prediction=predicted.get(model_id),
                            tier=model.tier, parameters_measured=model.costs_measured))
    methods = [
        "Each dataset column shows the dataset's main metric (named in its header), the mean over all of its "
        "queries, ×100. – : no result.",
        GROUP_MEANS,
        *(f"{g.name}: {group_method(g)}" for g in groups),
        f"{best_words.level(board.settings.tests.alpha)} confidence intervals [low, high] of group means: "
        f"{group_ci_text(board)} Dataset pages give each "
        "dataset's interval.",
        "Mean rank (rank view): each model's rank on every dataset of the group among the re-scored models that "
        "cover the whole group (1 = best, ties share the average rank), averaged with the group's weights.",
        f"★ beside a group mean and bold on a dataset value: the model could be #1 there at {best_level} among the "
        "ranked models the view shows (the best set: each other shown model is significantly worse than one of them in a "
        "one-sided test at α / (s − 1), s the number shown rounded up to 2, 5, 17, 65, … or all); without a filter, "
        "among all ranked models. Each filter recomputes it "
        f"(the method page: {BEST_SET_PAGE}). Rank ranges stay those among all ranked models.",
        VERIFIED_RULE,
        f"Rank ranges and tie bands of every group mean (among the re-scored models): the ranks page ({RANKS_PAGE}). "
        f"{rank_rule(board)} {band_rule(board)}",
        "† the model's training data includes this dataset (model.training_datasets), so it is not zero-shot "
        "there; the zero-shot filter keeps models that are zero-shot on every dataset.",
    ]
    if column is not None:
        methods.append(f"{prediction_method(board)} On this page: {column.detail}, weighted as in the group means, "
                       "only for models with a prediction on every one of them (k/n otherwise: datasets with a "
                       "prediction / datasets); dataset and model pages give each dataset's prediction or the reason "
                       "there is none.")
    licenses = tuple(sorted({m.info.license for m in board.models if m.info.license}))
    return HomeContext(
        page=page, groups=headers, dataset_groups=dataset_groups, rows=tuple(rows),
        types=tuple(t for t in MODEL_TYPES if any(m.info.type == t for m in board.models)),
        licenses=licenses, parameter_bounds=PARAMETER_BOUNDS, baseline_id=board.baseline_id,
        baseline_href=f"models/{slugify(board.baseline_id)}.html" if board.baseline_id else "",
        dataset_count=len(board.datasets),
        tests=describe_tests(board), methods=tuple(methods), order=order_text,
        warnings=tuple(public_note(warning) for warning in board.warnings),
        downloads=(Download("CSV", "downloads/leaderboard.csv"), Download("JSON", "downloads/leaderboard.json"),
                   Download("Parquet", "downloads/leaderboard.parquet")),
        prediction=column,
        column_count=3 + 2 * len(headers) + (column is not None) + len(ordered_ids),
        html_rows=HOME_ROWS, listed_rows=common.LISTED_ROWS, mean_column_count=3 + 2 * len(headers) + (column is not None),
        column_choices=tuple(GroupHeader(g.name, g.key, next((d.columns for d in dataset_groups if d.key == g.key), ()),
                                         g.size) for g in headers),
        separability=tuple(separability_row(d, "") for d in board.datasets),
        rank_summary=rank_tables(board, rows=False),
        default_sort=f"g-{group_key(sorted_group.name)}" if sorted_group else "",
        answer=best_answer(board, sorted_group), best_level=best_level,
        languages=languages,
        best_columns=best_columns,
    )


def _sorted_group(board: Leaderboard) -> GroupBoard | None:
    """The group whose mean orders the home page by default (home_order) and leads its columns: "All datasets"
    when some model has its mean, else the group where the most models have one (the first of those), so the
    first screen shows scores even when no model covers every dataset."""
    overall = next((g for g in board.groups if g.name == ALL_GROUP), None)
    if overall is not None and overall.scores or not board.groups:
        return overall if overall is not None else None
    return max(board.groups, key=lambda g: len(g.scores))  # max keeps the first of equals


def best_answer(board: Leaderboard, group: GroupBoard | None) -> str:
    """The home page's first answer, for the default view (every model, sorted by `group`'s mean): who could be #1
    at 1 - alpha (best_data.best_sentence; the table's script rewrites it for each view)."""
    if group is None:
        return ""
    ids = list(group.ranked_ids)
    row_of = {model.info.id: i for i, model in enumerate(home_order(board)[0])}
    ordered = sorted((m for m in ids if m in group.best_set), key=lambda m: (-group.scores[m].mean, row_of[m]))
    text = best_sentence(group_where(group), ordered, len(ids), len(ids), False, board.settings.tests.alpha)
    return text + group_set_clause(board, group, row_of)
