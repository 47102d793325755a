# Two entry points for a fresh clone: `make site` (build the leaderboard) and `make test` (the whole suite).
# Each bootstraps its own virtual environment in .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: site test serve lint golden clean schema

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# Building the site needs no torch: only the core dependencies.
$(VENV)/.core: pyproject.toml | $(VENV)/bin/python
	$(PIP) -e .
	touch $@

# torch is pinned first so that no CUDA build is pulled in by the model extras.
$(VENV)/.test: pyproject.toml | $(VENV)/bin/python
	$(PIP) torch==2.13.0
	$(PIP) -e '.[test]'
	touch $@ $(VENV)/.core

site: $(VENV)/.core
	$(VENV)/bin/irboard validate
	$(VENV)/bin/irboard build --strict --results results --out _site

serve: site
	$(VENV)/bin/irboard serve --out _site

test: $(VENV)/.test
	$(PY) -m pytest

lint: $(VENV)/.test
	$(VENV)/bin/ruff check evaluator leaderboard tests benchmarks

golden: $(VENV)/.test
	$(PY) -m tests.data.make_golden

clean:
	rm -rf $(VENV) _site test-output

schema: $(VENV)/.core
	$(PY) -c "from evaluator.result import schema_json; open('results/schema.json', 'w').write(schema_json())"
