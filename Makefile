# The two commands a newcomer needs: `make demo` and `make test`. Both set up .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
READY := $(VENV)/.ready

.PHONY: demo test lint build clean

$(READY): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(READY)

demo: $(READY)
	$(BIN)/python -m autograder grade examples/submissions --out demo-out

lint: $(READY)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pre-commit run --all-files --show-diff-on-failure

test: lint
	$(BIN)/python -m pytest

build: $(READY)
	$(BIN)/python -m autograder build

clean:
	rm -rf $(VENV) demo-out .pytest_cache .ruff_cache
