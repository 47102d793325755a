"""Reading dataset files, one line at a time, every problem reported with file and line.

A BEIR-layout folder holds ``corpus.jsonl[.gz]``, ``queries.jsonl[.gz]`` and ``qrels/<split>.tsv``:
records are JSON lines with ``_id`` and ``text`` (and ``title`` for documents); qrels are a TSV
with the header ``query-id corpus-id score``. Hub datasets add ``id<TAB>text`` files (topics,
mMARCO's passages), JSON-lines passages under another id field (MIRACL's ``docid``) and TREC qrels.
"""

from __future__ import annotations

import bisect
import logging
import zlib
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from evaluator.datasets.corpus import Corpus, CorpusWriter, corpus_root, source_key
from evaluator.datasets.dataset import Dataset, check_against_spec
from evaluator.datasets.spec import DatasetSpec
from evaluator.errors import DatasetLoadError, InputFormatError
from evaluator.inflate import open_stream

try:  # orjson parses JSON lines several times faster; json is the fallback
    import orjson

    _parse_json = orjson.loads
    _JSONError: type[Exception] = orjson.JSONDecodeError
except ImportError:  # pragma: no cover - depends on the environment
    import json

    _parse_json = json.loads
    _JSONError = ValueError

logger = logging.getLogger(__name__)

QRELS_HEADER = ("query-id", "corpus-id", "score")
LAYOUT_HINT = "a BEIR-layout folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv"


def find_file(folder: Path, name: str) -> Path | None:
    """``folder/name`` or its gzipped twin ``name.gz``, whichever exists; for ``corpus.jsonl`` also
    ``corpus.arrow``, a corpus already in irboard's Arrow format (opened in place, `read_arrow_corpus`)."""
    candidates = [folder / name, folder / f"{name}.gz"] + ([folder / "corpus.arrow"] if name == "corpus.jsonl" else [])
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def qrels_splits(folder: Path) -> list[str]:
    """Split names that have a qrels file in ``folder/qrels``."""
    qrels_dir = folder / "qrels"
    if not qrels_dir.is_dir():
        return []
    return sorted(
        p.name.split(".tsv")[0] for p in qrels_dir.iterdir() if p.name.endswith((".tsv", ".tsv.gz"))
    )


def locate_files(folder: Path, split: str) -> tuple[Path, Path, Path]:
    """Paths of the corpus, queries and qrels files, or an error naming the first one missing."""
    if not folder.is_dir():
        raise DatasetLoadError(f"{folder}: folder not found; {LAYOUT_HINT}")
    found = []
    for name in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        path = find_file(folder, name)
        if path is None:
            extra = ""
            if name.startswith("qrels/"):
                splits = qrels_splits(folder)
                extra = f" (splits with qrels: {', '.join(splits)})" if splits else ""
            also = f"{name}.gz or corpus.arrow" if name == "corpus.jsonl" else f"{name}.gz"
            raise DatasetLoadError(f"{folder / name}: file not found (nor {also}){extra}; {LAYOUT_HINT}")
        found.append(path)
    return found[0], found[1], found[2]


def _open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, inflated in a stream when compressed (within `inflate.py`'s ratio cap: a bomb fails fast)."""
    return open_stream(path)[0]


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; malformed lines raise with their number."""
    try:
        with _open_binary(path) as f:
            for lineno, raw in enumerate(f, 1):
                if not raw.strip():
                    continue
                try:
                    obj = _parse_json(raw)
                except _JSONError as err:
                    raise InputFormatError(
                        f"{path}:{lineno}: malformed JSON ({err}); fix or remove the line"
                    ) from None
                if not isinstance(obj, dict):
                    raise InputFormatError(
                        f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}"
                    )
                yield lineno, obj
    except (OSError, EOFError, zlib.error) as err:  # unreadable file or damaged gzip
        raise DatasetLoadError(f"{path}: cannot read ({err}); download or copy the file again") from None


def iter_id_text_lines(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line number, id, text) for each non-blank ``id<TAB>text`` line (the text may hold more tabs)."""
    try:
        with _open_binary(path) as f:
            for lineno, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as err:
                    raise InputFormatError(f"{path}:{lineno}: not UTF-8 text ({err})") from None
                if not line.strip():
                    continue
                item_id, tab, text = line.partition("\t")
                if not tab or not item_id.strip():
                    raise InputFormatError(f"{path}:{lineno}: expected 'id<TAB>text'; fix or remove the line")
                yield lineno, item_id, text
    except (OSError, EOFError, zlib.error) as err:  # unreadable file or damaged gzip
        raise DatasetLoadError(f"{path}: cannot read ({err}); download or copy the file again") from None


def _field(obj: dict[str, Any], key: str, path: Path, lineno: int, required: bool = True) -> str:
    value = obj.get(key)
    if value is None:
        if required:
            raise InputFormatError(f"{path}:{lineno}: missing field {key!r}; every line needs an id and text")
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and key.endswith("id"):  # some exports write numeric ids
        return str(value)
    raise InputFormatError(f"{path}:{lineno}: field {key!r} must be a string, got {type(value).__name__}")


def _documents(path: Path, id_key: str) -> Iterator[tuple[int, str, str, str]]:
    """(line number, id, title, text) of each document of a JSON-lines or ``id<TAB>text`` file."""
    if ".tsv" in path.suffixes:
        for lineno, doc_id, text in iter_id_text_lines(path):
            yield lineno, doc_id, "", text
        return
    for lineno, obj in iter_json_lines(path):
        title = _field(obj, "title", path, lineno, required=False)
        yield lineno, _field(obj, id_key, path, lineno), title, _field(obj, "text", path, lineno)


def read_corpus(paths: Path | Sequence[Path], id_key: str = "_id") -> Corpus:
    """Documents of one file or several (corpus shards) in file order; a repeated id is an error.

    JSON lines carry the id in ``id_key``; ``.tsv`` files are ``id<TAB>text`` lines without titles. The
    documents go into an Arrow file as they are read (evaluator/datasets/corpus.py); a later call with the
    same, unchanged files opens that file instead of reading them again.
    """
    paths = [paths] if isinstance(paths, Path) else list(paths)
    if len(paths) == 1 and paths[0].suffix == ".arrow":
        return read_arrow_corpus(paths[0])
    target = corpus_root() / f"{source_key(paths, id_key)}.arrow"
    if target.exists():
        return Corpus(target)
    writer = CorpusWriter(target)
    lines = array("q")  # line of each document, and the first document of each file, for duplicate reports
    starts: list[int] = []
    try:
        for path in paths:
            starts.append(writer.count)
            for lineno, doc_id, title, text in _documents(path, id_key):
                writer.add(doc_id, title, text)
                lines.append(lineno)
        corpus = writer.finish()
        repeat = corpus.first_duplicate()
        if repeat is not None:
            earlier, later = repeat
            first_path, path = (paths[bisect.bisect_right(starts, p) - 1] for p in repeat)
            where = f"line {lines[earlier]}" if first_path == path else f"{first_path}:{lines[earlier]}"
            raise InputFormatError(
                f"{path}:{lines[later]}: document id {corpus.take_ids([later])[0]!r} repeats {where}; ids must be unique"
            )
    except BaseException:
        writer.abandon()
        raise
    return writer.keep(corpus)


def read_arrow_corpus(path: Path) -> Corpus:
    """A corpus that is already an Arrow IPC file in irboard's format (string columns ``id``, ``title``,
    ``text``; record batches of 4,096 documents, the last shorter), opened in place: nothing is converted or
    copied. It is checked once (columns, batch sizes, repeated ids; memory bounded as for a converted corpus)
    and the check is remembered by the file's path, size, time and inode."""
    import pyarrow as pa

    from evaluator.datasets.corpus import BATCH, SCHEMA, first_duplicate

    checked = corpus_root() / f"{source_key([path], 'arrow-in-place')}.checked"
    if checked.exists():
        return Corpus(path)
    fix = "write it with pyarrow.ipc.new_file and write_table(table, max_chunksize=4096), or give corpus.jsonl"
    try:
        with pa.OSFile(str(path), "rb") as source:
            schema = pa.ipc.open_file(source).schema
            if not schema.equals(SCHEMA):
                raise InputFormatError(f"{path}: columns {schema.names} of types {[str(t) for t in schema.types]}; "
                                       f"an Arrow corpus has string columns id, title, text; {fix}")
            reader = pa.ipc.open_file(source, options=pa.ipc.IpcReadOptions(included_fields=[0]))  # ids alone
            last = reader.num_record_batches - 1
            for b in range(last):
                rows = reader.get_batch(b).num_rows
                if rows != BATCH:
                    raise InputFormatError(f"{path}: record batch {b} has {rows} documents, not {BATCH} (only the "
                                           f"last may be shorter); {fix}")
    except pa.ArrowInvalid as error:
        raise InputFormatError(f"{path}: not an Arrow IPC file ({error}); {fix}") from None
    corpus = Corpus(path)
    corpus_root().mkdir(parents=True, exist_ok=True)
    repeat = first_duplicate(str(path), len(corpus), corpus_root())  # spilled to the cache: the folder may be read-only
    if repeat is not None:
        earlier, later = repeat
        raise InputFormatError(f"{path}: document id {corpus.take_ids([later])[0]!r} at row {later} repeats row "
                               f"{earlier}; ids must be unique")
    checked.parent.mkdir(parents=True, exist_ok=True)
    checked.write_text("ok\n")
    return corpus


def read_queries(path: Path, keep: set[str] | None = None) -> tuple[dict[str, str], dict[str, int]]:
    """Query texts (only ids in ``keep`` when given) and the line of each query read."""
    queries: dict[str, str] = {}
    lines: dict[str, int] = {}
    for lineno, obj in iter_json_lines(path):
        query_id = _field(obj, "_id", path, lineno)
        if query_id in lines:
            raise InputFormatError(
                f"{path}:{lineno}: query id {query_id!r} repeats line {lines[query_id]}; ids must be unique"
            )
        lines[query_id] = lineno
        text = _field(obj, "text", path, lineno)
        if keep is None or query_id in keep:
            queries[query_id] = text
    return queries, lines


def read_topics(path: Path) -> dict[str, str]:
    """Queries of an ``id<TAB>text`` topics file (gzipped or not) in file order; a repeated id is an error."""
    queries: dict[str, str] = {}
    lines: dict[str, int] = {}
    for lineno, query_id, text in iter_id_text_lines(path):
        if query_id in lines:
            raise InputFormatError(
                f"{path}:{lineno}: query id {query_id!r} repeats line {lines[query_id]}; ids must be unique"
            )
        lines[query_id] = lineno
        queries[query_id] = text
    return queries


def read_judged_topics(
    topics_path: Path, qrels_path: Path
) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """The judged queries (topics file order) and TREC qrels (``qid Q0 docid grade``) of one split;
    a judged query missing from the topics is an error. Grade 0 stays a judged non-relevant document."""
    from evaluator.trec import read_qrels as read_trec_qrels

    qrels = read_trec_qrels(qrels_path).to_dict()
    topics = read_topics(topics_path)
    missing = [query_id for query_id in qrels if query_id not in topics]
    if missing:
        count = f" ({len(missing)} such queries)" if len(missing) > 1 else ""
        raise InputFormatError(
            f"{qrels_path}: judged query {missing[0]!r} is not in {topics_path}{count}; "
            "the topics and qrels must be of the same split"
        )
    queries = {query_id: text for query_id, text in topics.items() if query_id in qrels}
    return queries, {query_id: qrels[query_id] for query_id in queries}


def read_qrels(path: Path) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """Qrels ``{query_id: {doc_id: score}}`` and the line of each (query, doc) pair.

    The header line is skipped when present. A pair given twice with different scores is an error.
    """
    qrels: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    try:
        with _open_binary(path) as f:
            for lineno, raw in enumerate(f, 1):
                line = raw.decode("utf-8").rstrip("\r\n")
                if not line.strip():
                    continue
                fields = line.split("\t")
                if lineno == 1 and tuple(fields[:3]) == QRELS_HEADER:
                    continue
                if len(fields) != 3:
                    raise InputFormatError(
                        f"{path}:{lineno}: expected 3 tab-separated fields (query-id, corpus-id, score), "
                        f"got {len(fields)}"
                    )
                query_id, doc_id, score_text = fields
                _add_judgment(qrels, lines, query_id, doc_id, score_text, path, lineno)
    except UnicodeDecodeError as err:
        raise InputFormatError(f"{path}: not UTF-8 text ({err})") from None
    except (OSError, EOFError, zlib.error) as err:
        raise DatasetLoadError(f"{path}: cannot read ({err}); download or copy the file again") from None
    return qrels, lines


def read_jsonl_qrels(path: Path) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """``read_qrels`` for JSON-lines qrels: one ``{"query-id", "corpus-id", "score"}`` object a line, the
    score an integer or an integer string (MTEB's hub copies write ``"score": "1"``)."""
    qrels: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    for lineno, obj in iter_json_lines(path):
        query_id, doc_id = _field(obj, "query-id", path, lineno), _field(obj, "corpus-id", path, lineno)
        _add_judgment(qrels, lines, query_id, doc_id, obj.get("score"), path, lineno)
    return qrels, lines


def read_qrels_file(path: Path) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """Qrels in either of BEIR's forms: JSON lines when the file is named ``*.jsonl[.gz]``, else TSV."""
    return read_jsonl_qrels(path) if ".jsonl" in path.suffixes else read_qrels(path)


def _add_judgment(qrels: dict[str, dict[str, int]], lines: dict[tuple[str, str], int], query_id: str,
                  doc_id: str, score: object, path: Path, lineno: int) -> None:
    """Record one judgment read at ``path:lineno``; the score is an int or an integer string, and a pair
    judged twice must get the same grade."""
    where = f"{path}:{lineno}"
    try:
        if isinstance(score, bool) or not isinstance(score, int | str):
            raise ValueError
        grade = int(score)
    except ValueError:
        raise InputFormatError(f"{where}: score {score!r} is not an integer relevance grade") from None
    judged = qrels.setdefault(query_id, {})
    if doc_id in judged and judged[doc_id] != grade:
        raise InputFormatError(
            f"{where}: ({query_id}, {doc_id}) is judged {grade} here and "
            f"{judged[doc_id]} on line {lines[query_id, doc_id]}; keep one judgment"
        )
    judged[doc_id] = grade
    lines.setdefault((query_id, doc_id), lineno)


def read_beir_folder(folder: Path, spec: DatasetSpec) -> Dataset:
    """Load ``spec.split`` from a BEIR-layout folder and check that qrels name known ids."""
    return read_beir_files(*locate_files(folder, spec.split), spec)


def read_beir_files(corpus_path: Path, queries_path: Path, qrels_path: Path, spec: DatasetSpec) -> Dataset:
    """Load one split from BEIR's three files (qrels as TSV, or JSON lines when named ``*.jsonl``) and
    check that the qrels name known ids. The corpus is read one line at a time."""
    qrels, qrels_lines = read_qrels_file(qrels_path)
    queries, _ = read_queries(queries_path, keep=set(qrels))
    for (query_id, _doc), lineno in qrels_lines.items():
        if query_id not in queries:
            raise InputFormatError(
                f"{qrels_path}:{lineno}: query {query_id!r} is not in {queries_path.name}; "
                "add the query or remove its qrels"
            )
    corpus = read_corpus(corpus_path)
    check_qrels_docs(qrels_lines, corpus, spec, where=f"{qrels_path}:{{line}}", corpus_name=corpus_path.name)
    queries = {query_id: queries[query_id] for query_id in qrels}  # qrels order
    return Dataset(spec=spec, corpus=corpus, queries=queries, qrels=qrels)


def read_beir_copy(data_dir: str | Path | None, spec: DatasetSpec) -> Dataset | None:
    """``data_dir`` read as a BEIR-layout copy of ``spec`` and checked against it; None when there is no
    such folder (no ``data_dir``, or a mirror of another layout)."""
    if data_dir is None or find_file(Path(data_dir), "corpus.jsonl") is None:
        return None
    dataset = read_beir_folder(Path(data_dir), spec)
    check_against_spec(dataset, str(data_dir))
    return dataset


def check_judged_docs(
    qrels: dict[str, dict[str, int]], corpus: Corpus, spec: DatasetSpec, qrels_path: Path, corpus_name: str
) -> None:
    """``check_qrels_docs`` for qrels read without line numbers: names the first missing document in qrels order."""
    pairs = ((query_id, doc_id) for query_id, judged in qrels.items() for doc_id in judged)
    check_qrels_docs({pair: n for n, pair in enumerate(pairs)}, corpus, spec, str(qrels_path), corpus_name)


def check_qrels_docs(
    qrels_lines: dict[tuple[str, str], int], corpus: Corpus, spec: DatasetSpec, where: str, corpus_name: str
) -> None:
    """Qrels naming documents absent from the corpus are an error, unless the spec records it as a
    known quirk of the official data (then they are kept, as BEIR does, and logged).

    ``where`` names the qrels source with a ``{line}`` placeholder, e.g. ``"qrels/test.tsv:{line}"``.
    """
    found = corpus.find(doc for _q, doc in qrels_lines)  # one pass over the ids: no lookup table is built
    missing = [(lineno, doc) for (_q, doc), lineno in qrels_lines.items() if doc not in found]
    if not missing:
        return
    if spec.allow_unknown_qrels_docs:
        logger.warning(
            "%s: %d qrels name documents missing from the corpus (a known quirk of %s); kept as unretrievable",
            where.replace("{line}", str(min(missing)[0])),
            len(missing),
            spec.id,
        )
        return
    lineno, doc_id = min(missing)
    location = where.replace("{line}", str(lineno))
    count = f" ({len(missing)} such qrels)" if len(missing) > 1 else ""
    raise InputFormatError(
        f"{location}: document {doc_id!r} is not in {corpus_name}{count}; "
        "add the document or remove the qrels"
    )
