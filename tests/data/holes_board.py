"""A small two-dataset board (one group, "Other") built to break the group-level judgment rules once: on both
datasets `holey` is far below the baseline at trec_eval's values, but its unjudged documents could lift it above
(its hole bounds straddle the baseline); `solid` is far above both and fully judged. So the group's verdict between
holey and bm25 could flip, and the rank ranges of holey and bm25 with it; solid's rank range and every best-set
membership hold. Its condensed values (nDCG'@10) are holey's values + 0.1, the others' own. Per-query values are drawn, not measured: the flags are what is tested, against these bounds.

`lift` sets how far holey's unjudged documents could lift it (0.3 above): at 0.6 its high bounds pass solid, so the
★ of solid and its absence for holey could flip too; at 0 its bounds are its values and every verdict holds."""

from __future__ import annotations

import numpy as np

METRIC = "nDCG@10"
DATASETS = ("local/holes-a", "local/holes-b")
QUERIES = 40
MODELS = ("bm25", "holey", "solid")


def lookup(dataset_id: str):
    from leaderboard.submissions.catalog import DatasetInfo

    return DatasetInfo(dataset_id, dataset_id, "Other", "en", METRIC)


def values(dataset: str, lift: float = 0.3) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
    """model -> (values, low, high, Judged@10) on `dataset`."""
    rng = np.random.default_rng(DATASETS.index(dataset) + 7)
    base = rng.uniform(0.35, 0.55, QUERIES)
    holey = np.clip(base - 0.2 + rng.normal(0, 0.03, QUERIES), 0, 1)
    solid = np.clip(base + 0.3 + rng.normal(0, 0.03, QUERIES), 0, 1)
    return {"bm25": (base, base, base, 1.0), "holey": (holey, holey, np.minimum(holey + lift, 1.0), 0.4),
            "solid": (solid, solid, solid, 1.0)}


def loaded_results(lift: float = 0.3) -> list:
    from leaderboard.submissions.holes import HoleFigures
    from leaderboard.submissions.loaded import LoadedResult, ModelInfo, Provenance

    out = []
    for dataset in DATASETS:
        for model_id, (value, low, high, judged) in values(dataset, lift).items():
            holes = HoleFigures(METRIC, judged, np.full(QUERIES, judged, dtype=np.float32), low.astype(np.float32),
                                high.astype(np.float32), {METRIC: (float(low.mean()), float(high.mean()))},
                                np.minimum(value + (0.1 if model_id == "holey" else 0.0), 1).astype(np.float32))
            out.append(LoadedResult(
                path=f"results/{model_id}/{dataset.replace('/', '__')}.json",
                model=ModelInfo(model_id, "sparse" if model_id == "bm25" else "dense", "", None, None, "Apache-2.0",
                                True, (), ""),
                dataset_id=dataset, split="test", num_docs=1000, qrels_sha256="0" * 64,
                settings=(("relevance_level", 1), ("top_k", 1000)), metrics={METRIC: float(value.mean())},
                query_ids=tuple(f"q{i}" for i in range(QUERIES)), per_query={METRIC: value}, has_run=False,
                verified=True, provenance=Provenance("test", "irboard evaluate", "2026-01-01T00:00:00Z", "", (),
                                                     None, None),
                verified_metrics=frozenset({METRIC}), holes=holes))
    return out


def board(lift: float = 0.3, lookup=lookup):
    from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard

    return build_leaderboard(loaded_results(lift), SiteSettings(), lookup)
