# CueDeck — make targets. `make help` lists them.

GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The commit and build date make `cue version` say what a binary is. The
# date is SOURCE_DATE_EPOCH if set, else the commit's time, so that the
# same commit builds the same bytes.
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
DATE      ?= $(shell e=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null)}; [ -n "$$e" ] && (date -u -d @$$e +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r $$e +%Y-%m-%dT%H:%M:%SZ) || echo unknown)
VPKG      := github.com/cuedeck/cuedeck/internal/version
LDFLAGS   := -s -w -X $(VPKG).Version=$(VERSION) -X $(VPKG).Commit=$(COMMIT) -X $(VPKG).Date=$(DATE)
DIST      := dist/$(VERSION)
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
ROLES     := ingest indexer extractor mcp-edge
IMAGE_TAG ?= dev
export CGO_ENABLED ?= 0

.PHONY: help build release run test e2e bench lint images clean deploy-smoke

help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

build: ## Build static binaries of every role, cue and cue-engine into bin/.
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

release: ## Cross-compile every command into dist/VERSION/ with SHA256SUMS and manifest.json (VERSION=v1.2.3).
	@rm -rf $(DIST) && mkdir -p $(DIST)/.build
	@for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(DIST)/.build/$$os-$$arch/ ./cmd/... || exit 1; \
		for b in $(DIST)/.build/$$os-$$arch/*; do mv $$b $(DIST)/$$(basename $$b)_$(VERSION)_$${os}_$$arch; done; \
		echo "built $$os/$$arch"; \
	done
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(DIST)/cue_$(VERSION)_windows_amd64.exe ./cmd/cue
	@rm -rf $(DIST)/.build
	$(GO) run ./scripts/release-manifest -dir $(DIST) -version '$(VERSION)' -commit '$(COMMIT)' -date '$(DATE)'

run: build ## Run the embedded single node on this repository until Ctrl-C.
	./$(BIN)/cue up --workspace .

# The dashboard's browser tests drive a Chromium, which
# scripts/ensure-chromium.sh finds or installs; their screenshots go to
# $(CUE_ARTIFACTS)/screenshots.
export CUE_ARTIFACTS ?= $(CURDIR)/artifacts

# Long single-goroutine property checks take fewer steps under the race
# detector (raceEnabled), which finds nothing in them and makes each step
# several times slower; they run at full size beside the benchmarks.
FULL_SIZE_TESTS := ^(TestPrunedSearchMatchesWholeScoring|TestReplayKeepsTheCacheUnderItsCapAndFresh)$$

# The packages with benchmarks: the smoke run of them links no test binary
# of a package without, which was half its time.
BENCH_PKGS = $(shell grep -rl --include='*_test.go' '^func Benchmark' cmd internal pkg | xargs -n1 dirname | sort -u | sed 's|^|./|')

test: ## Vet, check formatting, get Chromium, and run the tests with the race detector.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	CUE_CHROME=$$(./scripts/ensure-chromium.sh) && export CUE_CHROME && \
	CGO_ENABLED=1 $(GO) test -race -timeout 9m ./...
	@echo "dashboard screenshots:"; ls -1 $(CUE_ARTIFACTS)/screenshots/*.png
	@mkdir -p $(CUE_ARTIFACTS)
	CUE_TASK_LOAD_SECONDS=1 CUE_MEMORY_BENCH_SIZE=500 $(GO) test -run '$(FULL_SIZE_TESTS)' -bench . -benchtime 1x $(BENCH_PKGS) > $(CUE_ARTIFACTS)/bench-smoke.log 2>&1 || \
		{ grep -B3 -A25 -E '^(--- FAIL|FAIL|panic)' $(CUE_ARTIFACTS)/bench-smoke.log; exit 1; }

# Published container ports answer on loopback with a local Docker engine;
# testcontainers would otherwise guess the default gateway's address.
TESTCONTAINERS_HOST_OVERRIDE ?= 127.0.0.1
export TESTCONTAINERS_HOST_OVERRIDE

e2e: images ## Build the images, run the container tests and the cluster benchmark (Docker required).
	cd e2e && TESTCONTAINERS_RYUK_DISABLED=true $(GO) test -count=1 -timeout 60m -v ./...
	cd e2e && TESTCONTAINERS_RYUK_DISABLED=true $(GO) test -count=1 -timeout 20m -run '^$$' -bench BenchmarkCluster -benchtime 1x .

bench: ## Run the benchmarks (save to find latency and more).
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint: ## go vet and gofmt.
	$(GO) vet ./... && cd e2e && $(GO) vet ./...
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)

images: build ## Build FROM-scratch images of the roles and of nats-server.
	$(GO) build -trimpath -ldflags '-s -w' -o $(BIN)/nats-server github.com/nats-io/nats-server/v2
	@mkdir -p $(BIN)/image-data
	@for role in $(ROLES); do \
		docker build -q -f deployments/images/Dockerfile.role --build-arg BIN=$$role -t cuedeck/$$role:$(IMAGE_TAG) $(BIN) >/dev/null || exit 1; \
		echo "built cuedeck/$$role:$(IMAGE_TAG)"; \
	done
	docker build -q -f deployments/images/Dockerfile.cue -t cuedeck/cue:$(IMAGE_TAG) $(BIN) >/dev/null
	@echo "built cuedeck/cue:$(IMAGE_TAG) (cue and cue-engine)"
	docker build -q -f deployments/images/Dockerfile.nats -t cuedeck/nats:$(IMAGE_TAG) $(BIN) >/dev/null
	@echo "built cuedeck/nats:$(IMAGE_TAG)"

# Compose v2 plugin if present, else the standalone docker-compose.
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo 'docker compose' || echo docker-compose)

deploy-smoke: images ## Bring up deployments/compose.yaml and query an edge over HTTP MCP (Docker required).
	@token=$$(./deployments/init.sh); [ -z "$$token" ] || echo "new MCP token (shown once, keep it): $$token"; token=$${token:-$$CUE_SMOKE_TOKEN}; \
	if [ -z "$$token" ]; then echo "deployments/tokens.toml exists: set CUE_SMOKE_TOKEN to the token init.sh printed, or delete tokens.toml"; exit 1; fi; \
	$(COMPOSE) -f deployments/compose.yaml up -d && \
	./deployments/smoke/smoke.sh "$$token"

clean: ## Remove build output, releases and this workspace's cache.
	rm -rf $(BIN) dist .cuedeck/.cache
