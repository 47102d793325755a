"""`irboard evaluate`: a run file from any toolkit, or a model on a dataset, into one result file; or, without
--out and --results-dir, a run file's metrics printed as trec_eval prints them (`print_run_metrics`)."""

from __future__ import annotations

import argparse
import logging
import math
import re
import shlex
import sys
from dataclasses import replace
from decimal import Decimal
from functools import partial
from pathlib import Path

import numpy as np

from evaluator.assemble import MIN_RUN_DEPTH, RunMetadata, assemble_result, may_fit_whole, needs_below
from evaluator.errors import IrboardError, OutputExistsError
from evaluator.metadata import missing_note
from evaluator.metrics import DEFAULT_MEASURES, evaluate, parse_measures
from evaluator.progress import set_quiet, step
from evaluator.result import MODEL_TYPES, check_id, result_path, slugify, write_result
from evaluator.run_formats import RUN_FORMATS

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group("what to evaluate (either --run and --qrels, or --model and --dataset)")
    source.add_argument("--run", type=Path, help="run file: TREC (qid Q0 docid rank score tag), MS MARCO (qid pid "
                        "rank) or a JSON dictionary {qid: {docid: score}}; gzip, bzip2 or xz-compressed or not")
    source.add_argument("--run-format", choices=RUN_FORMATS,
                        help="the run's format, when detecting it from the first line is wrong")
    source.add_argument("--qrels", type=Path, help="TREC qrels (qid 0 docid rel) or BEIR qrels TSV with header "
                        "(default for a --dataset-id with official judgments: those, downloaded once)")
    source.add_argument("--model", help="model spec: bm25, bm25:k1=0.9,b=0.4, splade:<dir>, dense:<dir or hub id>")
    source.add_argument("--dataset", help="dataset id, e.g. beir/scifact, miracl/sw, mmarco/fr, local:<dir>")
    source.add_argument("--data-dir", type=Path, help="read the dataset from this BEIR-layout folder (miracl, mmarco: "
                        "or a mirror of the hub files as DIR/<repository>/<path>)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, help="result file to write (JSON), for the board")
    where.add_argument("--results-dir", type=Path,
                       help="write to RESULTS_DIR/<model_slug>/<dataset_slug>.json, the path the ids give (without "
                       "--out or --results-dir, --run's metrics are printed as trec_eval prints them, "
                       "'measure<TAB>all<TAB>value', and nothing is written)")
    parser.add_argument("--per-query", action="store_true",
                        help="without --out or --results-dir: also print each judged query's values "
                        "('measure<TAB>query_id<TAB>value'), as trec_eval -q does")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    parser.add_argument("--metrics", help="comma-separated metrics (default: the standard set and the dataset's "
                        "headline metrics, e.g. R@1000)")
    parser.add_argument("--require-full-coverage", action="store_true",
                        help="refuse a run that lacks some judged queries (they would score 0)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    meta = parser.add_argument_group("result metadata (for --run; with --model they replace what the model states)")
    meta.add_argument("--model-id", help="model id, e.g. org/model-name")
    meta.add_argument("--dataset-id", help="dataset id, e.g. beir/scifact")
    meta.add_argument("--model-type", choices=MODEL_TYPES, help="default for --run: other")
    meta.add_argument("--model-revision")
    meta.add_argument("--model-url")
    meta.add_argument("--license")
    meta.add_argument("--parameters", type=parameter_count,
                      help="the model's parameter count: 110000000, 110M, 1.5B or 22.7M (as the site prints it)")
    meta.add_argument("--dim", type=int)
    weights = meta.add_mutually_exclusive_group()
    weights.add_argument("--open-weights", dest="open_weights", action="store_const", const=True,
                         help="the model's weights are public (default: not stated)")
    weights.add_argument("--closed-weights", dest="open_weights", action="store_const", const=False,
                         help="the model's weights are not public")
    meta.add_argument("--training-datasets", help="comma-separated datasets the model was trained on, or 'none' "
                      "(default: not stated, and the model is not shown as zero-shot)")
    meta.add_argument("--reference", action="append", default=[], metavar="METRIC=VALUE,URL",
                      help="a figure the model's authors published for this dataset, as printed, with where: e.g. "
                      "nDCG@10=0.665,https://arxiv.org/abs/… (repeatable); the model page shows it beside the "
                      "measured value and flags a difference beyond rounding")
    meta.add_argument("--source", metavar="OWNER/NAME@COMMIT:PATH",
                      help="--run: where the run file was published, a file in a GitHub repository at a full commit "
                      "(recorded as provenance.source and credited on the model page); with --source-license")
    meta.add_argument("--source-license", metavar="SPDX",
                      help="the SPDX id of the licence the --source repository grants, e.g. Apache-2.0, MIT")
    meta.add_argument("--declare", action="store_true",
                      help="declare --dataset-id as a collection of your own from --qrels: writes "
                      "datasets/<dataset_slug>.json (its queries' and judgments' sha256, main metric, group), which "
                      "validate and build then hold its results to (docs/datasets.md, \"Your own collection\")")
    rules = parser.add_argument_group("evaluation settings for --run with an unregistered --dataset-id "
                                      "(a registered dataset's own come from the registry; `irboard datasets`)")
    parser.add_argument("--depth", type=int, help="--run: the depth the run was cut at, when its toolkit returned "
                        "fewer documents for every query (default: its longest ranking); a metric cut deeper than "
                        "the depth is left out (docs/result-format.md, \"Depth\")")
    parser.add_argument("--stored-depth", type=int, metavar="N",
                        help="store each ranking whole to depth N and below it only its judged documents' ranks "
                        "(default: the whole ranking where the result's size cap allows, else 100; "
                        "docs/result-format.md, \"Deep metrics\")")
    rules.add_argument("--split", help="the split the qrels belong to (default test)")
    rules.add_argument("--relevance-level", type=int, help="lowest grade that counts as relevant (default 1)")
    rules.add_argument("--ignore-identical-ids", action=argparse.BooleanOptionalAction,
                       help="drop retrieved documents whose id is the query id (default: keep them)")
    model = parser.add_argument_group("model and retrieval options for --model")
    model.add_argument("--top-k", type=int, default=1000)
    model.add_argument("--batch-size", type=int)
    model.add_argument("--engine", choices=["local", "ray"], default="local")
    model.add_argument("--address", help="Ray cluster address for --engine ray")
    model.add_argument("--workers", type=int, help="--engine ray: model replicas (default: GPUs, else CPUs)")
    model.add_argument("--shards", type=int, help="--engine ray: corpus shards (default: 2 per worker, at least one per 100,000 documents; neural shards are whole 1,024-document chunks, dense ones 4,096)")
    model.add_argument("--cache-dir", help="cache for datasets and encodings (default $IRBOARD_CACHE): a folder, or a "
                       "URI (file://, s3://, gs://) that every Ray node reaches for the corpus file, encodings and shard checkpoints; "
                       "with s3:// or gs:// datasets stay in $IRBOARD_CACHE")


_SCALES = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}


def parameter_count(text: str) -> int:
    """A parameter count as written by people and printed by the site: 110000000, 110_000_000, 110M, 1.5B, 22.7M."""
    match = re.fullmatch(r"\s*([0-9][0-9,_]*(?:\.[0-9]+)?)\s*([kKmMbBgGtT]?)\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a parameter count; write e.g. 110000000, 110M or 1.5B")
    number = Decimal(match[1].replace(",", "").replace("_", "")) * _SCALES[match[2].lower()]
    if number != number.to_integral_value() or not 0 <= number <= 10**14:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of parameters up to 100T; write e.g. "
                                         "110M or 1.5B")
    return int(number)


def run(args: argparse.Namespace) -> int:
    set_quiet(args.quiet)
    measures = parse_measures(args.metrics) if args.metrics else default_measures(args.dataset_id or args.dataset)
    if args.out is None and args.results_dir is None:
        return print_run_metrics(args, measures)
    if args.per_query:
        raise IrboardError("evaluate --per-query prints; it goes without --out and --results-dir (a result file "
                           "holds every query's values): leave one out")
    if args.out is not None and args.out.exists() and not args.force:
        raise OutputExistsError(f"{args.out}: already exists; pass --force to overwrite it")
    if args.model_id:  # before any work, for --model as for --run
        try:
            check_id(args.model_id, "--model-id")
        except ValueError as error:
            raise IrboardError(str(error)) from None
    references = [parse_reference(text) for text in args.reference]  # before any work
    source = published_source(args)
    if args.stored_depth is not None and args.stored_depth < 1:
        raise IrboardError(f"evaluate --stored-depth {args.stored_depth}: give a depth of at least 1")
    if args.run or args.qrels:
        result = _evaluate_run_file(args, measures)
    elif args.model or args.dataset:
        if not (args.model and args.dataset):
            raise IrboardError("evaluate: --model and --dataset go together; give both")
        from evaluator.pipeline import evaluate_model

        if args.dataset_id:
            raise IrboardError("evaluate --model: --dataset names the dataset; leave out --dataset-id")
        result = evaluate_model(args.model, args.dataset, measures, data_dir=args.data_dir, cache_dir=args.cache_dir,
                                batch_size=args.batch_size, top_k=args.top_k, engine=args.engine,
                                address=args.address, workers=args.workers, shards=args.shards,
                                command=getattr(args, "command_line", ""), model_fields=declared_fields(args),
                                keep_depth=args.stored_depth)
    else:
        raise IrboardError("evaluate: give --run and --qrels (a run file), or --model and --dataset")
    if references:
        result = with_references(result, references)
    if source is not None:
        result = with_source(result, source)
    report_coverage(result.provenance.coverage, args.require_full_coverage, args.quiet, result.dataset.id,
                    result.per_query, result.run.lengths)
    out = args.out or result_path(result.model.id, result.dataset.id, args.results_dir)
    write_result(result, out, force=args.force)
    if not args.quiet:
        print(f"irboard: wrote {out} ({headline(result)})")
        say_trust(result)
    if args.out is not None:
        say_where_it_belongs(result, args.out)
    note = missing_note(result.model)
    if note:
        log.warning("%s", note)
    if args.dataset and args.dataset.startswith("local:"):  # no registry knows the folder: name it to both
        folder = shlex.quote(args.dataset)
        log.warning("%s is a folder of your own: check and build it with `irboard validate --data-dir %s` and "
                    "`irboard build --data-dir %s` (or declare it: docs/datasets.md, \"Your own collection\")",
                    result.dataset.id, folder, folder)
    return 0


def say_trust(result) -> None:
    """Before anything is validated: the tier each metric will get (`irboard validate`, `build` and the pull
    request's summary say it in the same words, evaluator.trust), and how to reach the next one. Nothing for
    judgments other than the official ones, which verify nothing (a warning has said so)."""
    from evaluator.datasets.official import official_judgments
    from evaluator.trust import planned_tiers, tier_lines

    official = official_judgments(result.dataset.id)
    if official is not None and result.dataset.qrels_sha256 != official.judgments_sha256:
        return
    for line in tier_lines(planned_tiers(result)):
        print(f"irboard: trust: {line}")


def registered_spec(dataset_id: str | None):
    """The spec of a registered or declared `dataset_id` (evaluator.datasets.declared), or None (no id, a local:
    folder, or an id neither registers nor declares)."""
    from evaluator.datasets import get_spec
    from evaluator.datasets.spec import LOCAL_PREFIX
    from evaluator.errors import UnknownNameError

    if not dataset_id or dataset_id.startswith(LOCAL_PREFIX):
        return None
    try:
        return get_spec(dataset_id)
    except UnknownNameError:
        return None


def known_spec(dataset_id: str):
    """The spec of a registered or declared id; for any other, the one-line error with "did you mean" and the way
    to put a collection of one's own on the board (a file `validate` would refuse is never written)."""
    from evaluator.datasets import get_spec
    from evaluator.datasets.declared import declaration_path
    from evaluator.errors import UnknownNameError

    try:
        return get_spec(dataset_id)
    except UnknownNameError as error:
        raise UnknownNameError(
            f"evaluate --run: {error}. For a collection of your own, add --declare (it writes "
            f"{declaration_path(dataset_id)} from --qrels; docs/datasets.md, \"Your own collection\")") from None


def default_measures(dataset_id: str | None) -> list:
    """The standard set, plus the dataset's headline metrics where they are not in it (e.g. R@1000)."""
    spec = registered_spec(dataset_id)
    measures = list(DEFAULT_MEASURES)
    if spec is not None:
        measures += [m for m in parse_measures(list(spec.headline_metrics or [spec.main_metric])) if m not in measures]
    return measures


def _main_metrics(dataset_id: str | None, metrics) -> list[str]:
    """The dataset's headline metrics among `metrics` (names), main metric first (else the first of them)."""
    spec = registered_spec(dataset_id)
    wanted = (*spec.headline_metrics, spec.main_metric) if spec is not None else ("nDCG@10",)
    return list(dict.fromkeys(m for m in wanted if m in metrics)) or [next(iter(metrics))]


def headline(result) -> str:
    """The dataset's headline metrics as 'RR@10 = 0.1874, R@1000 = 0.8573' (those the result has)."""
    return ", ".join(f"{name} = {result.metrics[name]:.4f}"
                     for name in _main_metrics(result.dataset.id, result.metrics))


def report_coverage(coverage, required: bool, quiet: bool, dataset_id: str | None = None, per_query=None,
                    lengths=None) -> None:
    """Say how many judged queries the run covers, its unjudged queries and ranking depth; below full coverage,
    warn with the mean over the covered queries beside the official one (or refuse, with --require-full-coverage).
    `per_query` ({metric: values}) and `lengths` (each ranking's length) are aligned with the judged queries."""
    judged, covered = coverage.judged_queries, coverage.covered_queries
    if not quiet:
        unjudged = (f"; {coverage.unjudged_run_queries:,} run queries have no judgments (ignored)"
                    if coverage.unjudged_run_queries else "")
        print(f"irboard: the run covers {covered:,} of {judged:,} judged queries{unjudged}; ranking depth min "
              f"{coverage.depth_min:,}, median {coverage.depth_median:,g}, max {coverage.depth_max:,}", file=sys.stderr)
    if covered == judged:
        return
    missing = judged - covered
    if required:
        raise IrboardError(f"evaluate: the run covers {covered:,} of {judged:,} judged queries ({missing:,} missing, "
                           "each would score 0); rank every judged query, or leave out --require-full-coverage")
    metric = _main_metrics(dataset_id, per_query)[0]
    values = np.asarray(per_query[metric])
    has_ranking = np.asarray(lengths) > 0
    log.warning("the run covers %s of %s judged queries; the %s missing score 0, as trec_eval -c and the board "
                "count them: %s = %.4f over all %s judged queries (the official mean), %.4f over the %s covered",
                f"{covered:,}", f"{judged:,}", f"{missing:,}", metric, float(values.mean()), f"{judged:,}",
                float(values[has_ranking].mean()) if has_ranking.any() else 0.0, f"{covered:,}")


def say_where_it_belongs(result, out: Path) -> None:
    """A result is read from results/<model_slug>/<dataset_slug>.json: say so when --out wrote it elsewhere."""
    canonical = result_path(result.model.id, result.dataset.id)
    if out.name == canonical.name and out.parent.name == slugify(result.model.id):
        return
    log.warning("%s is not where the board reads it: irboard validate and build expect %s (the path the ids "
                "give); move it there (mkdir -p %s && mv %s %s), or write it there with --results-dir results",
                out, canonical, *map(shlex.quote, (str(canonical.parent), str(out), str(canonical))))


# flags that describe or place a result file: without --out or --results-dir nothing is written, so they say nothing
_RESULT_FLAGS = ("model_id", "model_type", "model_revision", "model_url", "license", "parameters", "dim",
                 "open_weights", "training_datasets", "reference", "declare", "force", "depth", "stored_depth", "split",
                 "source",
                 "source_license")


def print_run_metrics(args: argparse.Namespace, measures) -> int:
    """`evaluate --run RUN --qrels QRELS` without --out or --results-dir: print the means (and with --per-query
    each judged query's values) as trec_eval prints them, writing and declaring nothing. Every judged query counts,
    0 when the run misses it (trec_eval -c); the coverage line on stderr says how many the run covers."""
    from evaluator.assemble import coverage_of
    from evaluator.result import Coverage
    from evaluator.run_formats import read_run_file

    if args.model or args.dataset or not args.run:
        raise IrboardError("evaluate: give --results-dir results (or --out FILE) to write a result; without them "
                           "--run RUN --qrels QRELS prints a run's metrics and writes nothing")
    for name in _RESULT_FLAGS:
        value = getattr(args, name)
        if value is not None and value != [] and (value is not False or name == "open_weights"):
            flag = {"open_weights": "--open-weights" if args.open_weights else "--closed-weights"}.get(
                name, "--" + name.replace("_", "-"))
            raise IrboardError(f"evaluate: {flag} is for a result file, and without --out or --results-dir none is "
                               f"written; add --results-dir results (or --out FILE), or leave out {flag} to print "
                               "the metrics only")
    if args.dataset_id:
        quick_spec(args.dataset_id)
    _, ignore_identical_ids, relevance_level = run_settings(args)
    qrels, qrels_path, official, is_official = read_judgments(args, {})
    if official is not None and not is_official:
        log.warning("%s: not the official judgments of %s (%s)", qrels_path, args.dataset_id, official.qrels.name)
    cutoffs = [m.cutoff for m in measures]
    reading = read_run_file(args.run, qrels, args.run_format, ignore_identical_ids=ignore_identical_ids, keep_top=0,
                            label_depth=None if None in cutoffs else max(cutoffs))
    for note in reading.notes:
        log.warning("%s", note)
    ranked = reading.ranking.ranked
    values = evaluate(ranked, qrels, measures, relevance_level)
    report_coverage(Coverage(**coverage_of(ranked, reading.ranking.unjudged_queries)), args.require_full_coverage,
                    args.quiet, args.dataset_id, values, ranked.lengths)
    lines = []
    if args.per_query:
        lines += [f"{name:<22}\t{query_id}\t{array[row]:.4f}" for row, query_id in enumerate(qrels.query_ids)
                  for name, array in values.items()]
    lines += [f"{name:<22}\tall\t{math.fsum(array.tolist()) / len(array):.4f}" for name, array in values.items()]
    print("\n".join(lines))
    return 0


def quick_spec(dataset_id: str):
    """The spec of a registered or declared `dataset_id` whose settings and judgments a printed evaluation uses; for
    any other id, the one-line error with "did you mean"."""
    from evaluator.datasets import get_spec
    from evaluator.errors import UnknownNameError

    try:
        return get_spec(dataset_id)
    except UnknownNameError as error:
        raise UnknownNameError(f"evaluate --dataset-id: {error}; leave it out to score the run against --qrels "
                               "alone") from None


def read_judgments(args: argparse.Namespace, timings: dict, qrels=None):
    """(qrels, the path read, the official judgments of --dataset-id or None, whether the qrels are those) for --run:
    --qrels when given (`qrels` when already read from it), else the dataset's official judgments."""
    from evaluator.datasets.official import fetch_official, official_judgments
    from evaluator.index.cache import local_cache_dir
    from evaluator.trec import read_qrels

    official = official_judgments(args.dataset_id) if args.dataset_id else None
    if args.qrels is None and official is None:
        raise IrboardError(f"evaluate --run: {args.dataset_id} has no official judgments; pass --qrels" if
                           args.dataset_id else "evaluate --run: pass --qrels QRELS (TREC or BEIR TSV), or the "
                           "--dataset-id of a dataset with official judgments")
    qrels_path = args.qrels or fetch_official(official.qrels, local_cache_dir(args.cache_dir))
    if qrels is None:
        with step(f"reading qrels {qrels_path}", timings, "read_qrels_s"):
            qrels = read_qrels(qrels_path)
    return qrels, qrels_path, official, official is not None and qrels.sha256() == official.judgments_sha256


def _evaluate_run_file(args: argparse.Namespace, measures) -> object:
    from evaluator.datasets.declared import check_declared_judgments
    from evaluator.datasets.official import SOURCE
    from evaluator.run_formats import read_run_file
    from evaluator.trec import read_qrels

    missing = [flag for flag, value in [("--run", args.run), ("--model-id", args.model_id),
                                         ("--dataset-id", args.dataset_id)] if not value]
    if missing:
        raise IrboardError(f"evaluate --run: missing {', '.join(missing)}; all of --run, --model-id, --dataset-id "
                           "are needed, and --qrels unless the dataset has official judgments")
    for flag, value in [("--model-id", args.model_id), ("--dataset-id", args.dataset_id)]:
        try:
            check_id(value, flag)
        except ValueError as error:
            raise IrboardError(str(error)) from None
    timings: dict[str, float] = {}
    qrels = None
    if args.declare:  # the judgments are read once: for the declaration and for the metrics
        if args.qrels is None:
            raise IrboardError("evaluate --declare: pass --qrels with the collection's judgments")
        with step(f"reading qrels {args.qrels}", timings, "read_qrels_s"):
            qrels = read_qrels(args.qrels)
        declare_from_qrels(args, qrels)
    spec = known_spec(args.dataset_id)
    split, ignore_identical_ids, relevance_level = run_settings(args)
    qrels, qrels_path, official, is_official = read_judgments(args, timings, qrels)
    if official is not None and not is_official:
        log.warning("%s: not the official judgments of %s (%s); the result will not verify",
                    qrels_path, args.dataset_id, official.qrels.name)
    check_declared_judgments(spec.id, qrels, qrels_path)
    size_mb = args.run.stat().st_size / 1e6 if args.run.exists() else 0
    # the top 100 and the judged documents below (Run.below), or --stored-depth's; then the whole ranking when it
    # may fit the result's size cap (assemble_result keeps it if it does)
    cutoffs = [m.cutoff for m in measures]
    label_depth = None if None in cutoffs else max(cutoffs)  # no measure looks further
    keep = args.stored_depth or MIN_RUN_DEPTH
    read = partial(read_run_file, args.run, qrels, args.run_format, ignore_identical_ids=ignore_identical_ids,
                   label_depth=label_depth)
    with step(f"reading and ranking run {args.run} ({size_mb:.0f} MB)", timings, "rank_run_s"):
        reading = read(keep_top=keep, judged_below=needs_below(measures, keep))
        entries = int(reading.ranking.ranked.lengths.sum())
        whole = args.stored_depth is None and may_fit_whole(reading.ranking.top, entries, len(qrels.query_ids))
        if whole:  # read again, whole: assemble_result keeps it if the file then fits its cap
            reading = read(keep_top=None)
    for note in reading.notes:
        log.warning("%s", note)
    ranked, top = reading.ranking.ranked, reading.ranking.top
    top_k = run_depth(args.depth, int(ranked.lengths.max(initial=0)), args.run)
    if whole:
        top = replace(top, depth=top_k)  # every ranking read whole
    meta = RunMetadata(
        model={
            "id": args.model_id, "type": args.model_type or "other", "revision": args.model_revision or "",
            "url": args.model_url or "", "license": args.license or "", "parameters": args.parameters, "dim": args.dim,
            "open_weights": args.open_weights,
            "training_datasets": training_list(args.training_datasets),
        },
        dataset_id=args.dataset_id,
        split=split,
        top_k=top_k,
        ignore_identical_ids=ignore_identical_ids,
        relevance_level=relevance_level,
        timings=timings,
        command=getattr(args, "command_line", ""),
        dataset_revision=SOURCE if is_official else "",  # the judgments' pinned upstream (no corpus is read)
        unjudged_run_queries=reading.ranking.unjudged_queries,
        run_format=reading.description(),
    )
    with step(f"computing {len(measures)} metrics for {len(qrels.query_ids)} queries", timings, "metrics_s"):
        values = evaluate(ranked, qrels, measures, relevance_level)
    return assemble_result(ranked, qrels, measures, top, meta, values=values,  # meta.timings is timings
                           keep_depth=args.stored_depth)


def parse_reference(text: str):
    """--reference METRIC=VALUE,URL as a result's Reference; IrboardError naming the flag and the fix."""
    from pydantic import ValidationError

    from evaluator.result import Reference

    metric, _, rest = text.partition("=")
    value, _, url = rest.partition(",")
    try:
        return Reference(metric=metric.strip(), value=value.strip(), url=url.strip())
    except ValidationError as error:
        first = error.errors()[0]
        field, detail = ".".join(map(str, first["loc"])), first["msg"].removeprefix("Value error, ")
        if field in ("value", "url"):
            detail = {"value": "the value must be a number in [0, 1] with at most 6 decimals",
                      "url": "the url must be an http:// or https:// address"}[field]
        raise IrboardError(f"--reference {text!r}: {field}: {detail}; write METRIC=VALUE,URL with the value as published in "
                           "[0, 1], e.g. nDCG@10=0.665,https://arxiv.org/abs/2104.08663") from None


def published_source(args: argparse.Namespace):
    """--source and --source-license as a Source (None without them); IrboardError naming the flag and the fix."""
    from evaluator.source import parse_source

    text, license = getattr(args, "source", None), getattr(args, "source_license", None)
    if text is None and license is None:
        return None
    if text is None or license is None or not args.run:
        raise IrboardError("evaluate: --source and --source-license go together, with --run: the run file's "
                           "repository, commit and path, and the SPDX id of the repository's licence")
    try:
        return parse_source(text, license)
    except ValueError as error:
        raise IrboardError(f"evaluate: {error}") from None


def with_source(result, source):
    """`result` recording where its run file was published (provenance.source)."""
    from dataclasses import replace

    provenance = result.header.provenance.model_copy(update={"source": source})
    return replace(result, header=result.header.model_copy(update={"provenance": provenance}))


def with_references(result, references):
    """`result` citing `references`; each must name a metric the result reports."""
    from dataclasses import replace

    for reference in references:
        if reference.metric not in result.metrics:
            raise IrboardError(f"--reference {reference.metric}: the result does not report {reference.metric}; "
                               "add it with --metrics, or cite a metric it reports")
    return replace(result, header=result.header.model_copy(update={"references": references}))


def declared_fields(args: argparse.Namespace) -> dict:
    """The model-block fields the metadata flags give (those given only): for --model, they replace the model's own."""
    given = {"id": args.model_id, "type": args.model_type, "revision": args.model_revision, "url": args.model_url,
             "license": args.license, "parameters": args.parameters, "dim": args.dim,
             "open_weights": args.open_weights, "training_datasets": training_list(args.training_datasets)}
    return {name: value for name, value in given.items() if value is not None}


def training_list(text: str | None) -> list[str] | None:
    """--training-datasets: None when not given (not stated), [] for 'none', else the names."""
    if text is None:
        return None
    names = [d.strip() for d in text.split(",") if d.strip()]
    return [] if [n.lower() for n in names] == ["none"] else names


def run_depth(declared: int | None, longest: int, source) -> int:
    """The depth a run file was cut at: --depth when given (never less than its longest ranking), else that."""
    if declared is None:
        return max(longest, 1)
    if not 1 <= declared <= 10**6 or declared < longest:
        raise IrboardError(f"evaluate --depth {declared}: {source} ranks {longest:,} documents for some query; "
                           "give the depth its toolkit was asked for (at least that, at most 1,000,000)")
    return declared


def declare_from_qrels(args: argparse.Namespace, qrels) -> None:
    """--declare: write the declaration of --dataset-id from the judgments `qrels` read from --qrels (never for a
    registered id)."""
    from evaluator.datasets.declared import write_declaration
    from evaluator.datasets.spec import registry
    from evaluator.errors import UnknownNameError

    try:
        registry().get(args.dataset_id)
    except UnknownNameError:
        pass
    else:
        raise IrboardError(f"evaluate --declare: {args.dataset_id} is a registered dataset; leave out --declare")
    path = write_declaration(args.dataset_id, qrels, split=args.split or "test",
                             relevance_level=1 if args.relevance_level is None else args.relevance_level,
                             ignore_identical_ids=bool(args.ignore_identical_ids))
    log.warning("declared %s in %s: commit it with the result (set its name, group and main_metric there)",
                args.dataset_id, path)


def run_settings(args: argparse.Namespace) -> tuple[str, bool, int]:
    """(split, ignore_identical_ids, relevance_level) for --run: a registered dataset's own, where a flag that
    says otherwise is an error; the flags (or their defaults) for any other dataset id."""
    spec = registered_spec(args.dataset_id)
    if spec is None:
        return (args.split or "test", bool(args.ignore_identical_ids),
                1 if args.relevance_level is None else args.relevance_level)
    for flag, given, defined in [("--split", args.split, spec.split),
                                 ("--ignore-identical-ids", args.ignore_identical_ids, spec.ignore_identical_ids),
                                 ("--relevance-level", args.relevance_level, spec.relevance_level)]:
        if given is not None and given != defined:
            shown = f"{flag} {given}" if not isinstance(given, bool) else flag if given else f"--no-{flag[2:]}"
            raise IrboardError(f"evaluate: {shown} conflicts with the definition of {spec.id} ({flag[2:]}: "
                               f"{defined}); leave it out: a registered dataset's settings come from the registry")
    return spec.split, spec.ignore_identical_ids, spec.relevance_level
