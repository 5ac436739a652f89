#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The soft engine's RC transport under each impairment the kernel datapath
# can apply here (no netem: nftables, see ../shared/reference/kernel-here.md),
# in both directions between two namespaces, one RoCEv2 packet per frame:
# random loss of 0.1%, 1% and 5% (prerouting), duplication of 5% of the
# sends (a netdev-family egress chain that dups each chosen one to its own
# device), payload corruption of 1% (a byte rewritten: the ICRC must catch
# it) and CE marking of 10%.  Under each: SEND, WRITE and READ of 1 byte,
# 4 KiB + 1, 1 MiB and 8 MiB, and both atomics, every run --verify (every
# byte, every atomic's original value); and the engine's counters, summed
# over the client's runs, show the work: retransmissions, duplicates, ICRC
# failures, CNPs.  Reordering is covered in tests/unit/test_soft.c (this
# kernel cannot reorder on a veth).
#
# Needs root, ip and nft; skipped without them (failed under CI=true).

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper
load netns_helper

setup() {
	setup_rdmakit
	require_tool nft "impairments in the kernel datapath"
	netns_pair rki
}

teardown() {
	netns_pair_down
}

# nft_both RULESET: the same nftables ruleset in both namespaces (@DEV@ is
# each namespace's veth).
nft_both() {
	ip netns exec "$NS_R" nft -f - <<<"${1//@DEV@/$VETH_R}"
	ip netns exec "$NS_S" nft -f - <<<"${1//@DEV@/$VETH_S}"
}

# nft_hits: packets the rules' counters matched, both namespaces together.
nft_hits() {
	{
		ip netns exec "$NS_R" nft list ruleset
		ip netns exec "$NS_S" nft list ruleset
	} | awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}

# nft_hit_some WHAT: the rules matched some packets; else fails with what
# they and the client's engine counted.
nft_hit_some() {
	local hits
	hits=$(nft_hits)
	((hits > 0)) || fail "nothing was $1: the rules matched $hits packets; client counters $(cat "$BATS_TEST_TMPDIR/sum.json")"
}

prerouting() {
	nft_both "table ip rkimp {
	chain pre {
		type filter hook prerouting priority 0;
		$1
	}
}"
}

# matrix: a --persistent bw server in NS_R, and from NS_S every op and size
# with --verify.  Fails on the first run that does not complete verified;
# leaves the client's counters summed over all runs in $BATS_TEST_TMPDIR/sum.json.
matrix() {
	bg_ns "$BATS_TEST_TMPDIR/srv.out" "$BATS_TEST_TMPDIR/srv.err" "$NS_R" \
		"$RDMAKIT" bw --persistent --timeout 60
	wait_listen_ns "$NS_R" 18515
	local runs=() args n=0
	local op
	host_drops >"$BATS_TEST_TMPDIR/host_drops.before"
	for op in send write read; do
		runs+=("--op $op -s 1 -n 200" "--op $op -s 4097 -n 100" "--op $op -s 1m -n 10"
		       "--op $op -s 8m -n 5")
	done
	runs+=("--op atomic -n 200" "-A CMP_AND_SWAP -n 100")
	for args in "${runs[@]}"; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		run timeout -k 2 240 ip netns exec "$NS_S" "$RDMAKIT" -j bw --timeout 60 --verify \
			$args "$IP_R"
		[[ $status -eq 0 ]] || fail "bw $args: exit $status: $(tail -c 600 <<<"$output"); server: $(tail -c 600 "$BATS_TEST_TMPDIR/srv.err")"
		printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/run$n.json"
		json_eval '(r,) = d["results"]
want = int(sys.argv[2].split("-n ")[1])
assert not d["errors"] and r["iterations"] == want and d["params"]["verify"] is True, d' "$args"
	done
	python3 - "$BATS_TEST_TMPDIR"/run*.json >"$BATS_TEST_TMPDIR/sum.json" <<-'EOF'
		import json, sys
		total = {}
		for f in sys.argv[1:]:
		    for k, v in json.load(open(f))["results"][0]["counters"].items():
		        total[k] = total.get(k, 0) + v
		print(json.dumps(total))
	EOF
	echo "# $(cat "$BATS_TEST_TMPDIR/sum.json") nft matched $(nft_hits)" >&3
	host_drops >"$BATS_TEST_TMPDIR/host_drops.after"
	python3 -c '
import json, sys
a, b = (list(map(int, open(f).read().split())) for f in sys.argv[1:3])
print(json.dumps({"host_drops": sum(a) - sum(b)}))' "$BATS_TEST_TMPDIR/host_drops.after" \
		"$BATS_TEST_TMPDIR/host_drops.before" >"$BATS_TEST_TMPDIR/host_drops.json"
	echo "# $(cat "$BATS_TEST_TMPDIR/host_drops.json")" >&3
}

# host_drops: what the two hosts dropped on their own, one number per
# line: each namespace's UDP RcvbufErrors and SndbufErrors (/proc/net/snmp:
# a full socket buffer) and its veth's rx and tx drops (a full backlog).
host_drops() {
	local ns dev
	for ns in "$NS_S:$VETH_S" "$NS_R:$VETH_R"; do
		dev=${ns#*:}
		ns=${ns%%:*}
		# shellcheck disable=SC2016  # awk's own $fields
		ip netns exec "$ns" awk '/^Udp:/ { if (!h) { for (i = 2; i <= NF; i++) col[$i] = i; h = 1 }
			else print $col["RcvbufErrors"] "\n" $col["SndbufErrors"] }' /proc/net/snmp
		ip -n "$ns" -s -j link show dev "$dev" |
			python3 -c 'import json, sys; (l,) = json.load(sys.stdin); s = l["stats64"]
print(s["rx"]["dropped"]); print(s["tx"]["dropped"])'
	done
}

# sum_check CODE: Python CODE with c = the client's summed counters and s
# = what the two hosts dropped on their own over the runs (host_drops).
sum_check() {
	run python3 -c "import json, sys
c = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
$1
print('ok')" "$BATS_TEST_TMPDIR/sum.json" "$BATS_TEST_TMPDIR/host_drops.json"
	assert_output ok
}

loss_matrix() {
	prerouting "udp dport 4791 numgen random mod 1000 < $1 counter drop"
	matrix
	nft_hit_some "dropped"
	sum_check 'assert c["retransmits"] > 0 and c["icrc_errors"] == 0, c'
}

@test "impair: 0.1% loss both ways: every op and size from 1 B to 8 MiB verified, losses repaired" {
	loss_matrix 1
}

@test "impair: 1% loss both ways: every op and size from 1 B to 8 MiB verified, losses repaired" {
	loss_matrix 10
}

@test "impair: 5% loss both ways: every op and size from 1 B to 8 MiB verified, losses repaired" {
	loss_matrix 50
}

@test "impair: 5% duplication both ways: every op and size verified, duplicates seen and dropped" {
	# The dup'd copy leaves through the same veth right behind the original.
	# The egress hook runs before a UDP GSO send is cut into packets, so 5%
	# of the sends (a whole batch each) arrive twice, not 5% of packets.
	nft_both "table netdev rkimp {
	chain out {
		type filter hook egress device \"@DEV@\" priority 0;
		udp dport 4791 numgen random mod 100 < 5 counter dup to \"@DEV@\"
	}
}"
	matrix
	nft_hit_some "duplicated"
	# The client sees the duplicated ACKs and READ responses; an atomic
	# never runs twice (--verify checks the values it returned).
	sum_check 'assert c["duplicates"] > 0, c'
}

@test "impair: 1% payload corruption both ways: the ICRC drops every corrupted packet, every byte verified" {
	# One byte 100 bytes into the UDP payload of packets long enough to have
	# it: inside the RoCE payload, which only the ICRC covers.
	prerouting "udp dport 4791 udp length > 200 numgen random mod 100 < 1 counter @ih,800,8 set 0x5a"
	matrix
	nft_hit_some "corrupted"
	# The client received corrupted READ responses and ACK-less data came
	# back as retransmissions.
	sum_check 'assert c["icrc_errors"] > 0 and c["retransmits"] > 0, c'
}

@test "impair: 10% CE marking both ways: CNPs each way, the senders react, every byte verified" {
	prerouting "udp dport 4791 numgen random mod 100 < 10 counter ip ecn set ce"
	matrix
	nft_hit_some "marked"
	# As a requester the client got CNPs for its SEND/WRITE data and cut its
	# rate; as the READ requester it saw marked responses and sent CNPs.
	sum_check 'assert c["cnps_rx"] > 0 and c["cnps_handled"] == c["cnps_rx"], c
assert c["ce_rx"] > 0 and c["cnps_tx"] > 0, c
# CE marks lose nothing: a retransmission needs a packet a host dropped
# (a loaded CI host can overflow a socket buffer), and its cause counted.
host = c["rcvbuf_drops"] + c["tx_drops"] + s["host_drops"]
assert c["retransmits"] == 0 or host > 0, ("retransmitted with no host drop", c, s)
assert c["retransmits"] == 0 or c["timeouts"] + c["naks_rx"] + c["out_of_sequence"] > 0, c'
}
