"""Benchmark: corpus and query encoding rates of irboard's neural adapters (dense, SPLADE) on a CPU or a GPU.

Usage: python benchmarks/gpu_encode.py --model SPEC --corpus CORPUS.jsonl[.gz] [--passages N] [--queries Q]
                                       [--words 60] [--out FILE.json]

Passages are real text: each document of a BEIR-layout corpus (SciFact's, say) is cut into windows of `--words`
words (MS MARCO's passages average about 56 words), and the windows are cycled until there are N of them, so the
rate is that of MS MARCO-length passages, not of whole abstracts. Queries are the first `--words` // 6 words of
passages. The adapter is the one `irboard evaluate --model SPEC` loads (`dense:<folder>,device=cuda`,
`splade:<folder>,device=cuda`), timed through its own `encode_corpus` / `encode_queries` after a warm-up batch,
with the GPU synchronised before each clock reading. Prints and writes one JSON object: passages/s, queries/s,
the device, the dtype and the batch size, so docs/scale-plan.md can replace assumed GPU rates by measured ones.
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.models import load_model  # noqa: E402


def passages(corpus: Path, count: int, words: int) -> list[tuple[str, str]]:
    """`count` (title, text) windows of `words` words cut from the corpus's documents, cycled."""
    opener = gzip.open if corpus.suffix == ".gz" else open
    windows: list[tuple[str, str]] = []
    with opener(corpus, "rt", encoding="utf-8") as stream:
        for line in stream:
            tokens = json.loads(line)["text"].split()
            windows.extend(("", " ".join(tokens[i : i + words])) for i in range(0, len(tokens), words))
            if len(windows) >= count:
                break
    if not windows:
        raise SystemExit(f"{corpus}: no text to encode")
    return [windows[i % len(windows)] for i in range(count)]


def synchronise() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(function, *arguments) -> float:
    synchronise()
    start = time.perf_counter()
    function(*arguments)
    synchronise()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="an irboard model spec (dense:... or splade:...)")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--passages", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=7_000)
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import torch

    start = time.perf_counter()
    model = load_model(args.model)
    load_s = time.perf_counter() - start
    docs = passages(args.corpus, args.passages, args.words)
    queries = [" ".join(text.split()[: max(3, args.words // 6)]) for _, text in docs[: args.queries]]
    sparse = model.info.type == "sparse"
    encode_queries = (lambda q: model.encode_queries(q, None)) if sparse else model.encode_queries

    timed(model.encode_corpus, docs[:512])  # warm-up: kernels compiled, memory pools grown
    corpus_s = timed(model.encode_corpus, docs)
    queries_s = timed(encode_queries, queries)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else ""
    report = {
        "model": args.model, "model_id": model.info.id, "parameters": model.info.parameters,
        "device": gpu or f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)",
        "dtype": str(next(model.model.parameters()).dtype).removeprefix("torch."),
        "batch_size": model.batch_size, "torch": torch.__version__,
        "passages": len(docs), "words_per_passage": args.words, "queries": len(queries),
        "load_s": round(load_s, 2), "corpus_s": round(corpus_s, 2), "queries_s": round(queries_s, 2),
        "passages_per_s": round(len(docs) / corpus_s, 1), "queries_per_s": round(len(queries) / queries_s, 1),
    }
    if torch.cuda.is_available():
        report["gpu_peak_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
