#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit bw on the soft engine, no root needed: every operation with
# --verify through the kernel on loopback; the table and the JSON document
# (keys, types and the arithmetic between them); -a; -D with --interval;
# --unit MiB; thresholds; usage errors (exit 2) and runtime errors (exit 3);
# a server and a client on one host; the end of a run on SIGINT; perftest's
# -b (sum of both directions), -I (inline), --rate_limit (within 5%) and
# --cpu_util.
#
# Some tests check defects found while writing this file (now fixed); the
# comment in each says what was wrong.
#
# Every background rdmakit is killed in teardown, and every wait on one is
# bounded, so a hang fails a test instead of the suite.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_perf
}

teardown() {
	kill_bg
}


# --- every operation, verified -----------------------------------------------

@test "bw --loopback moves and verifies every operation: write, read, send, both atomics" {
	local op
	for op in write read send; do
		run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" --op "$op" -s 64k -n 200 --verify
		assert_success
		json_eval '
(r,) = d["results"]
assert d["params"]["op"] == sys.argv[2] and d["params"]["verify"] is True, d["params"]
assert r["bytes"] == 65536 and r["iterations"] == 200, r
assert d["errors"] == [], d' "$op"
	done
	# -A implies --op atomic; atomics are 8 bytes whatever -s says.
	for args in "-A FETCH_AND_ADD" "-A CMP_AND_SWAP" "--op atomic -s 4k" "--atomic_type=CMP_AND_SWAP"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" $args -n 2000 --verify
		assert_success
		json_eval '
(r,) = d["results"]
want = "atomic CMP_AND_SWAP" if "CMP" in sys.argv[2] else "atomic FETCH_AND_ADD"
assert d["params"]["op"] == want, (d["params"], sys.argv[2])
assert r["bytes"] == 8 and r["iterations"] == 2000, r' "$args"
	done
}

@test "bw: the preamble and perftest's table, one row" {
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -s 4k -n 300 -q 2 -m 2048
	assert_success
	assert_equal "$stderr" ""
	assert_line " Engine          : soft"
	assert_line " Role            : loopback"
	assert_line " Local address   : $ADDR"
	assert_line " Operation       : write"
	assert_line " Number of qps   : 2"
	assert_line " TX depth        : 128"
	assert_line " Mtu             : 2048"
	assert_line " Iterations      : 300"
	assert_line " Verify          : no"
	refute_line --partial "Peer"
	assert_line --regexp '^ #bytes +#iterations +BW peak\[Gb/sec\] +BW average\[Gb/sec\] +MsgRate\[Mpps\] *$'
	assert_line --regexp '^ 4096 +300 +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{6} *$'
	[[ $(grep -cE '^ [0-9]' <<<"$output") -eq 1 ]]
}

# --- JSON -----------------------------------------------------------------------

@test "bw -j: params and result keys, their types, and the arithmetic between them" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -s 4k -n 3000 -q 2 -t 16
	assert_success
	assert_equal "${#lines[@]}" 1
	json_eval '
assert list(d) == ["rdmakit", "command", "params", "results", "errors"], list(d)
assert d["command"] == "bw" and d["errors"] == [], d
p = d["params"]
types = {"engine": str, "role": str, "local_address": str, "op": str, "qps": int,
         "tx_depth": int, "mtu_bytes": int, "iterations": int, "verify": bool,
         "inline_size_bytes": int, "cq_mod": int, "post_list": int, "start_time": str,
         "connection": str}
assert set(p) == set(types), sorted(p)
for k, t in types.items():
    assert type(p[k]) is t, (k, p[k])
# When it began: UTC, ISO 8601, within the last minute.
import datetime
began = datetime.datetime.strptime(p["start_time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
assert 0 <= (datetime.datetime.now(datetime.timezone.utc) - began).total_seconds() < 60, p["start_time"]
assert p["engine"] == "soft" and p["role"] == "loopback" and p["local_address"] == sys.argv[2], p
assert p["op"] == "write" and p["qps"] == 2 and p["tx_depth"] == 16 and p["iterations"] == 3000, p
assert p["connection"] == "RC", p
assert p["mtu_bytes"] in (256, 512, 1024, 2048, 4096) and p["verify"] is False, p
(r,) = d["results"]
types = {"bytes": int, "iterations": int, "bw_peak_gbps": float, "bw_avg_gbps": float,
         "msg_rate_mpps": float, "seconds": float, "retransmits": int, "counters": dict,
         "cq_mod": int}
assert set(r) == set(types), sorted(r)        # no intervals without --interval
for k, t in types.items():
    assert type(r[k]) is t, (k, r[k])
assert r["bytes"] == 4096 and r["iterations"] == 3000 and r["retransmits"] >= 0, r
# The engine counters over the run (both ends here): each of the 3000 4 KiB
# WRITEs left as at least one packet, and their payload is in tx_bytes.
c = r["counters"]
assert all(type(v) is int and v >= 0 for v in c.values()), c
assert c["retransmits"] == r["retransmits"] and c["tx_packets"] >= 3000, c
assert c["tx_bytes"] >= 4096 * 3000 and c["rx_packets"] >= c["tx_packets"] - c["drops"], c
assert r["seconds"] > 0, r
# Gb = 10^9 bits; the average is bytes completed over the run.
avg = r["bytes"] * r["iterations"] * 8 / r["seconds"] / 1e9
assert abs(r["bw_avg_gbps"] - avg) <= 1e-6 * avg, (avg, r)
mpps = r["iterations"] / r["seconds"] / 1e6
assert abs(r["msg_rate_mpps"] - mpps) <= 1e-6 * mpps, (mpps, r)
assert r["bw_peak_gbps"] >= r["bw_avg_gbps"], r' "$ADDR"
}

@test "bw -j: a run shorter than two 10 ms bins reports the average as its peak" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -s 2 -n 5
	assert_success
	json_eval '
(r,) = d["results"]
assert r["seconds"] < 0.02, r
assert r["bw_peak_gbps"] == r["bw_avg_gbps"], r'
}

@test "bw --pretty: the same document, indented" {
	run --separate-stderr "$RDMAKIT" --pretty bw --loopback --bind "$ADDR" -n 20
	assert_success
	[[ ${#lines[@]} -gt 10 ]]
	json_eval 'assert d["results"][0]["iterations"] == 20, d'
}

# --- sizes ------------------------------------------------------------------------

@test "bw -a sweeps 2 bytes to 8 MiB in powers of two, one row each, verified" {
	run --separate-stderr timeout -k 5 60 "$RDMAKIT" -j bw --loopback --bind "$ADDR" -a -n 5 --verify
	assert_success
	json_eval '
assert [r["bytes"] for r in d["results"]] == [2 << i for i in range(23)], d["results"]
assert all(r["iterations"] == 5 for r in d["results"]), d["results"]
assert d["errors"] == [], d'
	run --separate-stderr timeout -k 5 60 "$RDMAKIT" bw --loopback --bind "$ADDR" -a -n 5 --op read --verify
	assert_success
	assert_equal "$(grep -cE '^ [0-9]+ +5 ' <<<"$output")" 23
	assert_line --regexp '^ 8388608 +5 '
}

@test "bw -s with k/m suffixes, and 8 MiB messages at MTU 256 (32768 packets each)" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -s 3k -n 10 --verify
	assert_success
	json_eval 'assert d["results"][0]["bytes"] == 3072, d'
	run --separate-stderr timeout -k 5 60 "$RDMAKIT" -j bw --loopback --bind "$ADDR" -s 8m -m 256 -n 5 --op send --verify
	assert_success
	json_eval 'r = d["results"][0]; assert r["bytes"] == 8 << 20 and r["iterations"] == 5, r
assert d["params"]["mtu_bytes"] == 256, d["params"]'
}

# --- duration and intervals ----------------------------------------------------

@test "bw -D with --interval: contiguous intervals whose bytes add up to the run" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -s 16k -D 1 --interval 0.25
	assert_success
	json_eval '
p = d["params"]
assert "iterations" not in p and p["duration_s"] == 1.0, p
(r,) = d["results"]
iv = r["intervals"]
assert 3 <= len(iv) <= 5, iv
for i in iv:
    assert set(i) == {"start_s", "end_s", "bytes", "bw_gbps", "msg_rate_mpps"}, i
    assert type(i["bytes"]) is int and all(type(i[k]) is float for k in i if k != "bytes"), i
    secs = i["end_s"] - i["start_s"]
    assert secs > 0 and i["bytes"] % 16384 == 0, i
    want = i["bytes"] * 8 / secs / 1e9
    assert abs(i["bw_gbps"] - want) <= 1e-6 * want + 1e-12, (want, i)
    assert abs(i["msg_rate_mpps"] - i["bytes"] / 16384 / secs / 1e6) <= 1e-6 * i["msg_rate_mpps"] + 1e-12, i
assert iv[0]["start_s"] == 0, iv
assert all(abs(a["end_s"] - b["start_s"]) < 1e-9 for a, b in zip(iv, iv[1:])), iv
assert all(abs(i["end_s"] - i["start_s"] - 0.25) < 1e-9 for i in iv[:-1]), iv
assert abs(iv[-1]["end_s"] - r["seconds"]) < 1e-6, (iv[-1], r["seconds"])
assert 1.0 <= r["seconds"] < 2.0, r
assert sum(i["bytes"] for i in iv) == r["iterations"] * 16384, (iv, r)'
	# The same lines in the text output, before the run's row.
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -s 16k -D 0.6 --interval 0.2
	assert_success
	assert_line --index 14 --regexp '^ #bytes '
	assert_line --index 15 --regexp '^ \[ +0\.00- +0\.20 sec\] +[0-9.]+ Gb/sec +[0-9.]+ Mpps$'
	assert_line --index 16 --regexp '^ \[ +0\.20- +0\.40 sec\] '
	assert_line --regexp '^ 16384 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ *$'
}

@test "bw --interval with -n: intervals also in iteration mode" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -s 64k -n 3000 --interval 0.05
	assert_success
	json_eval '
(r,) = d["results"]
assert r["iterations"] == 3000, r
assert sum(i["bytes"] for i in r["intervals"]) == 3000 * 65536, r["intervals"]'
}

# --- units --------------------------------------------------------------------------

@test "bw --unit MiB: perftest's MiB/sec headings and the _mibps keys (MiB = 2^20 bytes)" {
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 200 --unit MiB
	assert_success
	assert_line --regexp '^ #bytes +#iterations +BW peak\[MiB/sec\] +BW average\[MiB/sec\] +MsgRate\[Mpps\] *$'
	refute_line --partial 'Gb/sec'
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -n 200 --unit MiB
	assert_success
	json_eval '
(r,) = d["results"]
assert set(r) == {"bytes", "iterations", "bw_peak_mibps", "bw_avg_mibps", "msg_rate_mpps",
                  "seconds", "retransmits", "counters", "cq_mod"}, sorted(r)
want = r["bytes"] * r["iterations"] / r["seconds"] / 2**20
assert abs(r["bw_avg_mibps"] - want) <= 1e-6 * want, (want, r)
assert r["bw_peak_mibps"] >= r["bw_avg_mibps"], r'
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 200 --unit Gb
	assert_success
	assert_line --partial 'BW average[Gb/sec]'
}

# --- thresholds ---------------------------------------------------------------------

@test "bw --expect-gbps and -w/--limit_bw: below the threshold is exit 1 with one line" {
	local opt
	for opt in --expect-gbps -w --limit_bw; do
		run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 "$opt" 100000
		assert_equal "$status" 1
		assert_equal "${#stderr_lines[@]}" 1
		[[ $stderr =~ ^"rdmakit bw: average "[0-9.]+" Gb/s is below --expect-gbps 100000.00"$ ]] ||
			fail "unexpected message for $opt: $stderr"
		assert_line --regexp '^ 65536 +100 '	# the row is still printed
		run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 "$opt" 0.000001
		assert_success
		assert_equal "$stderr" ""
	done
}

@test "bw --expect-mpps and -y/--limit_msgrate: below the threshold is exit 1 with one line" {
	local opt
	for opt in --expect-mpps -y --limit_msgrate; do
		run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 "$opt" 1000000
		assert_equal "$status" 1
		assert_equal "${#stderr_lines[@]}" 1
		[[ $stderr == "rdmakit bw: message rate "*" Mpps is below --expect-mpps 1000000.000000" ]] ||
			fail "unexpected message for $opt: $stderr"
		run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 "$opt" 0.000001
		assert_success
	done
}

@test "bw -j with a threshold not met: exit 1, the results and the error in the document" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -n 100 --expect-gbps 100000
	assert_equal "$status" 1
	json_eval '
assert d["results"][0]["iterations"] == 100, d
(e,) = d["errors"]
assert e.startswith("average ") and e.endswith("is below --expect-gbps 100000.00"), e'
	assert_equal "${#stderr_lines[@]}" 1
}

# --- perftest's -b, -I, --rate_limit and --cpu_util -------------------------------

@test "bw -b --loopback: write, read and send both ways, verified; BW is the sum of both directions" {
	local op
	for op in write read send; do
		run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -b --op "$op" -s 4k -n 2000 --verify
		assert_success
		json_eval '
assert d["params"]["bidirectional"] is True and d["errors"] == [], d
(r,) = d["results"]
assert r["iterations"] == 2000 and r["peer_iterations"] == 2000, r
loc, peer = r["local_bw_avg_gbps"], r["peer_bw_avg_gbps"]
assert loc > 0 and peer > 0, r
assert abs(r["bw_avg_gbps"] - (loc + peer)) <= 1e-6 * r["bw_avg_gbps"], r
# This side alone: its bytes over its own time.
own = r["bytes"] * r["iterations"] * 8 / r["seconds"] / 1e9
assert abs(loc - own) <= 1e-6 * own, (own, r)
assert r["bw_peak_gbps"] >= r["bw_avg_gbps"], r'
	done
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -b -n 500
	assert_success
	assert_line ' Bidirectional   : yes'
	assert_line --regexp '^ \(this side [0-9.]+ \+ the peer [0-9.]+ Gb/sec\)$'
}

@test "bw -b client and server: the server sends too, paced like the client; the sum is both" {
	start_server bw -b
	# Paced well below what one core moves, so each direction is the limit.
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" -j bw "$ADDR" -p "$PORT" --bind "$ADDR" \
		-b --op write -D 2 --rate_limit 0.3 --verify
	assert_success
	json_eval '
(r,) = d["results"]
assert d["errors"] == [] and r["peer_iterations"] > 0, d
for k in ("local_bw_avg_gbps", "peer_bw_avg_gbps"):
    assert abs(r[k] - 0.3) <= 0.3 * 0.05, (k, r)
assert abs(r["bw_avg_gbps"] - r["local_bw_avg_gbps"] - r["peer_bw_avg_gbps"]) < 1e-9, r'
	server_output "$SRV"
	json_eval '
p = d["params"]
assert p["bidirectional"] is True and p["rate_limit"] == 0.3 and p["rate_units"] == "g", p'
}

@test "bw: a server started with -b refuses a client without it" {
	start_server bw -b
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" bw "$ADDR" -p "$PORT" --bind "$ADDR" -n 10
	assert_one_line_error 3 "this server was started with -b/--bidirectional, the client without"
	wait_pid "$SRV" 10
	assert_equal "$WAIT_RC" 3
}

@test "bw -R against a soft-engine server: both sides exit 3, saying -R needs the verbs engine" {
	# Here (no RDMA device) --engine auto is the soft engine on both sides.
	start_server bw
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" bw -R "$ADDR" -p "$PORT" --bind "$ADDR" -n 10
	assert_one_line_error 3 "--rdma-cm needs the verbs engine"
	wait_pid "$SRV" 10
	assert_equal "$WAIT_RC" 3
	cat "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" | grep -q -- "--rdma-cm needs the verbs engine" ||
		fail "server: $(cat "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err")"
}

@test "bw: a server started with -R refuses a client without it" {
	start_server bw -R
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" bw "$ADDR" -p "$PORT" --bind "$ADDR" -n 10
	assert_one_line_error 3 "this server was started with -R/--rdma-cm, the client without"
	wait_pid "$SRV" 10
	assert_equal "$WAIT_RC" 3
}

@test "bw --rate_limit: the average lands within 5% of the limit, in each of perftest's units" {
	# Never above the limit.  Below it only when this host kept the process
	# from its CPU (it busy-polls, so CPU_Util < 95% says so): pacing makes
	# up at most one queue depth after a stall, as a ceiling should.
	local args key want
	while IFS='|' read -r args key want; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -D 2 --cpu_util $args
		assert_success
		json_eval '
(r,) = d["results"]
got, want = r[sys.argv[2]], float(sys.argv[3])
assert got <= 1.05 * want, (sys.argv[2], got, want)
assert got >= 0.95 * want or r["cpu_util_percent"] < 95, (sys.argv[2], got, want, r)
if got < 0.95 * want:
    print("# starved (CPU_Util %.0f%%): %g of %g" % (r["cpu_util_percent"], got, want))' "$key" "$want" >&3
	done <<-'EOF2'
	--rate_limit 0.5|bw_avg_gbps|0.5
	--rate_limit 1 --rate_units g -s 8k|bw_avg_gbps|1
	--rate_limit 40 --rate_units M --unit MiB|bw_avg_mibps|40
	--rate_limit 3000 --rate_units p -s 1k|msg_rate_mpps|0.003
	--rate_limit 2 --rate_limit_type SW -q 4|bw_avg_gbps|2
	EOF2
	# Unpaced, the same run goes above the highest limit: the pacing did it.
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -D 1 --cpu_util
	json_eval '
(r,) = d["results"]
assert r["bw_avg_gbps"] > 2.2 or r["cpu_util_percent"] < 95, r'
}

@test "bw -I: inline SEND and WRITE up to the soft engine's 912 bytes, verified; more is refused" {
	local op
	for op in send write; do
		run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" --op "$op" -I 912 -s 912 -n 3000 --verify
		assert_success
		json_eval '
assert d["params"]["inline_size_bytes"] == 912 and d["errors"] == [], d
assert d["results"][0]["iterations"] == 3000, d'
	done
	# A sweep crosses the inline size: small messages inline, the rest not.
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" --op send -I 256 -a -n 20 --verify
	assert_success
	json_eval 'assert len(d["results"]) == 23 and d["errors"] == [], d["errors"]'
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -I 913 -s 64 -n 10
	assert_one_line_error 3 "an inline size of 913 bytes exceeds the soft engine's maximum of 912: lower -I/--inline_size"
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 10
	assert_line ' Max inline data : 0'
}

@test "bw -I: the server takes the client's inline size" {
	assert_server_inline bw 512 -b --op send -s 300 -n 500
}

@test "bw --cpu_util: perftest's CPU_Util[%] column; cpu_util_percent between 0 and 100 x CPUs" {
	assert_cpu_util bw '^ #bytes +#iterations +BW peak\[Gb/sec\] +BW average\[Gb/sec\] +MsgRate\[Mpps\] +CPU_Util\[%\] *$' \
		'^ 65536 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ *$' --bind "$ADDR" -D 1
}

# --- selective signaling and post lists (perftest -Q, -l) ---------------------------

@test "bw -Q/-l: perftest's cq_mod defaults (100 up to 8 KiB, 1 above, capped at -t) and the preamble" {
	local args want
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -n 100 $args
		assert_success
		json_eval '
want_mod, want_list = map(int, sys.argv[2].split())
p, (r,) = d["params"], d["results"]
assert (p["cq_mod"], p["post_list"]) == (want_mod, want_list), (p, sys.argv[2])
assert r["cq_mod"] == want_mod and r["iterations"] == 100, r' "$want"
	done <<-'EOF2'
	-s 2|100 1
	-s 8k|100 1
	-s 8193|1 1
	-s 2 -t 40|40 1
	-s 2 -Q 7|7 1
	-s 64k -Q 7|7 1
	-s 2 -Q 500|128 1
	-s 2 -l 4|4 4
	-s 64k --post-list 10|10 10
	--op atomic|8 1
	EOF2
	run "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 -s 2 -l 4
	assert_success
	assert_line --regexp '^ CQ Moderation +: 4$'
	assert_line --regexp '^ Post List +: 4$'
}

@test "bw -Q and -l: every op on several QPs, by count and by time, verified, each run ends" {
	local args
	while read -r args; do
		# shellcheck disable=SC2086
		run --separate-stderr timeout 60 "$RDMAKIT" -j bw --loopback --bind "$ADDR" --verify $args
		[[ $status -eq 0 ]] || fail "bw $args: exit $status: $output $stderr"
		json_eval '
(r,) = d["results"]
args = sys.argv[2].split()
assert not d["errors"] and r["iterations"] > 0, (args, d)
if "-n" in args:
    assert r["iterations"] == int(args[args.index("-n") + 1]), (args, r)
else:
    # By time, the last WR of each QP is signaled (a tail WR when needed):
    # with no signaled completion owed the run would not have ended.
    assert r["seconds"] >= 0.3, r' "$args"
	done <<-'EOF2'
	--op write -s 3000 -q 3 -n 1000 -Q 7
	--op read -s 4097 -q 4 -n 992 -l 4
	--op send -s 100 -q 2 -n 1000 -Q 50
	--op atomic -q 2 -n 1000 -Q 5
	-A CMP_AND_SWAP -n 96 -l 8
	--op write -s 2 -q 3 -D 0.3 -Q 13
	--op read -s 64k -q 2 -D 0.3 -Q 3
	--op write -s 2 -D 0.3 -l 7 -t 20
	-b --op write -s 1k -n 1000 -Q 9
	EOF2
}

# --- usage errors -------------------------------------------------------------------

@test "bw usage errors: exit 2, nothing on stdout, one line naming the problem" {
	local args want
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" bw $args
		assert_one_line_error 2 "$want"
		[[ $stderr == "rdmakit bw: "* ]] || fail "not prefixed 'rdmakit bw: ': $stderr"
	done <<-'EOF2'
	-n 100 -D 1|-n/--iters and -D/--duration exclude each other
	--loopback 127.0.0.1|--loopback runs both ends here: drop HOST '127.0.0.1'
	-m 1000|invalid value '1000' for -m/--mtu
	-m 8192|-m/--mtu
	--op bogus|invalid value 'bogus' for --op
	-A bogus|-A/--atomic_type
	-a --op atomic|atomics are always 8 bytes: drop -a
	-a -A CMP_AND_SWAP|drop -a
	-q 0|-q/--qp
	-q 65|-q/--qp
	-s 0|-s/--size
	-s 9m|-s/--size
	-n 4|-n/--iters
	-D 0|-D/--duration
	-d mlx5_0 --engine soft|--engine verbs
	-x 1 --engine soft|--engine verbs
	--engine bogus|--engine
	--unit Mb|--unit
	--interval 0|--interval
	-u 0|-u/--qp-timeout
	--retry-cnt 8|--retry-cnt
	--rnr-retry 8|--rnr-retry
	--timeout 0|--timeout
	-p 0|-p/--port
	--persistent 127.0.0.1|--persistent
	-w x|-w/--limit_bw
	127.0.0.1 127.0.0.2|unexpected argument '127.0.0.2'
	--histogram|'--histogram'
	-R --loopback|-R/--rdma-cm connects a client to a server
	--rdma_cm --engine soft 127.0.0.1|-R/--rdma-cm needs the verbs engine
	-b --op atomic --loopback|-b/--bidirectional is for write, read and send
	--burst_size 8|'--burst_size'
	-I x|-I/--inline_size
	--rate_limit 0|--rate_limit
	--rate_limit 1|--rate_limit is set by the client
	--rate_units g|give --rate_limit RATE too
	--rate_limit_type SW|give --rate_limit RATE too
	--rate_units G --rate_limit 1|--rate_units
	--rate_limit_type bogus --rate_limit 1|invalid value 'bogus' for --rate_limit_type
	--rate_limit_type HW --rate_limit 1 --loopback|rdmakit paces in software only
	--rate_limit_type pp --rate_limit 1 --loopback|give --rate_limit_type SW
	-Q 0 --loopback|-Q/--cq-mod
	-l 0 --loopback|-l/--post_list
	-l 8 -n 1004 --loopback|-n/--iters 1004 is not a multiple of -l/--post_list 8
	-l 200 --loopback|-l/--post_list 200 exceeds the TX depth 128
	-l 16 -t 8 --loopback|raise -t/--tx-depth
	-l 8 -Q 4 --loopback|drop -Q/--cq-mod
	-l 16 --op atomic --loopback|give -l 8 or less
	EOF2
}

# --- runtime errors -------------------------------------------------------------

@test "bw --engine verbs on a host without RDMA devices: exit 3, one line saying so" {
	compgen -G '/sys/class/infiniband/*' >/dev/null && skip "this host has RDMA devices"
	run --separate-stderr "$RDMAKIT" bw --engine verbs --loopback -n 5
	assert_one_line_error 3 "no RDMA devices found; load the driver or use --engine soft"
	run --separate-stderr "$RDMAKIT" bw --engine verbs -d mlx5_0 --loopback -n 5
	assert_one_line_error 3 "no RDMA devices found"
	run --separate-stderr "$RDMAKIT" -j bw --engine verbs --loopback -n 5
	assert_equal "$status" 3
	json_eval 'assert d["results"] == [] and len(d["errors"]) == 1, d'
}

@test "bw --bind an address this host does not have: exit 3, one line naming it" {
	run --separate-stderr "$RDMAKIT" bw --loopback --bind 203.0.113.9 -n 5
	assert_one_line_error 3 "203.0.113.9 is not an address of this host"
}

@test "bw to a port where nothing listens: exit 3 within --timeout, one line" {
	local port t0
	port=$(free_port)
	t0=$(now)
	run --separate-stderr timeout -k 2 20 "$RDMAKIT" bw 127.0.0.1 -p "$port" --timeout 1 -n 5
	assert_one_line_error 3 "no rdmakit server at 127.0.0.1:$port after 1 s"
	elapsed_below "$t0" 3
	run --separate-stderr timeout -k 2 20 "$RDMAKIT" -j bw 127.0.0.1 -p "$port" --timeout 1 -n 5
	assert_equal "$status" 3
	json_eval 'assert d["results"] == [] and "no rdmakit server" in d["errors"][0], d'
}

# --- client and server ----------------------------------------------------------

@test "bw server and client on one host: the server adopts the client's test and serves it" {
	start_server bw
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" -j bw "$ADDR" -p "$PORT" --bind "$ADDR" \
		--op send -s 8k -n 300 -q 3 --verify
	assert_success
	json_eval '
p = d["params"]
assert p["role"] == "client" and p["peer"] == sys.argv[2] + ":" + sys.argv[3], p
(r,) = d["results"]
assert r["bytes"] == 8192 and r["iterations"] == 300 and d["errors"] == [], d' "$ADDR" "$PORT"
	server_output "$SRV"
	json_eval '
p = d["params"]
assert p["role"] == "server" and p["runs_served"] == 1, p
assert p["op"] == "send" and p["qps"] == 3 and p["iterations"] == 300 and p["verify"] is True, p
assert ":" in p["peer"] and p["local_address"] == sys.argv[2], p
assert d["results"] == [] and d["errors"] == [], d' "$ADDR"
}

@test "bw server: a client killed mid-run ends the server with exit 3 within --timeout" {
	local port t0
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR" --timeout 3
	local srv=$BG
	wait_listen "$port"
	bg /dev/null /dev/null "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" -D 30
	local cli=$BG
	sleep 1
	kill -0 "$srv" || fail "the server ended before the client was killed: $(cat "$BATS_TEST_TMPDIR/srv.err")"
	kill -KILL "$cli"
	t0=$(now)
	wait_pid "$srv" 5
	assert_equal "$WAIT_RC" 3
	elapsed_below "$t0" 4
	run cat "$BATS_TEST_TMPDIR/srv.err"
	assert_equal "${#lines[@]}" 1
	assert_output --regexp '^rdmakit bw: .*(peer|client)'
}

@test "bw --persistent: the server serves one client after another" {
	local port n
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR" --persistent
	wait_listen "$port"
	for n in 100 200; do
		run --separate-stderr timeout -k 2 30 "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" -n "$n" -s 1k --verify
		assert_success
		assert_line --regexp "^ 1024 +$n "
	done
	kill -0 "$BG" || fail "the persistent server exited: $(cat "$BATS_TEST_TMPDIR/srv.err")"
	assert_equal "$(grep -c 'Runs served     : 1' "$BATS_TEST_TMPDIR/srv")" 2
	grep -q ' Iterations      : 200' "$BATS_TEST_TMPDIR/srv"
}

@test "bw --max-memory: a client asking for more buffers is refused in one line; the server stays small and serves the next" {
	local port rss
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR" \
		--persistent --max-memory 64m
	wait_listen "$port"
	# 2 x 8 MiB x 8 QPs = 128 MiB of server buffers: more than 64 MiB.
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" -s 8m -q 8 -n 5
	assert_failure 3
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr == *"needs 128 MiB"*"--max-memory of 64 MiB"* ]] || fail "stderr: $stderr"
	rss=$(ps -o rss= -p "$BG")
	(( rss < 48 * 1024 )) || fail "the server grew to $rss KiB"
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" -s 8m -q 2 -n 5
	assert_success
	kill -0 "$BG" || fail "the persistent server exited: $(cat "$BATS_TEST_TMPDIR/srv.err")"
	run "$RDMAKIT" bw --max-memory 512k
	assert_failure 2
}

# --- signals ------------------------------------------------------------------------

@test "bw -D: SIGINT ends the run at once and prints the partial results" {
	interrupt_run 1 3 "$RDMAKIT" -j bw --loopback --bind "$ADDR" -D 30
	json_eval '
(r,) = d["results"]
assert r["iterations"] > 0 and 0.5 < r["seconds"] < 10, r'
}

@test "bw -b -D: SIGINT on the client stops both directions; partial results of both, the server ends 0" {
	start_server bw
	interrupt_run 1.5 3 "$RDMAKIT" -j bw "$ADDR" -p "$PORT" --bind "$ADDR" -b -D 30
	assert_equal "$WAIT_RC" 0
	json_eval '
(r,) = d["results"]
assert d["errors"] == [] and r["iterations"] > 0 and r["peer_iterations"] > 0, d
assert 0.5 < r["seconds"] < 10, r'
	server_output "$SRV"
	json_eval 'assert d["params"]["runs_served"] == 1 and d["errors"] == [], d'
}

@test "a server waiting for a client ends on SIGINT and SIGTERM" {
	# The accept loop (lib/perf/session.c open_server -> oob_accept with no
	# stop flag) retries on EINTR forever: only SIGKILL ends such a server.
	local port sig
	for sig in INT TERM; do
		port=$(free_port)
		bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR"
		wait_listen "$port"
		kill -"$sig" "$BG"
		wait_pid "$BG" 2 || return 1
		[[ $WAIT_RC -ne 137 ]]
	done
}

@test "a parameter set differently on both sides is refused, naming both values" {
	# Issue 5: "a parameter set explicitly on both sides with different
	# values is refused with a message naming both values and sides".  The
	# server silently adopts the client's --op (lib/perf/session.c
	# adopt_params).
	local port
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR" --op read --timeout 5
	local srv=$BG
	wait_listen "$port"
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" --op write -n 10
	wait_pid "$srv" 10
	assert_equal "$status" 3
	[[ $stderr == *read* && $stderr == *write* ]] || fail "the message does not name both values: $stderr"
}

@test "-q 2 -n 100 --verify: no false mismatch for the QP that got no operation" {
	# lib/perf/bw.c run_bw fills one QP's whole send queue (-t, default 128)
	# before it posts on the next, so with -q 2 -n 100 the second QP never
	# gets an operation, and the per-QP checks (the server's for WRITE, the
	# client's for READ) report a mismatch at offset 0 that is not there.
	local op
	for op in write read; do
		run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" --op "$op" -q 2 -n 100 --verify
		assert_success
		json_eval 'assert d["errors"] == [], d["errors"]'
	done
}
