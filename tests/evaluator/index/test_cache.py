"""EncodingCache / encode_cached: chunked, atomic, resumable after kill -9."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from evaluator.errors import IrboardError
from evaluator.index.cache import EncodingCache, cache_key, default_cache_root, encode_cached

KEY = {"model": "org/model", "revision": "abc123", "dataset": "beir/scifact", "settings": {"max_length": 256}}


def fake_vectors(items):
    """Deterministic per item, so any split into chunks gives the same rows."""
    return np.stack([np.random.default_rng(item).standard_normal(8).astype(np.float32) for item in items])


class CountingEncoder:
    def __init__(self, encode=fake_vectors):
        self.encode = encode
        self.calls = []

    def __call__(self, items):
        self.calls.append(items[0])
        return self.encode(items)


def test_key_is_sha256_of_canonical_json_and_ignores_key_order(tmp_path):
    expected = hashlib.sha256(json.dumps(KEY, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert cache_key(KEY) == expected
    assert cache_key(dict(reversed(list(KEY.items())))) == expected
    assert cache_key({**KEY, "revision": "def456"}) != expected
    assert EncodingCache(tmp_path, KEY).path == tmp_path / expected


def test_without_cache_chunks_equal_one_call():
    items = list(range(23))
    np.testing.assert_array_equal(encode_cached(fake_vectors, items, 5, None, quiet=True), fake_vectors(items))


def test_second_run_reads_every_chunk_from_disk(tmp_path):
    items = list(range(23))
    first = CountingEncoder()
    result = encode_cached(first, items, 5, EncodingCache(tmp_path, KEY), quiet=True)
    assert first.calls == [0, 5, 10, 15, 20]
    cache = EncodingCache(tmp_path, KEY)
    assert cache.is_complete
    assert sorted(p.name for p in cache.path.iterdir()) == [
        "chunk-000000.npy", "chunk-000001.npy", "chunk-000002.npy", "chunk-000003.npy", "chunk-000004.npy",
        "complete", "meta.json"]
    second = CountingEncoder()
    again = encode_cached(second, items, 5, cache, quiet=True)
    assert second.calls == []
    np.testing.assert_array_equal(again, result)
    np.testing.assert_array_equal(result, fake_vectors(items))
    assert again.dtype == np.float32


def test_sparse_encodings_round_trip(tmp_path):
    def sparse(items):
        rows = [[0, item % 7, 0, item] for item in items]
        return sp.csr_matrix(np.array(rows, np.float32))

    items = list(range(11))
    written = encode_cached(sparse, items, 4, EncodingCache(tmp_path, KEY), quiet=True)
    counting = CountingEncoder(sparse)
    read = encode_cached(counting, items, 4, EncodingCache(tmp_path, KEY), quiet=True)
    assert counting.calls == [] and sp.issparse(read) and read.format == "csr"
    assert (read != sparse(items)).nnz == 0 and (written != sparse(items)).nnz == 0
    assert (EncodingCache(tmp_path, KEY).path / "chunk-000002.npz").exists()


def test_missing_chunk_and_leftover_temporary_file(tmp_path):
    items = list(range(20))
    cache = EncodingCache(tmp_path, KEY)
    expected = encode_cached(fake_vectors, items, 5, cache, quiet=True)
    (cache.path / "chunk-000002.npy").unlink()
    (cache.path / "complete").unlink()
    (cache.path / "chunk-000002.npy.tmp-12345").write_bytes(b"half a chunk")
    counting = CountingEncoder()
    np.testing.assert_array_equal(encode_cached(counting, items, 5, cache, quiet=True), expected)
    assert counting.calls == [10]
    assert not list(cache.path.glob("*.tmp-*")) and cache.is_complete


def test_changed_layout_encodes_again(tmp_path):
    items = list(range(12))
    encode_cached(fake_vectors, items, 4, EncodingCache(tmp_path, KEY), quiet=True)
    counting = CountingEncoder()
    result = encode_cached(counting, items, 5, EncodingCache(tmp_path, KEY), quiet=True)
    assert counting.calls == [0, 5, 10]
    np.testing.assert_array_equal(result, fake_vectors(items))
    assert json.loads((EncodingCache(tmp_path, KEY).path / "meta.json").read_text())["chunk_size"] == 5


def test_default_root_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "irb"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_root() == tmp_path / "irb" / "encodings"
    monkeypatch.delenv("IRBOARD_CACHE")
    assert default_cache_root() == tmp_path / "xdg" / "irboard" / "encodings"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_root() == Path.home() / ".cache" / "irboard" / "encodings"
    assert EncodingCache(None, KEY).path == Path.home() / ".cache" / "irboard" / "encodings" / cache_key(KEY)


NUM_ITEMS, CHUNK = 200, 10
CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from evaluator.index.cache import EncodingCache, encode_cached

    def slow(items):
        with open(sys.argv[2], "a") as log:
            log.write(f"{items[0]}\\n")
        time.sleep(0.15)
        return np.stack([np.random.default_rng(i).standard_normal(8).astype(np.float32) for i in items])

    encode_cached(slow, list(range(NUM_ITEMS)), CHUNK, EncodingCache(sys.argv[1], KEY), quiet=True)
    """
).replace("NUM_ITEMS", str(NUM_ITEMS)).replace("CHUNK", str(CHUNK)).replace("KEY", repr(KEY))


def test_kill_9_mid_run_resumes_at_first_missing_chunk(tmp_path):
    root, log = tmp_path / "cache", tmp_path / "calls.log"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), str(root), str(log)], cwd=Path(__file__).parents[3])
    cache = EncodingCache(root, KEY)
    deadline = time.monotonic() + 60
    while len(list(cache.path.glob("chunk-*.npy"))) < 5 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    written = sorted(int(p.name[6:12]) for p in cache.path.glob("chunk-*.npy"))
    assert 5 <= len(written) < NUM_ITEMS // CHUNK and not cache.is_complete
    assert written == list(range(len(written)))  # chunks are written in order

    resumed = CountingEncoder()
    result = encode_cached(resumed, list(range(NUM_ITEMS)), CHUNK, cache, quiet=True)
    assert resumed.calls == [CHUNK * i for i in range(len(written), NUM_ITEMS // CHUNK)]
    uninterrupted = encode_cached(fake_vectors, list(range(NUM_ITEMS)), CHUNK, EncodingCache(tmp_path / "u", KEY),
                                  quiet=True)
    np.testing.assert_array_equal(result, uninterrupted)
    assert cache.is_complete and not list(cache.path.glob("*.tmp-*"))
    child_calls = [int(line) for line in log.read_text().split()]
    assert child_calls[: len(written)] == [CHUNK * i for i in range(len(written))]


def test_file_uri_root_writes_the_same_entry_and_resumes(tmp_path):
    items = list(range(20))
    cache = EncodingCache(f"file://{tmp_path}/shared", KEY)
    assert cache.path == tmp_path / "shared" / cache_key(KEY)
    expected = encode_cached(fake_vectors, items, 5, cache, quiet=True)
    (cache.path / "chunk-000001.npy").unlink()
    (cache.path / "complete").unlink()
    counting = CountingEncoder()
    again = encode_cached(counting, items, 5, EncodingCache(f"file://{tmp_path}/shared", KEY), quiet=True)
    assert counting.calls == [5]
    np.testing.assert_array_equal(again, expected)


def test_any_pyarrow_filesystem_holds_the_cache(tmp_path):
    """A SubTreeFileSystem is not the local disk to the cache: writes go through an output stream and a move."""
    import pyarrow.fs as pafs

    filesystem = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    items = list(range(12))

    def sparse(chunk):
        return sp.csr_matrix(fake_vectors(chunk))

    cache = EncodingCache("bucket/encodings", KEY, filesystem=filesystem)
    written = encode_cached(sparse, items, 4, cache, quiet=True)
    folder = tmp_path / "bucket" / "encodings" / cache_key(KEY)
    assert sorted(p.name for p in folder.iterdir()) == [
        "chunk-000000.npz", "chunk-000001.npz", "chunk-000002.npz", "complete", "meta.json"]
    (folder / "chunk-000002.npz").unlink()
    (folder / "chunk-000002.npz.tmp-1-abc").write_bytes(b"half a chunk")  # a writer killed mid-write
    counting = CountingEncoder(sparse)
    read = encode_cached(counting, items, 4,
                         EncodingCache("bucket/encodings", KEY, filesystem=filesystem), quiet=True)
    assert counting.calls == [8]
    assert (read != written).nnz == 0 and not list(folder.glob("*.tmp-*"))


def test_cache_dir_locations():
    from evaluator.index.cache import encodings_root, local_cache_dir

    assert encodings_root("/data/cache") == Path("/data/cache/encodings")
    assert encodings_root("s3://bucket/irboard/") == "s3://bucket/irboard/encodings"
    assert local_cache_dir("file:///data/cache") == Path("/data/cache")
    assert local_cache_dir("/data/cache") == Path("/data/cache")
    assert local_cache_dir("s3://bucket/irboard") is None and local_cache_dir(None) is None
    with pytest.raises(IrboardError, match=r"--cache-dir nosuch://x: cannot open it .*file://, s3:// or gs://"):
        EncodingCache("nosuch://x", KEY)


def test_the_corpus_file_goes_to_the_cache_dir_once_named_by_its_content(tmp_path, monkeypatch):
    """`shared_corpus`: what workers on other machines read the corpus from. A folder and a file:// URI (the
    local disk: written and fsynced, then renamed), and an object store's way (a pyarrow filesystem that is
    not the local disk: an output stream, then a move; a SubTreeFileSystem standing for s3:// here)."""
    import pyarrow.fs as pafs

    from evaluator.index import cache as cache_module
    from evaluator.index.cache import shared_corpus

    corpus = tmp_path / "local" / "corpus.arrow"
    corpus.parent.mkdir()
    corpus.write_bytes(os.urandom(20 << 20))  # three 8 MiB copy steps
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()
    assert shared_corpus(corpus, None) == (str(corpus), digest)  # no --cache-dir: the driver's own file
    for cache_dir, expected in ((tmp_path / "folder", f"{tmp_path}/folder/corpora/{digest}.arrow"),
                                (f"file://{tmp_path}/uri/", f"file://{tmp_path}/uri/corpora/{digest}.arrow")):
        assert shared_corpus(corpus, cache_dir) == (expected, digest)
        copy = Path(expected.removeprefix("file://"))
        assert copy.read_bytes() == corpus.read_bytes() and os.listdir(copy.parent) == [copy.name]
        written = copy.stat().st_mtime_ns
        assert shared_corpus(corpus, cache_dir) == (expected, digest) and copy.stat().st_mtime_ns == written
    subtree = pafs.SubTreeFileSystem(str(tmp_path / "store"), pafs.LocalFileSystem())
    monkeypatch.setattr(cache_module, "open_location", lambda location: (subtree, "bucket/irboard"))
    assert shared_corpus(corpus, "s3://bucket/irboard") == (f"s3://bucket/irboard/corpora/{digest}.arrow", digest)
    stored = tmp_path / "store" / "bucket" / "irboard" / "corpora"
    assert os.listdir(stored) == [f"{digest}.arrow"] and (stored / f"{digest}.arrow").read_bytes() == corpus.read_bytes()
