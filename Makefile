# The two commands README.md gives: `make demo` and `make test`.
# Each creates the virtualenv it needs (.venv) and installs into it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml setup.py | cksum | cut -d' ' -f1)

.PHONY: demo test lint typecheck check serve clean

$(STAMP):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(BIN)/corral demo

serve: $(STAMP)
	$(BIN)/corral serve

# The whole suite: lint, types, then every test (unit, integration, e2e).
test: lint typecheck
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy reads the folders as the installed `corral` package through a link
# tree, because setuptools maps them (`corral.pipeline` = `pipeline/`, and
# `corral` itself, the front door, = `actors/front-door/`).
typecheck: $(STAMP)
	rm -rf build/typecheck && mkdir -p build/typecheck/corral
	for d in pipeline actors sources sinks; do ln -s ../../../$$d build/typecheck/corral/$$d; done
	for f in __init__.py py.typed; do ln -s ../../../actors/front-door/$$f build/typecheck/corral/$$f; done
	cd build/typecheck && ../../$(BIN)/mypy --config-file ../../pyproject.toml -p corral

check: lint typecheck test

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache
