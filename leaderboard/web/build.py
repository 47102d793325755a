"""`irboard build`: read and validate every result, aggregate, render, then swap the finished site in.

Nothing is written unless every file is valid (and, with strict, nothing was worth a warning); every problem
is reported at once. The same input gives a byte-identical site.
"""

from __future__ import annotations

import functools
import http.server
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from evaluator.datasets.declared import declaration_problems
from evaluator.datasets.judgment_sets import judgment_set_problems
from evaluator.errors import IrboardError, one_line
from leaderboard.analysis.aggregate import Leaderboard, SiteSettings, bootstrapped_groups, build_leaderboard
from leaderboard.analysis.predictions import Evidence, Predictor, load_evidence
from leaderboard.analysis.stats import TestSettings
from leaderboard.submissions.catalog import dataset_info
from leaderboard.submissions.load import load_results, read_cache, registered_query_set
from leaderboard.submissions.parallel import forked_map
from leaderboard.submissions.reproductions import mark_reproduced
from leaderboard.submissions.stages import Verifier
from leaderboard.web import board_data, custom_data, downloads, run_files
from leaderboard.web.provenance import BuildStamp
from leaderboard.web.render import (
    MARKER,
    STATIC_DIR,
    SiteFiles,
    json_text,
    make_environment,
    staged_folder,
    write_site_file,
)
from leaderboard.web.run_files import run_path, trec_run_gz
from leaderboard.web.views import (
    compare,
    dataset,
    home,
    judgment_sets,
    method,
    model,
    pareto,
    ranks,
    rounds,
    submit,
)

logger = logging.getLogger(__name__)

# A partial plotly.js with only the trace types charts.py uses (docs/plotly-bundle.md), copied with site/.
PLOTLY_TARGET = "js/plotly.min.js"
PLOTLY_JS = STATIC_DIR / PLOTLY_TARGET


class BuildError(IrboardError):
    """The site cannot be built; `problems` lists every reason, one line each."""

    def __init__(self, problems: list[str], what: str = "problem", why: str = ""):
        self.problems = [one_line(problem) for problem in problems]
        lines = "\n".join(f"  {problem}" for problem in self.problems)
        count = len(self.problems)
        super().__init__(f"build stopped: {count} {what}{'s' if count != 1 else ''}{why}; fix "
                         f"{'them' if count != 1 else 'it'} and build again:\n{lines}")


@dataclass
class BuildReport:
    out_dir: Path
    results: int = 0
    models: int = 0
    datasets: int = 0
    pages: int = 0
    files: int = 0
    warnings: list[str] = field(default_factory=list)
    round_notes: list[str] = field(default_factory=list)  # sealed rounds' problems: on their pages, never fatal
    # "<file>: trust: <sentence>" for each result with a value short of re-scored (evaluator.trust): never fatal
    trust_notes: list[str] = field(default_factory=list)


def _settings(settings: SiteSettings | TestSettings | None) -> SiteSettings:
    if settings is None:
        return SiteSettings()
    if isinstance(settings, TestSettings):
        return SiteSettings(tests=settings)
    return settings


def _check_output(results_dir: Path, out_dir: Path) -> list[str]:
    """Refuse to replace a folder the build did not make, or one that holds the results."""
    out, results = out_dir.resolve(), results_dir.resolve()
    if out == results or out in results.parents:
        return [f"{out_dir}: the output folder contains the results folder {results_dir}; choose another --out"]
    if out_dir.exists() and (not out_dir.is_dir() or (any(out_dir.iterdir()) and not (out_dir / MARKER).exists())):
        return [f"{out_dir}: exists and is not an irboard build (no {MARKER} file); choose a new or empty --out "
                "folder, or remove it"]
    return []


def highlight_css(model_ids) -> str:
    """Rules marking the rows of `model_ids` in every table (rows carry data-id, the id in lower case; ids hold only
    [A-Za-z0-9._/-], which need no escape inside a quoted attribute selector)."""
    rows = ",\n".join(f'tr[data-id="{model_id.lower()}"] > *' for model_id in model_ids)
    return (f"{rows} {{\n  background: #fff3bf;\n  color: #1a1a1a;\n}}\n"
            ".preview {\n  background: #fff3bf;\n  color: #1a1a1a;\n  padding: 0.5em 1em;\n}\n")


def unknown_datasets(results, lookup: Callable) -> list[str]:
    """A result on an id that neither the registry nor a declaration defines is refused, not shown as a dataset of
    its own (a typo such as beir/scifcat would otherwise add one)."""
    from evaluator.datasets import get_spec
    from evaluator.datasets.declared import unknown_remedy

    problems = []
    for result in results:
        if lookup(result.dataset_id).known:
            continue
        try:
            get_spec(result.dataset_id)
            continue  # defined after all (the lookup could not say)
        except IrboardError as error:
            problems.append(f"{result.path}: dataset.id: {one_line(str(error))}; {unknown_remedy(result.dataset_id)}")
    return problems


def build_site(results_dir: Path | str, out_dir: Path | str, strict: bool = False,
               settings: SiteSettings | TestSettings | None = None,
               is_verified: Verifier | None = None,
               lookup: Callable = dataset_info, workers: int = 1, stamp: BuildStamp | None = None,
               rounds_dir: Path | str | None = None, now: datetime | None = None,
               reproductions_dir: Path | str | None = None) -> BuildReport:
    """Build the static site from `results_dir` into `out_dir`; raise BuildError listing every problem.

    `settings` chooses the tests and the baseline; `is_verified` (the read step's verify stage, e.g.
    submissions.verify.Judgments) marks results whose run re-scores to the same metrics (none is verified without it); `lookup(dataset_id)` gives a DatasetInfo; `stamp`: the
    repository, commit and date every page's footer names (provenance.build_stamp; none: left out). Sealed rounds
    are read from `rounds_dir` (when it exists), their phases judged at `now` (default: the current time); the
    reproduction ledger from `reproductions_dir` (submissions.reproductions: a record naming a file's bytes makes
    that result reproduced)."""
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    settings = _settings(settings)
    lookup = functools.lru_cache(maxsize=None)(lookup)
    # recall at scale is predicted while each file is read, so that no score samples stay in memory
    predictor = Predictor(settings.scale_mode, settings.scale_tail)
    # what was read of each unchanged file is taken from $IRBOARD_CACHE/read (submissions.read_cache)
    loaded = load_results(results_dir, keep_metrics=lambda d: [lookup(d).main_metric], is_verified=is_verified,
                          workers=workers, predictor=predictor, reads=read_cache(),
                          query_set=registered_query_set(lookup, is_verified), on_run=run_files.keep_decoded,
                          facts=lambda dataset_id: lookup(dataset_id).facts)
    problems = loaded.problems + unknown_datasets(loaded.results, lookup) + declaration_problems() \
        + judgment_set_problems() \
        + _check_output(results_dir, out_dir)
    loaded.results = mark_reproduced(loaded.results, reproductions_dir, problems)
    if problems:
        raise BuildError(problems)
    warnings = list(loaded.warnings)
    # judgments that could not be had leave results unverified
    warnings += [f"{error}; its results are shown unverified" for error in (is_verified.errors if is_verified else [])]
    board = build_leaderboard(loaded.results, settings, lookup, warnings, workers)
    # a round's problems are its participants' files: shown on its page, never a reason to stop the site
    round_notes: list[str] = []
    round_contexts = rounds.build(rounds_dir, now or datetime.now(timezone.utc), warnings, round_notes)
    for note in round_notes:
        logger.warning("%s", one_line(note))
    if strict and warnings:
        raise BuildError(warnings, "warning", " (--strict)")
    # the warnings go back in the report, and the command prints each once (logging them too printed them twice)
    with staged_folder(out_dir) as staging:
        files, page_count = render_site(board, workers=workers, folder=staging, stamp=stamp)
        page_count += rounds.add_round_pages(files, round_contexts, stamp or BuildStamp())
        files.write_to(staging)
    logger.info("built %d pages into %s", page_count, out_dir)
    return BuildReport(out_dir=out_dir, results=len(loaded.results), models=len(board.models),
                       datasets=len(board.datasets), pages=page_count, files=files.count + 1, warnings=warnings,
                       round_notes=round_notes, trust_notes=trust_notes(loaded.results))


def trust_notes(results) -> list[str]:
    """What `irboard validate` says of each result with a value short of re-scored, in the same words."""
    from evaluator.trust import RANKED_TIERS, tier_lines, weakest

    notes = []
    for result in sorted(results, key=lambda r: r.path):
        tiers = result.tiers()
        if weakest(tiers.values()) not in RANKED_TIERS:
            notes += [f"{result.path}: trust: {line}" for line in tier_lines(tiers)]
    return notes


def render_site(board: Leaderboard, evidence: Evidence | None = None, workers: int = 1,
                folder: Path | None = None, stamp: BuildStamp | None = None) -> tuple[SiteFiles, int]:
    """Every page, download, data file and asset of the site, in memory; `evidence` (the method page's measured
    errors) defaults to leaderboard/analysis/scale_evidence.json. The dataset and model pages are rendered in
    `workers` forked processes when more than one (the same files); with `folder`, each of those is written there
    by the process that rendered it (at 1,000 models they are 600 MB), and SiteFiles holds the rest."""
    evidence = evidence if evidence is not None else load_evidence()
    env = make_environment()
    env.globals["stamp"] = stamp or BuildStamp()
    files = SiteFiles()
    # dataset pages first: each is as much work as a few dozen model pages, so the workers end together
    parts = [("dataset", [i]) for i in range(len(board.datasets))]
    parts += [("model", list(range(start, min(start + MODELS_A_PART, len(board.models)))))
              for start in range(0, len(board.models), MODELS_A_PART)]
    rendered = forked_map(lambda part: _render_part(board, evidence, env, *part, folder=folder), parts, workers)
    home_page = home.build(board, evidence)
    files.add(home_page.page.path, env.get_template("home.html").render(ctx=home_page, bench=custom_data.picker(board)))
    if not bootstrapped_groups(board.settings):  # the page's own benchmark cannot reproduce bootstrapped means
        for dataset in board.datasets:
            files.add(f"data/queries/{dataset.slug}.js",
                      _data_script("queries", dataset.info.id, custom_data.query_data(dataset)))
    files.add("data/board.js", board_data.board_script(env, home_page))
    if stamp is not None and stamp.highlight:
        files.add("css/highlight.css", highlight_css(stamp.highlight))
    for path, text in downloads.home_downloads(home_page).items():
        files.add(path, text)
    count = 1
    for part_pages, paths, ends, blob in rendered:
        for path, start, end in zip(paths, [0, *ends[:-1]], ends, strict=True):
            if folder is None:
                files.add(path, blob[start:end].tobytes())
            else:
                files.add_written(path)
        count += part_pages
    files.add("data/datasets.js", _data_script("datasets", None, json_text(compare.datasets_data(board)))
              + _data_script("groups", None, json_text(compare.groups_data(board))))
    for template, context in (("compare.html", compare.build(board)),
                              ("method.html", method.build(board, evidence)),
                              ("ranks.html", ranks.build(board)), ("submit.html", submit.build(board)),
                              *(("pareto.html", context) for context in pareto.build(board))):
        files.add(context.page.path, env.get_template(template).render(ctx=context))
        count += 1
    for source in sorted(path for path in STATIC_DIR.rglob("*") if path.is_file()):
        files.copy(source.relative_to(STATIC_DIR).as_posix(), source)
    return files, count


MODELS_A_PART = 25  # model pages a worker renders per task


def _render_part(board: Leaderboard, evidence: Evidence, env, kind: str, indices: list[int],
                 folder: Path | None = None) -> tuple[int, list[str], list[int], np.ndarray]:
    """The page, downloads and data file of each dataset or model in `indices`: (pages, paths, where each file's
    UTF-8 bytes end in the blob, the blob); with `folder`, the files are written there instead and the blob is
    empty. One numpy array, so that a worker hands it over in one piece (leaderboard.submissions.parallel)."""
    out: list[tuple[str, str]] = []
    for i in indices:
        if kind == "dataset":
            dataset_board = board.datasets[i]
            context = judgment_sets.with_switcher(board, dataset_board, dataset.build(board, dataset_board, evidence))
            out.append((context.page.path, env.get_template("dataset.html").render(ctx=context)))
            out += downloads.dataset_downloads(context, dataset_board.slug).items()
            for stem, shown in judgment_sets.build(board, dataset_board, evidence):
                out.append((shown.page.path, env.get_template("dataset.html").render(ctx=shown)))
                out += downloads.dataset_downloads(shown, stem).items()
        else:
            model_board = board.models[i]
            context = model.build(board, model_board, evidence)
            out.append((context.page.path, env.get_template("model.html").render(ctx=context)))
            out += downloads.model_downloads(context, model_board.slug).items()
            out += [(run_path(model_board.slug, dataset_id), trec_run_gz(result.path, model_board.slug))
                    for dataset_id, result in sorted(model_board.results.items()) if result.has_run]
            out.append((f"data/models/{model_board.slug}.js",
                        _data_script("models", model_board.info.id, compare.compare_data(board, model_board))))
    contents = [text.encode("utf-8") if isinstance(text, str) else text for _, text in out]
    if folder is not None:
        for (path, _), content in zip(out, contents, strict=True):
            write_site_file(folder, path, content)
        contents = [b"" for _ in contents]
    ends = np.cumsum([len(content) for content in contents]).tolist()
    pages_made = sum(path.endswith(".html") for path, _ in out)  # a dataset page under each judgment set too
    return pages_made, [path for path, _ in out], ends, np.frombuffer(b"".join(contents), dtype=np.uint8)


def _data_script(name: str, key: str | None, data: str) -> str:
    """A script storing `data` (script-safe JSON text) in window.irboardData[name] (or [name][key]); <script src>
    works from file://."""
    target = f"d[{json_text(name)}]"
    if key is None:
        assign = f"{target} = {data};"
    else:
        assign = f"{target} = {target} || {{}};\n  {target}[{json_text(key)}] = {data};"
    return f"(function (d) {{\n  {assign}\n}})(window.irboardData = window.irboardData || {{}});\n"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's signature
        logger.debug("%s " + format, self.address_string(), *args)


def make_server(out_dir: Path | str, port: int = 8000, host: str = "127.0.0.1") -> http.server.ThreadingHTTPServer:
    """An HTTP server for the built site on 127.0.0.1 (port 0 picks a free one)."""
    out_dir = Path(out_dir)
    if not (out_dir / "index.html").is_file():
        raise BuildError([f"{out_dir}: no index.html; run `irboard build` first or pass --out"])
    handler = functools.partial(_QuietHandler, directory=str(out_dir))
    return http.server.ThreadingHTTPServer((host, port), handler)
