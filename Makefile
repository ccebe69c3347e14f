# One command each, on a fresh machine with Python >= 3.11 and the package registries:
#   make run    - the main job: the metric-validation study on the default corpus (WebNLG+ 2020)
#   make test   - the whole test suite (what CI runs)
# Both create .venv if missing and install the project into it.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
OUT ?= reports/webnlg2020
# Use the shared read-only corpora when they sit next to the checkout (no download needed).
ifneq ($(wildcard ../shared/corpora),)
export NLGEVAL_DATA ?= $(abspath ../shared/corpora)
endif

.PHONY: run test install system-deps lint bench clean docs notebooks

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

# Debian packages the browser and PostgreSQL tests use (skipped, with a notice, when not root).
system-deps:
	@bash scripts/system-deps.sh

run: $(VENV)/.installed
	$(VENV)/bin/nlgeval validate webnlg2020 --out $(OUT)

test: $(VENV)/.installed system-deps docs
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/ruff check nlgeval tests benchmarks experiments
	$(VENV)/bin/vulture nlgeval --min-confidence 80
	$(VENV)/bin/mypy nlgeval
	$(PY) -m pytest -q -p no:cacheprovider

# The docs site (docs/ + notebooks/, API reference from the docstrings), warnings as errors.
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check nlgeval tests benchmarks experiments
	$(VENV)/bin/vulture nlgeval --min-confidence 80

notebooks: $(VENV)/.installed
	$(PY) -m pytest -q -p no:cacheprovider tests/test_notebooks.py tests/test_notebook_validate.py

bench: $(VENV)/.installed
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) reports .pytest_cache site
