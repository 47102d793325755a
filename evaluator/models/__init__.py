"""Model adapters, one module each; `load_model(spec)` parses a spec such as `bm25:k1=0.9,b=0.4`."""

from __future__ import annotations

import importlib

from evaluator.errors import UnknownNameError, closest_names, did_you_mean, missing_extra

# kind -> "module:factory"; factories take (argument, options dict) and import heavy libraries lazily.
_ADAPTERS = {
    "bm25": "evaluator.models.bm25:from_spec",
    "splade": "evaluator.models.splade:from_spec",
    "dense": "evaluator.models.dense:from_spec",
}


def parse_model_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """Split `kind[:argument][,key=value...]` into (kind, argument, options).

    `bm25:k1=0.9,b=0.4` -> ("bm25", "", {"k1": "0.9", "b": "0.4"});
    `splade:path/to/model,idf=true` -> ("splade", "path/to/model", {"idf": "true"}).
    """
    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in _ADAPTERS:
        hint = did_you_mean(closest_names(kind, _ADAPTERS))
        raise UnknownNameError(
            f"model spec '{spec}': unknown model kind '{kind}'; valid kinds: {', '.join(_ADAPTERS)}.{hint}"
        )
    argument, options = "", {}
    for part in [p for p in rest.split(",") if p.strip()]:
        if "=" in part:
            key, _, value = part.partition("=")
            options[key.strip()] = value.strip()
        elif not argument:
            argument = part.strip()
        else:
            raise UnknownNameError(f"model spec '{spec}': '{part}' is neither the model argument nor key=value")
    return kind, argument, options


def load_model(spec: str, **overrides: str):
    """Build the adapter for `spec`; `overrides` (from CLI flags) win over options in the spec."""
    kind, argument, options = parse_model_spec(spec)
    options.update({k: v for k, v in overrides.items() if v is not None})
    module_name, _, factory = _ADAPTERS[kind].partition(":")
    try:
        return getattr(importlib.import_module(module_name), factory)(argument, options)
    except ImportError as error:  # torch, PyStemmer, ...: the extra that brings them, in one line
        raise (missing_extra(error) or error) from None
