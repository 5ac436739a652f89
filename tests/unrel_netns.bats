#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# UC and UD resend nothing, so what a bandwidth run reports as lost must be
# what was lost: between two namespaces, nftables drops a share of the UDP
# 4791 packets on their way in (../shared/reference/kernel-here.md: no
# netem here), and rdmakit's count is checked against the rule's counter.
# UD messages are one packet each: lost messages = packets nftables dropped
# + the receiver's socket-buffer and no-receive drops + the sender host's,
# exactly, in a bandwidth run and per flow in an incast.  UC messages of
# three packets: the packets let in are logged (NFLOG) and read by tshark,
# and the messages that arrived are exactly those whose three packets all
# got in.  Latency counts the pings that had no answer in time.
#
# Needs root, ip and nft (and tcpdump and tshark for UC); skipped without
# them (failed under CI=true).

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper
load netns_helper

setup() {
	setup_rdmakit
	require_tool nft "impairments in the kernel datapath"
	netns_pair rku
}

teardown() {
	netns_pair_down
}

# drop_in PERMILLE: the receiver's namespace drops PERMILLE/1000 of the
# RoCEv2 packets that arrive, counting them.
drop_in() {
	ip netns exec "$NS_R" nft -f - <<-EOF2
		table ip rkunrel {
			chain pre {
				type filter hook prerouting priority 0;
				udp dport 4791 numgen random mod 1000 < $1 counter drop
			}
		}
	EOF2
}

# dropped: what the rule dropped.
dropped() {
	ip netns exec "$NS_R" nft list table ip rkunrel |
		awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}

# client ARGS...: a bw or lat server in NS_R for one client (its JSON in
# srv.out, its pid in SRV), the client in NS_S with ARGS; its JSON in output.
client() {
	local kind=$1
	shift
	bg_ns "$BATS_TEST_TMPDIR/srv.out" "$BATS_TEST_TMPDIR/srv.err" "$NS_R" \
		"$RDMAKIT" -j "$kind" --timeout 30
	SRV=$BG
	wait_listen_ns "$NS_R" 18515
	run -0 timeout -k 2 120 ip netns exec "$NS_S" "$RDMAKIT" -j "$kind" --timeout 30 "$@" "$IP_R"
}

ud_loss() {
	drop_in "$1"
	client bw -c UD -s 1024 -n 20000
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/bw.json"
	run json_eval '
(r,) = d["results"]
w, nft = r["lost_where"], int(sys.argv[2])
host = w["rcvbuf_drops"] + w["no_recv_drops"] + w["qkey_drops"] + w["host_tx_drops"]
print("sent %d received %d lost %d: nftables dropped %d, the hosts %d %s"
      % (r["sent_msgs"], r["received_msgs"], r["lost_msgs"], nft, host, w))
assert nft > 0, "nothing was dropped"
assert r["received_msgs"] + r["lost_msgs"] == r["sent_msgs"] == 20000, r
assert r["lost_msgs"] == nft + host, r' "$(dropped)"
	echo "# $output" >&3
	assert_success
	assert_served_same
}

# assert_served_same: the bw server's own row (UC and UD SEND) says what
# the client's (bw.json) says of sent, arrived and lost, and where.
assert_served_same() {
	wait_pid "$SRV" 10
	assert_equal "$WAIT_RC" 0
	run python3 - "$BATS_TEST_TMPDIR/bw.json" "$BATS_TEST_TMPDIR/srv.out" <<-'EOF2'
		import json, sys
		(c,), d = json.load(open(sys.argv[1]))["results"], json.load(open(sys.argv[2]))
		(s,) = d["results"]
		assert d["params"]["role"] == "server" and not d["errors"], d
		for k in ("bytes", "sent_msgs", "received_msgs", "received_bytes", "lost_msgs",
		          "loss_percent", "lost_where"):
		    assert s[k] == c[k], (k, s[k], c[k])
		assert s["iterations"] == c["received_msgs"], s
		assert 0 < s["bw_avg_gbps"] and 0 < s["seconds"], s
	EOF2
	assert_success
}

@test "UD, 1% dropped on the way in: lost messages = nftables' drops + the hosts' own, exactly" {
	ud_loss 10
}

@test "UD, 5% dropped on the way in: lost messages = nftables' drops + the hosts' own, exactly" {
	ud_loss 50
}

@test "UC SEND of three-packet messages, 2% dropped: the messages that arrive are exactly those whose three packets got in (tshark over an NFLOG of what was let in)" {
	require_tool tcpdump "NFLOG capture of the packets let in"
	require_tool tshark "decoding the NFLOG capture"
	drop_in 20
	# What nftables let in, logged after the drop rule and captured apart
	# from rdmakit: tshark reads it.
	ip netns exec "$NS_R" nft add rule ip rkunrel pre udp dport 4791 log group 7 snaplen 80
	bg_ns "$BATS_TEST_TMPDIR/tcpdump.out" "$BATS_TEST_TMPDIR/tcpdump.err" "$NS_R" \
		tcpdump -i nflog:7 -B 131072 -U -w "$BATS_TEST_TMPDIR/in.pcap"
	local td=$BG i
	for ((i = 0; i < 100; i++)); do
		grep -q listening "$BATS_TEST_TMPDIR/tcpdump.err" 2>/dev/null && break
		sleep 0.05
	done
	client bw -c UC --op send -s 3072 -m 1024 -n 5000 --verify
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/bw.json"
	sleep 1	# the kernel hands NFLOG over in batches: let the last one out
	kill -INT "$td"
	wait_pid "$td" 10
	grep -q "^0 packets dropped by kernel" "$BATS_TEST_TMPDIR/tcpdump.err" ||
		fail "the NFLOG capture missed packets: $(cat "$BATS_TEST_TMPDIR/tcpdump.err")"
	tshark -r "$BATS_TEST_TMPDIR/in.pcap" -Y "ip.dst == $IP_R && infiniband" -T fields \
		-e infiniband.bth.opcode -e infiniband.bth.psn >"$BATS_TEST_TMPDIR/in.txt" 2>/dev/null
	run python3 - "$BATS_TEST_TMPDIR/bw.json" "$BATS_TEST_TMPDIR/in.txt" "$(dropped)" <<-'EOF2'
		import json, sys
		d = json.load(open(sys.argv[1]))
		(r,) = d["results"]
		w, nft = r["lost_where"], int(sys.argv[3])
		# UC SEND First, Middle, Last (IBTA 9.2, Table 38): a message is three
		# packets in a row of PSNs; it arrives only when all three got in.
		got = {}
		for line in open(sys.argv[2]):
		    op, psn = line.split()
		    got[int(psn)] = int(op, 0)
		whole = sum(1 for p, op in got.items() if op == 0x20 and
		            got.get((p + 1) % (1 << 24)) == 0x21 and got.get((p + 2) % (1 << 24)) == 0x22)
		print("sent %d, received %d, lost %d; tshark saw %d packets let in, %d whole messages; "
		      "nftables dropped %d; %s" % (r["sent_msgs"], r["received_msgs"], r["lost_msgs"],
		      len(got), whole, nft, w))
		assert nft > 0 and not d["errors"], d
		assert r["received_msgs"] + r["lost_msgs"] == r["sent_msgs"] == 5000, r
		assert len(got) + nft == 3 * 5000, (len(got), nft)
		# What the host lost after the log point (its socket buffer, no
		# receive posted) would be on top; on this quiet path it is nothing.
		host = w["rcvbuf_drops"] + w["no_recv_drops"] + w["host_tx_drops"]
		if host == 0:
		    assert r["received_msgs"] == whole, (r["received_msgs"], whole)
		else:
		    assert r["received_msgs"] <= whole, (r["received_msgs"], whole)
	EOF2
	echo "# $output" >&3
	assert_success
	assert_served_same
}

@test "lat -c UD, 5% dropped on the way in: the pings with no answer are counted, not waited on forever" {
	drop_in 50
	client lat -c UD -n 2000
	run json_eval '
(r,) = d["results"]
print("%d answered, %d lost, %d late; nftables dropped %s"
      % (r["iterations"], r["lost_msgs"], r["late_replies"], sys.argv[2]))
assert r["lost_msgs"] > 0 and r["iterations"] + r["lost_msgs"] == 2000, r
# A ping is lost when it or its echo was: nftables dropped only the
# server side incoming pings here, so each drop is one lost ping.
assert r["lost_msgs"] == int(sys.argv[2]), r' "$(dropped)"
	echo "# $output" >&3
	assert_success
}

@test "incast -c UD, three senders each losing 2%: every flow's lost messages are its own sender's nftables drops (+ the receiver's), exactly" {
	# One rule per sender, told apart by its address (a UDP source port
	# is a QP's entropy, not its host's).
	local a
	for a in 198.18.9.3 198.18.9.4 198.18.9.5; do
		ip -n "$NS_S" addr add "$a/24" dev "$VETH_S"
	done
	ip netns exec "$NS_R" nft -f - <<-EOF2
		table ip rkunrel {
			chain pre {
				type filter hook prerouting priority 0;
				ip saddr 198.18.9.3 udp dport 4791 numgen random mod 1000 < 20 counter drop
				ip saddr 198.18.9.4 udp dport 4791 numgen random mod 1000 < 20 counter drop
				ip saddr 198.18.9.5 udp dport 4791 numgen random mod 1000 < 20 counter drop
			}
		}
	EOF2
	bg_ns "$BATS_TEST_TMPDIR/co.json" "$BATS_TEST_TMPDIR/co.err" "$NS_R" \
		"$RDMAKIT" -j incast --serve --senders 3 -c UD -s 1024 --bytes 8m --timeout 30
	local co=$BG senders=() p
	wait_listen_ns "$NS_R" 18515
	for a in 198.18.9.3 198.18.9.4 198.18.9.5; do
		bg_ns "$BATS_TEST_TMPDIR/s$a.out" "$BATS_TEST_TMPDIR/s$a.err" "$NS_S" \
			"$RDMAKIT" incast -c UD --bind "$a" --timeout 30 "$IP_R"
		senders+=("$BG")
	done
	for p in "${senders[@]}"; do
		wait_pid "$p" 60
		[[ $WAIT_RC -eq 0 ]] || fail "a sender exited $WAIT_RC: $(cat "$BATS_TEST_TMPDIR"/s*.err)"
	done
	wait_pid "$co" 20
	[[ $WAIT_RC -eq 0 ]] || fail "the coordinator exited $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/co.err")"
	ip netns exec "$NS_R" nft -j list table ip rkunrel >"$BATS_TEST_TMPDIR/nft.json"
	run python3 - "$BATS_TEST_TMPDIR/co.json" "$BATS_TEST_TMPDIR/nft.json" <<-'EOF2'
		import json, sys
		r = json.load(open(sys.argv[1]))["results"]
		nft = {}
		for x in json.load(open(sys.argv[2]))["nftables"]:
		    expr = x.get("rule", {}).get("expr", [])
		    port = [e["match"]["right"] for e in expr
		            if "match" in e and e["match"]["left"].get("payload", {}).get("field") == "saddr"]
		    count = [e["counter"]["packets"] for e in expr if "counter" in e]
		    if port and count:
		        nft[port[0]] = count[0]
		loss, w = r["loss"], r["loss"]["lost_where"]
		host = w["rcvbuf_drops"] + w["no_recv_drops"] + w["qkey_drops"] + w["host_tx_drops"]
		print("nftables dropped %s, the hosts %d; run lost %d of %d"
		      % (nft, host, loss["lost_msgs"], loss["sent_msgs"]))
		assert len(r["flows"]) == 3 and len(nft) == 3 and all(nft.values()), (r["flows"], nft)
		for f in r["flows"]:
		    port = f["sender"]
		    print("flow %d from %s: sent %d, received %d, lost %d (%.3f%%); nftables %d"
		          % (f["flow"], port, f["sent_msgs"], f["messages"], f["lost_msgs"],
		             f["loss_percent"], nft[port]))
		    assert f["status"] == "ok" and f["sent_msgs"] == 8192, f
		    assert f["messages"] + f["lost_msgs"] == 8192, f
		    assert f["bytes"] == 1024 * f["messages"], f
		    # The receiver's own drops are not per flow: at most them more.
		    assert nft[port] <= f["lost_msgs"] <= nft[port] + host, (f, nft[port], host)
		assert loss["lost_msgs"] == sum(nft.values()) + host, (loss, nft, host)
		assert loss["sent_msgs"] == 3 * 8192 == loss["received_msgs"] + loss["lost_msgs"], loss
	EOF2
	echo "# $output" >&3
	assert_success
}
