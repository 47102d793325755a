"""irboard evaluator: turns (model, dataset) or a run file into a result file."""

__version__ = "0.1.0"
