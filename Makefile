# The two commands a fresh machine needs: `make test` and `make demo`. Both create .venv when it is
# missing and install agcore with its dev extra from this repository's own files.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: test demo lint typecheck layers docs pytest bench clean e2e-local

# The packages the tests install as a user would (an Agent subclass and an entry-point plugin each):
# tests/downstream_pkg and the example examples/agcore_example_pkg. They go to their own directory,
# which only the test run puts on sys.path (tests/conftest.py), so their plugins never load into the
# `agcore` runs of the development environment. (Older .venvs had them installed: they are taken out.)
TEST_PACKAGES := tests/downstream_pkg examples/agcore_example_pkg
TEST_SITE := $(VENV)/test-site

# The Makefile is a prerequisite too: a changed recipe (what gets installed where) redoes the set-up.
$(STAMP): Makefile pyproject.toml $(TEST_PACKAGES:=/pyproject.toml)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	-$(PY) -m pip uninstall --quiet --yes agcore-downstream-example agcore-example 2>/dev/null
	rm -rf $(TEST_SITE)
	$(PY) -m pip install --quiet --no-deps --no-compile --target $(TEST_SITE) $(TEST_PACKAGES)
	touch $(STAMP)

test: $(STAMP) lint typecheck layers docs pytest

lint: $(STAMP)
	$(PY) -m ruff check agcore tests bench examples

typecheck: $(STAMP)
	$(PY) -m mypy

layers: $(STAMP)
	$(VENV)/bin/lint-imports

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet --site-dir $(VENV)/site

pytest: $(STAMP)
	$(PY) -m pytest -q

demo: $(STAMP)
	$(PY) examples/demo.py
	$(PY) examples/durable_demo.py

bench: $(STAMP)
	$(PY) bench/llm_overhead.py
	$(PY) bench/responses_overhead.py

# Opt-in: a dozen real tasks against a small local model on llama-server (docs/local-models-e2e.md).
# Skips unless AGCORE_E2E_GGUF names a GGUF file; builds llama-server once (cached in ~/.cache/agcore-e2e).
e2e-local: $(STAMP)
	@if [ -f "$$AGCORE_E2E_GGUF" ]; then $(PY) -m tests.e2e_local.llama_server build; \
	else echo "e2e-local: AGCORE_E2E_GGUF is not set to a GGUF file: the suite skips"; fi
	$(PY) -m pytest tests/e2e_local/test_e2e_local.py -v -rfs

clean:
	rm -rf $(VENV) build dist site .mypy_cache .ruff_cache
