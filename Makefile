# ChatAnime annotation platform. `make run` serves the demo; `make test` runs every test.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
DEMO_DATA := dialogues/demo_data
DATA ?= $(DEMO_DATA)
# Each data set `make run` serves gets a SQLite file of its own (unless DATABASE_URL is
# set): the demo numbers its scenarios as the published data does, with texts of its own,
# so the two cannot share a database.
RUN_DB = $(if $(filter $(abspath $(DEMO_DATA)),$(abspath $(DATA))),db.sqlite3,db-$(notdir $(abspath $(DATA))).sqlite3)
RUN_ENV = DATABASE_URL=$${DATABASE_URL:-sqlite:///$(CURDIR)/$(RUN_DB)}
HOST ?= 127.0.0.1
PORT ?= 8000
# The address links point to (the panel join link, emails): the server's own, unless set;
# a server listening on every interface is reached on this machine at 127.0.0.1.
SITE_HOST = $(if $(filter 0.0.0.0,$(HOST)),127.0.0.1,$(HOST))

.PHONY: run test test-fast lint format lock worker bench bench-load bench-panel-burst clean messages docs

$(VENV)/.installed: requirements/base.lock requirements/dev.lock
	@python=$$(scripts/find-python) || exit 1; \
	if [ ! -x $(PY) ] || ! $(PY) -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then \
	  echo "Creating $(VENV) with $$python"; rm -rf $(VENV); "$$python" -m venv $(VENV) || exit 1; \
	fi
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.lock
	@touch $@

run: $(VENV)/.installed
	$(RUN_ENV) $(PY) manage.py migrate --noinput
	$(RUN_ENV) $(PY) manage.py import_chatanime $(DATA)
	$(RUN_ENV) $(PY) manage.py seed_demo
	$(RUN_ENV) CHATANIME_SITE_URL=$${CHATANIME_SITE_URL:-http://$(SITE_HOST):$(PORT)} scripts/serve $(HOST) $(PORT)

test: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(MAKE) --no-print-directory docs
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# Build docs/ with MkDocs, failing on any warning (a broken link or anchor, a page left out
# of the nav); the site goes to a temporary directory, never into the repository.
docs: $(VENV)/.installed
	@site=$$(mktemp -d); trap 'rm -rf "$$site"' EXIT; \
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir "$$site"

test-fast: $(VENV)/.installed
	$(VENV)/bin/pytest -m "not integration and not browser" $(PYTEST_ARGS)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

format: $(VENV)/.installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

worker: $(VENV)/.installed
	$(VENV)/bin/celery -A chatanime_site worker --pool prefork --beat --loglevel INFO

$(VENV)/.bench-installed: $(VENV)/.installed requirements/bench.lock
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/bench.lock
	@touch $@

# Every benchmark, one after the other, and one table of their figures (about 30 min).
bench: $(VENV)/.bench-installed
	$(PY) bench/suite.py

# The load test alone: 10, 50 and 200 concurrent annotators on gunicorn, driven by wrk.
bench-load: $(VENV)/.installed
	@command -v wrk >/dev/null || apt-get install -y wrk || sudo apt-get install -y wrk
	$(PY) bench/load.py

# A study going live on a panel: 300 participants from Prolific's link within a minute,
# each from consent to the completion code, on gunicorn, driven by wrk. ARGS: the
# script's options, e.g. ARGS='--think 20'.
bench-panel-burst: $(VENV)/.installed
	@command -v wrk >/dev/null || apt-get install -y wrk || sudo apt-get install -y wrk
	$(PY) bench/panel_burst.py $(ARGS)

# Re-resolve the lock files from the pins in pyproject.toml.
lock:
	@python=$$(scripts/find-python) || exit 1; tmp=$$(mktemp -d); \
	"$$python" -m venv $$tmp && $$tmp/bin/pip install --quiet . && \
	$$tmp/bin/pip freeze --exclude chatanime > requirements/base.lock && \
	$$tmp/bin/pip install --quiet --group dev && \
	{ echo "-r base.lock"; $$tmp/bin/pip freeze --exclude chatanime | grep -vxFf requirements/base.lock; } > requirements/dev.lock; \
	$$tmp/bin/pip freeze --exclude chatanime > $$tmp/dev.txt && $$tmp/bin/pip install --quiet --group bench && \
	{ echo "# Load-test tools for bench/load.py (make bench-load); not needed to run or test the site."; \
	  echo "-r dev.lock"; $$tmp/bin/pip freeze --exclude chatanime | grep -vxFf $$tmp/dev.txt; } > requirements/bench.lock; \
	rm -rf $$tmp

clean:
	rm -rf $(VENV) db.sqlite3 db-*.sqlite3 staticfiles .pytest_cache .ruff_cache

# Extract translatable strings into locale/zh_Hans and compile them (needs gettext).
messages: $(VENV)/.installed
	$(PY) manage.py makemessages -l zh_Hans --no-wrap --ignore=.venv --ignore=static --ignore=tests --ignore=bench
	$(PY) manage.py compilemessages -l zh_Hans --ignore=.venv
