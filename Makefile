# warmstat — see README.md. `make demo` runs the main job on a built-in default,
# `make test` runs every test (CI calls exactly this).
GO      ?= go
BIN     := bin/warmstat
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.stamped=$(VERSION)
FUZZTIME ?= 60s

.PHONY: all build test vet fmt-check bench fuzz demo demo-toy demo-bundled evita embedded profiler proto clean noise docs

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/warmstat

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The server-backed tests run against the newest release `make evita` fetched (and the
# tests comparing builds against the two newest); WARMSTAT_REQUIRE_SERVER=1 makes a
# missing server a failure instead of a skip (.ci/run sets it). Server tests of the
# packages take turns on the machine (a lock), hence the generous timeout. The small
# pristine snapshot most spawn tests read is seeded once for all packages, in a
# directory made for this run and removed after it (WARMSTAT_TEST_SHARED).
# The tests' JVMs run the real servers with the JIT's top tier off (TEST_JVM_OPTIONS, given
# through JDK_JAVA_OPTIONS, which every run records): the same code on half the CPU, as no
# test takes a figure of speed; TestSpawnedReplay clears it and runs the default JIT.
TESTFLAGS ?=
TEST_JVM_OPTIONS ?= -XX:TieredStopAtLevel=1
test: vet fmt-check
	@shared=$$(mktemp -d "$${TMPDIR:-/tmp}/warmstat-test-shared-XXXXXX") && trap 'rm -rf "$$shared"' EXIT && \
	echo 'JDK_JAVA_OPTIONS="$(TEST_JVM_OPTIONS)" WARMSTAT_TEST_SHARED='"$$shared"' WARMSTAT_EVITA_REPO="$(EVITA_REPO_ABS)" $(GO) test -count=1 -timeout 45m $(TESTFLAGS) ./...' && \
	JDK_JAVA_OPTIONS="$(TEST_JVM_OPTIONS)" WARMSTAT_TEST_SHARED="$$shared" WARMSTAT_EVITA_REPO="$(EVITA_REPO_ABS)" $(GO) test -count=1 -timeout 45m $(TESTFLAGS) ./...

# docs/reference.md, every command's flags as --help prints them, and each command page's
# flag section (between <!-- flags:COMMAND --> and <!-- /flags -->), generated from the
# commands' own definitions (TestFlagReference and TestEveryCommandHasItsPage fail when
# they are stale).
docs:
	$(GO) test ./cmd/warmstat -run '^(TestFlagReference|TestEveryCommandHasItsPage)$$' -count=1 -update

# Speed and memory targets live in Go benchmarks, not in timed unit tests.
bench:
	$(GO) test ./analyze -run '^$$' -bench 'Summarize|Read' -benchmem -cpu 1
	$(GO) test ./analyze -run '^$$' -bench 'Compare5x' -benchmem -benchtime 3x
	$(GO) test ./cmd/warmstat -run '^$$' -bench 'Report386k' -benchmem -count 5
	$(GO) test ./analyze -run '^$$' -bench 'Calibration' -benchtime 1x -v
	$(GO) test ./evita -run '^$$' -bench 'Transcode' -benchmem
	$(GO) test ./workload -run '^$$' -bench 'Read' -benchmem
	WARMSTAT_EVITA_REPO="$(EVITA_REPO_ABS)" $(GO) test ./evita -run '^$$' -bench 'UpsertPath|ServerStatusRoundTrip' -benchmem

# The noise experiment: A/A series per setting, interleaved, at scales 0.02 and 0.05
# (scripts/noise.sh says which settings and how to choose them). Hours on 2 cores; run
# it on a quiet machine.
noise: build
	@./scripts/noise.sh

# Each fuzz target for FUZZTIME (default 60s): make fuzz FUZZTIME=5m
fuzz:
	$(GO) test ./runfmt -run '^$$' -fuzz '^FuzzCSVReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./runfmt -run '^$$' -fuzz '^FuzzFastRowIsParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./runfmt -run '^$$' -fuzz '^FuzzManifest$$' -fuzztime $(FUZZTIME)
	$(GO) test ./runfmt -run '^$$' -fuzz '^FuzzHarnessLog$$' -fuzztime $(FUZZTIME)
	$(GO) test ./evita -run '^$$' -fuzz '^FuzzTranscoder$$' -fuzztime $(FUZZTIME)

# The main job on the built-in default. With two evitaDB releases fetchable (make
# evita), the live demo asks the real question with the one command: warmstat ab --a
# 2026.2.2 --b 2026.2.3 on the default catalog (scripts/demo-live.sh). Without them (no
# Maven repository at hand that serves io.evitadb) the analysis side runs on bundled
# data: Java-harness runs rendered by a JVM and two synthetic builds. make demo-toy is
# every command's output on a tiny catalog in about two minutes (scripts/demo-toy.sh).
DEMO_DIR ?= $(or $(TMPDIR),/tmp)/warmstat-demo
demo: build
	@EVITA_REPO="$(EVITA_REPO_ABS)" ./scripts/demo-live.sh; rc=$$?; \
	if [ $$rc -eq 0 ]; then exit 0; elif [ $$rc -ne 69 ]; then exit $$rc; fi; \
	echo "make demo: no evitaDB servers to fetch here; running the analysis side on bundled data"; \
	$(MAKE) --no-print-directory demo-bundled

demo-toy: build
	@EVITA_REPO="$(EVITA_REPO_ABS)" ./scripts/demo-toy.sh; rc=$$?; \
	if [ $$rc -eq 0 ]; then exit 0; elif [ $$rc -ne 69 ]; then exit $$rc; fi; \
	echo "make demo-toy: no evitaDB servers to fetch here; running the analysis side on bundled data"; \
	$(MAKE) --no-print-directory demo-bundled

# DEMO_DIR is claimed by the loader's ownership rule (scripts/owned-dir.sh): absent,
# empty or marked by an earlier demo; anything else is refused, never wiped.
demo-bundled: build
	@./scripts/owned-dir.sh "$(DEMO_DIR)"
	@for sc in ok golive-failed; do \
	  ./$(BIN) import --java testdata/java/$$sc --out "$(DEMO_DIR)/$$sc" --server-heap 23g --build demo-$$sc || exit 1; \
	done
	./$(BIN) report "$(DEMO_DIR)/golive-failed"
	@echo
	./$(BIN) compare testdata/groups/v2026.2.0 testdata/groups/v2026.2.2
	@echo
	./$(BIN) compare --format md testdata/groups/v2026.2.0 testdata/groups/v2026.2.2
	@echo
	./$(BIN) table --group testdata/groups/v2026.2.0 testdata/groups/v2026.2.2

# The evitaDB server and its dependencies, per version, into a cache outside the repo:
# make evita EVITA_VERSION=2026.2.3 [EVITA_REPO="dir-or-url ..."] (scripts/fetch-evita.sh).
# Releases come from Maven Central; EVITA_REPO names extra Maven repositories (a local
# build of evitaDB, a mirror) searched as well; by default ../shared/evitadb/m2 beside
# the checkout, if present (where this project's own machines keep their builds).
EVITA_VERSION ?= 2026.2.3
EVITA_REPO    ?= $(wildcard ../shared/evitadb/m2)
EVITA_REPO_ABS = $(foreach r,$(EVITA_REPO),$(if $(findstring ://,$(r)),$(r),$(abspath $(r))))
evita:
	EVITA_VERSION="$(EVITA_VERSION)" EVITA_REPO="$(EVITA_REPO_ABS)" ./scripts/fetch-evita.sh

# warmstat's embedded writer (load/ab --target-mode embedded: the engine in one JVM, no
# transport) compiled against a fetched release's jars, cached per build in
# $WARMSTAT_CACHE/embedded (default ~/.cache/warmstat/embedded):
# make embedded [EVITA_VERSION=2026.2.3]. load and ab also compile it on first use.
embedded: build
	./$(BIN) embedded-writer --evita-version "$(EVITA_VERSION)"

# async-profiler (the agent for this machine and its JFR converter) from Maven Central
# into the same cache, for load --writer-profile: make profiler [PROFILER_VERSION=4.2]
# (scripts/fetch-profiler.sh; a no-op when present).
PROFILER_VERSION ?= 4.2
profiler:
	PROFILER_VERSION="$(PROFILER_VERSION)" ./scripts/fetch-profiler.sh

# Regenerate evita/pb from our .proto subset (the generated code is committed, so a
# build never needs protoc). Needs protoc (apt-get install protobuf-compiler).
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
proto:
	@command -v protoc >/dev/null || { echo "make proto: protoc not found (apt-get install protobuf-compiler)"; exit 1; }
	GOBIN=$(CURDIR)/bin $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/bin $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH="$(CURDIR)/bin:$$PATH" protoc -I evita/proto -I /usr/include \
	  --go_out=evita/pb --go_opt=paths=source_relative \
	  --go-grpc_out=evita/pb --go-grpc_opt=paths=source_relative evita/proto/evita_subset.proto

clean:
	rm -rf bin
