"""`irboard compare`: the current best is the best verified result, as on the site."""

import shutil
from pathlib import Path

from evaluator.result import dump_result, expand_result, parse_result, read_result
from leaderboard.cli import main
from tests.conftest import SHARED

RESULTS = Path(__file__).resolve().parents[3] / "results"
MODELS = ("bm25", "splade-tiny", "sentence-transformers__all-minilm-l6-v2")


def _board(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    for model in MODELS:
        (root / model).mkdir(parents=True)
        shutil.copy(RESULTS / model / "beir__scifact.json", root / model / "beir__scifact.json")
    return root


def _without_ranking(source: Path, target: Path, model_id: str, boost: float) -> None:
    """`source` as another model's result with no stored ranking (so never verified) and every nDCG@10 value
    raised by `boost`: the best mean on the board, but unverifiable."""
    data = expand_result(read_result(source))
    data.pop("run")
    data.pop("score_samples", None)
    data["model"]["id"] = model_id
    values = data["per_query"]["nDCG@10"]
    data["per_query"]["nDCG@10"] = {query: min(1.0, value + boost) for query, value in values.items()}
    data["metrics"]["nDCG@10"] = sum(data["per_query"]["nDCG@10"].values()) / len(values)
    target.parent.mkdir(parents=True)
    target.write_text(dump_result(parse_result(data)))


def _best_cell(markdown: str, model: str) -> str:
    row = next(line for line in markdown.splitlines() if line.startswith(f"| {model} |"))
    return row.split(" | ")[5]


def test_the_current_best_is_the_best_verified_result(tmp_path, capsys):
    root = _board(tmp_path)
    _without_ranking(root / "splade-tiny" / "beir__scifact.json", root / "org__unranked" / "beir__scifact.json",
                     "org/unranked", 0.3)
    new = root / "bm25" / "beir__scifact.json"
    data = ["--data-dir", str(SHARED / "data")]
    assert main(["compare", "--results", str(root), str(new), *data]) == 0
    verified_best = max((read_result(root / m / "beir__scifact.json") for m in MODELS if m != "bm25"),
                        key=lambda r: r.metrics["nDCG@10"])
    cell = _best_cell(capsys.readouterr().out, "bm25")
    assert f"vs {verified_best.model.id} " in cell and "org/unranked" not in cell

    # without judgments nothing is verified, so there is no current best to compare with
    assert main(["compare", "--results", str(root), str(new), "--data-dir", f"beir/scifact={tmp_path / 'none'}"]) == 0
