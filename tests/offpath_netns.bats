#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# An off-path attacker against a running soft engine, in the kernel
# datapath: a bw --op read --verify test runs between two namespaces while
# a third namespace, joined to the server's by its own veth, sends RDMA
# WRITEs with valid ICRCs (tests/tools/inject) at the server's real QPN
# with guessed rkeys, PSNs and addresses: first from its own address, then
# spoofing the client's (rp_filter off on the server).  The server's memory
# is what the client reads and verifies, so a single byte written by the
# attacker fails the run; each packet must be counted under its reason.
# A UD QP takes datagrams from anyone with its QPN and Q_Key: under another
# Q_Key each is counted and dropped, under the right one --verify must
# catch what is not the client's data (the negative case of UD --verify).
#
# Needs root and ip; skipped without them (failed under CI=true).

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper
load netns_helper

setup() {
	setup_rdmakit
	netns_pair rko
	NS_X=rkox-$$-$BATS_TEST_NUMBER
	VETH_X=rkox$$n$BATS_TEST_NUMBER
	VETH_RX=rkoy$$n$BATS_TEST_NUMBER
	IP_X=198.18.10.2
	ip netns add "$NS_X"
	ip link add "$VETH_RX" netns "$NS_R" type veth peer name "$VETH_X" netns "$NS_X"
	ip -n "$NS_R" addr add 198.18.10.1/24 dev "$VETH_RX"
	ip -n "$NS_X" addr add "$IP_X/24" dev "$VETH_X"
	ip -n "$NS_R" link set "$VETH_RX" up
	ip -n "$NS_X" link set "$VETH_X" up
	ip -n "$NS_X" link set lo up
	ip -n "$NS_X" route add 198.18.9.0/24 via 198.18.10.1
	# Spoofed sources arrive on the wrong interface: let them in.
	ip netns exec "$NS_R" sysctl -qw net.ipv4.conf.all.rp_filter=0
	ip netns exec "$NS_R" sysctl -qw "net.ipv4.conf.$VETH_RX.rp_filter=0"
	INJECT=$BATS_TEST_DIRNAME/../build/tests/tools/inject
	[[ -x $INJECT ]] || _require_missing "$INJECT is not built in CI: make check builds it" \
		"$INJECT is not built: run make unit-bins"
}

teardown() {
	netns_pair_down
	[[ -n ${NS_X:-} ]] && ip netns del "$NS_X" 2>/dev/null
	true
}

# counters NAME...: the server engine's counters NAME..., one line, from
# one sample of rdmakit top (their names verbatim, as top shows them).
counters() {
	"$RDMAKIT" -j top -n 1 -d 0.1 | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = [e for e in d["engines"] if e["name"].startswith("soft " + sys.argv[1] + ":")]
assert len(e) == 1, [x["name"] for x in d["engines"]]
print(" ".join(str(e[0]["counters"][n]["value"]) for n in sys.argv[2:]))' "$IP_R" "$@"
}

# server_qpn: the QPN of the server engine's one QP.
server_qpn() {
	"$RDMAKIT" -j top -n 1 -d 0.1 | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = [e for e in d["engines"] if e["name"].startswith("soft " + sys.argv[1] + ":")][0]
q = sorted({k.split("/")[0] for k in e["counters"] if k.startswith("qp ")})
assert len(q) == 1, q
print(q[0].split()[1])' "$IP_R"
}

@test "off-path WRITEs with valid ICRCs, from the attacker's address and then spoofing the client's: 0 bytes changed, each counted" {
	bg_ns "$BATS_TEST_TMPDIR/srv.out" "$BATS_TEST_TMPDIR/srv.err" "$NS_R" "$RDMAKIT" bw --op read
	local srv=$BG
	wait_listen_ns "$NS_R" 18515
	bg_ns "$BATS_TEST_TMPDIR/cli.out" "$BATS_TEST_TMPDIR/cli.err" "$NS_S" \
		"$RDMAKIT" -j bw --op read -s 64k -D 20 --verify "$IP_R"
	local cli=$BG
	local qpn="" i
	for ((i = 0; i < 40; i++)); do
		sleep 0.1
		qpn=$(server_qpn 2>/dev/null) && break
		qpn=""
	done
	[[ -n $qpn ]] || fail "no server QP in rdmakit top: $("$RDMAKIT" -j top -n 1 | python3 -c 'import json,sys; print([e["name"] for e in json.load(sys.stdin)["engines"]])'); $(server_qpn 2>&1 | tail -2); client: $(cat "$BATS_TEST_TMPDIR/cli.err")"
	local wp0 wp1 wp2 oos1 oos2 dup1 dup2 rcv1 rcv2 sent1 sent2 gone
	gone="the server engine is gone"
	read -r wp0 < <(counters wrong_peer_drops) || fail "$gone before phase 1"
	# Phase 1: from the attacker's own address, the right QPN.
	run -0 ip netns exec "$NS_X" "$INJECT" "$IP_X" "$IP_R" "$qpn" 4 5000
	sent1=${output#sent }
	sleep 0.3
	read -r wp1 rcv1 oos1 dup1 < <(counters wrong_peer_drops rcvbuf_drops out_of_sequence duplicates) ||
		fail "$gone after phase 1"
	# Phase 2: spoofing the client's address, the right QPN.
	run -0 ip netns exec "$NS_X" "$INJECT" "$IP_S" "$IP_R" "$qpn" 4 5000
	sent2=${output#sent }
	sleep 0.3
	read -r wp2 rcv2 oos2 dup2 < <(counters wrong_peer_drops rcvbuf_drops out_of_sequence duplicates) ||
		fail "$gone after phase 2; client: $(cat "$BATS_TEST_TMPDIR/cli.err"); server: $(cat "$BATS_TEST_TMPDIR/srv.err" "$BATS_TEST_TMPDIR/srv.out" | tail -5)"
	echo "# phase 1: sent $sent1, wrong_peer_drops +$((wp1 - wp0)); phase 2: sent $sent2, out_of_sequence +$((oos2 - oos1)), duplicates +$((dup2 - dup1)), wrong_peer_drops +$((wp2 - wp1)); rcvbuf_drops $rcv2" >&3
	# Every packet from the wrong address is dropped as such (the host may
	# have dropped some before the engine saw them: counted too).
	(( sent1 > 10000 ))
	(( wp1 - wp0 <= sent1 && wp1 - wp0 + rcv1 >= sent1 ))
	# Spoofed ones pass the address check and fall outside the PSN window:
	# ahead (one sequence NAK per episode) or behind (duplicates, re-ACKed).
	(( sent2 > 10000 ))
	(( wp2 == wp1 ))
	(( (oos2 - oos1) + (dup2 - dup1) + (rcv2 - rcv1) >= sent2 ))
	# The client's READs of the server's memory verified every byte.
	wait_pid "$cli" 30
	[[ $WAIT_RC -eq 0 ]] || fail "the client exited $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/cli.err")"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["params"]["verify"] is True and d["errors"] == [], d
assert d["results"][0]["bytes"] == 65536 and d["results"][0]["iterations"] > 0, d' "$BATS_TEST_TMPDIR/cli.out"
	wait_pid "$srv" 20
}

@test "UD: an off-path sender's datagrams at the server's QPN: under another Q_Key counted and dropped; under the right one taken, and --verify fails the run (exit 1)" {
	bg_ns "$BATS_TEST_TMPDIR/srv.out" "$BATS_TEST_TMPDIR/srv.err" "$NS_R" "$RDMAKIT" -j bw \
		-c UD --timeout 30
	local srv=$BG
	wait_listen_ns "$NS_R" 18515
	bg_ns "$BATS_TEST_TMPDIR/cli.out" "$BATS_TEST_TMPDIR/cli.err" "$NS_S" \
		"$RDMAKIT" -j bw -c UD -s 1000 -D 8 --verify --rate_limit 20000 --rate_units p "$IP_R"
	local cli=$BG
	local qpn="" i q0 q1 r0 r1 sent
	for ((i = 0; i < 40; i++)); do
		sleep 0.1
		qpn=$(server_qpn 2>/dev/null) && break
		qpn=""
	done
	[[ -n $qpn ]] || fail "no server QP in rdmakit top; client: $(cat "$BATS_TEST_TMPDIR/cli.err")"
	read -r q0 r0 < <(counters qkey_drops rcvbuf_drops) || fail "the server engine is gone"
	# Another Q_Key: a UD QP drops it, counted (or the host dropped it
	# first; the client is paced so that its own stream leaves room).
	run -0 ip netns exec "$NS_X" "$INJECT" "$IP_X" "$IP_R" "$qpn" 1 2000 ud 0x22222222 1000
	sent=${output#sent }
	sleep 0.3
	read -r q1 r1 < <(counters qkey_drops rcvbuf_drops) || fail "the server engine is gone"
	echo "# another Q_Key: sent $sent, qkey_drops +$((q1 - q0)), rcvbuf_drops +$((r1 - r0))" >&3
	(( sent > 1000 ))
	if ((r1 == r0)); then
		((q1 - q0 == sent))
	else	# the host dropped some first: they cannot be told apart
		((q1 - q0 <= sent && q1 - q0 + r1 - r0 >= sent))
	fi
	# perftest's Q_Key, which the QP takes from anyone: 0x66 bytes are not
	# the client's pattern, and the server's check says so.
	run -0 ip netns exec "$NS_X" "$INJECT" "$IP_X" "$IP_R" "$qpn" 0.5 2000 ud 0x11111111 1000
	wait_pid "$cli" 30
	assert_equal "$WAIT_RC" 1
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["params"]["verify"] is True and d["results"][0]["iterations"] > 0, d
assert any("--verify: data mismatch" in e for e in d["errors"]), d["errors"]
print("# client:", d["errors"])' "$BATS_TEST_TMPDIR/cli.out" >&3
	wait_pid "$srv" 20
}
