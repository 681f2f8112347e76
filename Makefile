# kreact's two commands are `make demo` and `make test`; everything they need
# is built here from pinned Go modules. `make unit` runs the tests that need
# no control plane, in seconds.

GO      ?= go
BIN     := $(CURDIR)/bin
CP      := hack/controlplane
export KREACT_BIN_DIR := $(BIN)

# The container image: built by podman from a binary built here, run with
# runc (see deploy/image_e2e_test.go for how the test runs it).
PODMAN  ?= podman
IMAGE   ?= kreact:dev
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# What kreact version prints and kreact_build_info carries (cmd/kreact/version.go).
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: all build controlplane image image-tools release release-chart test unit fuzz vet fmt-check leftovers bench bench-e2e bench-admission demo chaos cluster-up cluster-down clean

all: build

## build: the kreact binary in bin/, stamped with VERSION and COMMIT
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/kreact ./cmd/kreact

## controlplane: etcd, kube-apiserver, kube-controller-manager and kubectl in bin/
## (about 10 minutes on 2 cores the first time; nothing to do afterwards)
controlplane: $(BIN)/etcd $(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kubectl

$(BIN)/etcd: $(CP)/etcd/go.mod $(CP)/etcd/go.sum $(CP)/etcd/main.go
	cd $(CP)/etcd && $(GO) build -o $(BIN)/etcd .

$(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kubectl &: $(CP)/go.mod $(CP)/go.sum $(wildcard $(CP)/*/main.go)
	@echo "building kube-apiserver, kube-controller-manager and kubectl from k8s.io/kubernetes (slow the first time)"
	cd $(CP) && $(GO) build -o $(BIN)/ ./kube-apiserver ./kube-controller-manager ./kubectl
	@touch $(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kubectl

## helm: the Helm CLI in bin/, pinned in hack/helm/go.mod (its upstream
## main package, built like the control plane); the chart's tests
## (deploy/chart_e2e_test.go) run it
HELM_VERSION := $(shell sed -n 's,^\thelm.sh/helm/v4 \(v[^ ]*\).*,\1,p' hack/helm/go.mod)
.PHONY: helm
helm: $(BIN)/helm

$(BIN)/helm: hack/helm/go.mod hack/helm/go.sum
	cd hack/helm && $(GO) build -trimpath -ldflags "-X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION)" -o $(BIN)/helm helm.sh/helm/v4/cmd/helm

## image: the container image $(IMAGE) (Dockerfile.prebuilt) from a static
## binary built here, with podman; nothing is pulled from a registry
image: image-tools
	@ctx=$$(mktemp -d) && trap 'rm -rf "$$ctx"' EXIT && \
	echo "building the static binary" && \
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o "$$ctx/kreact" ./cmd/kreact && \
	$(PODMAN) build --pull=never --quiet --file Dockerfile.prebuilt --tag $(IMAGE) "$$ctx" >/dev/null && \
	echo "built image $(IMAGE) (kreact $(VERSION))"

## release: static kreact binaries for linux and darwin on amd64 and arm64
## in $(DIST)/ (kreact-VERSION-OS-ARCH), what release-chart adds, and
## their SHA256SUMS (check with: cd dist && sha256sum -c SHA256SUMS)
DIST              ?= dist
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
release:
	rm -rf $(DIST) && mkdir -p $(DIST)
	@for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; out=$(DIST)/kreact-$(VERSION)-$$os-$$arch; \
		echo "building $$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $$out ./cmd/kreact || exit 1; \
	done
	$(MAKE) --no-print-directory release-chart DIST=$(DIST) VERSION=$(VERSION)
	cd $(DIST) && sha256sum $$(ls | grep -v '^SHA256SUMS$$') > SHA256SUMS
	@cat $(DIST)/SHA256SUMS

# release-chart: the Helm chart's package in $(DIST) beside the binaries
# (so SHA256SUMS covers it), versioned like them: a tag vX.Y.Z makes chart
# X.Y.Z, and a build between tags (v0.1.0-3-gabc1234, or a bare commit
# before the first tag) a pre-release of it, which Helm sorts below.
CHART_VERSION ?= $(if $(filter v%,$(VERSION)),$(patsubst v%,%,$(VERSION)),0.0.0-dev-$(VERSION))
release-chart: helm
	$(BIN)/helm package charts/kreact --version $(CHART_VERSION) --app-version $(VERSION) --destination $(DIST)

# The image and its test need podman and runc; say how to get them rather
# than fail on "command not found".
image-tools:
	@missing=; \
	command -v $(PODMAN) >/dev/null 2>&1 || missing="$$missing podman"; \
	{ command -v runc || test -x /usr/sbin/runc; } >/dev/null 2>&1 || missing="$$missing runc"; \
	if [ -n "$$missing" ]; then \
		echo "the container image and its test (make image, make test) need:$$missing"; \
		echo "install with: sudo apt-get install -y podman runc   (Debian/Ubuntu; .ci/run does this)"; \
		exit 1; \
	fi

## test: formatting, vet, every unit and e2e test with -race (the image test
## runs the image built by `make image`), the fuzz tests for a bounded time,
## and a check that no control-plane process is left running
test: controlplane helm fmt-check vet typecheck image
	KREACT_IMAGE=$(IMAGE) $(GO) test -race -tags e2e -timeout 30m ./...
	cd hack/mixin && $(GO) test -race -tags e2e ./...
	$(GO) run ./cmd/kreact test examples/tests
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory leftovers

## unit: the tests that need no control plane (files without the e2e build
## constraint), with -race; nothing is built into bin/
# The race detector sleeps a second before each test binary exits, so that
# goroutines still running can report; goleak already fails a test whose
# goroutines outlive it, so the quick loop skips that wait (about 15 s of 35
# binaries on 2 cores). make test keeps it.
unit:
	GORACE=atexit_sleep_ms=0 $(GO) test -race ./...

## fuzz: each fuzz target (PACKAGE:FuzzName) for FUZZTIME, on top of its
## seeds (which every `go test` runs): the rule loader, script
## compilation, a handler's inputs and the JSON encoding of patches. A
## failure prints the input and writes it under the package's
## testdata/fuzz/ to re-run; keep it there as a seed once fixed. What the
## fuzzer learns otherwise stays in the Go build cache, so the tree stays
## clean. Go fuzzes one target per run, hence the loop.
FUZZTIME    ?= 15s
FUZZTARGETS := rules:FuzzParse scripting:FuzzCompile scripting:FuzzHandlerInput scripting:FuzzMarshalJSON
fuzz:
	@for t in $(FUZZTARGETS); do \
		pkg=$${t%%:*}; name=$${t#*:}; \
		echo "fuzzing $$name (./$$pkg) for $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s ./$$pkg || exit 1; \
	done

## typecheck: the TypeScript examples, with the tsc command docs/script-api.md
## documents, against scripting/kreact.d.ts; tsc is pinned in hack/tsc
## (needs node and npm)
.PHONY: typecheck
TSC := hack/tsc/node_modules/.bin/tsc
typecheck: $(TSC)
	$(TSC) --noEmit --strict examples/*.ts

$(TSC): hack/tsc/package.json hack/tsc/package-lock.json
	cd hack/tsc && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

## vet: both test sets, unit and e2e (-tags e2e)
vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e ./...
	cd hack/mixin && $(GO) vet ./... && $(GO) vet -tags e2e ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

leftovers:
	@if pgrep -f '$(BIN)/(etcd|kube-apiserver|kube-controller-manager)' >/dev/null; then \
		echo "control-plane processes left running:"; pgrep -af '$(BIN)/(etcd|kube-apiserver|kube-controller-manager)'; exit 1; \
	else echo "no control-plane process left running"; fi
	@if command -v $(PODMAN) >/dev/null 2>&1 && [ -n "$$($(PODMAN) ps -aq --filter name=^kreact-image-test-)" ]; then \
		echo "image-test containers left:"; $(PODMAN) ps -a --filter name=^kreact-image-test-; exit 1; \
	fi

## demo: build everything, start a local control plane, run kreact with the
## example rules, provoke each rule, show what kreact did and clean up
demo: controlplane build
	$(GO) run ./hack/demo

## bench: the benchmarks, with memory figures
bench: controlplane
	$(GO) test -tags e2e -run '^$$' -bench . -benchmem ./...

## bench-e2e: kreact against a bare client-go controller on a local control
## plane, at 40, 200 and 1000 writes/s and a 20,000-update burst (about 15
## minutes); BENCHFLAGS passes flags to hack/bench (see -help)
bench-e2e: controlplane build
	$(GO) run ./hack/bench -kreact $(BIN)/kreact $(BENCHFLAGS)

## bench-admission: kreact's admission webhook against a bare Go webhook
## doing the same check, on a local control plane: p50/p99 of creates at
## 50 and 200/s, three repeats (about 8 minutes); ADMBENCHFLAGS passes
## flags to hack/admissionbench (see -help)
bench-admission: controlplane build
	$(GO) run ./hack/admissionbench -kreact $(BIN)/kreact $(ADMBENCHFLAGS)

## chaos: the checker of the delivery contract (hack/chaos): operations
## and faults drawn from SEED for DURATION against a local control plane,
## then the oracle (hack/chaos/oracle.go); a violation is shrunk to the
## shortest operations that still show it. CHAOSFLAGS passes more flags
## (-shards, -faults, -replay; see go run ./hack/chaos -help)
SEED     ?= 0
DURATION ?= 2m
chaos: controlplane
	$(GO) run ./hack/chaos -seed $(SEED) -duration $(DURATION) $(CHAOSFLAGS)

## cluster-up / cluster-down: a local control plane for people (kubeconfig in .kreact-dev/)
cluster-up: controlplane
	$(GO) run ./hack/cluster up

cluster-down:
	$(GO) run ./hack/cluster down

clean:
	rm -rf $(BIN) .kreact-dev $(DIST)
