"""Errors a user can fix. The CLI prints their message on one line and exits 1; anything else is a bug."""


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


class ModelLoadError(IrboardError):
    """A model that cannot be loaded or configured."""


class OutputExistsError(IrboardError):
    """An output file exists and --force was not given."""
