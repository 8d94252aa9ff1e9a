# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/arrivalbench: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all,dev]'
	touch $@

.PHONY: run test lint gate gate-postgres
run: $(BIN)/arrivalbench  ## grade the built-in corpus with the built-in arms
	$(BIN)/arrivalbench run

lint: $(BIN)/arrivalbench
	$(BIN)/ruff check src tests tools benchmarks
	$(BIN)/mypy

# The suite runs on one pytest-xdist worker per core (at most 4: many tests start pools, servers
# or Ray of their own), a test file per worker so that a file's fixtures are made once. The
# two-node Ray test runs in a pytest process of its own: Ray holds one driver per process, and a
# driver that joined a local Ray earlier in the suite does not own objects in the cluster.
test: lint  ## lint, type-check and run the test suite, with branch coverage
	$(BIN)/pytest -m "not cluster" --numprocesses auto --maxprocesses 4 --dist loadfile \
		--cov=arrivalbench --cov-branch --cov-report=term
	$(BIN)/pytest -m cluster

# The whole corpus through the admissibility gate: the longest single check, so a step of its
# own (CI runs it) rather than a test that would dominate `make test`.
gate: $(BIN)/arrivalbench  ## every built-in task passes the admissibility gate
	$(BIN)/arrivalbench gate

# The same gate with every task's PostgreSQL pipelines, on a real server the harness starts.
gate-postgres: $(BIN)/arrivalbench  ## every built-in task passes the gate on PostgreSQL too
	$(BIN)/arrivalbench gate --engine postgres
