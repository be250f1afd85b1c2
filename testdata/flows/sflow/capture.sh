#!/bin/sh
# Rebuilds sflow.pcap: pmacctd (sfprobe plugin, sampling rate 1) reads
# in.pcap and sends sFlow v5 to 127.0.0.1:16343, where socat swallows it
# (a listener, so the kernel sends no ICMP port-unreachable back) while
# tcpdump records every datagram. Needs root, pmacct, tcpdump and socat
# (apt-get install -y pmacct tcpdump socat). See README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
port=16343
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/in.pcap" "$work/in.pcap"
cat >"$work/pmacctd.conf" <<EOF
daemonize: false
pcap_savefile: in.pcap
plugins: sfprobe[sf]
sfprobe_receiver[sf]: 127.0.0.1:$port
sfprobe_agentip[sf]: 127.0.0.1
sampling_rate[sf]: 1
plugin_pipe_size: 104857600
plugin_buffer_size: 102400
EOF
cd "$work"
socat -u UDP-RECV:$port,bind=127.0.0.1 /dev/null &
sink=$!
tcpdump -i lo -n -U -w "$work/sflow.pcap" "udp and dst port $port" 2>"$work/tcpdump.log" &
dump=$!
sleep 1
pmacctd -f pmacctd.conf >"$work/pmacctd.log" 2>&1
sleep 1
kill -INT "$dump"
wait "$dump" || true
kill "$sink"
cat "$work/tcpdump.log" >&2
cp "$work/sflow.pcap" "$here/sflow.pcap"
