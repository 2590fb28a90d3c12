# Thin aliases; the README says what each does.
GO      ?= go
PREFIX  ?= $(shell $(GO) env GOPATH)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/wcomm/wcomm/internal/buildinfo.version=$(VERSION) -X github.com/wcomm/wcomm/internal/buildinfo.commit=$(COMMIT)

BENCH_SCALE  ?= 1
STRESS_SCALE ?= 1
AGENT_SENDS  ?= 50
# Tests marked parallel that run at once in a package. Most of their time is spent waiting on tmux
# and on the programs in its panes: at 4, the CLI's tests took 311 s here against 468 s at go
# test's default (2 on this 2-core machine), with the cores busy 57 % of the time.
TEST_AT_ONCE ?= 4
FUZZTIME     ?= 1m
FUZZCOUNT    ?= 10000x

.PHONY: build install deps deps-agents test e2e lint bench stress fuzz fuzz-ci e2e-agents web-shots

# The programs are built without cgo, so static: a process start (every send, notify, await and
# a send's guard is one) then costs about 2.6 ms of CPU instead of 3.4 ms, the dynamic loader's
# share (measured, 300 starts of 'wcomm version'). Nothing of wcomm needs cgo: Go's own resolver
# and user lookup read the same files. The tests' -race needs cgo, so it is not set for them.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/wcomm ./cmd/wcomm-mcp ./cmd/wcomm-bridge ./cmd/wcomm-ui

# go install, then a link where a login shell finds it: tmux starts each pane's shell as a login
# shell, which sets PATH afresh, so Go's bin folder on this shell's PATH is not enough (see the script).
install:
	CGO_ENABLED=0 $(GO) install -ldflags "$(LDFLAGS)" ./cmd/...
	scripts/link-bin.sh "$$(d=$$($(GO) env GOBIN); [ -n "$$d" ] || d=$$($(GO) env GOPATH)/bin; echo "$$d")"

# What the tests need (tmux, python3 for its panes, the shells the completion scripts and the profile
# are checked in, OpenSSH's client, its sshd for the remote hosts' tests, chromium for the web page's) and what the agents'
# tests need (Node.js and npm). scripts/deps.sh says first what it installs and why, installs only
# what is missing (as root, or with sudo), never upgrades an installed package nor pulls Recommends,
# and enables no service: sshd is unpacked from its package into .cache/sshd, not installed.
deps:
	@scripts/deps.sh tests

deps-agents:
	@scripts/deps.sh agents

# Every test, end-to-end ones included; a missing tmux fails the run. scripts/testsum prints what go
# test prints, then a count of the tests run ("N passed, N failed"), and exits with go test's code.
test: deps
	@$(GO) build -o bin/testsum ./scripts/testsum
	REQUIRE_TMUX=1 bin/testsum $(GO) test -json -race -count=1 -parallel $(TEST_AT_ONCE) -timeout 30m ./...

e2e: deps
	REQUIRE_TMUX=1 $(GO) test -race -count=1 -run 'E2E|Real' ./...

# The web page's screenshots in docs/img (phone 390x844, desktop 1440x900), taken by its browser test.
web-shots: deps
	WCOMM_WEB_SHOTS=$(CURDIR)/docs/img REQUIRE_TMUX=1 $(GO) test -count=1 -run '^TestE2EWeb$$' ./internal/cli

# staticcheck is pinned in tools.mod (its own module file, so its dependencies never enter wcomm's
# build): 'go tool' builds it once from the module cache, after which it runs offline.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool -modfile=tools.mod staticcheck ./...

# The micro-benchmarks, then the side-by-side table against the reference scripts, with the floor
# beside each row; the table is also written into BENCHMARKS.md, between its markers.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./messages ./paneops ./paneops/lease
	WCOMM_BENCH_SCALE=$(BENCH_SCALE) WCOMM_BENCH_OUT=$(CURDIR)/BENCHMARKS.md $(GO) test -tags 'bench agents' -run '^TestBenchTable$$' -count=1 -v -timeout 60m ./internal/cli

# The reliability suite at full scale (go test ./... runs it at a tenth of that).
stress:
	@summary=$$(mktemp); \
	REQUIRE_TMUX=1 WCOMM_STRESS_SCALE=$(STRESS_SCALE) WCOMM_STRESS_SUMMARY=$$summary \
		$(GO) test -race -count=1 -run 'Stress' -timeout 60m ./internal/cli; rc=$$?; \
	cat $$summary 2>/dev/null; rm -f $$summary; exit $$rc

# Every fuzz target for FUZZTIME each (a duration, or a count of calls such as 100000x). fuzz-ci is
# the short run CI does; it is bounded by a count, which Go 1.26's deadline race cannot hit (see the script).
# 10,000 calls each keep CI under its 20 minutes on a slower machine (here 20,000 took 4.7 minutes
# with the targets listed by go test, FuzzLoadExchange 53 s of it). The targets run longer in make fuzz.
fuzz:
	GO=$(GO) testdata/fuzz.sh $(FUZZTIME)

fuzz-ci:
	GO=$(GO) testdata/fuzz.sh $(FUZZCOUNT)

# Delivery into the real Claude Code, Codex, Gemini CLI, Copilot CLI, Qwen Code and OpenCode TUIs
# against a scripted model on loopback (Claude Code also through its messaging socket, Codex through its
# app-server);
# the test installs them from npm into WCOMM_AGENTS_DIR (default: the user cache folder) first.
# AGENT_SENDS is how many messages each agent gets in a row: 50 here, at least 10 (CI runs
# make e2e-agents AGENT_SENDS=10, to stay well under its 20 minutes).
# The agents run one at a time: side by side, three at once on this 2-core machine, the run took
# longer (450 s against 366 s) and the loaded TUIs dropped Enters and stalled.
e2e-agents: deps deps-agents
	REQUIRE_TMUX=1 WCOMM_AGENT_SENDS=$(AGENT_SENDS) $(GO) test -tags agents -race -count=1 -run Agents -timeout 60m ./internal/cli
