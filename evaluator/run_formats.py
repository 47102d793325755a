"""Run files as toolkits write them: TREC (also with extra columns), MS MARCO, JSON dictionaries, compressed.

`read_run_file` reads any of them and ranks it against the qrels with the fast parser of `trec.py`:

- compression, by the file's first bytes (not its name): gzip (Anserini and Pyserini ship runs as `.gz`),
  bzip2 and xz are inflated in a stream within a size and a ratio cap (`inflate.py`); a plain file is
  memory-mapped; a UTF-8 byte-order mark is removed, and said;
- `trec`: `query_id Q0 doc_id rank score tag`; columns after the sixth are ignored, as trec_eval ignores them
  (its reader takes the first six fields of a line), and said once;
- `msmarco`: MS MARCO's official `query_id<TAB>doc_id<TAB>rank` (what msmarco_eval.py reads: ranks from 1,
  no score). Each entry is scored -rank, so that the ranks give the order, and the result says so; a rank
  given twice in a query is an error (trec_eval's order would break the tie by doc id, silently);
- `json`: `{query_id: {doc_id: score}}`, the dictionary BEIR's `EvaluateRetrieval.retrieve`, MTEB and ranx
  (`Run.save(..., kind="json")`) produce, saved as one JSON object; a key given twice, at any level, is an
  error (a JSON reader would keep the last silently).

A file whose first line has three or more tab-separated fields is split on tabs only, so ids may hold spaces, and
the whitespace around a field is not part of it, as trec_eval reads `104<TAB>  2.129133` (`trec.py`). Scores must be
finite and within float32's range, the precision trec_eval orders by. The format is detected from the first
line (`--run-format` overrides it). A file in none of them is one error line naming the format it looks like
and the fix.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson

from evaluator.errors import InputFormatError
from evaluator.metrics.ranking import FLOAT32_PROBLEM, Qrels, float32_overflows
from evaluator.result import text_id_problem
from evaluator.trec import (
    BOM_NOTE,
    SPACED_NOTE,
    RunRanking,
    first_line,
    input_bytes,
    rank_run_text,
    split_fields,
)

RUN_FORMATS = ("trec", "msmarco", "json")
# first bytes of files that are not runs in any readable form -> what they are and the fix
_OTHER_CONTAINERS = {
    b"\x28\xb5\x2f\xfd": "a zstd-compressed file; decompress it (zstd -d FILE) and pass the result",
    b"PK\x03\x04": "a zip archive; unzip it and pass the run file inside",
    b"PAR1": "a Parquet file; write the run as TREC lines 'query_id Q0 doc_id rank score tag'",
}
_WHITESPACE = re.compile(r"\s")  # what would split a TREC line
MSMARCO_SCORES = "scores from ranks: each MS MARCO line 'query_id doc_id rank' is scored -rank"


@dataclass(frozen=True)
class RunReading:
    """A run file ranked against the qrels, with how it was read."""

    ranking: RunRanking
    run_format: str  # one of RUN_FORMATS
    compression: str  # "", "gzip", "bzip2" or "xz"
    notes: tuple[str, ...]  # what reading changed or ignored, said once each
    had_bom: bool = False  # a UTF-8 byte-order mark was removed

    def description(self) -> str:
        """How the file was read, for the result's provenance."""
        parts = [self.run_format + (f" ({self.compression})" if self.compression else "")]
        if self.had_bom:
            parts.append("UTF-8 byte-order mark removed")
        if self.run_format == "msmarco":
            parts.append(MSMARCO_SCORES)
        if self.ranking.extra_column_lines:
            parts.append(f"{self.ranking.extra_column_lines:,} lines with columns after the sixth (ignored)")
        return "; ".join(parts)


def read_run_file(
    path: Path,
    qrels: Qrels,
    run_format: str | None = None,
    ignore_identical_ids: bool = False,
    keep_top: int | None = 100,
    label_depth: int | None = None,
    judged_below: bool = False,
) -> RunReading:
    """Read the run at `path` in any supported format (`run_format` None: detected) and rank it."""
    with _run_content(path) as (content, compression, had_bom):
        shown = f"{path} ({compression}-compressed)" if compression else str(path)
        chosen = run_format or detect_format(content, shown)
        if chosen == "json":
            content = json_run_as_trec(content, shown)
        layout = "msmarco" if chosen == "msmarco" else "trec"
        ranking = rank_run_text(content, shown, qrels, ignore_identical_ids, keep_top, label_depth, judged_below,
                                layout)
    notes = [f"{shown}: {BOM_NOTE}"] if had_bom else []
    if ranking.extra_column_lines:
        notes.append(f"{shown}: {ranking.extra_column_lines:,} lines have columns after the sixth (the first is "
                     f"line {ranking.first_extra_column_line}); they are ignored, as trec_eval ignores them")
    if ranking.spaced_lines:
        lines = f"{ranking.spaced_lines:,} lines hold" if ranking.spaced_lines > 1 else "1 line holds"
        notes.append(f"{shown}: " + SPACED_NOTE.format(what=f"{lines} a space inside one of the first five columns "
                                                       f"(the first is line {ranking.first_spaced_line})"))
    if chosen == "msmarco":
        notes.append(f"{shown}: read as an MS MARCO run; {MSMARCO_SCORES}")
    return RunReading(ranking, chosen, compression, tuple(notes), had_bom)


@contextmanager
def _run_content(path: Path) -> Iterator[tuple[bytes, str, bool]]:
    """(content, compression, had_bom) of the run (see `trec.input_bytes`); containers of other kinds refused."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(8)
    except OSError as error:
        raise InputFormatError(f"{path}: cannot be read ({error.strerror or error}); check the path") from error
    for magic, what in _OTHER_CONTAINERS.items():
        if head.startswith(magic):
            raise InputFormatError(f"{path}: is {what}")
    with input_bytes(path) as read:
        yield read


def _is_number(field: bytes) -> bool:
    try:
        return math.isfinite(float(field))
    except ValueError:
        return False


def detect_format(content: bytes, path: str) -> str:
    """The run format of `content` from its first line, or an InputFormatError naming what it looks like."""
    line = first_line(content)
    if line.startswith(b"["):
        raise InputFormatError(f"{path}: looks like a JSON list; a JSON run is one object {{query_id: {{doc_id: "
                               "score}}}}: save it with json.dump(results, file), or write TREC lines")
    if line.startswith(b"{"):
        return "json"
    fields = split_fields(line)
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        raise InputFormatError(f"{path}: does not look like text (line 1 is not UTF-8); a run is TREC lines "
                               "'query_id Q0 doc_id rank score tag', MS MARCO lines or a JSON dictionary, "
                               "optionally gzip/bzip2/xz-compressed") from None
    if len(fields) >= 6:
        return "trec"
    if len(fields) == 3 and fields[2].isdigit():
        return "msmarco"
    looks = _looks_like(fields)
    raise InputFormatError(f"{path} line 1: found {len(fields)} column{'s' * (len(fields) != 1)}; {looks}")


def _looks_like(fields: list[bytes]) -> str:
    """What a first line that is no run line looks like, and the fix."""
    if tuple(fields) == (b"query-id", b"corpus-id", b"score"):
        return "it looks like BEIR qrels (judgments); pass it as --qrels, and the run as --run"
    if len(fields) == 4 and fields[3].lstrip(b"-").isdigit():
        return ("it looks like TREC qrels 'query_id 0 doc_id relevance' (judgments); pass it as --qrels, and the "
                "run as --run")
    if len(fields) == 3 and _is_number(fields[2]):
        return ("it looks like 'query_id doc_id score' lines; write TREC lines instead: "
                "awk '{print $1, \"Q0\", $2, 0, $3, \"run\"}' FILE")
    if len(fields) in (4, 5) and _is_number(fields[-1]):
        return ("it looks like a TREC run with a column missing; a TREC line has 6 columns "
                "'query_id Q0 doc_id rank score tag'")
    return ("expected TREC lines 'query_id Q0 doc_id rank score tag', MS MARCO lines 'query_id doc_id rank' or a "
            "JSON dictionary {query_id: {doc_id: score}}; pass --run-format if the detection is wrong")


def _is_json_lines(content: bytes) -> bool:
    """Whether the first line is a JSON object of its own (a JSON-lines file)."""
    try:
        return isinstance(orjson.loads(first_line(content, 1 << 20)), dict)
    except orjson.JSONDecodeError:
        return False


def json_run_as_trec(content: bytes, path: str) -> bytes:
    """A JSON run dictionary {query_id: {doc_id: score}} as TREC lines (every id and score checked)."""
    content = bytes(content)
    try:
        run = orjson.loads(content)
    except orjson.JSONDecodeError as error:
        if _is_json_lines(content):
            raise InputFormatError(f"{path}: looks like JSON lines (an object per line); a JSON run is one object "
                                   "{query_id: {doc_id: score}}: save it with json.dump(results, file)") from None
        raise InputFormatError(f"{path}: is not valid JSON ({error}); save the run with json.dump") from None
    if not isinstance(run, dict):
        raise InputFormatError(f"{path}: the JSON holds a {type(run).__name__}, expected an object "
                               "{query_id: {doc_id: score}}")
    lines = []
    for query_id, ranking in run.items():
        problem = text_id_problem(query_id)
        if problem:
            raise InputFormatError(f"{path}: query id {query_id[:80]!r} {problem}; ids hold no whitespace")
        if not isinstance(ranking, dict):
            raise InputFormatError(f"{path}: query {query_id!r}: expected an object {{doc_id: score}}, found a "
                                   f"{type(ranking).__name__}")
        # checked a query at a time (one scan of the joined ids, one of the scores), each entry only on failure
        if "" in ranking or _WHITESPACE.search("".join(ranking)) or not all(map(_is_score, ranking.values())):
            _entry_problem(path, query_id, ranking)
        lines.append("".join(f"{query_id} Q0 {doc_id} 0 {score!r} json\n" for doc_id, score in ranking.items()))
    if not any(lines):
        raise InputFormatError(f"{path}: the JSON run holds no documents; expected {{query_id: {{doc_id: score}}}}")
    if not _surely_unrepeated(content, run):
        _refuse_repeated_keys(content, path)
    return "".join(lines).encode("utf-8")


def _surely_unrepeated(content: bytes, run: dict) -> bool:
    """Whether the text gives no key twice, proved by counting: once the run is checked (every value an object
    or a number), each string of the text is a key, and without a backslash every quote delimits one; so the
    text has count('"') / 2 keys, and no key was dropped when the objects hold as many."""
    return b"\\" not in content and content.count(b'"') == 2 * (len(run) + sum(map(len, run.values())))


class _Keyed(dict):
    repeated: str | None = None  # the first key given twice in this object
    inner: tuple[str, str] | None = None  # (key, its object's repeated key)


def _refuse_repeated_keys(content: bytes, path: str) -> None:
    """Read the JSON again, keeping every key, and raise naming the first key given twice (at any level)."""
    below = []  # whether an object read so far repeats a key (the objects inside are read first)

    def keyed(pairs: list[tuple[str, object]]) -> _Keyed:
        found = _Keyed(pairs)
        if len(found) != len(pairs):
            seen: set[str] = set()
            found.repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        for key, value in pairs if below and found.repeated is None else ():
            if isinstance(value, _Keyed) and (value.repeated is not None or value.inner is not None):
                found.inner = (key, value.repeated if value.repeated is not None else value.inner[0])
                break
        if found.repeated is not None:
            below.append(found)
        return found

    try:
        top = json.loads(content.decode("utf-8"), object_pairs_hook=keyed)
    except (ValueError, RecursionError):  # not for orjson, which read it: nothing more to find
        return
    if isinstance(top, _Keyed) and top.repeated is not None:
        raise InputFormatError(f"{path}: query id {top.repeated[:80]!r} is a key twice (a JSON reader keeps only "
                               "its last ranking, silently); give each query once")
    if isinstance(top, _Keyed) and top.inner is not None:
        query_id, doc_id = top.inner
        raise InputFormatError(f"{path}: query {query_id[:80]!r}: document {doc_id[:80]!r} is a key twice (a JSON "
                               "reader keeps only its last score, silently); give each document once per query")


def _is_score(score: object) -> bool:
    return type(score) in (int, float) and not float32_overflows(score)  # NaN fails too


def _entry_problem(path: str, query_id: str, ranking: dict) -> None:
    """Raise the InputFormatError of the first bad entry of a query's JSON ranking."""
    for doc_id, score in ranking.items():
        if text_id_problem(doc_id):
            raise InputFormatError(f"{path}: query {query_id!r}: document id {doc_id[:80]!r} "
                                   f"{text_id_problem(doc_id)}; ids hold no whitespace")
        if not _is_score(score):
            shown = repr(score)[:60]
            problem = FLOAT32_PROBLEM if type(score) is int or (type(score) is float and math.isfinite(score)) \
                else "is not a finite number"
            raise InputFormatError(f"{path}: query {query_id!r}, document {doc_id!r}: score {shown} {problem}")
