"""Packaging beyond pyproject.toml: templates/ and site/ stay at the top of the repository (see the architecture
doc) and are installed inside the leaderboard package, as leaderboard/templates and leaderboard/site, so that
`irboard build` works from a wheel (their package data is listed in pyproject.toml)."""

from setuptools import find_packages, setup

ASSETS = {"leaderboard.templates": "templates", "leaderboard.site": "site"}

setup(packages=find_packages(include=["evaluator*", "leaderboard*", "irboard*"]) + list(ASSETS), package_dir=ASSETS)
