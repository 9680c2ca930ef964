# Two commands do everything on a fresh machine (see README):
#   make serve  — the HTTP API on HOST:PORT [127.0.0.1:8000], docs at /schema;
#                 embedded SQLite (SQLITE_PATH), DATABASE_URL switches to PostgreSQL
#   make test   — the whole test suite: ruff, mypy --strict, lint-imports, vulture, pytest
# Also: make simulate ARGS="--rounds 1000" (the round simulator), make bench-rules,
# make bench-core, make bench-api, make bench-resilience, make bench-load,
# make bench-capacity, make bench-bots, make bench-export, make bench-pgstore.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: bench-api bench-bots bench-capacity bench-export bench-core bench-load bench-pgstore bench-resilience run simulate serve test lint typecheck imports deadcode pytest bench-rules clean

# make serve's defaults; the environment or `make serve PORT=9000` overrides them.
HOST ?= 127.0.0.1
PORT ?= 8000

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: serve

simulate: $(STAMP)
	$(BIN)/python -m infra.cli simulate $(ARGS)

serve: $(STAMP)
	HOST='$(HOST)' PORT='$(PORT)' $(BIN)/python -m infra.serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

# Dead code in domain/ services/ api/ infra/ bench/ scripts/ ([tool.vulture] in pyproject.toml;
# reviewed false positives in scripts/vulture_whitelist.py).
deadcode: $(STAMP)
	$(BIN)/vulture

pytest: $(STAMP)
	$(BIN)/python -m pytest -q

test: lint typecheck imports deadcode pytest

bench-rules: $(STAMP)
	$(BIN)/python -m bench.rules_bench $(ARGS)

bench-core: $(STAMP)
	$(BIN)/python -m bench.core_bench $(ARGS)

bench-api: $(STAMP)
	$(BIN)/python -m bench.api_bench $(ARGS)

# Kill -9, PostgreSQL restart and races on real processes; the last line is
# "resilience kills=<n> acked=<n> lost=<n> duplicated=<n> races=<n> double_wins=<n>".
bench-resilience: $(STAMP)
	$(BIN)/python -m bench.resilience_bench $(ARGS)

# Bot strength: duplicate deals between bot kinds, the strong bot's decision times and the
# training env's steps/s; the last line is "bots strong_vs_heuristic=<mean> ci_low=<lower 95%
# bound> heuristic_vs_random=<mean> strong_ms_p99=<ms>" (ARGS="--deals 500 --workers 2").
bench-bots: $(STAMP)
	$(BIN)/python -m bench.bots_bench $(ARGS)

# Concurrent bot matches on one process; figures for docs/scaling.md.
bench-load: $(STAMP)
	$(BIN)/python -m bench.load_bench $(ARGS)

# Matches in play on one server process on a durable throwaway PostgreSQL (seat clients
# with think times, live streams); the last line is "capacity matches=<n> cmd_p99_ms=<f>
# push_p99_ms=<f> server_cpu_ms_per_cmd=<f> hello_cpu_ms=<f> lost=<n>".
bench-capacity: $(STAMP)
	$(BIN)/python -m bench.capacity_bench $(ARGS)

# Archive: bulk export rate and peak memory, the feed from 0 to the end, the Parquet dump
# (last line "parquet matches=<n> parquet_rows_per_s=<f> parquet_bytes_per_match=<f> ...").
bench-export: $(STAMP)
	$(BIN)/python -m bench.export_bench $(ARGS)

# PostgreSQL saves and loads: the library's own transaction against the locking insert
# function (docs/decisions.md D-pgstore); the narrow fetch against the library's.
bench-pgstore: $(STAMP)
	$(BIN)/python -m bench.pgstore_bench $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
