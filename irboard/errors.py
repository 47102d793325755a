"""Errors a library user can catch. Every one is an `IrboardError` whose message names the file, field or line,
the problem and the fix (the command line prints it on one line and exits 1)."""

from evaluator.errors import (
    DatasetLoadError,
    DownloadMismatchError,
    InputFormatError,
    IrboardError,
    ModelLoadError,
    OutputExistsError,
    ResultValidationError,
    UnknownNameError,
)

__all__ = ["DatasetLoadError", "DownloadMismatchError", "InputFormatError", "IrboardError", "ModelLoadError",
           "OutputExistsError", "ResultValidationError", "UnknownNameError"]
