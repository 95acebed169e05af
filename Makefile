# The two commands of the README: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
PYTEST_ARGS ?=
# The web server, as `make run` and the Procfile start it: gevent workers, set up in
# server/dos_server/gunicorn_conf.py (long-polls park there without a thread or a connection).
GUNICORN_CONF := python:dos_server.gunicorn_conf

.PHONY: install dev run demo test test-engine-alone lint typecheck bench-engine clean catalogs new-language

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# Stamp files make the installs re-run only when pyproject.toml changes.
# The server's dependencies are the extra `server`; a player needs only `pip install .`.
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PIP) install --quiet -e '.[server]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PIP) install --quiet -e '.[server,dev]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev

# Upgrades the database (SQLite in server/instance/ unless DATABASE_URL says otherwise), then
# serves the API on http://127.0.0.1:5000 under gunicorn beside the notification worker and the
# mail-in listener (SMTP on 127.0.0.1:2525: `dos-server mail reply N "3"` answers outbox email N).
# Ctrl-C stops all three (scripts/run-local, which the end-to-end test runs too).
run: install
	BIN=$(VENV)/bin GUNICORN_CONF=$(GUNICORN_CONF) scripts/run-local

demo: install
	$(PY) -m dos_engine demo

lint: dev
	$(PY) -m ruff check .
	$(PY) -m mypy

typecheck: dev
	$(PY) -m mypy

# The three gettext catalogs (docs/development.md, "Languages"): the server's pages and emails,
# the engine's event lines and rule errors, dos-client's words. `make catalogs` extracts the marked
# messages, merges them into every language's .po and compiles the .mo files beside them;
# `make new-language CODE=th` starts a language's three catalogs.
PYBABEL := $(VENV)/bin/pybabel
CATALOGS := server/babel.cfg:-k_l:messages:server/dos_server/translations:server/dos_server \
	server/dos_engine/babel.cfg:-kN_:dos_engine:server/dos_engine/locale:server/dos_engine \
	-:-kN_:dos_client:client/dos_client/locale:client/dos_client
define each_catalog
	@for entry in $(CATALOGS); do \
	  set -- $$(echo "$$entry" | tr : ' '); cfg=$$1 keyword=$$2 domain=$$3 folder=$$4 sources=$$5; \
	  mapping=$$([ "$$cfg" = - ] || echo "-F $$cfg"); pot=$$(mktemp); \
	  $(PYBABEL) --quiet extract $$mapping $$keyword -o $$pot $$sources && $(1) || exit 1; rm -f $$pot; \
	done
endef

catalogs: dev
	$(call each_catalog,$(PYBABEL) update -i $$pot -D $$domain -d $$folder --no-fuzzy-matching --ignore-obsolete)
	@for folder in server/dos_server/translations server/dos_engine/locale client/dos_client/locale; do \
	  for po in $$folder/*/LC_MESSAGES/*.po; do [ -f "$$po" ] || continue; $(PYBABEL) compile -i $$po -o $${po%.po}.mo; done; done

new-language: dev
	@test -n "$(CODE)" || { echo "make new-language CODE=xx (an ISO 639 code)"; exit 2; }
	$(call each_catalog,$(PYBABEL) init -i $$pot -D $$domain -d $$folder -l $(CODE))

# The database tests run on SQLite and, with TEST_DATABASE_URL, on PostgreSQL too; the soak needs
# PostgreSQL. A PostgreSQL answering on the usual local address is used unless you set another.
TEST_DATABASE_URL ?= $(shell pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && echo postgresql+psycopg://postgres@127.0.0.1:5432/test)
export TEST_DATABASE_URL

test: dev
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -n auto $(PYTEST_ARGS)

# dos_engine needs only the standard library: its tests run in a throwaway venv holding pytest and
# hypothesis alone (not the project), so an engine test or a conftest on its way that imports
# flask, sqlalchemy or dos_server fails here. The slow self-play games run in `make test`.
test-engine-alone:
	@venv=$$(mktemp -d) && trap 'rm -rf "$$venv"' EXIT && \
	$(PYTHON) -m venv "$$venv" && \
	"$$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
		'pytest>=8' 'hypothesis>=6.100' && \
	"$$venv/bin/python" -m pytest tests/engine -p no:cacheprovider -q -m 'not slow'

# The `bench` extra brings RLCard's UNO, which bench/engine.py plays in the same run for a ratio.
$(VENV)/.installed-bench: pyproject.toml | $(PY)
	$(PIP) install --quiet -e '.[server,bench]'
	touch $@

bench-engine: install $(VENV)/.installed-bench
	$(PY) bench/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
