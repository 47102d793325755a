#!/usr/bin/env bash
# Lists what a pull request changes: changed-results.sh BASE PR_CHECKOUT OUT_DIR
# Runs the irboard of the checkout this script belongs to (the base branch in CI) on the pull request's
# checkout, which is only read as data. Writes OUT_DIR/changed.nul (result files to validate, NUL-separated),
# OUT_DIR/counts.json and OUT_DIR/changes.md (see leaderboard/review/changes.py); exit 1 if something under results/
# is not a valid result file.
set -euo pipefail
tooling=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python=${IRBOARD_PYTHON:-$tooling/.venv/bin/python}
# -I: isolated mode, so nothing in the current folder or environment can shadow the tooling's own modules.
exec "$python" -I -m leaderboard.commands.changes --repo "$2" --base "$1" --out "$3"
