#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# -c UC and -c UD on the soft engine, in one process (--loopback) and over
# loopback between two: what each transport carries is refused in one line
# otherwise; a UD -s over the MTU runs at the MTU as perftest does; what was
# sent, what arrived and where the rest was lost add up; --verify checks
# what arrives; latency counts the pings that had no answer in time.  The
# kernel datapath's losses are in unrel_netns.bats.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_rdmakit
	setup_perf
}

teardown() {
	kill_bg
}

@test "-c: what a transport cannot carry is refused in one line naming what it carries (exit 2)" {
	local args
	for args in "bw -c UD --op write" "bw -c UD --op read" "bw -c UD --op atomic" \
		"lat -c UD --op write" "bw -c UC --op read" "bw -c UC --op atomic" "lat -c UC -A CMP_AND_SWAP"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" $args --loopback
		assert_one_line_error 2 "-c U"
		[[ $stderr == *"carries SEND"* ]] || fail "$args: $stderr"
	done
	for args in XRC DC SRD; do
		run --separate-stderr "$RDMAKIT" bw -c "$args" 127.0.0.1
		assert_one_line_error 2 "it runs RC, UC and UD"
	done
	run --separate-stderr "$RDMAKIT" bw -c UD -b --loopback
	assert_one_line_error 2 "drop -b"
}

@test "-c UD alone is SEND; -s over the MTU runs at the MTU with a note; sent = received + lost, every loss accounted for" {
	run -0 "$RDMAKIT" -j bw --loopback --bind "$ADDR" -c UD -n 20000
	run json_eval '
p, (r,) = d["params"], d["results"]
assert p["connection"] == "UD" and p["op"] == "send", p
assert "-s 65536 is over the path MTU" in p["ud_size_note"] and r["bytes"] == p["mtu_bytes"], (p, r)
w = r["lost_where"]
assert r["sent_msgs"] == r["iterations"] == 20000, r
assert r["received_msgs"] + r["lost_msgs"] == r["sent_msgs"], r
assert r["received_bytes"] == r["received_msgs"] * r["bytes"], r
# One packet per message, and loopback loses nothing on the way: every
# lost one is a drop some counter saw.  The socket buffer counts datagrams
# as the kernel does, and loopback carries GSO bursts of up to 64 packets.
other = w["no_recv_drops"] + w["host_tx_drops"] + w["qkey_drops"]
assert w["rcvbuf_drops"] <= r["lost_msgs"] - other <= 64 * w["rcvbuf_drops"], r
assert abs(r["loss_percent"] - 100 * r["lost_msgs"] / r["sent_msgs"]) < 1e-9, r
print(r["lost_msgs"], w)'
	assert_success
	echo "# lost, where: $output" >&3
}

@test "-c UD and -c UC SEND between two processes: --verify checks every message that arrives" {
	local conn
	for conn in UD UC; do
		start_server bw
		run -0 timeout -k 2 60 "$RDMAKIT" -j bw -c "$conn" --op send -s 1000 -n 5000 --verify \
			-p "$PORT" --bind "$ADDR" "$ADDR"
		json_eval '
(r,) = d["results"]
# --verify: a wrong message would have failed the run (exit 1, an error).
assert d["params"]["connection"] == sys.argv[2] and d["params"]["verify"] and not d["errors"], d
assert r["received_msgs"] > 0, r
assert r["received_msgs"] + r["lost_msgs"] == 5000, r' "$conn"
		printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/cli.json"
		# The server's own row: what arrived there of what was sent.
		server_output "$SRV"
		json_eval '
(s,), c = d["results"], json.load(open(sys.argv[2]))["results"][0]
assert d["params"]["role"] == "server" and d["params"]["connection"] == sys.argv[3], d
assert s["sent_msgs"] == 5000 and s["iterations"] == s["received_msgs"] == c["received_msgs"], s
assert s["lost_msgs"] == c["lost_msgs"] and s["lost_where"] == c["lost_where"], (s, c)
assert s["bytes"] == 1000 and s["received_bytes"] == 1000 * s["received_msgs"], s
assert s["bw_avg_gbps"] > 0 and s["msg_rate_mpps"] > 0 and s["seconds"] > 0, s' \
			"$BATS_TEST_TMPDIR/cli.json" "$conn"
	done
}

@test "-c UC WRITE: the sender's figures, and the receiver has nothing to count (said)" {
	run -0 "$RDMAKIT" bw --loopback --bind "$ADDR" -c UC -n 2000 -s 4096
	assert_output --partial "a WRITE gives the receiver nothing to count"
	run -0 "$RDMAKIT" -j bw --loopback --bind "$ADDR" -c UC -n 2000 -s 4096 --verify
	json_eval '
(r,) = d["results"]
assert r["iterations"] == r["sent_msgs"] == 2000 and r["received_msgs"] is None, r
assert r["lost_msgs"] is None and "host_tx_drops" in r, r'
	# Between two processes the server has no row: nothing to count.
	start_server bw
	run -0 timeout -k 2 60 "$RDMAKIT" bw -c UC -s 4096 -n 2000 -p "$PORT" --bind "$ADDR" "$ADDR"
	assert_output --partial "sent 2000 messages; a WRITE gives the receiver nothing to count"
	server_output "$SRV"
	json_eval 'assert d["results"] == [] and d["params"]["runs_served"] == 1, d'
}

@test "lat -c UD and -c UC: every ping answered on a clean path, none lost; the JSON says how long a ping waits" {
	local args
	for args in "-c UD" "-c UC" "-c UC --op write"; do
		# shellcheck disable=SC2086
		run -0 "$RDMAKIT" -j lat --loopback --bind "$ADDR" $args -n 2000
		json_eval '
(r,) = d["results"]
assert r["iterations"] == 2000 and r["lost_msgs"] == 0 and r["wait_us"] == 100000, r'
	done
}

@test "lat -c UD toward a peer that stops answering ends after --timeout in one line, not after a wait on every ping" {
	start_server lat -c UD
	(sleep 1; kill -STOP "$SRV") &
	local t0=$SECONDS
	run --separate-stderr timeout 60 "$RDMAKIT" lat -c UD -p "$PORT" --bind "$ADDR" --timeout 2 \
		-n 1000000 "$ADDR"
	kill -CONT "$SRV" 2>/dev/null || true
	# The preamble went out before the peer stopped; the error is one line.
	[[ $status -eq 3 && ${#stderr_lines[@]} -eq 1 ]] || fail "exit $status: $stderr"
	[[ $stderr == *"(--timeout;"*"the peer stopped answering"* ]] || fail "$stderr"
	# 1 s of pings, 2 s of silence, and the way out: not 100 ms per ping left.
	((SECONDS - t0 < 15)) || fail "took $((SECONDS - t0)) s"
}

@test "lat -c UD: a peer that pauses past the wait loses those pings, and its answer that comes later is told apart by its tag (late, not taken for the current ping's)" {
	start_server lat -c UD
	bg "$BATS_TEST_TMPDIR/cli" "$BATS_TEST_TMPDIR/cli.err" "$RDMAKIT" -j lat -c UD -D 3 \
		-p "$PORT" --bind "$ADDR" "$ADDR"
	local cli=$BG i=0
	# Once the pings run (the client's engine has sent some), not before.
	until "$RDMAKIT" -j top -n 1 -d 0.05 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(not any(v["value"] > 100 for e in d["engines"] for k, v in e["counters"].items()
                 if k.startswith("qp ") and k.endswith("/tx_packets")))'; do
		((++i < 100)) || fail "no pings after 10 s: $(cat "$BATS_TEST_TMPDIR/cli.err")"
		sleep 0.1
	done
	# 350 ms without answers: at 100 ms a ping, three or four go unanswered,
	# and the server answers them once it runs again.  The client has one
	# receive posted for the answer, so one late answer is taken (the rest
	# find no receive posted and are dropped by its engine).
	kill -STOP "$SRV"
	sleep 0.35
	kill -CONT "$SRV"
	wait_pid "$cli" 20
	assert_equal "$WAIT_RC" 0
	output=$(cat "$BATS_TEST_TMPDIR/cli")
	json_eval '
(r,) = d["results"]
got = {k: r[k] for k in ("iterations", "lost_msgs", "late_replies", "wait_us")}
assert not d["errors"] and r["wait_us"] == 100000, (d["errors"], got)
# At least three waits ran out in the pause; a loaded host stretches it.
assert 2 <= r["lost_msgs"] <= 30, got
assert 1 <= r["late_replies"] <= r["lost_msgs"], got'
}
