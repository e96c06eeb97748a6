# Memoir: `make demo` runs the main job, `make test` runs the tests. Both set everything up first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# docker-compose (Debian's 1.29.2, unpacked into the venv): `make test` validates docker-compose.yml.
COMPOSE := $(BIN)/docker-compose
# Debian's chromium: tests/browser drive it with Playwright (never `playwright install`).
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test dev install lint typecheck histories replay bench-memory bench-turns bench-hitl bench-load \
	eval-recall eval-triage triage-model clean chromium

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	# The CPU build of torch first: a plain `torch` would pull gigabytes of CUDA packages.
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

$(COMPOSE): deploy/install-compose.sh | $(STAMP)
	sh deploy/install-compose.sh $(VENV)

install: $(STAMP) $(COMPOSE)

# Installs Debian's chromium when neither MEMOIR_CHROMIUM nor /usr/bin/chromium is there.
chromium:
	@command -v "$${MEMOIR_CHROMIUM:-$(CHROMIUM)}" >/dev/null || { \
	  echo "tests/browser drive Debian's chromium, which is missing: apt-get install -y chromium"; \
	  $(SUDO) apt-get install -y chromium \
	  || { $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; } \
	  || { echo "Could not install chromium: install Debian's chromium package" \
	       "(apt-get install -y chromium) or set MEMOIR_CHROMIUM to a chromium binary." >&2; \
	       exit 1; }; }

demo: $(STAMP)
	$(BIN)/memoir demo

dev: $(STAMP)
	$(BIN)/memoir dev

test: $(STAMP) $(COMPOSE) chromium
	$(BIN)/memoir doctor
	$(BIN)/ruff check .
	$(BIN)/mypy memoir workflows activities api temporal
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy memoir workflows activities api temporal

histories: $(STAMP)
	$(BIN)/memoir replay --regenerate

replay: $(STAMP)
	$(BIN)/memoir replay

# Memory retrieval: PgVectorStore latency and HNSW recall@10 at 10k and 100k vectors, then message
# records: one user's 10k, and one user among 1M rows of 1,000 users (about 10 minutes in all).
bench-memory: $(STAMP)
	$(BIN)/python bench/memory_bench.py
	$(BIN)/python bench/records_bench.py

# Turns through the real API and pipeline (sequential, 8 and 16 in flight) beside the same stages
# as a LangGraph graph over PostgresSaver; results in bench/results/turns.{json,md,png} (~5 minutes).
bench-turns: $(STAMP)
	$(BIN)/memoir bench turns

# From a person's answer (inbox, chat) to the turn's next activity; bench/results/hitl.{json,md}.
bench-hitl: $(STAMP)
	$(BIN)/memoir bench hitl

# 500 turns from 50 users on 100 threads sent at once through the HTTP API: wall time, p50/p95,
# 5xx, rows per message id; bench/results/load.json (a few minutes).
bench-load: $(STAMP)
	$(BIN)/memoir bench load

# Evidence recall@k of the memory path on the bundled long conversations, against a naive baseline.
eval-recall: $(STAMP)
	$(BIN)/memoir eval recall memoir/data/recall_eval

# Triage accuracy before / after two simulated people's answers to notify questions (bundled set).
eval-triage: $(STAMP)
	$(BIN)/memoir eval triage memoir/data/triage_eval.json

# Refit the offline triage model on the labelled emails (after editing them or the triage table).
triage-model: $(STAMP)
	$(BIN)/python -c "from memoir.llm.offline_triage import save_model; save_model()"

clean:
	rm -rf $(VENV) .memoir .pytest_cache .mypy_cache .ruff_cache

# Issue 13 evidence: the Temporal Web UI showing a turn's payload decoded through Memoir's codec
# server, in headless Debian chromium (installed with apt-get when missing); the screenshots are
# .memoir/test-output/security/webui-{encoded,decoded}.png (without, then with the codec login),
# copied to docs/.
.PHONY: webui-screenshot
webui-screenshot: $(STAMP)
	test -x /usr/bin/chromium || apt-get install -y chromium
	$(BIN)/pytest -q tests/security/test_webui_decoded.py
	cp .memoir/test-output/security/webui-encoded.png .memoir/test-output/security/webui-decoded.png docs/
