"""Parsing of model-spec options (`bm25:k1=0.9,b=0.4`): unknown keys and bad values raise one-line errors."""

from __future__ import annotations

from evaluator.errors import ModelLoadError, UnknownNameError, closest_names, did_you_mean

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", "none"}


def check_option_names(kind: str, options: dict[str, str], valid: tuple[str, ...]) -> None:
    """Reject keys the adapter does not know, with a "did you mean" from the valid ones."""
    for key in options:
        if key not in valid:
            hint = did_you_mean(closest_names(key, valid))
            raise UnknownNameError(f"model '{kind}': unknown option '{key}'; valid options: {', '.join(valid)}.{hint}")


def parse_bool(kind: str, key: str, value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    text = value.strip().lower()
    if text in _TRUE | _FALSE:
        return text in _TRUE
    raise ModelLoadError(f"model '{kind}': option {key}={value!r} is not a boolean; use true or false")


def bool_or_text(value: str) -> bool | str:
    """A boolean word as a bool, anything else (a name, a path) unchanged."""
    text = value.strip().lower()
    return text in _TRUE if text in _TRUE | _FALSE else value


def parse_number(kind: str, key: str, value: str | float, cast=float, minimum: float | None = None):
    """`cast(value)`, checked against `minimum` (inclusive)."""
    try:
        number = cast(value)
    except (TypeError, ValueError):
        raise ModelLoadError(
            f"model '{kind}': option {key}={value!r} is not {'an integer' if cast is int else 'a number'}"
        ) from None
    if minimum is not None and number < minimum:
        raise ModelLoadError(f"model '{kind}': option {key}={value!r} must be at least {minimum}")
    return number
