# gatewayd: `make run` starts the daemon with the example config; `make test` runs every test.
SHELL := /bin/bash
CONFIG ?= config/gateway.example.yaml

.PHONY: all build deps test-deps run test bench clean

all: build

# npm ci builds sqlite3 from source (no prebuilt download); reinstall only when the lockfile changes.
node_modules/.installed: package-lock.json
	npm_config_build_from_source=true npm ci --no-fund --no-audit
	npx tap build
	touch $@

deps: node_modules/.installed

build: deps
	npx tsc -p tsconfig.json

# Debian packages the tests drive: curl, openssl, sqlite3 CLI, dig/kdig, Chromium, NSS tools.
test-deps:
	@scripts/install-test-deps.sh

run: build
	scripts/gatewayd serve --config $(CONFIG)

test: test-deps build
	scripts/run-tests.sh

bench: build
	bench/sni-passthrough/run.sh
	bench/dns/run.sh
	bench/admission/run.sh

clean:
	rm -rf dist node_modules var .tap
