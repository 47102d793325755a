"""Errors a user can fix. The CLI prints their message on one line and exits 1; anything else is a bug."""

import difflib
import re
from collections.abc import Iterable, Sequence


class IrboardError(Exception):
    """Base class: the message names the file, field or line, the problem and the fix."""


class UnknownNameError(IrboardError, ValueError):
    """A metric, dataset, model or option name that is not registered."""


class InputFormatError(IrboardError, ValueError):
    """A malformed run, qrels, corpus or queries file."""


class ResultValidationError(IrboardError, ValueError):
    """A result file that does not follow the schema or its invariants."""


class DatasetLoadError(IrboardError):
    """A dataset that cannot be downloaded, verified or read."""


class DownloadMismatchError(DatasetLoadError):
    """A download that is not the file it was addressed as: another sha256, or more bytes than announced."""


class ModelLoadError(IrboardError):
    """A model that cannot be loaded or configured."""


class OutputExistsError(IrboardError):
    """An output file exists and --force was not given."""


# Characters that end a line for a terminal or for str.splitlines(), and other control characters.
_LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(message: str) -> str:
    """A message as one printable line: control characters and line breaks from the input are shown escaped
    (a field named "a\\nb" prints as a\\nb), so every problem stays one line."""
    return _LINE_BREAKING.sub(lambda match: repr(match[0])[1:-1], message)


def closest_names(name: str, choices: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """Up to `n` of `choices` spelled most like `name` (difflib's ratio of at least `cutoff`), closest first."""
    return difflib.get_close_matches(name, list(choices), n=n, cutoff=cutoff)


def did_you_mean(suggestions: Sequence[str]) -> str:
    """The hint that ends an unknown-name message: " Did you mean 'x'?" ('x' or 'y' for two), "" for none."""
    return f" Did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""


# The optional extras (pyproject.toml) and the top-level modules each brings.
EXTRA_OF_MODULE = {"torch": "models", "transformers": "models", "sentence_transformers": "models",
                   "Stemmer": "models", "tokenizers": "models", "safetensors": "models",
                   "huggingface_hub": "datasets", "faiss": "faiss", "pandas": "dataframes", "ray": "ray"}


class MissingExtraError(IrboardError):
    """An optional dependency is not installed: one line naming the extra that brings it."""


def missing_extra(error: ImportError) -> MissingExtraError | None:
    """The one-line error for an import of a module an extra brings (None for any other module: a bug)."""
    top = (getattr(error, "name", None) or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(top)
    if extra is None:
        return None
    return MissingExtraError(f"this needs the Python module {top!r}, which the '{extra}' extra installs: "
                             f"pip install 'irboard[{extra}]' (from a clone: pip install -e '.[{extra}]')")

