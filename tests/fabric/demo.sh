#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make fabric-demo`: a 7:1 incast across the spine-leaf fabric.  Builds the
# default Clos (2 spines, 2 leaves, 4 hosts per leaf), makes h1_1 the
# receiver and coordinator, starts one sender on each of the other seven
# hosts (three under its own leaf, four across the spines), prints the
# coordinator's report and tears everything down, also on failure or Ctrl-C.
#
# Environment: RATE (host links, default 300mbit: on two cores the hosts and
# routers forward that with CPU to spare, so the receiver's link is the
# bottleneck, not the CPU), DURATION (seconds, 5),
# ECN_THRESHOLD (bytes of queue before CE marks, default 1/10 of the queue).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rdmakit=$root/rdmakit
fabric="$root/tests/fabric/fabric.sh --prefix rkdemo-"
rate=${RATE:-300mbit}
duration=${DURATION:-5}
# Deep enough for every sender's messages in flight (7 x 4 x 16 KiB): the
# queue stands in for PFC's lossless links; ECN marks well before it fills.
queue=${QUEUE:-1000000}
threshold=${ECN_THRESHOLD:-$((queue / 10))}

[[ $(id -u) -eq 0 ]] || { echo "fabric-demo: needs root (network namespaces)" >&2; exit 3; }
[[ -x $rdmakit ]] || { echo "fabric-demo: build rdmakit first (make)" >&2; exit 3; }

pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	$fabric down >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

$fabric down >/dev/null 2>&1 || true
$fabric up --rate "$rate" --queue "$queue" --ecn-threshold "$threshold"
receiver=$($fabric addr h1_1)
out=$(mktemp)
# tc's rate units (kbit, mbit, gbit) in Gb/s, for the share of the link.
link_gbps=$(awk -v r="$rate" 'BEGIN { n = r + 0; u = substr(r, length(n "") + 1);
	print u ~ /^g/ ? n : u ~ /^m/ ? n / 1e3 : u ~ /^k/ ? n / 1e6 : n / 1e9 }')
$fabric exec h1_1 "$rdmakit" incast --serve --senders 7 --wait-timeout 30 \
	--link-gbps "$link_gbps" >"$out" 2>&1 &
coordinator=$!
pids+=("$coordinator")
sleep 0.5
echo "7:1 incast into h1_1 ($receiver) for $duration s over $rate host links..."
for h in h1_2 h1_3 h1_4 h2_1 h2_2 h2_3 h2_4; do
	$fabric exec "$h" "$rdmakit" incast -D "$duration" -s 16k -t 4 "$receiver" >/dev/null 2>&1 &
	pids+=("$!")
done
rc=0
wait "$coordinator" || rc=$?
cat "$out"
rm -f "$out"
exit "$rc"
