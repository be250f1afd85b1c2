#!/bin/sh
# Rebuilds logger.pcap: real util-linux logger datagrams (RFC 3164 and
# RFC 5424) sent to 127.0.0.1:15514, where socat swallows them while
# tcpdump records them. Needs root, bsdutils (logger), tcpdump and socat.
# TZ=UTC because RFC 3164 timestamps carry no zone. See README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
port=15514
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
socat -u UDP-RECV:$port,bind=127.0.0.1 /dev/null &
sink=$!
tcpdump -i lo -n -U -w "$work/logger.pcap" "udp and dst port $port" 2>"$work/tcpdump.log" &
dump=$!
sleep 1
l() { TZ=UTC logger -d -n 127.0.0.1 -P $port "$@"; }
l --rfc3164 -t app -p local0.warning "msg"
l --rfc3164 -t sshd --id=4242 -p auth.err "Failed password for root from 203.0.113.9 port 52100 ssh2"
l --rfc3164 -t app -p local7.debug "ünïcödé and a	tab"
l --rfc5424 -t app -p local0.warning "msg 5424"
l --rfc5424=notq -t app --msgid ID47 -p daemon.notice "no time quality"
l --rfc5424 --sd-id zoo@123 --sd-param tiger=\"hungry\" -t app -p user.info "with structured data"
l --rfc3164 -t bulk -p local0.info -f "$here/lines.txt"
sleep 1
kill -INT "$dump"
wait "$dump" || true
kill "$sink"
cat "$work/tcpdump.log" >&2
cp "$work/logger.pcap" "$here/logger.pcap"
