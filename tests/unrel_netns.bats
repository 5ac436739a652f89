#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# UC and UD resend nothing, so what a bandwidth run reports as lost must be
# what was lost: between two namespaces, nftables drops a share of the UDP
# 4791 packets on their way in (../shared/reference/kernel-here.md: no
# netem here), and rdmakit's count is checked against the rule's counter.
# UD messages are one packet each: lost messages = packets nftables dropped
# + the receiver's socket-buffer and no-receive drops + the sender host's,
# exactly.  UC messages of three packets: each lost message lost one to
# three of them.  Latency counts the pings that had no answer in time.
#
# Needs root, ip and nft; skipped without them (failed under CI=true).

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

# client ARGS...: a bw or lat server in NS_R for one client, the client in
# NS_S with ARGS; its JSON in output.
client() {
	local kind=$1
	shift
	bg_ns "$BATS_TEST_TMPDIR/srv.out" "$BATS_TEST_TMPDIR/srv.err" "$NS_R" \
		"$RDMAKIT" "$kind" --timeout 30
	wait_listen_ns "$NS_R" 18515
	run -0 timeout -k 2 120 ip netns exec "$NS_S" "$RDMAKIT" -j "$kind" --timeout 30 "$@" "$IP_R"
}

ud_loss() {
	drop_in "$1"
	client bw -c UD -s 1024 -n 20000
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
}

@test "UD, 1% dropped on the way in: lost messages = nftables' drops + the hosts' own, exactly" {
	ud_loss 10
}

@test "UD, 5% dropped on the way in: lost messages = nftables' drops + the hosts' own, exactly" {
	ud_loss 50
}

@test "UC SEND of three-packet messages, 2% dropped: each lost message lost one to three packets" {
	drop_in 20
	client bw -c UC --op send -s 3072 -m 1024 -n 5000 --verify
	run json_eval '
(r,) = d["results"]
w, nft = r["lost_where"], int(sys.argv[2])
host = w["no_recv_drops"] + w["host_tx_drops"]
wire = r["lost_msgs"] - host
print("lost %d of %d messages, nftables dropped %d packets, the receiver cut %d at a gap %s"
      % (r["lost_msgs"], r["sent_msgs"], nft, w["uc_msgs_cut"], w))
assert nft > 0 and not d["errors"], d
assert r["received_msgs"] + r["lost_msgs"] == r["sent_msgs"] == 5000, r
# Socket-buffer drops are packets too: together with the wire they lost
# what no receive and no sender host did.
pkts = nft + w["rcvbuf_drops"]
assert -(-pkts // 3) <= wire <= pkts, (wire, pkts)' "$(dropped)"
	echo "# $output" >&3
	assert_success
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
