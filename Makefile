# Two commands do everything on a fresh machine (see README):
#   make serve  — the HTTP API on HOST:PORT [127.0.0.1:8000], docs at /schema;
#                 embedded SQLite (SQLITE_PATH), DATABASE_URL switches to PostgreSQL
#   make test   — the whole test suite: ruff, mypy --strict, lint-imports, vulture beside pytest
# Also: make simulate ARGS="--rounds 1000" (the round simulator), make bench-rules,
# make bench-core, make bench-api, make bench-resilience, make bench-load,
# make bench-capacity, make bench-bots, make bench-export, make bench-pgstore, make bench-ceiling,
# make bench-fairplay, make bench-frames, make bench-fanout, make bench-reads, make bench-talk,
# make bench-tournament, make bench-duplicate, make bench-presence, make bench-bounded.
PYTHON ?= python3
# Python caches compiled modules (__pycache__, and pytest's rewritten tests beside them);
# an environment that says PYTHONDONTWRITEBYTECODE would have every test worker and every
# server a test starts compile the whole code again.
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: bench-ratings bench-api bench-http bench-fanout bench-bots bench-bounded bench-capacity bench-export bench-frames bench-reads bench-core bench-fairplay bench-load bench-pgstore bench-ceiling bench-resilience bench-tournament bench-duplicate bench-presence bench-talk run simulate serve test warm contract lint typecheck imports deadcode pytest bench-rules clean

# make serve's defaults; the environment or `make serve PORT=9000` overrides them.
HOST ?= 127.0.0.1
PORT ?= 8000

# The virtualenv: pip installs uv (pinned), uv installs the project and its dev extras
# (the same packages pip would pick, resolved and installed in parallel: ~10 s, not ~40).
# The venv gets no pip of its own (installing it is ~4 CPU-s and ~5-10 s before anything
# else can start): the interpreter's pip installs uv into it, as the Dockerfile does; a
# Python without pip falls back to the venv's own (ensurepip). docs/decisions.md D-suite2.
UV_VERSION := 0.13.9

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install --quiet 'uv==$(UV_VERSION)' || \
		{ $(BIN)/python -m ensurepip --default-pip && \
		  $(BIN)/python -m pip install --quiet 'uv==$(UV_VERSION)'; }
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[dev]'
	touch $(STAMP)

run: serve

simulate: $(STAMP)
	$(BIN)/python -m infra.cli simulate $(ARGS)

serve: $(STAMP)
	HOST='$(HOST)' PORT='$(PORT)' $(BIN)/python -m infra.serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy's cache outlives a clone, beside the tests' tool cache (MYPY_SHARED_CACHE; empty: off):
# a clone without a cache of its own starts from the last one any clone on the machine
# published, and mypy checks again only the modules whose source (by hash) or dependencies
# changed — a fresh clone's check ~1 CPU-s instead of ~24. A run publishes its cache whole,
# under a lock (docs/decisions.md D-suite2).
MYPY_SHARED_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/shengji-tests/mypy

typecheck: $(STAMP)
ifneq ($(MYPY_SHARED_CACHE),)
	@mkdir -p '$(MYPY_SHARED_CACHE)'
	@test -d .mypy_cache || ! test -d '$(MYPY_SHARED_CACHE)/cache' || \
		flock '$(MYPY_SHARED_CACHE)/lock' cp -a '$(MYPY_SHARED_CACHE)/cache' .mypy_cache
	$(BIN)/mypy
	@flock '$(MYPY_SHARED_CACHE)/lock' sh -c 'rm -rf "$$1/new" && cp -a .mypy_cache "$$1/new" && \
		rm -rf "$$1/cache" && mv "$$1/new" "$$1/cache"' - '$(MYPY_SHARED_CACHE)'
else
	$(BIN)/mypy
endif

imports: $(STAMP)
	$(BIN)/lint-imports

# Dead code in domain/ services/ api/ infra/ bench/ scripts/ ([tool.vulture] in pyproject.toml;
# reviewed false positives in scripts/vulture_whitelist.py).
deadcode: $(STAMP)
	$(BIN)/vulture

# The tests run on PYTEST_WORKERS processes (pytest-xdist; 0 = in this process) in a random
# order whose seed is printed at the start and the end; replay an order with
# `make pytest PYTEST_WORKERS=0 PYTEST_ARGS=--randomly-seed=N` (docs/testing.md).
# HYPOTHESIS_PROFILE=dev runs a fifth of the property tests' examples (default: ci).
# Two workers a core (CORES: the machine's): a test waits about as long as it computes (a
# server starting, a stream, PostgreSQL), and a core's second worker computes meanwhile;
# one a core left a quiet 2-core machine half idle (docs/testing.md, "Time").
CORES := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
PYTEST_WORKERS ?= $(shell echo $$((2 * $(CORES))))
PYTEST_ARGS ?=

# In a fresh clone no test module is rewritten for pytest's asserts yet (tests/__pycache__):
# one collection first rewrites them, rather than every worker at once (~6 s of CPU each).
# It builds the schemathesis cases of one operation, not all (~4.5 CPU-s less, on the path
# before the workers start: docs/decisions.md D-suite2).
warm: $(STAMP)
	@test -d tests/__pycache__ || SCHEMATHESIS_PATH_REGEX='^/v1/rules/\{number\}$$' \
		$(BIN)/python -m pytest -q --collect-only -p no:randomly -p no:tests.run_guard > /dev/null

pytest: warm
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The contract module (schemathesis over every operation) builds the cases of all 152
# operations when it is collected, ~7 CPU-s in every process that collects it: `make test`
# runs it in a session of its own beside the workers, which leave it out (docs/decisions.md
# D-suite4, "the contract's own session"). `make pytest` still runs it with the rest.
CONTRACT := tests/api/test_schemathesis.py
contract: warm
	$(BIN)/python -m pytest -q $(CONTRACT)

# The static checks (ruff, mypy --strict, lint-imports, vulture: ~25 s, mostly mypy on one
# core) run beside pytest rather than before it; each check's output is printed whole when
# it ends, pytest's as it runs, the contract session's after pytest's. The run fails when
# any of them fails (every check runs). PYTEST_ARGS go to the workers' session.
test: $(STAMP)
	@$(MAKE) --no-print-directory -k -j4 --output-sync=target lint typecheck imports deadcode & \
	checks=$$!; \
	$(MAKE) --no-print-directory warm; \
	log=$$(mktemp); $(MAKE) --no-print-directory contract > $$log 2>&1 & contract=$$!; \
	$(MAKE) --no-print-directory pytest PYTEST_ARGS='--ignore=$(CONTRACT) $(PYTEST_ARGS)'; tests=$$?; \
	wait $$contract; contracted=$$?; cat $$log; rm -f $$log; \
	wait $$checks; checked=$$?; \
	if [ $$contracted -ne 0 ]; then echo "make test: the contract session failed (above)"; fi; \
	if [ $$checked -ne 0 ]; then echo "make test: a static check failed (above)"; fi; \
	test $$tests -eq 0 -a $$contracted -eq 0 -a $$checked -eq 0

# Ratings: an update per finished match, boards with 1,000 and 100,000 players, a rebuild;
# the last line is "ratings update_ms=… board_small_ms=… board_large_ms=… ratio=… rebuild_matches_per_s=…".
bench-ratings: $(STAMP)
	$(BIN)/python -m bench.ratings_bench $(ARGS)

# Presence (docs/decisions.md D-social): the server's idle CPU with N player streams open
# against a baseline without, and the p50/p99 delay of a friend's presence change;
# the last line of each N is "presence players=… per_player_us_per_s=… ratio=… p50_ms=… p99_ms=…".
bench-presence: $(STAMP)
	$(BIN)/python -m bench.presence_bench $(ARGS)

bench-rules: $(STAMP)
	$(BIN)/python -m bench.rules_bench $(ARGS)

bench-core: $(STAMP)
	$(BIN)/python -m bench.core_bench $(ARGS)

bench-api: $(STAMP)
	$(BIN)/python -m bench.api_bench $(ARGS)

bench-http: $(STAMP)
	$(BIN)/python -m bench.http_bench $(ARGS)

# A command's fan-out in process (docs/decisions.md D-fan): the loop's CPU per version from
# the save to the five streams' frames, body chunks and Python calls per version; the last
# line is "fanout us_per_version=<f> chunks_per_version=<f> calls_per_version=<f> ...".
bench-fanout: $(STAMP)
	$(BIN)/python -m bench.fanout_bench $(ARGS)

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

# Matches in play on one API process beside a worker process on a durable throwaway
# PostgreSQL (seat clients with think times, live streams), then on two API processes and
# one worker (--replicas 2); the last lines are "capacity matches=<n> cmd_p99_ms=<f>
# push_p99_ms=<f> server_cpu_ms_per_cmd=<f> worker_cpu_ms_per_cmd=<f> pg_cpu_ms_per_cmd=<f>
# hello_cpu_ms=<f> cmd_cost_x=<f> lost=<n>" and "capacity-replicas ..." alike.
bench-capacity: $(STAMP)
	$(BIN)/python -m bench.capacity_bench $(ARGS)
	$(BIN)/python -m bench.capacity_bench --replicas 2 $(ARGS)

# Archive: bulk export rate and peak memory, the feed from 0 to the end, the Parquet dump
# (last line "parquet matches=<n> parquet_rows_per_s=<f> parquet_bytes_per_match=<f> ...").
bench-export: $(STAMP)
	$(BIN)/python -m bench.export_bench $(ARGS)

# The lists (matches, a player's matches, tournaments) with 200 and 20,000 matches in the
# store; the last line is "reads small_p50_ms=<f> large_p50_ms=<f> ratio=<f>".
bench-reads: $(STAMP)
	$(BIN)/python -m bench.reads_bench $(ARGS)

# PostgreSQL saves and loads: the library's own transaction against the locking insert
# function (docs/decisions.md D-pgstore); the narrow fetch against the library's.
bench-pgstore: $(STAMP)
	$(BIN)/python -m bench.pgstore_bench $(ARGS)

# The database's ceiling: the event table's lock on a durable throwaway cluster, 1-16 writers
# saving what a play command saves (~2 minutes); the last line is "pgstore-ceiling
# writers=1,2,4,8,16 saves_per_s=... ratio_to_1=... hold_ms_p50=... hold_ms_p99=...
# wait_ms_p99=... lock_busy=... nolock_saves_per_s=... flush_ms=... model_saves_per_s=...
# model_wait_p99_ms=150 load=<start>-<end>": saves/s at which an M/G/1 model of the lock,
# fed by one writer's holds, waits 150 ms at p99 (docs/scaling.md, docs/decisions.md D-ceiling).
bench-ceiling: $(STAMP)
	$(BIN)/python -m bench.pgstore_bench --ceiling $(ARGS)

# Fair play as an attacker sees it, on a served instance: rate with token rotation, quick
# play against the match quota, the 9th stream of every kind, revocation latency, malformed
# OIDC tokens, internal webhook URLs, idle CPU with N lobbies, player streams resuming
# from 0 (ARGS="--lobbies 1000 --resumes 100").
bench-fairplay: $(STAMP)
	$(BIN)/python -m bench.fairplay_bench $(ARGS)

# A live stream's bytes on the wire for one round (whole, gzip, patch frames, both) and the
# CPU of a patch frame against a whole one; the last line is "frames seat_raw_kb=<f> ...
# seat_patch_gzip_kb=<f> ... patch_cpu_ratio=<f> patch_gzip_cpu_ratio=<f>".
bench-frames: $(STAMP)
	$(BIN)/python -m bench.frames_bench $(ARGS)

# Table talk (docs/decisions.md D-talk): a quick-chat message against a move, the talk's
# part of state?version= and a talk page, on the embedded store.
bench-talk: $(STAMP)
	$(BIN)/python -m bench.talk_bench $(ARGS)

# A tournament round scheduled in one save against a save per table and seat, and the
# results policy's rate (last line "tournament-bench tables=<n> ... ratio=<f> results_per_s=<f>").
bench-tournament: $(STAMP)
	$(BIN)/python -m bench.tournament_bench $(ARGS)

# What a boards event's ranking by matchpoints and its travellers cost a read
# (docs/decisions.md D-duplicate-evening).
bench-duplicate: $(STAMP)
	$(BIN)/python -m bench.duplicate_bench $(ARGS)

# What one anonymous client may cost a served instance (docs/decisions.md D-bounded): the
# matches it made against its quota, another person's bots beside a 64-team tournament of
# strong bots, a plain GET beside 24 exports, display streams past the cap (~90 s); the last
# line is "bounded created=<n> quota=<n> other_bot_p99_ms=<f> export_get_p99_ms=<f>
# display_over_cap=<n>".
bench-bounded: $(STAMP)
	$(BIN)/python -m bench.bounded_bench $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
