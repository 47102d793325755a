"""One level of parallelism for the build: a task mapped over items in forked worker processes.

Reading the result files, each dataset's statistics and each page are independent of one another, so the build
maps them over `workers` processes forked from the one that holds the data (nothing is pickled on the way in). The
results come back in the items' order, so the site is the same bytes with any number of workers. Without fork
(Windows) or with one worker the tasks run in this process, and a task never forks again inside a worker. (macOS
has fork but does not make it its default: numpy there may not survive a fork; a spawn fallback would need the
tasks to be picklable.)

What a task returns is pickled back (protocol 5). Large buffers inside it (numpy arrays of BIG_BUFFER bytes or
more: a dataset's bootstrap means are 40 MB at 1,000 models) do not go through the pool's pipe, which moves about
0.25 GB/s: the worker writes them to a file in a folder of the pool's in shared memory (/dev/shm, else the temporary
folder), and this process reads them back (several GB/s) and removes the file.
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import TypeVar

Item = TypeVar("Item")
Out = TypeVar("Out")

BIG_BUFFER = 1 << 20  # bytes: buffers this large travel through a file, smaller ones through the pipe
_TASK: Callable | None = None  # the task of the pool being forked: closures are not picklable, fork copies them
_FOLDER: str | None = None  # where the workers of that pool write their large buffers
_IN_WORKER = False


def can_fork(workers: int) -> bool:
    return workers > 1 and not _IN_WORKER and "fork" in get_all_start_methods()


def _start_worker() -> None:
    global _IN_WORKER
    _IN_WORKER = True


def _run(item) -> tuple[bytes, str | None, list[int]]:
    """In a worker: (the pickled result, the file holding its large buffers or None, their sizes)."""
    buffers: list[pickle.PickleBuffer] = []

    def keep_large(buffer: pickle.PickleBuffer) -> bool:  # a true value pickles the buffer in the stream
        if buffer.raw().nbytes < BIG_BUFFER:
            return True
        buffers.append(buffer)
        return False

    data = pickle.dumps(_TASK(item), protocol=5, buffer_callback=keep_large)
    if not buffers:
        return data, None, []
    handle, path = tempfile.mkstemp(dir=_FOLDER, suffix=".buffers")
    with os.fdopen(handle, "wb") as stream:
        for buffer in buffers:
            stream.write(buffer.raw())
    return data, path, [buffer.raw().nbytes for buffer in buffers]


def _unpickled(data: bytes, path: str | None, sizes: list[int]):
    if path is None:
        return pickle.loads(data)
    buffers = [bytearray(size) for size in sizes]  # one each: an array kept must not keep the others alive
    with open(path, "rb", buffering=0) as stream:
        for buffer in buffers:
            view, done = memoryview(buffer), 0
            while done < len(buffer):  # a read may return less than asked
                got = stream.readinto(view[done:])
                if not got:
                    raise OSError(f"{path}: ended early")
                done += got
    os.unlink(path)
    return pickle.loads(data, buffers=buffers)


def _shared_folder() -> str:
    """A new folder for one pool's buffer files: in memory where Linux offers it."""
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return tempfile.mkdtemp(prefix="irboard-", dir=base)


def forked_map(task: Callable[[Item], Out], items: Iterable[Item], workers: int, chunksize: int = 1) -> Iterator[Out]:
    """task(item) for each item, in order; in `workers` forked processes when more than one and fork is there.

    The workers start at once, so the caller can do other work before it takes the results."""
    items = list(items)
    if not can_fork(workers) or len(items) < 2:
        return map(task, items)
    global _TASK, _FOLDER
    _TASK, _FOLDER = task, _shared_folder()
    pool = get_context("fork").Pool(min(workers, len(items)), initializer=_start_worker)
    return _results(pool, pool.imap(_run, items, chunksize=chunksize), _FOLDER)


def _results(pool, results: Iterator, folder: str) -> Iterator:
    global _TASK, _FOLDER
    try:
        for packed in results:
            yield _unpickled(*packed)
    finally:
        pool.terminate()
        shutil.rmtree(folder, ignore_errors=True)
        _TASK = _FOLDER = None
