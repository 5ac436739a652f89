#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# bw and lat between two network namespaces joined by a veth pair, with
# addresses from 198.18.0.0/15 only (RFC 2544), living only inside the
# namespaces these tests create: every operation verified; 2% loss and
# payload corruption at the receiver (nftables, in the kernel datapath)
# repaired by retransmission; a server killed mid-run, a server that drops
# the control connection's SYNs and a host without a route, each ending the
# client with exit 3 within its timeouts; and the packets on the veth,
# captured by rdmakit and read back by rdmakit and by tshark, real RoCEv2 with
# good ICRCs and exactly the payload bw reports; a tbf bottleneck that bw
# measures within 10%, with the veth's byte count matching bw's bytes.
#
# Needs root and ip (iproute2); nft and tshark for the tests that use them.
# Skipped without them, failed under CI=true.  The namespaces, and every
# process started here, are removed in teardown, pass or fail.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper
load netns_helper

setup() {
	setup_rdmakit
	require_root "network namespaces and veth pairs"
	require_tool ip "network namespaces"
	# Unique per run and test; interface names stay under 16 bytes.
	NS_C=rkpc-$$-$BATS_TEST_NUMBER		# the client's
	NS_S=rkps-$$-$BATS_TEST_NUMBER		# the server's
	VETH_C=rpc$$n$BATS_TEST_NUMBER
	VETH_S=rps$$n$BATS_TEST_NUMBER
	IP_C=198.18.7.1
	IP_S=198.18.7.2
	BG_PIDS=()
	ip netns add "$NS_C"
	ip netns add "$NS_S"
	ip link add "$VETH_C" netns "$NS_C" type veth peer name "$VETH_S" netns "$NS_S"
	ip -n "$NS_C" addr add "$IP_C/24" dev "$VETH_C"
	ip -n "$NS_S" addr add "$IP_S/24" dev "$VETH_S"
	ip -n "$NS_C" link set lo up
	ip -n "$NS_S" link set lo up
	ip -n "$NS_C" link set "$VETH_C" up
	ip -n "$NS_S" link set "$VETH_S" up
	# Every RoCEv2 packet crosses, and is impaired, on its own: no UDP GSO
	# super-packets on the wire, no GRO aggregates at the receiver.
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$NS_C" ethtool -K "$VETH_C" tx-udp-segmentation off gro off >/dev/null 2>&1 || true
		ip netns exec "$NS_S" ethtool -K "$VETH_S" tx-udp-segmentation off gro off >/dev/null 2>&1 || true
	fi
	# A tbf dequeues on any CPU: keep each flow in order (netns_helper).
	flow_ordered "$NS_C" "$VETH_C"
	flow_ordered "$NS_S" "$VETH_S"
}

teardown() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[[ -n ${NS_C:-} ]] && ip netns del "$NS_C" 2>/dev/null
	[[ -n ${NS_S:-} ]] && ip netns del "$NS_S" 2>/dev/null
	true
}

# bg_ns (netns_helper): a command in a namespace, in the background.

# serve CMD ARGS...: 'rdmakit CMD ARGS' as the server in NS_S; returns once
# it listens.  Its pid is in SRV, its output in $BATS_TEST_TMPDIR/srv.*.
serve() {
	bg_ns "$BATS_TEST_TMPDIR/srv.out" "$BATS_TEST_TMPDIR/srv.err" "$NS_S" "$RDMAKIT" "$@"
	SRV=$BG
	local i
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$NS_S" ss -Htln 'sport = :18515' | grep -q . && return 0
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.05
	done
	fail "the server did not start: $(cat "$BATS_TEST_TMPDIR/srv.err")"
}

# client CMD ARGS...: 'rdmakit -j CMD IP_S ARGS' in NS_C under 'run', bounded
# by a 60 s watchdog; then the server must end (exit 0 unless the caller
# checks otherwise) within 10 s.
client() {
	local cmd=$1
	shift
	run --separate-stderr timeout -k 2 60 ip netns exec "$NS_C" "$RDMAKIT" -j "$cmd" "$IP_S" "$@"
}

# server_done: the server ended with exit 0 after serving one run.
server_done() {
	wait_pid "$SRV" 10 || return 1
	[[ $WAIT_RC -eq 0 ]] || fail "the server exited $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/srv.err")"
	grep -q '^ Runs served     : 1$' "$BATS_TEST_TMPDIR/srv.out" ||
		fail "the server did not serve one run: $(cat "$BATS_TEST_TMPDIR/srv.out")"
}

# udp_stat NS FIELD: a field of the Udp: lines of /proc/net/snmp in NS.
udp_stat() {
	ip netns exec "$1" cat /proc/net/snmp | awk -v f="$2" '
		/^Udp:/ && !h { for (i = 2; i <= NF; i++) col[$i] = i; h = 1; next }
		/^Udp:/ { print $col[f]; exit }'
}

# nft_count NS TABLE: the packets TABLE's counters saw in NS.
nft_count() {
	ip netns exec "$1" nft list table inet "$2" |
		sed -n 's/.*counter packets \([0-9]*\) bytes.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}

# --- every operation across the veth -------------------------------------------

@test "netns: bw, every operation (and -b both ways), verified across the veth" {
	local args
	for args in "--op write -s 64k -n 300" "--op read -s 64k -n 300" "--op send -s 64k -n 300" \
		"-A FETCH_AND_ADD -n 1000" "-A CMP_AND_SWAP -n 1000" "--op send -s 1m -n 20 -q 4" \
		"-b --op write -s 64k -n 300" "-b --op read -s 64k -n 300" "-b --op send -s 64k -n 300 -I 512"; do
		serve bw --timeout 10
		# shellcheck disable=SC2086
		client bw $args --verify
		assert_success
		json_eval '
p = d["params"]
assert p["engine"] == "soft" and p["role"] == "client", p
assert p["local_address"] == sys.argv[2] and p["peer"] == sys.argv[3] + ":18515", p
(r,) = d["results"]
assert r["iterations"] in (300, 1000, 20) and r["bw_avg_gbps"] > 0 and d["errors"] == [], d' \
			"$IP_C" "$IP_S"
		server_done
		grep -q "^ Local address   : $IP_S\$" "$BATS_TEST_TMPDIR/srv.out"
	done
}

@test "netns: lat, every operation, verified across the veth" {
	local args
	for args in "--op send" "--op write -s 4k" "--op read -s 4k" "-A FETCH_AND_ADD" "-A CMP_AND_SWAP"; do
		serve lat --timeout 10
		# shellcheck disable=SC2086
		client lat $args -n 300 --verify
		assert_success
		json_eval '
(r,) = d["results"]
assert r["iterations"] == 300 and 0 < r["t_min_us"] <= r["p50_us"] <= r["p99_us"], r
assert d["errors"] == [], d'
		server_done
	done
}

# --- impairments in the kernel datapath ------------------------------------------

@test "netns: 2% loss at the receiver: every bw operation verified, retransmits counted" {
	require_tool nft "loss in the kernel datapath"
	ip netns exec "$NS_S" nft -f - <<-'EOF2'
	table inet rkloss {
		chain pre {
			type filter hook prerouting priority 0;
			udp dport 4791 numgen random mod 100 < 2 counter drop
		}
	}
	EOF2
	local args
	for args in "--op write -s 16k -n 200" "--op read -s 16k -n 600" "--op send -s 16k -n 200" \
		"-A FETCH_AND_ADD -n 1500" "-A CMP_AND_SWAP -n 1500"; do
		serve bw --timeout 10
		# shellcheck disable=SC2086
		client bw $args --verify --timeout 10
		assert_success
		json_eval '
(r,) = d["results"]
assert r["iterations"] in (200, 600, 1500) and d["errors"] == [], d
assert r["retransmits"] > 0, ("no retransmission under 2% loss", r)' "$args"
		server_done
	done
	# The drops happened, in the kernel.
	(( $(nft_count "$NS_S" rkloss) > 0 ))
}

@test "netns: 2% loss at the receiver: lat verified, every ping answered" {
	require_tool nft "loss in the kernel datapath"
	ip netns exec "$NS_S" nft -f - <<-'EOF2'
	table inet rkloss {
		chain pre {
			type filter hook prerouting priority 0;
			udp dport 4791 numgen random mod 100 < 2 counter drop
		}
	}
	EOF2
	# A lost ping costs one ACK timeout, 4.096 us * 2^12 = 16.8 ms, of which
	# SEND latency (half the round trip) shows half.
	serve lat --timeout 10
	client lat --op send -n 500 -u 12 --verify
	assert_success
	json_eval '
(r,) = d["results"]
assert r["iterations"] == 500 and d["errors"] == [], d
assert r["t_max_us"] > 8000, ("no ping waited for a retransmission", r["t_max_us"])'
	server_done
	(( $(nft_count "$NS_S" rkloss) > 0 ))
}

@test "netns: payload corruption at the receiver is caught by the ICRC, never lands in memory" {
	require_tool nft "corruption in the kernel datapath"
	# 3% of the large packets (data, READ responses) get one payload byte
	# rewritten, in both directions.
	local ns
	for ns in "$NS_S" "$NS_C"; do
		ip netns exec "$ns" nft -f - <<-'EOF2'
		table inet rkcorrupt {
			chain pre {
				type filter hook prerouting priority 0;
				udp dport 4791 udp length > 500 numgen random mod 100 < 3 counter @ih,800,8 set 0x5a
			}
		}
		EOF2
	done
	local op
	for op in write send read; do
		serve bw --timeout 10
		client bw --op "$op" -s 16k -n 200 --verify --timeout 10
		assert_success
		json_eval '
(r,) = d["results"]
assert r["iterations"] == 200 and d["errors"] == [], d
assert r["retransmits"] > 0, ("corrupted packets were not sent again", r)'
		server_done
	done
	(( $(nft_count "$NS_S" rkcorrupt) > 0 ))
	(( $(nft_count "$NS_C" rkcorrupt) > 0 ))
	# nft fixed up the UDP checksums: the kernel delivered every corrupted
	# packet, so the engine's ICRC check is what kept them out of memory.
	assert_equal "$(udp_stat "$NS_S" InCsumErrors)" 0
	assert_equal "$(udp_stat "$NS_C" InCsumErrors)" 0
}

# --- peers that fail -----------------------------------------------------------

@test "netns: the server killed mid-run ends bw and lat clients with exit 3 within their timeouts" {
	local cmd t0
	for cmd in bw lat; do
		serve "$cmd"
		# 4.096 us * 2^14 = 67 ms ACK timeout, 3 retries: retry-exceeded
		# about 0.3 s after the server is gone (lat may instead wait
		# --timeout for an echo the dead server never sent).  Shorter
		# timeouts also fire on a busy 2-core host with both ends polling.
		bg_ns "$BATS_TEST_TMPDIR/cli.out" "$BATS_TEST_TMPDIR/cli.err" "$NS_C" \
			"$RDMAKIT" "$cmd" "$IP_S" -D 30 -s 4k -t 4 -u 14 --retry-cnt 3 --timeout 3
		local cli=$BG
		sleep 1
		kill -0 "$cli" 2>/dev/null ||
			fail "the $cmd client ended before the server was killed: $(cat "$BATS_TEST_TMPDIR/cli.err")"
		kill -KILL "$SRV"
		t0=$(now)
		wait_pid "$cli" 6
		assert_equal "$WAIT_RC" 3
		elapsed_below "$t0" 4
		run cat "$BATS_TEST_TMPDIR/cli.err"
		assert_equal "${#lines[@]}" 1
		assert_output --regexp "^rdmakit $cmd: (a work request failed: transport retry counter exceeded \(status 12\)|no answer from the peer for 3 s)"
	done
}

@test "netns: a server whose host drops the control connection: exit 3 after --timeout" {
	require_tool nft "dropping TCP SYNs"
	ip netns exec "$NS_S" nft -f - <<-'EOF2'
	table inet rkblack {
		chain in {
			type filter hook input priority 0;
			tcp dport 18515 counter drop
		}
	}
	EOF2
	local t0
	t0=$(now)
	run --separate-stderr timeout -k 2 20 ip netns exec "$NS_C" "$RDMAKIT" bw "$IP_S" --timeout 2
	assert_one_line_error 3 "timed out after 2 s connecting to $IP_S:18515"
	elapsed_below "$t0" 4
	(( $(nft_count "$NS_S" rkblack) > 0 ))
}

@test "netns: no route to the server: exit 3 at once, one line" {
	ip -n "$NS_C" link set "$VETH_C" down
	local cmd
	for cmd in bw lat; do
		run --separate-stderr timeout -k 2 20 ip netns exec "$NS_C" "$RDMAKIT" "$cmd" "$IP_S" --timeout 5
		assert_one_line_error 3 "cannot connect to $IP_S:18515: Network is unreachable"
	done
}

# --- a bottleneck ------------------------------------------------------------------

# veth_stat NS DEV FIELD: tx_bytes, tx_packets, ... of DEV in NS.
veth_stat() {
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"
}

@test "netns: a 200 Mbit/s tbf bottleneck: bw -D reports within 10% of it, and the veth counted the bytes bw reports" {
	require_tool tc "a tbf bottleneck"
	require_tool ethtool "one RoCEv2 packet per frame on the veth (counted as sent)"
	# A queue deeper than what the engine lets the host hold for a QP
	# (SOFT_HOST_BACKLOG, 256 KiB, asked every 50 us, plus a turn's 256
	# packets), so nothing is dropped and every byte on the wire is one bw
	# counts.
	ip netns exec "$NS_C" tc qdisc add dev "$VETH_C" root tbf rate 200mbit burst 256kb limit 4mb
	serve bw
	local bytes0 pkts0
	bytes0=$(veth_stat "$NS_C" "$VETH_C" tx_bytes)
	pkts0=$(veth_stat "$NS_C" "$VETH_C" tx_packets)
	# -u 16: a 268 ms ACK timeout, above the ~45 ms a full tbf queue adds.
	client bw --op write -s 64k -m 1024 -D 3 -u 16
	assert_success
	server_done
	run python3 - "$output" "$(veth_stat "$NS_C" "$VETH_C" tx_bytes)" "$bytes0" \
		"$(veth_stat "$NS_C" "$VETH_C" tx_packets)" "$pkts0" <<-'PY'
	import json, sys
	d = json.loads(sys.argv[1])
	(r,) = d["results"]
	wire_bytes = int(sys.argv[2]) - int(sys.argv[3])
	wire_pkts = int(sys.argv[4]) - int(sys.argv[5])
	assert r["retransmits"] == 0 and d["params"]["mtu_bytes"] == 1024, (r, d["params"])
	# The tbf rate counts frames; bw counts payload.  Within 10% either way.
	assert abs(r["bw_avg_gbps"] - 0.2) <= 0.02, r
	# Each 64 KiB WRITE is 64 frames of 1024 payload bytes, each with
	# Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 bytes, and a RETH of
	# 16 in the first; the control connection adds a few frames.
	msgs = r["iterations"]
	want = msgs * (65536 + 64 * 58 + 16)
	assert want <= wire_bytes <= want + 50000, (wire_bytes, want, r)
	assert msgs * 64 <= wire_pkts <= msgs * 64 + 200, (wire_pkts, msgs)
	print(f"bw {r['bw_avg_gbps'] * 1000:.1f} Mb/s payload, {wire_bytes * 8 / r['seconds'] / 1e6:.1f} Mb/s on the wire, "
	      f"{msgs} x 64 KiB = {msgs * 65536} bytes, veth {wire_bytes} bytes in {wire_pkts} frames")
	PY
	assert_success
	echo "# $output" >&3
}

@test "netns: bw --rate_limit 0.1 across the veth: the kernel counted 0.1 Gb/s of payload, and -b twice that" {
	require_tool ethtool "one RoCEv2 packet per frame on the veth (counted as sent)"
	local flags
	for flags in "" "-b"; do
		serve bw
		local c0 s0
		c0=$(veth_stat "$NS_C" "$VETH_C" tx_bytes)
		s0=$(veth_stat "$NS_S" "$VETH_S" tx_bytes)
		# shellcheck disable=SC2086
		client bw --op write -s 64k -m 1024 -D 3 --rate_limit 0.1 $flags
		assert_success
		server_done
		run python3 - "$output" "$(veth_stat "$NS_C" "$VETH_C" tx_bytes)" "$c0" \
			"$(veth_stat "$NS_S" "$VETH_S" tx_bytes)" "$s0" "$flags" <<-'PY'
		import json, sys
		d = json.loads(sys.argv[1])
		(r,) = d["results"]
		per_msg = 65536 + 64 * 58 + 16		# a 64 KiB WRITE's frames, as above
		sent = {"client": int(sys.argv[2]) - int(sys.argv[3]), "server": int(sys.argv[4]) - int(sys.argv[5])}
		dirs = ["client", "server"] if sys.argv[6] == "-b" else ["client"]
		for who in dirs:
		    # Kernel-counted payload rate over bw's own run time.
		    gbps = sent[who] * 65536 / per_msg * 8 / r["seconds"] / 1e9
		    assert abs(gbps - 0.1) <= 0.005, (who, gbps, sent, r)
		want = 0.2 if sys.argv[6] == "-b" else 0.1
		assert abs(r["bw_avg_gbps"] - want) <= 0.05 * want, r
		print(" ".join(f"{w} {sent[w]} bytes" for w in dirs), f"bw {r['bw_avg_gbps']:.4f} Gb/s")
		PY
		assert_success
		echo "# ${flags:-(one way)}: $output" >&3
	done
}

# --- what is on the wire ---------------------------------------------------------

@test "netns: the packets on the veth are RoCEv2 with good ICRCs, tshark decodes the same opcodes, and the WRITE payload is what bw reports" {
	require_tool tshark "an independent decoder"
	require_tool ethtool "one RoCEv2 packet per frame on the veth (tshark decodes no GSO aggregates)"
	local f=$BATS_TEST_TMPDIR/bw.pcap i
	bg_ns "$BATS_TEST_TMPDIR/cap.out" "$BATS_TEST_TMPDIR/cap.err" "$NS_S" \
		"$RDMAKIT" capture -i "$VETH_S" -w "$f" -U -B 65536
	local cap=$BG
	# /proc/net/packet is per namespace: a second line is the capture's socket.
	for ((i = 0; i < 100; i++)); do
		(( $(ip netns exec "$NS_S" cat /proc/net/packet | wc -l) > 1 )) && break
		kill -0 "$cap" || fail "the capture did not start: $(cat "$BATS_TEST_TMPDIR/cap.err")"
		sleep 0.05
	done
	# The socket exists before the capture is bound and filtering: warm up
	# with small SEND runs until packets reach the file.
	for ((i = 0; i < 20; i++)); do
		serve bw
		client bw --op send -s 8 -n 5
		assert_success
		server_done
		(( $(stat -c %s "$f" 2>/dev/null || echo 0) > 24 )) && break
		sleep 0.2
	done
	(( $(stat -c %s "$f") > 24 )) || fail "the capture wrote no packet: $(cat "$BATS_TEST_TMPDIR/cap.err")"
	serve bw
	client bw --op write -s 4k -n 50 -t 4
	assert_success
	json_eval 'r = d["results"][0]; assert r["retransmits"] == 0 and r["iterations"] == 50, r'
	server_done
	local op
	for op in read send atomic; do
		serve bw
		client bw --op "$op" -s 4k -n 50 -t 4 --verify
		assert_success
		server_done
	done
	sleep 0.3
	kill -INT "$cap"
	wait_pid "$cap" 5
	assert_equal "$WAIT_RC" 0
	run --separate-stderr "$RDMAKIT" capture -r "$f" --json
	assert_success
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/ours.ndjson"
	run python3 - "$BATS_TEST_TMPDIR/ours.ndjson" "$IP_C" "$IP_S" <<-'PY'
	import json, sys
	objs = [json.loads(l) for l in open(sys.argv[1])]
	pk = [o for o in objs if "summary" not in o]
	summary = objs[-1]["summary"]
	assert len(pk) > 300, len(pk)
	bad = [p for p in pk if p.get("icrc") != "ok"]
	assert not bad, bad[:3]
	assert {p["encap"] for p in pk} == {"rocev2"}, {p["encap"] for p in pk}
	assert {p["dst_port"] for p in pk} == {4791}, {p["dst_port"] for p in pk}
	assert {(p["src"], p["dst"]) for p in pk} == {(sys.argv[2], sys.argv[3]), (sys.argv[3], sys.argv[2])}
	assert summary["icrc_bad"] == 0 and summary["malformed"] == 0, summary
	names = {p["opcode_name"] for p in pk}
	want = {"RC RDMA Write First", "RC RDMA Write Middle", "RC RDMA Write Last", "RC Acknowledge",
	        "RC RDMA Read Request", "RC RDMA Read Response First", "RC RDMA Read Response Middle",
	        "RC RDMA Read Response Last", "RC Send First", "RC Send Middle", "RC Send Last",
	        "RC Fetch Add", "RC Atomic Acknowledge"}
	assert want <= names, want - names
	# The first bw run (write, no retransmissions): 50 x 4096 payload bytes.
	wr = sum(p["payload_len"] for p in pk if p["opcode"] in (6, 7, 8, 9, 10, 11))
	assert wr == 50 * 4096, wr
	print(" ".join(str(p["opcode"]) for p in pk))
	PY
	assert_success
	ours=$output
	theirs=$(tshark -n -r "$f" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null | tr '\n' ' ')
	assert_equal "${theirs% }" "$ours"
	# And tshark sees no packet that we do not.
	assert_equal "$(tshark -n -r "$f" 2>/dev/null | wc -l)" "$(wc -w <<<"$ours")"
}
