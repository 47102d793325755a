"""What a result's model block leaves unstated, and the `irboard evaluate` flags that state it.

Nothing undeclared is stored as a fact: an absent licence, parameter count, weights status or training data is
"not stated" on every page, and filters treat it as unknown. `evaluate` and `validate` list what is missing.
"""

from __future__ import annotations

# field of the model block -> the flag that states it (with an example value)
FLAGS = {
    "parameters": "--parameters 110M",
    "license": "--license apache-2.0",
    "open_weights": "--open-weights (or --closed-weights)",
    "training_datasets": "--training-datasets msmarco,nq (or --training-datasets none)",
    "url": "--model-url https://…",
}


def unstated(model) -> list[str]:
    """The fields of `model` (a result's ModelBlock) that are not stated, in FLAGS order; a lexical model (BM25)
    has no weights, so no parameter count, licence or address is missing from it."""
    lexical = model.type == "lexical"
    return [name for name in FLAGS if getattr(model, name) in (None, "")
            and not (lexical and name in ("parameters", "license", "url"))]


def missing_note(model) -> str | None:
    """One line naming what is not stated and the flags to state it, or None when everything is stated."""
    missing = unstated(model)
    if not missing:
        return None
    return (f"not stated: {', '.join(f'model.{name}' for name in missing)} (shown as 'not stated'; zero-shot and "
            f"open-weights filters leave the model out); state them with `irboard evaluate … "
            f"{' '.join(FLAGS[name].split(' (')[0] for name in missing)}`")
