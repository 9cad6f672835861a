# toolnexus — every command a developer or CI needs. Only Go is required;
# buf and the protoc plugins are pinned Go tools in tools/go.mod. npm is used
# when present, for the third-party peers of the integration tests.
GO        ?= go
BUF       := $(GO) tool -modfile=tools/go.mod buf
STATICCHECK := $(GO) tool -modfile=$(CURDIR)/tools/go.mod staticcheck
# The modules: the service, the benchmark programs (bench/, their own module
# so plotting and load-generation dependencies stay out of the service's
# go.mod) and the pinned developer tools.
MODULES   := . bench tools
BIN       := bin
PKGS      := ./...
# The packages whose tests take longest, named first: go test starts
# packages in the order given (two at a time on two CPUs), and pkg/server
# alone is most of the run, so listed last it was the tail everything
# waited on. (Repeating a package in the list runs it once.)
SLOW_PKGS := ./pkg/server/ ./pkg/sources/mcp/
FUZZTIME  ?= 20s

.PHONY: cluster-demo all generate lint build run test test-short e2e-deps bench soak fuzz clean check-generated

all: lint build test

## generate: regenerate gen/ (Go), examples/node/gen (TypeScript, needs npm) and
## examples/python/gen (Python, needs protoc and grpc_python_plugin)
## from proto/ — the only way either changes — and the search's related
## words (internal/search/related.txt) from WordNet (needs wordnet-base)
generate:
	$(BUF) generate
	@if [ -f /usr/share/wordnet/data.noun ]; then \
		$(GO) generate ./internal/search; \
	else echo "WordNet not found (apt-get install wordnet-base): internal/search/related.txt not regenerated"; fi
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix examples/node --no-audit --no-fund --loglevel=error && \
		$(BUF) generate --template buf.gen.ts.yaml; \
	else echo "npm not found: examples/node/gen not regenerated"; fi
	@if command -v protoc >/dev/null 2>&1 && command -v grpc_python_plugin >/dev/null 2>&1; then \
		$(BUF) generate --template buf.gen.python.yaml; \
	else echo "protoc or grpc_python_plugin not found (apt-get install protobuf-compiler protobuf-compiler-grpc): examples/python/gen not regenerated"; fi

## check-generated: fail when gen/ is not what `make generate` produces
check-generated: generate
	@git diff --exit-code --stat -- gen/ examples/node/gen/ examples/python/gen/ internal/search/related.txt || { echo "generated code is stale: run 'make generate' and commit it"; exit 1; }
	@test -z "$$(git status --porcelain -- gen/ examples/node/gen/ examples/python/gen/)" || { git status --porcelain -- gen/ examples/node/gen/ examples/python/gen/; echo "untracked generated files: run 'make generate' and commit them"; exit 1; }

## lint: gofmt, go vet and staticcheck (service and bench modules), go.mod
## tidiness of every module, buf lint
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) -C bench vet ./...
	$(STATICCHECK) $(PKGS)
	cd bench && $(STATICCHECK) ./...
	@for m in $(MODULES); do $(GO) -C $$m mod tidy -diff || { echo "go.mod/go.sum of module $$m not tidy: run 'go -C $$m mod tidy'"; exit 1; }; done
	$(BUF) lint

## build: bin/toolnexus-server and bin/toolnexus
build:
	$(GO) build -o $(BIN)/toolnexus-server ./cmd/server
	$(GO) build -o $(BIN)/toolnexus ./cmd/client

## cluster-demo: three replicas sharing Redis (cluster.redis) behind nginx round robin, on loopback (docs/cluster.md)
cluster-demo: build
	deploy/local/cluster-demo.sh $(BIN)

## run: serve the embedded default config on 127.0.0.1:50051 (metrics on :9464)
run: build
	$(BIN)/toolnexus-server

## e2e-deps: install the npm peers the integration tests run against (the
## search evaluation's embeddings model among them) and the Node client
## example's packages (skipped without npm)
e2e-deps:
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix e2e/node --no-audit --no-fund --loglevel=error && \
		npm ci --prefix examples/node --no-audit --no-fund --loglevel=error && \
		npm ci --prefix e2e/conformance --no-audit --no-fund --loglevel=error && \
		npm ci --prefix e2e/conformance-next --no-audit --no-fund --loglevel=error && \
		npm ci --prefix e2e/embeddings --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: integration tests against npm peers will be skipped"; fi

## test: every test with the race detector (installs the npm peers first)
test: e2e-deps
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || \
		echo "nginx not found: the sessions-across-replicas test will be skipped (apt-get install nginx)"
	$(GO) test -race -count=1 -timeout 15m $(SLOW_PKGS) $(PKGS)

## test-short: quick unit pass without the race detector
test-short:
	$(GO) test -short -count=1 $(PKGS)

## bench: the benchmark suite (module bench/); writes BENCHMARKS.md and docs/throughput.png.
##   ROWS=8,9 runs only those baseline rows (the cheapest call against the minimal
##   programs, about two minutes) and prints them; BEFORE=path/to/toolnexus-server adds a
##   previous build to rows 8 and 9, measured in the same run
bench: build
	$(GO) -C bench run . $(if $(ROWS),-baselines -rows $(ROWS)) $(if $(BEFORE),-before $(abspath $(BEFORE)))

## soak: reliability drills against a real server process (SHORT=1 for the CI-sized run)
soak: build
	$(GO) -C bench run ./soak $(if $(SHORT),--short)

## fuzz: run each fuzz target for FUZZTIME
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for fn in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$fn ($$pkg)"; $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

clean:
	rm -rf $(BIN)
