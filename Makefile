# Two commands do everything on a fresh machine (see README):
#   make run    — the main job (for now: the round simulator)
#   make test   — the whole test suite: ruff, mypy --strict, lint-imports, pytest
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run simulate test lint typecheck imports pytest bench-rules clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: simulate

simulate: $(STAMP)
	$(BIN)/python -m infra.cli simulate $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

pytest: $(STAMP)
	$(BIN)/python -m pytest -q

test: lint typecheck imports pytest

bench-rules: $(STAMP)
	$(BIN)/python -m bench.rules_bench $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
