"""`make shared-data --only classic`: SMART-format files served from 127.0.0.1 become the BEIR-layout classic
collections byte for byte (the md5 of DATA.md), and a damaged download or conversion installs nothing.

The SMART files are written here from the shared BEIR-layout copy (the reverse of the conversion), in the
originals' layout: fields wrapped over lines with stray indentation and trailing blanks, a blank line inside a
field where the text has two spaces, fields that the conversion drops, CACM's empty `.I 0` query, Cranfield's
query numbers with gaps and Cleverdon codes, CISI's title-and-abstract queries and space-padded qrels."""

import hashlib
import json
import re
from pathlib import Path

import pytest

from evaluator.datasets.official import RAW_BASE_ENV
from evaluator.errors import InputFormatError
from tests.conftest import SHARED
from tests.data import classic
from tests.data.fetch_shared import main

CLASSIC = SHARED / "data" / "classic"
CODES = {grade: code for code, grade in classic.CRANFIELD_GRADES.items()}


def _wrap(text: str, width: int = 60) -> str:
    """`text` over lines that strip and join with one space back to `text`: breaks only at a single space between
    two visible characters and never before a `.`; two spaces become a blank line now and then."""
    lines, start, doubles = [], 0, 0
    for match in re.finditer(r"(?<=\S)( {1,2})(?=[^\s.])", text):
        doubles += len(match[1]) == 2
        if match.start() - start >= width or (len(match[1]) == 2 and doubles % 5 == 0):
            lines.append(text[start:match.start()])
            if len(match[1]) == 2:
                lines.append("")
            start = match.end()
    lines.append(text[start:])
    return "".join(("  " if i % 3 == 1 else "") + line + (" " if i % 4 == 2 else "") + "\n"
                   for i, line in enumerate(lines))


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _qrels(name: str) -> list[list[str]]:
    return [line.split("\t") for line in (CLASSIC / name / "qrels" / "test.tsv").read_text().splitlines()[1:]]


def _documents(name: str, extra: str) -> str:
    """`.I`, `.T`, `.W` (left out when empty, as CACM does) and `extra` (fields the conversion drops)."""
    out = []
    for doc in _rows(CLASSIC / name / "corpus.jsonl"):
        out.append(f".I {doc['_id']}\n.T\n{_wrap(doc['title'])}")
        out.append(f".W\n{_wrap(doc['text'])}" if doc["text"] or name != "cacm" else "")
        out.append(extra.format(id=doc["_id"]))
    return "".join(out)


def smart_files(name: str) -> dict[str, bytes]:
    """The raw files of collection `name` as the SMART originals would hold its shared BEIR-layout copy."""
    queries = _rows(CLASSIC / name / "queries.jsonl")
    if name == "cranfield":
        files = {
            "cran.all.1400": _documents(name, ".A\nauthor,a.\n.B\nj. ae. scs. 25, 1958, 324.\n"),
            "cran.qry": "".join(f".I {q['metadata']['cran_qry_I']}\n.W\n{_wrap(q['text'])}" for q in queries),
            "cranqrel": "".join(f"{q} {d}{'  ' if i % 7 == 0 else ' '}{CODES[int(s)]} \n"
                                for i, (q, d, s) in enumerate(_qrels(name))),
        }
    elif name == "cisi":
        parts = []
        for q in queries:
            head, _, tail = q["text"].partition(" ")
            titled = int(q["_id"]) >= 58 and tail and not tail[0].isspace() and not head[-1].isspace()
            fields = f".T\n{_wrap(head)}.A\nSomeone, A.\n.W\n{_wrap(tail)}.B\n1970\n" if titled else \
                f".W\n{_wrap(q['text'])}"
            parts.append(f".I {q['_id']}\n{fields}")
        files = {
            "CISI.ALL": _documents(name, ".A\nComaromi, J.P.\n.X\n{id}\t5\t{id}\n1\t6\t{id}\n"),
            "CISI.QRY": "".join(parts),
            "CISI.REL": "".join(f"{q:>5} {d:>5} 0 0.000000\n" for q, d, _ in _qrels(name)),
        }
    else:
        files = {
            "cacm.all": _documents(name, ".B\nCACM June, 1961\n.A\nKnuth, D. E.\n.N\nCA610604 JB March 16, 1978  "
                                   "10:48 PM\n.X\n{id}\t5\t{id}\n"),
            "query.text": "".join(f".I {q['_id']}\n.W\n {_wrap(q['text'])}.N\n {q['_id']}. Someone\n\n"
                                  for q in queries) + ".I 0\n",
            "qrels.text": "".join(f"{int(q):02d} {d} 0 0\n" for q, d, _ in _qrels(name)),
        }
    return {file: text.encode() for file, text in files.items()}


@pytest.fixture(scope="module")
def originals() -> dict[str, dict[str, bytes]]:
    return {name: smart_files(name) for name in classic.COLLECTIONS}


@pytest.fixture
def upstream(server, monkeypatch, originals):
    """The server holding every collection's raw files at its repository and commit; their md5 is the expected
    one (the real files hash otherwise: the converted files' md5 stays DATA.md's)."""
    for name, collection in classic.COLLECTIONS.items():
        for file, data in originals[name].items():
            server.files[f"/{collection.repository}/{collection.commit}/{file}"] = data
        raw = {file: hashlib.md5(data).hexdigest() for file, data in originals[name].items()}
        monkeypatch.setitem(classic.COLLECTIONS, name, classic.Collection(
            collection.repository, collection.commit, raw, collection.output, collection.convert))
    monkeypatch.setenv(RAW_BASE_ENV, server.base_url)
    return server


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", ["cranfield", "cisi", "cacm"])
def test_the_recorded_checksums_are_those_of_the_shared_copy(name):
    output = classic.COLLECTIONS[name].output
    assert output == {file: _md5(CLASSIC / name / file) for file in output}


@pytest.mark.parametrize("name", ["cranfield", "cisi", "cacm"])
def test_converting_the_smart_files_gives_the_shared_copy_byte_for_byte(name, originals):
    converted = classic.COLLECTIONS[name].convert({f: data.decode() for f, data in originals[name].items()})
    assert {file: text.encode() for file, text in converted.items()} == {
        file: (CLASSIC / name / file).read_bytes() for file in classic.COLLECTIONS[name].output}


def test_the_originals_hold_what_the_conversion_must_undo(originals):
    assert "\n\n" in originals["cisi"]["CISI.ALL"].decode()  # a blank line inside a field
    assert originals["cacm"]["query.text"].endswith(b".I 0\n")
    assert b".I 004\n" in originals["cranfield"]["cran.qry"] and b" -1 \n" in originals["cranfield"]["cranqrel"]
    assert originals["cisi"]["CISI.REL"].startswith(b"    1    28 0 0.000000\n")
    assert b"\n01 1572 0 0\n" in originals["cacm"]["qrels.text"]
    assert originals["cisi"]["CISI.QRY"].count(b"\n.T\n") > 50  # most of queries 58-112


def test_classic_collections_are_fetched_converted_and_then_only_checked(upstream, tmp_path):
    dest = tmp_path / "shared"
    assert main([str(dest), "--only", "classic"]) == 0
    for name, collection in classic.COLLECTIONS.items():
        for file in collection.output:
            assert (dest / "data" / "classic" / name / file).read_bytes() == (CLASSIC / name / file).read_bytes()
    assert sorted(p.name for p in (dest / "data" / "classic").iterdir()) == ["cacm", "cisi", "cranfield"]
    assert len(upstream.requests) == 9

    upstream.stop()
    assert main([str(dest), "--only", "classic"]) == 0  # all there: checked, nothing fetched
    (dest / "data" / "classic" / "cisi" / "queries.jsonl").write_text("{}\n")
    assert main([str(dest), "--only", "classic"]) == 1


def test_a_fetch_that_stops_resumes_with_the_files_it_lacks(upstream, tmp_path, capsys):
    missing = "/atcherepanov/Stemming-Algorithm/a92ce141e3cba95b0213569a42cb1668201963f7/query.text"
    served = upstream.files.pop(missing)
    assert main([str(tmp_path), "--only", "classic"]) == 1
    assert "query.text: server answered HTTP 404" in capsys.readouterr().err
    classic_dir = tmp_path / "data" / "classic"
    assert sorted(p.name for p in classic_dir.iterdir()) == [".raw-cacm", "cisi", "cranfield"]
    assert sorted(p.name for p in (classic_dir / ".raw-cacm").iterdir()) == ["cacm.all"]

    upstream.files[missing] = served
    upstream.requests.clear()
    assert main([str(tmp_path), "--only", "classic"]) == 0
    assert upstream.requests == [missing, missing.replace("query.text", "qrels.text")]
    assert sorted(p.name for p in classic_dir.iterdir()) == ["cacm", "cisi", "cranfield"]


def test_a_damaged_download_installs_nothing(upstream, tmp_path, capsys):
    path = "/Shakiba-Alipour/Information-Retrieval-on-CISI/7a23c34602e8949d795bb1835004546e00d1d1ba/CISI.REL"
    upstream.files[path] = upstream.files[path].replace(b"    1    28", b"    1    29")
    assert main([str(tmp_path), "--only", "classic"]) == 1
    err = capsys.readouterr().err
    assert "CISI.REL: md5 of the download is" in err and err.count("error:") == 1
    assert not (tmp_path / "data" / "classic" / "cisi").exists()
    assert sorted(p.name for p in (tmp_path / "data" / "classic" / ".raw-cisi").iterdir()) == ["CISI.ALL",
                                                                                                 "CISI.QRY"]


def test_a_conversion_that_differs_from_data_md_installs_nothing(upstream, tmp_path, capsys, monkeypatch):
    collection = classic.COLLECTIONS["cranfield"]
    monkeypatch.setitem(classic.COLLECTIONS, "cranfield", classic.Collection(
        collection.repository, collection.commit, collection.raw, collection.output,
        lambda raw: {**collection.convert(raw), "queries.jsonl": ""}))
    assert main([str(tmp_path), "--only", "classic"]) == 1
    err = capsys.readouterr().err
    assert "cranfield: queries.jsonl converted from cran.all.1400, cran.qry, cranqrel has md5" in err
    assert "expected b573acf77878a750e01e8cf20fe7ef14" in err
    assert not (tmp_path / "data" / "classic" / "cranfield").exists()


@pytest.mark.parametrize(("file", "text", "message"), [
    ("cran.qry", "the title\n.I 1\n.W\nx\n", "cran.qry line 1: text outside a field"),
    ("cran.qry", ".W\nx\n", "cran.qry line 1: field .W before the first `.I` record"),
    ("cran.qry", ".I one\n.W\nx\n", "cran.qry line 1: `.I` needs a record number, found 'one'"),
    ("cran.qry", "\n", "cran.qry: no `.I` record"),
    ("cranqrel", "1 184 2\n1 184\n", "cranqrel line 2: expected 3 numbers, found '1 184'"),
    ("cranqrel", "1 184 7\n", "cranqrel: query 1 document 184 has code 7, expected one of 1, 2, 3, 4, -1"),
    ("cranqrel", "1 184 2\n1 184 3\n", "cranfield: qrels pair (1, 184) appears twice"),
    ("cranqrel", "1 9999 2\n", "cranfield: qrels row (1, 9999) names a query or document that is not in"),
])
def test_malformed_smart_files_are_named_by_line(file, text, message):
    raw = {"cran.all.1400": ".I 184\n.T\nt\n.W\nw\n", "cran.qry": ".I 001\n.W\nq\n", "cranqrel": "1 184 2\n"}
    with pytest.raises(InputFormatError, match=re.escape(message)):
        classic.convert_cranfield({**raw, file: text})
