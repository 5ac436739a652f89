#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The soft engine's RC transport across two network namespaces, with the
# kernel datapath doing the harm: random loss of 0.1% and 5% at the receiver
# (bw --verify still moves every byte right), and a slow link behind a deep
# host queue, which must not pass for loss (the ACK timeout runs from when a
# packet leaves the host, as on an RNIC).
#
# Needs root, ip, nft and tc; skipped without them (failed under CI=true).

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper
load netns_helper

setup() {
	setup_rdmakit
	netns_pair rkt
}

teardown() {
	netns_pair_down
}

# bw_run CLIENT_ARGS...: a bw server in NS_R, the client in NS_S (JSON in
# $output); both must succeed.
bw_run() {
	bg_ns "$BATS_TEST_TMPDIR/srv.out" "$BATS_TEST_TMPDIR/srv.err" "$NS_R" "$RDMAKIT" bw
	local srv=$BG
	wait_listen_ns "$NS_R" 18515
	run -0 timeout -k 2 90 ip netns exec "$NS_S" "$RDMAKIT" -j bw "$@" "$IP_R"
	wait_pid "$srv" 20
	[[ $WAIT_RC -eq 0 ]] || fail "the server exited $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/srv.err")"
}

# loss PERCENT_TIMES_10: drops that share of RoCEv2 packets at the receiver.
loss() {
	ip netns exec "$NS_R" nft -f - <<-EOF2
		table ip rkloss {
			counter dropped { }
			chain pre {
				type filter hook prerouting priority 0;
				udp dport 4791 numgen random mod 1000 < $1 counter name dropped drop
			}
		}
	EOF2
}

dropped() {
	ip netns exec "$NS_R" nft list counter ip rkloss dropped | awk '/packets/ { print $2 }'
}

@test "0.1% loss: bw --verify moves every byte right; the losses are repaired by retransmission" {
	require_tool nft "loss in the kernel datapath"
	loss 1
	bw_run --verify -D 2 -s 64k
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])["results"][0]
assert r["iterations"] > 0 and r["retransmits"] > 0, r
' "$output"
	(( $(dropped) > 0 ))
}

@test "5% loss: bw --verify still completes with every byte right" {
	require_tool nft "loss in the kernel datapath"
	loss 50
	bw_run --verify -D 2 -s 4k -t 16
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])["results"][0]
assert r["iterations"] > 0 and r["retransmits"] > 0, r
' "$output"
	(( $(dropped) > 100 ))
}

@test "a 100 Mbit/s link behind a 16 MB host queue is slow, not lossy: no timeouts, no retransmissions" {
	# Before: several MB of ours sat in the host queue, ACKs came back after
	# the 67 ms timeout, and the run ended in 'transport retry counter exceeded'.
	ip netns exec "$NS_S" tc qdisc add dev "$VETH_S" root tbf rate 100mbit burst 12500 limit 16mb
	bw_run -q 4 -D 3 -s 64k
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])["results"][0]
assert r["retransmits"] == 0, r
# 1024-byte payloads in 1082-byte frames: at most 94.6 Mbit/s of goodput.
assert 0.08 <= r["bw_avg_gbps"] <= 0.1, r
' "$output"
}
