# `make run` and `make test` work on a fresh machine with only Python:
# they create .venv and install what they need on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test bench clean corpus

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	@if [ -f skills/diet.ost ]; then $(BIN)/ostinato run skills/diet.ost; \
	else $(BIN)/ostinato run examples/demo.ost; fi

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

corpus: $(STAMP)
	$(BIN)/python ../shared/tools/corpus_check.py --ostinato $(BIN)/ostinato ../shared/corpus

bench: $(STAMP)
	$(BIN)/python bench/compute.py
	$(BIN)/python bench/durable.py
	$(BIN)/python bench/llm.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
