package ebpf

// The BPF objects are generated from attr.bpf.c by bpf2go (pinned in
// go.mod's tool block) and committed, so `go build` needs no clang.
// `make bpf` regenerates them and records the source's hash in
// attr.bpf.c.sha256; TestObjectsCurrent fails when the source changed
// without a regeneration. Both byte orders are generated so every Linux
// architecture builds.
//go:generate go tool bpf2go -cc clang -tags linux -type flow_key -type flow_val -type slot_desc -type slot_cnt -output-stem attr attr attr.bpf.c -- -O2 -g -Wall -Werror
