# Thin aliases; the README says what each does.
GO      ?= go
PREFIX  ?= $(shell $(GO) env GOPATH)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: build install test e2e lint bench stress fuzz fuzz-short e2e-agents

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/wcomm ./cmd/wcomm

install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/wcomm

# Every test, end-to-end ones included; a missing tmux fails the run.
test:
	REQUIRE_TMUX=1 $(GO) test -race -count=1 ./...

e2e:
	REQUIRE_TMUX=1 $(GO) test -race -count=1 -run 'E2E|Real' ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
