# EnterpriseVal. The README's commands are targets here.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
export LITELLM_LOCAL_MODEL_COST_MAP := True

# Debian packages WeasyPrint needs (RECIPES.md), poppler-utils to look at PDFs, and Chromium
# for the browser tests (Playwright drives /usr/bin/chromium; it never downloads a browser);
# libboost-dev and g++ build confseq, the reference the sequential tests compare against.
APT_PACKAGES := libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core poppler-utils chromium iso-codes libboost-dev g++
POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/enterpriseval
PYTEST_WORKERS ?= 2

.PHONY: setup system-packages venv reference-venv migrate demo serve worker test static test-sqlite test-postgres test-validity test-slow bench bench-import bench-scorecard bench-pages bench-decisions bench-load docs-previews docs-screenshots lint format

setup: system-packages venv migrate

system-packages:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:" $$missing; \
	  sudo=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "Debian packages present."; fi

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip setuptools wheel
	$(PIP) install -q -e '.[test]'
	@touch $@

# confseq (Waudby-Smith and Ramdas's code), the independent implementation the betting
# confidence sequences are compared with, in its own environment: it needs numpy < 2 and builds
# its C++ core without build isolation (docs/statistics.md, "Grade until decided").
reference-venv: .venv-confseq/.installed

.venv-confseq/.installed: tests/reference/requirements-confseq.txt
	@test -x .venv-confseq/bin/python || $(PYTHON) -m venv .venv-confseq
	.venv-confseq/bin/pip install -q --upgrade pip setuptools wheel
	.venv-confseq/bin/pip install -q -r tests/reference/requirements-confseq.txt
	.venv-confseq/bin/pip install -q --no-build-isolation --no-deps confseq==0.0.11
	@touch $@

migrate: venv
	$(PY) manage.py migrate --noinput

demo: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo

# The web app on 127.0.0.1:8000 with a Celery worker beside it (filesystem broker by default).
serve: venv
	@$(PY) manage.py demo_logins
	@mkdir -p var && $(VENV)/bin/celery -A enterpriseval worker --beat --schedule var/celerybeat-schedule --loglevel=INFO --concurrency=2 & worker=$$!; \
	trap "kill $$worker 2>/dev/null" EXIT INT TERM; \
	$(PY) manage.py runserver 127.0.0.1:8000

# A worker with the beat scheduler inside (the daily review-date check of SPEC §7).
worker: venv
	@mkdir -p var
	$(VENV)/bin/celery -A enterpriseval worker --beat --schedule var/celerybeat-schedule --loglevel=INFO --concurrency=2

# The test command: static checks, the whole suite on SQLite and again on PostgreSQL, then the
# full validity grid of grading until decided (pure statistics: once, not per database).
test: static test-sqlite test-postgres test-validity

static: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

test-sqlite: venv reference-venv
	$(PY) -m pytest -n $(PYTEST_WORKERS) -m "not slow and not validity"

test-postgres: venv reference-venv
	DATABASE_URL=$(POSTGRES_URL) $(PY) -m pytest -n $(PYTEST_WORKERS) -m "not slow and not validity"

test-validity: venv
	$(PY) -m pytest -n $(PYTEST_WORKERS) -m validity

test-slow: venv reference-venv
	$(PY) -m pytest -m "slow or validity"

bench: venv .venv-inspect/.installed
	$(PY) -m bench.run
	$(PY) -m bench.cases_executor
	$(PY) -m bench.cases_runs
	$(PY) -m bench.cases_judge
	$(PY) -m bench.cases_import
	$(PY) -m bench.cases_import --database $(BENCH_IMPORT_DATABASE)
	$(PY) -m bench.cases_scorecard
	$(PY) -m bench.cases_pages --database-url $(BENCH_PAGES_DATABASE)
	$(PY) -m bench.cases_decisions
	$(PY) -m bench.cases_sequential

# inspect_ai, the executor benchmark's peer, lives in its own environment (it pins boto3).
.venv-inspect/.installed: bench/requirements-inspect.txt
	@test -x .venv-inspect/bin/python || $(PYTHON) -m venv .venv-inspect
	.venv-inspect/bin/pip install -q -r bench/requirements-inspect.txt
	@touch $@

# PNG previews of the first two pages of the demo's scorecard PDFs (run `make demo` first).
docs-previews:
	@for sigma in gemini-2-5 llama-4; do for page in 1 2; do \
	  pdftoppm -png -r 80 -f $$page -l $$page -singlefile out/credit_memo_$${sigma}_scorecard.pdf \
	    docs/scorecard-$${sigma}-page-$$page || exit 1; \
	done; done; ls docs/scorecard-*-page-*.png

# The README's screenshots, from the demo database in headless Chromium (run
# `ENTERPRISEVAL_DEMO_PASSWORD=... make demo` first, with the same password here).
SCREENSHOT_PORT ?= 8765
docs-screenshots: venv
	@test -n "$$ENTERPRISEVAL_DEMO_PASSWORD" || { echo "Set ENTERPRISEVAL_DEMO_PASSWORD to the value make demo ran with."; exit 2; }
	@mkdir -p var
	@$(PY) manage.py runserver --noreload 127.0.0.1:$(SCREENSHOT_PORT) >var/screenshots-server.log 2>&1 & server=$$!; \
	trap "kill $$server 2>/dev/null" EXIT INT TERM; \
	$(PY) docs/screenshots.py http://127.0.0.1:$(SCREENSHOT_PORT)

bench-scorecard: venv
	$(PY) -m bench.cases_scorecard

# The decision, comparison and scorecard pages, cold and warm, beside the pages with no cache.
BENCH_PAGES_DATABASE ?= postgres://postgres@127.0.0.1:5432/ev_bench_pages
bench-pages: venv
	$(PY) -m bench.cases_pages --database-url $(BENCH_PAGES_DATABASE)

# Recording a decision at 1,000, 2,000 and 10,000 outputs (the example tiled), beside reading
# the run's evidence once (a few minutes).
bench-decisions: venv
	$(PY) -m bench.cases_decisions

# 50 graders autosaving against gunicorn (production settings) on PostgreSQL, at one save per
# grader every 2 s and at saturation, for three gunicorn configurations (about 3 minutes; its own
# database, dropped at the end). LOAD_ARGS passes options: LOAD_ARGS="--pace-seconds 120".
LOAD_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/ev_load
bench-load: venv
	$(PY) -m bench.load_graders --database-url $(LOAD_DATABASE_URL) $(LOAD_ARGS)

# Output import (20,000 outputs) beside its floors on SQLite and PostgreSQL, and at ~1M units;
# then task-set import at 20,000 and 100,000 lines. Each takes several minutes.
BENCH_IMPORT_DATABASE ?= postgres://postgres@127.0.0.1:5432/ev_bench_import
bench-import: venv
	$(PY) -m bench.cases_import
	$(PY) -m bench.cases_import --database $(BENCH_IMPORT_DATABASE)
	$(PY) -m bench.task_import_memory

lint: static
	$(VENV)/bin/ruff format --check .

format: venv
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The run executor: 4,000 calls to a 200 ms loopback model at concurrency 64 (~15 s).
bench-executor: venv
	$(PY) -m bench.cases_executor
	$(PY) -m bench.cases_runs
	$(PY) -m bench.cases_judge
