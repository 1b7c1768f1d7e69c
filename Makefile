# Every target creates .venv and installs the project into it when needed,
# so a fresh machine with Python 3.11+ and make needs no other step.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-faults lint typecheck unit bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/agentladder demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy src benchmarks

# pytest exits 5 when it collects no test; make treats that as a failure.
# The dashboard's tests drive Debian's chromium: installed here as root (.ci/chromium).
# One pytest-xdist worker per CPU and one more (much of a test's time is spent waiting on
# the servers and processes it starts); a test file's tests stay on one worker, so the
# servers and browser its module starts are started once (docs/development.md).
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
unit: $(STAMP)
	@.ci/chromium
	$(BIN)/pytest -n $(WORKERS) --dist loadfile

test: lint typecheck unit

# The long fault-injection runs (killed services, a cluster losing a node, hostile input
# for minutes, 500 deliberations with broken agents): see docs/reliability.md.
test-faults: $(STAMP)
	$(BIN)/pytest -m faults

bench: $(STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build dist
