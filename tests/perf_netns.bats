#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bw and lat between two network namespaces on a veth pair (198.18.0.0/15
# only): every operation verified; 2% loss at the receiver (nftables, in the
# kernel datapath) repaired with retransmissions the JSON shows; a server
# killed mid-run ends the client within its timeout; and the packets on the
# veth, captured by rdmakit and read by tshark, are real RoCEv2 with good ICRCs.

bats_require_minimum_version 1.5.0

load test_helper

setup() {
	setup_rdmakit
	require_root "network namespaces"
	require_tool ip "network namespaces"
	NS_A=rkpa$$ NS_B=rkpb$$
	ip netns add "$NS_A"
	ip netns add "$NS_B"
	ip link add va$$ netns "$NS_A" type veth peer name vb$$ netns "$NS_B"
	ip -n "$NS_A" addr add 198.18.7.1/24 dev va$$
	ip -n "$NS_B" addr add 198.18.7.2/24 dev vb$$
	for ns in "$NS_A" "$NS_B"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$NS_A" link set va$$ up
	ip -n "$NS_B" link set vb$$ up
	# Every RoCEv2 packet crosses (and is impaired) on its own.
	if command -v ethtool >/dev/null; then
		ip netns exec "$NS_A" ethtool -K va$$ tx-udp-segmentation off gro off >/dev/null 2>&1
		ip netns exec "$NS_B" ethtool -K vb$$ tx-udp-segmentation off gro off >/dev/null 2>&1
	fi
	SRV=''
}

teardown() {
	[[ -n $SRV ]] && kill -9 "$SRV" 2>/dev/null
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	true
}

# Starts `rdmakit CMD` as the server in namespace B.
serve() {
	ip netns exec "$NS_B" "$RDMAKIT" "$@" >"$BATS_TEST_TMPDIR/srv.out" 2>&1 &
	SRV=$!
	sleep 0.5
}

@test "netns: bw and lat, every operation, verified" {
	local op
	for op in write read send atomic; do
		serve bw
		run --separate-stderr ip netns exec "$NS_A" "$RDMAKIT" -j bw 198.18.7.2 --op "$op" \
			-s 16k -n 300 --verify
		wait "$SRV"
		assert_success
		json_eval 'r = d["results"][0]; assert r["iterations"] == 300 and not d["errors"], d'
		json_eval 'assert d["params"]["local_address"] == "198.18.7.1", d["params"]'
		serve lat
		run --separate-stderr ip netns exec "$NS_A" "$RDMAKIT" -j lat 198.18.7.2 --op "$op" \
			-n 300 --verify
		wait "$SRV"
		assert_success
		json_eval 'r = d["results"][0]; assert r["iterations"] == 300 and r["p99_us"] > 0, d'
	done
}

@test "netns: 2% loss at the receiver is repaired, data verified, retransmits counted" {
	require_tool nft "loss in the kernel datapath"
	ip netns exec "$NS_B" nft -f - <<-'EOF2'
	table inet rkloss {
		chain pre {
			type filter hook prerouting priority 0;
			udp dport 4791 numgen random mod 100 < 2 drop
		}
	}
	EOF2
	local op
	for op in write read send; do
		serve bw
		run --separate-stderr ip netns exec "$NS_A" "$RDMAKIT" -j bw 198.18.7.2 --op "$op" \
			-s 64k -n 400 --verify
		wait "$SRV"
		assert_success
		json_eval 'r = d["results"][0]; assert r["iterations"] == 400, r'
		[[ $op == read ]] || json_eval 'assert d["results"][0]["retransmits"] > 0, d["results"]'
	done
	# The drops really happened in the kernel.
	run ip netns exec "$NS_B" nft list table inet rkloss
	assert_success
}

@test "netns: the server killed mid-run: the client ends with exit 3 within its timeout" {
	serve bw
	ip netns exec "$NS_A" "$RDMAKIT" bw 198.18.7.2 -D 30 -u 12 --retry-cnt 3 --timeout 3 \
		>"$BATS_TEST_TMPDIR/cli.out" 2>"$BATS_TEST_TMPDIR/cli.err" &
	local cli=$! t0=$SECONDS rc=0
	sleep 1
	kill -9 "$SRV"
	wait "$cli" || rc=$?
	assert_equal "$rc" 3
	(( SECONDS - t0 <= 8 ))
	run cat "$BATS_TEST_TMPDIR/cli.err"
	assert_output --partial "transport retry counter exceeded"
}

@test "netns: the packets on the veth are RoCEv2 with good ICRCs, and tshark agrees" {
	require_tool tshark "ground truth"
	local f=$BATS_TEST_TMPDIR/bw.pcap
	ip netns exec "$NS_B" "$RDMAKIT" capture -i vb$$ -w "$f" -U >/dev/null 2>&1 &
	local cap=$!
	sleep 0.5
	serve bw
	ip netns exec "$NS_A" "$RDMAKIT" bw 198.18.7.2 --op write -s 4k -n 50 >/dev/null
	wait "$SRV"
	serve bw
	ip netns exec "$NS_A" "$RDMAKIT" bw 198.18.7.2 --op read -s 4k -n 50 >/dev/null
	wait "$SRV"
	sleep 0.3
	kill -INT "$cap"
	wait "$cap" || true
	run --separate-stderr "$RDMAKIT" -j capture -r "$f"
	assert_success
	echo "$output" | python3 -c '
import json, sys
pk = [json.loads(l) for l in sys.stdin if not l.startswith("{\"summary\"")]
assert len(pk) > 100, len(pk)
assert {p["icrc"] for p in pk} == {"ok"}, {p["icrc"] for p in pk}
assert {p["dst_port"] for p in pk} == {4791}
ops = {p["opcode_name"] for p in pk}
# 4 KiB messages at the RoCE MTU of the veth (1024): First, Middle, Last.
assert {"RC RDMA Write First", "RC RDMA Write Middle", "RC RDMA Write Last",
        "RC Acknowledge", "RC RDMA Read Request", "RC RDMA Read Response First",
        "RC RDMA Read Response Last"} <= ops, ops
print(" ".join(str(p["opcode"]) for p in pk))' >"$BATS_TEST_TMPDIR/ours"
	tshark -n -r "$f" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null |
		tr '\n' ' ' | sed 's/ $//' >"$BATS_TEST_TMPDIR/theirs"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/theirs")" "$(cat "$BATS_TEST_TMPDIR/ours")"
}
