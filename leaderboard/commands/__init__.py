"""The `irboard` command line, one module per command: each has `add_arguments(parser)` and `run(args)`.

Only this package and `leaderboard/cli.py` parse arguments, print and choose exit codes; the library functions
they call take typed keyword arguments. Each module imports the library it calls inside `run`, so that building
the parser loads nothing heavy.
"""
