"""The blind copy of a dataset a script or container artifact runs on, and its run file mapped back.

The copy holds the corpus and the queries, never the judgments; every document id and query id is renamed by a
keyed mapping (HMAC-SHA256 under a key drawn for this re-run) and the corpus is written in an order shuffled with a
seed drawn likewise. A command that ranks the documents it is given gives the same ranking under the new names; a
ranking prepared in advance (copied from the repository, or computed from the judgments) names documents that are not
in the copy and is refused. The command's run file is read line by line with a bounded line length, after a size
cap checked before reading, so a huge or sparse file costs neither time nor memory.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.errors import IrboardError
from evaluator.result import ResultFile

CHUNK = 4096  # documents written per step
MAX_LINE_BYTES = 4096  # a TREC line is a few dozen bytes: a longer one is refused, never read whole
BYTES_PER_LINE = 256  # the size cap allows this many bytes per ranked document (the copy's ids are 21 characters)
MIN_DEPTH = 1000  # a run may rank this many documents per query even when the result stores fewer


class NotBlind(IrboardError):
    """The command's run file does not rank the copy it was given: one line naming the line and the reason."""


@dataclass(frozen=True)
class Disguise:
    """The renaming of one blind copy: new name -> original id, for documents and for queries."""

    documents: dict[str, str]
    queries: dict[str, str]


def _name(key: bytes, kind: str, original: str) -> str:
    return kind + hmac.new(key, f"{kind}\0{original}".encode(), hashlib.sha256).hexdigest()[:20]


def write_blind_copy(dataset, folder: Path, key: bytes | None = None, seed: int | None = None) -> Disguise:
    """Write `folder`/corpus.jsonl and queries.jsonl (BEIR layout, no qrels/) for `dataset`, renamed and shuffled."""
    key = secrets.token_bytes(32) if key is None else key
    rng = np.random.default_rng(secrets.randbits(64) if seed is None else seed)
    folder.mkdir(parents=True)
    corpus, n = dataset.corpus, len(dataset.corpus)
    documents: dict[str, str] = {}
    lines = []  # the copy's lines in the corpus's order, written shuffled
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        ids = corpus.take_ids(np.arange(start, stop))
        for doc_id, (title, text) in zip(ids, corpus.documents(start, stop), strict=True):
            name = _name(key, "d", doc_id)
            documents[name] = doc_id
            lines.append(json.dumps({"_id": name, "title": title, "text": text}, ensure_ascii=False) + "\n")
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        out.writelines(lines[i] for i in rng.permutation(n))
    del lines
    queries: dict[str, str] = {}
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as out:
        names = []
        for query_id, text in dataset.queries.items():
            name = _name(key, "q", query_id)
            queries[name] = query_id
            names.append(json.dumps({"_id": name, "text": text}, ensure_ascii=False) + "\n")
        rng.shuffle(names)
        out.writelines(names)
    if len(documents) != n or len(queries) != len(dataset.queries):  # 80-bit names: never in practice
        raise IrboardError("two ids of the dataset got the same disguised name; run the reproduction again")
    return Disguise(documents, queries)


def max_run_bytes(stored: ResultFile) -> int:
    """The largest run file read back: BYTES_PER_LINE for each document the result ranks (or MIN_DEPTH a query)."""
    run = stored.run
    ranked = int(run.below.totals.max(initial=0)) if run.below is not None else run.depth
    return len(stored.query_ids) * max(ranked, stored.settings.top_k, MIN_DEPTH) * BYTES_PER_LINE


def map_back(run_file: Path, disguise: Disguise, out: Path, max_bytes: int) -> Path:
    """The command's TREC run file with the original ids (written to `out`), read in bounded memory."""
    size = run_file.stat().st_size
    if size > max_bytes:
        raise NotBlind(f"the run file the command wrote holds {size:,} bytes, over the {max_bytes:,} a ranking of "
                       "this dataset can take; write one line per ranked document")
    with open(run_file, "rb") as lines, open(out, "w", encoding="utf-8") as mapped:
        for number in range(1, size + 2):
            line = lines.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_LINE_BYTES:
                raise NotBlind(f"the run file's line {number} is over {MAX_LINE_BYTES} bytes; a TREC run line is "
                               "'query Q0 document rank score tag'")
            fields = line.decode("utf-8", errors="replace").split()
            if not fields:
                continue
            if len(fields) < 6:
                raise NotBlind(f"the run file's line {number} has {len(fields)} columns; a TREC run line is "
                               "'query Q0 document rank score tag'")
            query, document = disguise.queries.get(fields[0]), disguise.documents.get(fields[2])
            if query is None or document is None:
                what = f"query {fields[0]!r}" if query is None else f"document {fields[2]!r}"
                raise NotBlind(f"the run file's line {number} names {what[:80]}, which is not in the copy of the "
                               "dataset the command was given (a ranking made in advance?); rank the documents "
                               "of {data}")
            mapped.write(" ".join([query, fields[1], document, *fields[3:]]) + "\n")
    return out
