#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit incast across two network namespaces joined by a veth pair, with
# the kernel datapath doing the harm: a tbf bottleneck that three senders
# share (aggregate against the rate, fairness against what `rdmakit capture`
# saw on the receiver's link), CE marking by nftables (CE marks, CNPs and the
# host's InCEPkts in the report; none without marking), and random loss at
# the receiver (retransmissions in the report, every byte still verified).
#
# Needs root, ip and nft; skipped without them (failed under CI=true).  The
# namespaces and every process started here are removed in teardown.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper
load netns_helper

setup() {
	setup_rdmakit
	netns_pair rki
}

teardown() {
	netns_pair_down
}

# run_incast SENDER_ARGS -- COORDINATOR_ARGS: a --local 3 incast from NS_S
# into NS_R; the coordinator's JSON document ends up in $DOC.
run_incast() {
	local sargs=() cargs=() i
	while [[ $# -gt 0 && $1 != -- ]]; do sargs+=("$1"); shift; done
	[[ ${1:-} == -- ]] && shift
	cargs=("$@")
	bg_ns "$BATS_TEST_TMPDIR/co.json" "$BATS_TEST_TMPDIR/co.err" "$NS_R" \
		"$RDMAKIT" incast --serve --senders 3 --json "${cargs[@]}"
	local co=$BG
	wait_listen_ns "$NS_R" 18515
	run -0 timeout -k 2 60 ip netns exec "$NS_S" "$RDMAKIT" incast --local 3 "${sargs[@]}" "$IP_R"
	wait_pid "$co" 20
	[[ $WAIT_RC -eq 0 ]] || fail "the coordinator exited $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/co.err")"
	DOC=$BATS_TEST_TMPDIR/co.json
}

# check PYTHON: PYTHON with r = the results of $DOC, c = its counters.
check() {
	python3 - "$DOC" "${@:2}" <<EOF
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
c = r["counters"]
$1
EOF
}

@test "three senders share a 200 Mbit/s tbf bottleneck: aggregate near the rate, and the fairness the capture saw" {
	# The bottleneck: the senders' egress, a real queue with tail drop.
	ip netns exec "$NS_S" tc qdisc add dev "$VETH_S" root tbf rate 200mbit burst 16kb limit 1mb
	bg_ns "$BATS_TEST_TMPDIR/cap.out" "$BATS_TEST_TMPDIR/cap.err" "$NS_R" \
		"$RDMAKIT" capture -i "$VETH_R" -w "$BATS_TEST_TMPDIR/run.pcap" -s 128
	local cap=$BG
	sleep 0.5
	# Little in flight per flow, so the queue never overflows nor outlasts
	# the ACK timeout: the link, not loss recovery, sets the pace.
	run_incast -D 3 -s 16k -t 4 -- --link-gbps 0.2
	kill -INT "$cap"
	wait_pid "$cap" 10
	run -0 "$RDMAKIT" capture -r "$BATS_TEST_TMPDIR/run.pcap" --summary --json
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/cap.json"
	check '
cap = json.load(open(sys.argv[2]))["summary"]
f = r["flows"]
assert all(x["status"] == "ok" for x in f), f
agg = r["aggregate"]
# 1024-byte payloads in 1082-byte frames: at most 94.6% of the rate is goodput.
assert 0.85 * 0.2 <= agg["goodput_gbps"] <= 1.02 * 0.2, agg
assert abs(agg["link_share"] - agg["goodput_gbps"] / 0.2) < 1e-9
# The same flows, seen on the wire: the data direction, one per receiver QP.
data = [x for x in cap["flows"] if x["src"] == "'"$IP_S"'" and x["payload_bytes"] > 100000]
assert len(data) == 3, [(x["src"], x["dest_qp"], x["payload_bytes"]) for x in cap["flows"]]
assert all(x["retransmits"] == 0 and x["icrc_bad"] == 0 for x in data)
# Every flow ran the same -D seconds: bytes stand for goodput.
b = [x["payload_bytes"] for x in data]
jain_wire = sum(b) ** 2 / (len(b) * sum(v * v for v in b))
assert abs(jain_wire - r["fairness_jain"]) < 0.02, (jain_wire, r["fairness_jain"])
# The report counts what the wire carried (the capture may miss a little at the edges).
rep = sum(x["bytes"] for x in f)
assert 0.97 * rep <= sum(b) <= 1.03 * rep, (sum(b), rep)
' "$BATS_TEST_TMPDIR/cap.json"
}

# mark_ce: 5% of the senders' RoCEv2 packets leave marked CE; the
# receiver counts ECN at IP input.
mark_ce() {
	ip netns exec "$NS_S" nft -f - <<-'EOF'
		table ip rkecn {
			counter marked { }
			chain out {
				type filter hook output priority 0;
				udp dport 4791 numgen random mod 100 < 5 counter name marked ip ecn set ce
			}
		}
	EOF
}

@test "CE marks on the path: the report shows CE, CNPs sent and handled, and the receiver host's InCEPkts" {
	require_tool nft "marking packets CE"
	mark_ce
	run_incast -D 2 -s 16k
	check '
e, ip = c["engine"], c["IpExt"]
assert e["ce_rx"] > 0 and e["cnps_tx"] > 0 and e["cnps_rx"] > 0, e
# DCQCN is on: every CNP a sender received cut its rate.
assert e["cnps_handled"] == e["cnps_rx"], e
# The kernel and the engine count the same CE packets (sampled a moment apart).
assert e["ce_rx"] > 0 and abs(ip["InCEPkts"] - e["ce_rx"]) <= 0.05 * e["ce_rx"], (ip, e)
assert all(x["status"] == "ok" for x in r["flows"])
'
}

@test "CE marks with --dcqcn off on the senders: CNPs arrive, none is acted on" {
	require_tool nft "marking packets CE"
	mark_ce
	run_incast -D 2 -s 16k --dcqcn off
	check '
e = c["engine"]
assert e["cnps_rx"] > 0 and e["cnps_handled"] == 0, e
assert all(x["status"] == "ok" for x in r["flows"])
'
}

@test "no marking: no CE, no CNPs in the report" {
	run_incast -D 1 -s 16k
	check '
e, ip = c["engine"], c["IpExt"]
assert e["ce_rx"] == 0 and e["cnps_tx"] == 0 and e["cnps_rx"] == 0, e
assert ip["InCEPkts"] == 0 and ip["InECT0Pkts"] > 0, ip
'
}

@test "1% loss at the receiver: retransmissions in the report, every flow complete and verified" {
	require_tool nft "loss in the kernel datapath"
	ip netns exec "$NS_R" nft -f - <<-'EOF'
		table ip rkloss {
			chain pre {
				type filter hook prerouting priority 0;
				udp dport 4791 numgen random mod 100 < 1 counter drop
			}
		}
	EOF
	run_incast --bytes 2m -s 64k --verify
	check '
e = c["engine"]
f = r["flows"]
assert all(x["status"] == "ok" and x["bytes"] == 2 * 2**20 for x in f), f
# Go-back-N: NAK(PSN sequence error) from the receiver, resent by the senders.
assert e["retransmits"] > 0 and e["seq_naks_tx"] > 0 and e["seq_naks_rx"] > 0, e
assert r["fct_us"]["max"] >= r["fct_us"]["p50"] > 0
'
}
