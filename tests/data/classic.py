"""The classic collections (Cranfield, CISI, CACM) in BEIR layout, converted from their SMART-format originals.

The rules are those of ../shared/data/classic/<name>/DATA.md, whose md5 of every output file is checked by
`make shared-data` (tests/data/fetch_shared.py) before a collection is installed:
- a SMART file is a sequence of records `.I <number>` holding fields, each a marker line (`.T`, `.W`, `.A`, ...)
  followed by its lines; a field's lines are stripped and joined with one space (a blank line counts as an
  empty one);
- one JSON object a line in source order, `json.dumps` defaults (`ensure_ascii`), keys `_id,title,text,metadata`
  for documents and `_id,text,metadata` for queries; qrels/test.tsv with the BEIR header, rows in source order;
- per collection: which fields make title and text, how query ids and grades are read (see each converter).
Every qrels query and document exists and no id or (query, document) pair repeats, else the conversion stops.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from evaluator.errors import InputFormatError

# A marker line: `.` and a field letter, alone or followed by white space (`.I 12`). Lines are split on "\n" only:
# str.splitlines() would also break at the control characters that some CACM abstracts hold.
MARKER = re.compile(r"\.([ITWABNXKC])(?:\s(.*))?\Z", re.DOTALL)
HEADER = "query-id\tcorpus-id\tscore\n"
# Cleverdon's codes in cranqrel (cranqrel.readme: 1 = complete answer ... 4 = minimum interest, -1 = judged of
# no interest) as gains where higher is more relevant.
CRANFIELD_GRADES = {"1": 4, "2": 3, "3": 2, "4": 1, "-1": 0}


@dataclass
class Record:
    number: str  # as written after `.I`
    line: int
    fields: dict[str, list[str]]

    def field(self, letter: str) -> str:
        return " ".join(self.fields.get(letter, [])).strip()


@dataclass(frozen=True)
class Collection:
    """Where the raw files are (GitHub repository at a commit) and what they and the converted files hash to."""

    repository: str
    commit: str
    raw: dict[str, str]  # raw file -> md5
    output: dict[str, str]  # converted file -> md5 (DATA.md)
    convert: Callable[[dict[str, str]], dict[str, str]]  # raw texts by file -> converted texts by file


def read_records(text: str, source: str) -> list[Record]:
    """The records of a SMART file, in order."""
    records: list[Record] = []
    lines: list[str] | None = None  # the open field's lines
    for number, line in enumerate(text.split("\n"), 1):
        match = MARKER.match(line.rstrip("\r"))
        rest = (match[2] or "").strip() if match else ""
        if match and match[1] == "I":
            if not rest.isdigit():
                raise InputFormatError(f"{source} line {number}: `.I` needs a record number, found {rest!r}")
            records.append(Record(rest, number, {}))
            lines = None
        elif match:
            if not records:
                raise InputFormatError(f"{source} line {number}: field .{match[1]} before the first `.I` record")
            lines = records[-1].fields.setdefault(match[1], [])
            if rest:
                lines.append(rest)
        elif lines is not None:
            lines.append(line.strip())
        elif line.strip():
            raise InputFormatError(f"{source} line {number}: text outside a field ({line.strip()[:40]!r}); "
                                   "every line after `.I` belongs to a field such as .T or .W")
    if not records:
        raise InputFormatError(f"{source}: no `.I` record; not a SMART-format file")
    return records


def read_qrels(text: str, source: str, columns: int) -> list[tuple[str, str, str]]:
    """(query number, document number, grade column) of each non-blank line of `columns` white-space separated
    integers (the query's and document's leading zeros dropped)."""
    rows = []
    for number, line in enumerate(text.split("\n"), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != columns or not all(re.fullmatch(r"-?\d+(\.\d+)?", field) for field in fields):
            raise InputFormatError(f"{source} line {number}: expected {columns} numbers, found {line.strip()!r}")
        rows.append((str(int(fields[0])), str(int(fields[1])), fields[2]))
    return rows


def write_beir(source: str, documents: list[dict], queries: list[dict],
               qrels: list[tuple[str, str, int]]) -> dict[str, str]:
    """corpus.jsonl, queries.jsonl and qrels/test.tsv, after checking ids are unique and qrels refer to them."""
    for kind, rows in (("document", documents), ("query", queries)):
        seen: set[str] = set()
        for row in rows:
            if row["_id"] in seen:
                raise InputFormatError(f"{source}: {kind} {row['_id']} appears twice")
            seen.add(row["_id"])
    doc_ids, query_ids, pairs = {d["_id"] for d in documents}, {q["_id"] for q in queries}, set()
    for query_id, doc_id, _ in qrels:
        if query_id not in query_ids or doc_id not in doc_ids:
            raise InputFormatError(f"{source}: qrels row ({query_id}, {doc_id}) names a query or document "
                                   "that is not in the collection")
        if (query_id, doc_id) in pairs:
            raise InputFormatError(f"{source}: qrels pair ({query_id}, {doc_id}) appears twice")
        pairs.add((query_id, doc_id))
    return {
        "corpus.jsonl": "".join(json.dumps(d) + "\n" for d in documents),
        "queries.jsonl": "".join(json.dumps(q) + "\n" for q in queries),
        "qrels/test.tsv": HEADER + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in qrels),
    }


def _documents(records: list[Record]) -> list[dict]:
    """Title `.T`, text `.W`; the other fields are dropped."""
    return [{"_id": str(int(r.number)), "title": r.field("T"), "text": r.field("W"), "metadata": {}} for r in records]


def convert_cranfield(raw: dict[str, str]) -> dict[str, str]:
    """cranqrel numbers the queries 1..225 by their position in cran.qry, whose own `.I` numbers have gaps: the
    query id is the position, the `.I` is kept as metadata.cran_qry_I. Grades become 4..1 and -1 becomes 0."""
    queries = [{"_id": str(position), "text": r.field("W"), "metadata": {"cran_qry_I": r.number}}
               for position, r in enumerate(read_records(raw["cran.qry"], "cran.qry"), 1)]
    qrels = []
    for query_id, doc_id, code in read_qrels(raw["cranqrel"], "cranqrel", 3):
        if code not in CRANFIELD_GRADES:
            raise InputFormatError(f"cranqrel: query {query_id} document {doc_id} has code {code}, expected one "
                                   f"of {', '.join(CRANFIELD_GRADES)}")
        qrels.append((query_id, doc_id, CRANFIELD_GRADES[code]))
    return write_beir("cranfield", _documents(read_records(raw["cran.all.1400"], "cran.all.1400")), queries, qrels)


def convert_cisi(raw: dict[str, str]) -> dict[str, str]:
    """A query with a title (58-112 are a paper's title and abstract) is `.T` + " " + `.W`; CISI.REL rows
    `qid did 0 0.000000` are binary."""
    queries = []
    for r in read_records(raw["CISI.QRY"], "CISI.QRY"):
        title, text = r.field("T"), r.field("W")
        queries.append({"_id": str(int(r.number)), "text": f"{title} {text}" if title else text, "metadata": {}})
    qrels = [(q, d, 1) for q, d, _ in read_qrels(raw["CISI.REL"], "CISI.REL", 4)]
    return write_beir("cisi", _documents(read_records(raw["CISI.ALL"], "CISI.ALL")), queries, qrels)


def convert_cacm(raw: dict[str, str]) -> dict[str, str]:
    """query.text ends with an empty `.I 0` record, which is no query; qrels.text rows `01 1410 0 0` are binary."""
    queries = [{"_id": str(int(r.number)), "text": r.field("W"), "metadata": {}}
               for r in read_records(raw["query.text"], "query.text")
               if int(r.number) != 0 or r.field("W")]
    qrels = [(q, d, 1) for q, d, _ in read_qrels(raw["qrels.text"], "qrels.text", 4)]
    return write_beir("cacm", _documents(read_records(raw["cacm.all"], "cacm.all")), queries, qrels)


COLLECTIONS = {
    "cranfield": Collection(
        "noramtboraas/information-retrieval", "4ea1b8e02da1db64b68b0364d50620b3c95528dc",
        {"cran.all.1400": "ed6036836f100f79fcac69c8d6316515", "cran.qry": "da21a9df84d0ce3f66d0451c4d880903",
         "cranqrel": "d07d508ca927f30763ec3da959611528"},
        {"corpus.jsonl": "251111eb3ef104b1ceebd733668fead4", "queries.jsonl": "b573acf77878a750e01e8cf20fe7ef14",
         "qrels/test.tsv": "3d5e7aadc9a031551ab0cbb3431a8ab2"},
        convert_cranfield),
    "cisi": Collection(
        "Shakiba-Alipour/Information-Retrieval-on-CISI", "7a23c34602e8949d795bb1835004546e00d1d1ba",
        {"CISI.ALL": "966a4a2ae68056fdefc3f630bc0ccf7b", "CISI.QRY": "a2a0d25f105685114d8ca96a73a240bb",
         "CISI.REL": "ce2bb2aefb01bca8efba4e22dd4dd976"},
        {"corpus.jsonl": "a861ac5f6b3a5152fbc75262440f5bb6", "queries.jsonl": "2f95fa973ba9e974e449c3b351f2d1f0",
         "qrels/test.tsv": "474a3b702d073469eea9e0bfee61dad5"},
        convert_cisi),
    "cacm": Collection(
        "atcherepanov/Stemming-Algorithm", "a92ce141e3cba95b0213569a42cb1668201963f7",
        {"cacm.all": "1331ad9c2a1ba5b3b4a5c9cb68fc2f96", "query.text": "e3f4d342fd91db2fe1595bdeb9b62365",
         "qrels.text": "39c9f27ff96a60e69c8f3986e2f64782"},
        {"corpus.jsonl": "2d014014756e6d165bf2613ce358c378", "queries.jsonl": "cbd74ded5cf8173aa8b34285fa3e0ed2",
         "qrels/test.tsv": "c7d7ae1bfa3fe75cbb9bf1da53d76954"},
        convert_cacm),
}
