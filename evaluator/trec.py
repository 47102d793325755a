"""TREC run and qrels files: reading (fast, validated line by line) and atomic writing.

Formats:
- run: `query_id Q0 doc_id rank score tag`, whitespace separated; the rank column is ignored, and so are
  columns after the sixth (as trec_eval does). MS MARCO's `query_id doc_id rank` is read too (run_formats.py).
- qrels: TREC `query_id 0 doc_id relevance`, or BEIR's TSV `query-id corpus-id score` with that header.

Every malformed line is an `InputFormatError` naming the file and the line. The separator is chosen per file,
never guessed per line: a file whose first line has three or more tab-separated fields is split on tabs only
(so an id may hold spaces, but the whitespace around a field is not part of it, as for trec_eval), any other on
ASCII whitespace. Ids are compared as UTF-8 bytes. A UTF-8 byte-order mark is removed (and said);
a gzip, bzip2 or xz file is inflated first, within the caps of `inflate.py`.
The large-file work (parsing, joining with the qrels, tie-aware sorting) is done by the `_trec` C
extension on a memory-mapped file; `read_run` is the plain Python reader for small files.
"""

from __future__ import annotations

import logging
import math
import mmap
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator import _trec
from evaluator.below import Below
from evaluator.errors import InputFormatError
from evaluator.inflate import compression_of, inflate
from evaluator.metrics.ranking import (
    FLOAT32_PROBLEM,
    MAX_LABEL,
    MIN_LABEL,
    Qrels,
    RankedRun,
    float32_overflows,
)
from evaluator.result import Run, write_atomic

BEIR_HEADER = (b"query-id", b"corpus-id", b"score")
_LAYOUTS = {"trec": 0, "msmarco": 1}  # the C parser's run layouts
RUN_COLUMNS = "expected 6 columns 'query_id Q0 doc_id rank score tag', found {}; fix or remove the line"
# The score grammar both readers accept (Python's float() alone would also take 'nan', 'inf' and '1_0').
_SCORE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, which Windows editors put first
BOM_NOTE = "starts with a UTF-8 byte-order mark (BOM); it was removed"
# a tab-separated file whose columns hold spaces: read here as written, by trec_eval otherwise
SPACED_NOTE = ("{what}; the file is tab-separated (as its first line is), so they are part of the ids, where "
               "trec_eval, which splits at spaces too, would read other columns and give other numbers")
_BLANK = re.compile(r"[ \x0b\x0c]")  # inside a field: the parser trims those around it
log = logging.getLogger(__name__)


@contextmanager
def file_bytes(path: Path | str) -> Iterator[bytes | mmap.mmap]:
    """The file's content, memory-mapped when possible, ending with a newline; an empty file is an error."""
    try:
        with open(path, "rb") as stream:
            try:
                mapped: bytes | mmap.mmap = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):  # empty, or not a regular file (a pipe)
                mapped = stream.read()
            content = mapped
            try:
                if len(content) == 0:
                    raise InputFormatError(f"{path}: the file is empty; expected TREC lines")
                if content[-1:] != b"\n":  # the parser relies on a final newline; copy only when missing
                    content = bytes(content) + b"\n"
                elif isinstance(content, mmap.mmap) and hasattr(mmap, "MADV_SEQUENTIAL"):
                    content.madvise(mmap.MADV_SEQUENTIAL)
                yield content
            finally:
                if isinstance(mapped, mmap.mmap):
                    mapped.close()
    except OSError as error:
        raise InputFormatError(
            f"{path}: cannot be read ({error.strerror or error}); check the path"
        ) from error


def first_line(content: bytes | bytearray | mmap.mmap, limit: int = 65536) -> bytes:
    """The first line holding more than whitespace (searched in the first `limit` bytes), without leading
    whitespace."""
    head = bytes(content[:limit])
    start = len(head) - len(head.lstrip())
    end = head.find(b"\n", start)
    return head[start: end if end >= 0 else len(head)]


def tab_separated(content: bytes | bytearray | mmap.mmap) -> bool:
    """Whether the file is split on tabs only (decided once, for the whole file): its first line has at least
    three tab-separated fields, as every run and qrels line has."""
    return _tabbed(first_line(content))


def _tabbed(line: bytes) -> bool:
    return sum(1 for field in line.split(b"\t") if field.strip()) >= 3


def split_fields(line: bytes, tabs: bool | None = None) -> list[bytes]:
    """A line's fields as the parser splits them: on tabs (and a '\r') when `tabs` (default: as a first line,
    `tab_separated`), each without the ASCII whitespace around it (`301<TAB>  2.129133`, as trec_eval's own test
    run pads scores), else on ASCII whitespace."""
    if tabs is None:
        tabs = _tabbed(line)
    if not tabs:
        return line.split()
    return [field for field in (f.strip() for f in line.replace(b"\r", b"\t").split(b"\t")) if field]


@contextmanager
def input_bytes(path: Path | str) -> Iterator[tuple[bytes | bytearray | mmap.mmap, str, bool]]:
    """(content, compression, had_bom): the file's bytes, inflated when compressed ("gzip", "bzip2", "xz"; else
    "") and memory-mapped when not, without a leading BOM, ending with a newline; an empty file is an error."""
    try:
        with open(path, "rb") as stream:
            compression = compression_of(stream.read(8))
    except OSError as error:
        raise InputFormatError(f"{path}: cannot be read ({error.strerror or error}); check the path") from None
    if compression:
        content = inflate(path, compression)
        if not content or content.isspace():
            raise InputFormatError(f"{path}: is empty once decompressed ({compression}); expected lines of text")
        had_bom = content.startswith(BOM)
        del content[:3 if had_bom else 0]  # in place: no second copy of the content
        if not content.endswith(b"\n"):
            content += b"\n"
        yield content, compression, had_bom
        return
    with file_bytes(path) as content:
        had_bom = content[:3] == BOM
        yield (content[3:] if had_bom else content), "", had_bom  # a copy, only for the rare file with a BOM


def _line_error(path: Path | str, error: ValueError) -> Exception:
    """The C parser's ValueError(line, message) as an InputFormatError naming the file (line 0: whole file)."""
    if len(error.args) != 2 or not isinstance(error.args[0], int):
        return error  # a bug, not an input problem
    line, message = error.args
    where = f"{path} line {line}" if line else str(path)
    return InputFormatError(f"{where}: {message}")


def read_qrels(path: Path | str) -> Qrels:
    """Read TREC qrels (`qid 0 docid rel`) or a BEIR qrels TSV (detected by its header line), compressed or not."""
    with input_bytes(path) as (content, _, had_bom):
        end_of_first_line = content.find(b"\n")
        beir = (
            tuple(content[: end_of_first_line if end_of_first_line >= 0 else len(content)].split())
            == BEIR_HEADER
        )
        tabs = tab_separated(content)
        try:
            judged = _trec.parse_qrels(content, 3 if beir else 4, beir, MIN_LABEL, MAX_LABEL, tabs)
        except ValueError as error:
            raise _line_error(path, error) from None
    if had_bom:
        log.warning("%s: %s", path, BOM_NOTE)
    if tabs and any(_BLANK.search("\n".join(ids)) for ids in (judged, *judged.values())):
        log.warning("%s: %s", path, SPACED_NOTE.format(what="ids hold spaces"))
    if not judged:
        raise InputFormatError(f"{path}: has no judgments; expected 'query_id 0 doc_id relevance' lines")
    query_ids = sorted(judged, key=lambda query_id: query_id.encode("utf-8"))
    return Qrels(query_ids, [judged[query_id] for query_id in query_ids])


def rank_trec_run(
    path: Path | str,
    qrels: Qrels,
    ignore_identical_ids: bool = False,
    keep_top: int | None = 100,
    label_depth: int | None = None,
    judged_below: bool = False,
) -> tuple[RankedRun, Run]:
    """Read a TREC run and rank it against `qrels` in one pass (equal to `ranking.rank_run` on its dict).

    Returns the ranked run (one row per qrels query) and the top `keep_top` entries of each of those queries
    in trec_eval order, as a result's `Run` (`None` keeps all; a query the run lacks has an empty ranking).
    With `label_depth`, the ranked run's label matrix stops at that rank (its lengths stay the full ones):
    enough for measures whose cutoffs are all at most `label_depth`. Run queries without qrels are skipped
    (their lines are still validated, but not checked for duplicate doc ids). With `judged_below` (and a
    `keep_top`), the Run also holds each ranking's length and its judged entries below `keep_top`
    (`Run.below`), from which every measure can be re-scored. Columns after the sixth are ignored, as trec_eval
    ignores them; `rank_run_text` also says how many lines had them.
    """
    with input_bytes(path) as (content, _, _):
        ranking = rank_run_text(content, path, qrels, ignore_identical_ids, keep_top, label_depth, judged_below)
    return ranking.ranked, ranking.top


@dataclass(frozen=True)
class RunRanking:
    """A run ranked against the qrels, and what reading it found."""

    ranked: RankedRun
    top: Run
    extra_column_lines: int  # TREC lines with more than 6 columns (the rest ignored)
    first_extra_column_line: int  # the first of them (0: none)
    unjudged_queries: int  # distinct run queries without judgments (skipped)
    spaced_lines: int = 0  # tab-separated TREC lines with a space inside one of the first five columns
    first_spaced_line: int = 0  # the first of them (0: none)


def rank_run_text(
    content: bytes | mmap.mmap,
    path: Path | str,
    qrels: Qrels,
    ignore_identical_ids: bool = False,
    keep_top: int | None = 100,
    label_depth: int | None = None,
    judged_below: bool = False,
    layout: str = "trec",
) -> RunRanking:
    """`rank_trec_run` on run text already in memory (ending with a newline); errors name `path`.
    `layout` "msmarco" reads MS MARCO's `query_id doc_id rank` lines, each scored -rank (a rank given twice in a
    query is an error). A tab-separated file (`tab_separated`) is split on tabs only."""
    if keep_top is not None and keep_top < 0:
        raise ValueError(f"keep_top must be None or >= 0, got {keep_top}")
    if label_depth is not None and label_depth < 1:
        raise ValueError(f"label_depth must be None or >= 1, got {label_depth}")
    try:
        labels, lengths, depth, doc_ids, top_lengths, docs, scores, *below, extra, first_extra, unjudged, spaced, \
            first_spaced = \
            _trec.rank_run(
                content,
                qrels.query_ids,
                qrels.judgments,
                ignore_identical_ids,
                -1 if keep_top is None else keep_top,
                -1 if label_depth is None else label_depth,
                judged_below and keep_top is not None,
                _LAYOUTS[layout],
                tab_separated(content),
            )
    except ValueError as error:
        raise _line_error(path, error) from None
    matrix = np.frombuffer(labels, dtype=np.int32).reshape(len(qrels.query_ids), depth)
    top_lengths = np.frombuffer(top_lengths, dtype=np.int64)
    lengths = np.frombuffer(lengths, dtype=np.int64)
    deep = None
    if judged_below and keep_top is not None:
        counts, ranks, judged, below_scores = (np.frombuffer(column, dtype=dtype) for column, dtype in zip(
            below, (np.int64, np.int64, np.int64, np.float64), strict=True))
        names = [name for judgments in qrels.judgments for name in judgments]  # the order `judged` indexes
        deep = Below(lengths.copy(), counts, ranks, tuple(names[j] for j in judged.tolist()), below_scores)
    top = Run(int(top_lengths.max(initial=0)) if keep_top is None else keep_top, tuple(doc_ids), top_lengths,
              np.frombuffer(docs, dtype=np.int64), np.frombuffer(scores, dtype=np.float64), deep)
    ranked = RankedRun(list(qrels.query_ids), matrix, lengths)
    return RunRanking(ranked, top, extra, first_extra, unjudged, spaced, first_spaced)


def _parse_score(text: bytes, where: str) -> float:
    """A finite decimal score within float32's range, or an InputFormatError naming `where` (file and line)."""
    value = float(text) if _SCORE.fullmatch(text) else math.nan
    shown = text[:60].decode("utf-8", "replace")
    if not math.isfinite(value):
        raise InputFormatError(
            f"{where}: score {shown!r} is not a finite decimal number; write scores such as 12.5 or -3.2e-4"
        )
    if float32_overflows(value):
        raise InputFormatError(f"{where}: score {shown!r} {FLOAT32_PROBLEM}")
    return value



def read_run(path: Path | str) -> dict[str, dict[str, float]]:
    """Read a whole TREC run as {query_id: {doc_id: score}} (the general reader, for small files)."""
    run: dict[str, dict[str, float]] = {}
    with input_bytes(path) as (content, _, had_bom):
        tabs = tab_separated(content)
        lines = bytes(content).split(b"\n")
    if had_bom:
        log.warning("%s: %s", path, BOM_NOTE)
    for number, line in enumerate(lines, 1):
        fields = split_fields(line, tabs)
        if not fields:
            continue
        where = f"{path} line {number}"
        if len(fields) < 6:  # columns after the sixth are ignored, as trec_eval ignores them
            raise InputFormatError(f"{where}: {RUN_COLUMNS.format(len(fields))}")
        try:
            query_id, doc_id = fields[0].decode("utf-8"), fields[2].decode("utf-8")
            line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputFormatError(f"{where}: is not valid UTF-8; save the file as UTF-8") from None
        score = _parse_score(fields[4], where)
        ranking = run.setdefault(query_id, {})
        if doc_id in ranking:
            raise InputFormatError(
                f"{where}: document {doc_id!r} appears a second time for its query; "
                "a run ranks each document once per query"
            )
        ranking[doc_id] = score
    if not run:
        raise InputFormatError(
            f"{path}: has no run lines; expected 'query_id Q0 doc_id rank score tag' lines"
        )
    return run


def _check_field(value: str, what: str) -> str:
    if not value or len(value.split()) != 1 or value != value.strip():
        raise InputFormatError(
            f"{what} {value!r} is empty or contains whitespace, which TREC files cannot hold"
        )
    return value


def write_run(path: Path | str, rankings: Mapping[str, list[tuple[str, float]]], tag: str) -> None:
    """Write rankings ({query_id: [(doc_id, score), ...]} in rank order) as a TREC run, atomically."""
    _check_field(tag, "run tag")
    lines = []
    for query_id, ranking in rankings.items():
        _check_field(query_id, "query id")
        for rank, (doc_id, score) in enumerate(ranking, 1):
            if not math.isfinite(score):
                raise InputFormatError(f"query {query_id!r} document {doc_id!r}: score {score} is not finite")
            lines.append(f"{query_id} Q0 {_check_field(doc_id, 'doc id')} {rank} {float(score)!r} {tag}\n")
    write_atomic(path, "".join(lines))


def write_qrels(path: Path | str, qrels: Qrels | Mapping[str, Mapping[str, int]]) -> None:
    """Write qrels as TREC `query_id 0 doc_id relevance` lines, atomically."""
    judged = qrels.to_dict() if isinstance(qrels, Qrels) else qrels
    lines = []
    for query_id, labels in judged.items():
        _check_field(query_id, "query id")
        lines.extend(
            f"{query_id} 0 {_check_field(doc_id, 'doc id')} {int(label)}\n"
            for doc_id, label in labels.items()
        )
    write_atomic(path, "".join(lines))
