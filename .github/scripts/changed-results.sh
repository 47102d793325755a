#!/usr/bin/env bash
# Prints the result files (results/**/*.json, not schema.json) added, modified or renamed since the merge base
# of HEAD with the revision given as $1, one per line.
set -euo pipefail
base=$(git merge-base "$1" HEAD)
git diff --name-only --diff-filter=AMR "$base" HEAD -- 'results/' \
  | grep -E '^results/.+\.json$' | grep -v '^results/schema\.json$' || true
