# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/arrivalbench: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all]'
	# Apart: dbt-core 1.10 declares pathspec<0.13 and mypy needs pathspec>=1, so one resolve of
	# both fails. dbt runs with pathspec 1 (the test suite grades dbt projects with it); pip
	# only warns about the declaration here.
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

.PHONY: run test lint
run: $(BIN)/arrivalbench  ## grade the built-in corpus with the built-in arms
	$(BIN)/arrivalbench run

lint: $(BIN)/arrivalbench
	$(BIN)/ruff check src tests tools benchmarks
	$(BIN)/mypy

test: lint  ## lint, type-check and run the test suite
	$(BIN)/pytest
