# Two entry points: `make demo` (set up, load the demo, serve web + task worker) and `make test` (the whole suite).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# Python 3.12+ (Django 6 needs it): the first of python3.12, python3.13, or a pyenv install of either.
PYTHON := $(shell for p in python3.12 python3.13 $$HOME/.pyenv/versions/3.12*/bin/python3 $$HOME/.pyenv/versions/3.13*/bin/python3; do \
	$$p -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 && { echo $$p; break; }; done)
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
PYTEST_ARGS ?=

.PHONY: demo serve worker test test-sqlite test-postgres test-stress lint venv chromium postgres bench clean

$(VENV)/.stamp: requirements.txt requirements-dev.txt
	@test -n "$(PYTHON)" || { echo "Python 3.12+ not found (tried python3.12, python3.13, pyenv)"; exit 1; }
	$(PY) -m pip --version >/dev/null 2>&1 || { rm -rf $(VENV); $(PYTHON) -m venv $(VENV); }  # none, or half-made
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.stamp

# Development: every process (web, worker, commands) gets the same environment, so `make worker` and
# `manage.py db_worker` under it agree with the web server (DEBUG on, the insecure dev key, the same database).
PORT ?= 8000
# Emails and webhook payloads link to the server these targets start (a SITE_URL given to make wins).
SITE_URL ?= http://127.0.0.1:$(PORT)
DEV_ENV := DEBUG=true WORKER_COMMAND="make worker" SITE_URL="$(SITE_URL)" PATH=$(CURDIR)/$(VENV)/bin:$$PATH

# Set up, load the demo, then serve the web app and run the task worker together (Ctrl+C stops both).
demo: venv
	$(DEV_ENV) $(PY) manage.py migrate --noinput
	$(DEV_ENV) $(PY) manage.py load_demo
	$(DEV_ENV) $(VENV)/bin/honcho -f Procfile.dev start -p $(PORT)

# Web and worker without reloading the demo.
serve: venv
	$(DEV_ENV) $(VENV)/bin/honcho -f Procfile.dev start -p $(PORT)

# The task worker alone (imports over IMPORT_INLINE_BYTES, judge runs, webhooks), e.g. next to a runserver.
worker: venv
	$(DEV_ENV) $(PY) manage.py db_worker --no-startup-delay

# Debian's Chromium for the browser tests (Playwright's own browser download cannot work here).
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

postgres:
	@pg_isready -q -h 127.0.0.1 -p 5432 || pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start
	@for i in $$(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && exit 0; sleep 1; done; echo "PostgreSQL did not start"; exit 1

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

test-sqlite: venv chromium
	DATABASE_URL=sqlite:///db-test.sqlite3 $(VENV)/bin/pytest $(PYTEST_ARGS)

test-postgres: venv chromium postgres
	DATABASE_URL=$(PG_URL) $(VENV)/bin/pytest $(PYTEST_ARGS)

test: lint test-sqlite test-postgres

# Not part of CI: the suite STRESS_RUNS times on SQLite and on PostgreSQL while a busy loop keeps every core
# busy, to show no test depends on timing. Prints how many suite runs passed; narrow with PYTEST_ARGS.
STRESS_RUNS ?= 3
test-stress: venv chromium postgres
	@pids=""; for i in $$(seq $$(nproc)); do $(PY) -c 'while True: pass' & pids="$$pids $$!"; done; \
	trap 'kill $$pids' EXIT; ok=0; runs=0; \
	for n in $$(seq $(STRESS_RUNS)); do for db in sqlite:///db-test.sqlite3 $(PG_URL); do \
		runs=$$((runs + 1)); echo "== run $$n on $${db%%:*}"; \
		DATABASE_URL=$$db $(VENV)/bin/pytest -p no:cacheprovider $(PYTEST_ARGS) && ok=$$((ok + 1)); \
	done; done; \
	echo "test-stress: $$ok of $$runs suite runs passed with $$(nproc) busy loops"; test $$ok = $$runs

bench: venv
	for b in bench/*_bench.py; do DEBUG=true $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-test* db-test.sqlite3* staticfiles
