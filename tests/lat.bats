#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit lat on the soft engine, no root needed: every operation with
# --verify on loopback; perftest's table; the JSON document (keys, types,
# percentile order, histogram); -D; -a; --histogram; --hgrm in HdrHistogram's
# format; --expect-p99-us; usage errors (exit 2) and runtime errors (exit 3);
# a server and a client on one host; a server that dies; SIGINT.
#
# Some tests check defects found while writing this file (now fixed); the
# comment in each says what was wrong.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_perf
}

teardown() {
	kill_bg
}


# --- every operation ------------------------------------------------------------

@test "lat --loopback times and verifies every operation: send, write, read, both atomics" {
	local args
	while IFS='|' read -r args want bytes; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" $args -n 300 --verify
		assert_success
		json_eval '
(r,) = d["results"]
assert d["params"]["op"] == sys.argv[2] and d["params"]["verify"] is True, d["params"]
assert d["params"]["tx_depth"] == 1 and d["params"]["qps"] == 1, d["params"]
assert r["bytes"] == int(sys.argv[3]) and r["iterations"] == 300, r
assert d["errors"] == [], d' "$want" "$bytes"
	done <<-'EOF2'
	|send|2
	--op send -s 4k|send|4096
	--op write -s 1k|write|1024
	--op read -s 64k|read|65536
	--op atomic|atomic FETCH_AND_ADD|8
	-A CMP_AND_SWAP|atomic CMP_AND_SWAP|8
	EOF2
}

@test "lat: the preamble and perftest's latency table" {
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" --op read -s 64 -n 200
	assert_success
	assert_equal "$stderr" ""
	assert_line " Operation       : read"
	assert_line " TX depth        : 1"
	assert_line " Iterations      : 200"
	assert_line --regexp '^ #bytes +#iterations +t_min\[usec\] +t_max\[usec\] +t_typical\[usec\] +t_avg\[usec\] +t_stdev\[usec\] +99% percentile\[usec\] +99\.9% percentile\[usec\] *$'
	assert_line --regexp '^ 64 +200( +[0-9]+\.[0-9]{2}){7} *$'
}

# --- JSON -----------------------------------------------------------------------------

@test "lat -j: keys and types; percentiles in order; the histogram adds up" {
	run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" --op read -s 64 -n 1000
	assert_success
	assert_equal "${#lines[@]}" 1
	json_eval '
assert list(d) == ["rdmakit", "command", "params", "results", "errors"], list(d)
assert d["command"] == "lat" and d["errors"] == [], d
(r,) = d["results"]
times = ["t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us",
         "p50_us", "p90_us", "p99_us", "p99_9_us", "p99_99_us"]
assert set(r) == set(times) | {"bytes", "iterations", "histogram"}, sorted(r)
assert type(r["bytes"]) is int and type(r["iterations"]) is int, r
assert all(type(r[k]) is float for k in times), r
assert r["bytes"] == 64 and r["iterations"] == 1000, r
order = [r[k] for k in ("t_min_us", "p50_us", "p90_us", "p99_us", "p99_9_us", "p99_99_us", "t_max_us")]
assert order == sorted(order) and order[0] > 0, order
assert r["t_typical_us"] == r["p50_us"], r
assert r["t_min_us"] <= r["t_avg_us"] <= r["t_max_us"] and r["t_stdev_us"] >= 0, r
h = r["histogram"]
assert h and all(set(b) == {"from_us", "to_us", "count"} for b in h), h
assert all(type(b["count"]) is int and b["count"] > 0 for b in h), h
assert all(b["from_us"] <= b["to_us"] for b in h), h
assert all(a["to_us"] < b["from_us"] for a, b in zip(h, h[1:])), h
assert sum(b["count"] for b in h) == 1000, h
assert h[0]["from_us"] <= r["t_min_us"] <= h[0]["to_us"] + 0.001, (h[0], r["t_min_us"])
assert h[-1]["from_us"] - 0.001 <= r["t_max_us"] <= h[-1]["to_us"] + 0.001, (h[-1], r["t_max_us"])
# Nearest rank: at least 99% of the samples lie in buckets starting at or below p99.
below = sum(b["count"] for b in h if b["from_us"] <= r["p99_us"])
assert below >= 990, (below, r["p99_us"])'
}

@test "lat -D: percentiles in duration mode too" {
	run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" -D 0.5
	assert_success
	json_eval '
assert d["params"]["duration_s"] == 0.5 and "iterations" not in d["params"], d["params"]
(r,) = d["results"]
assert r["iterations"] > 100 and r["p99_us"] > 0 and r["p99_99_us"] >= r["p99_us"], r
assert sum(b["count"] for b in r["histogram"]) == r["iterations"], r'
}

@test "lat -a sweeps 2 bytes to 8 MiB, one row each, verified" {
	run --separate-stderr timeout -k 5 60 "$RDMAKIT" -j lat --loopback --bind "$ADDR" -a -n 5 --verify \
		--hgrm "$BATS_TEST_TMPDIR/a.hgrm"
	assert_success
	json_eval '
assert [r["bytes"] for r in d["results"]] == [2 << i for i in range(23)], d["results"]
assert all(r["iterations"] == 5 for r in d["results"]) and d["errors"] == [], d'
	# --hgrm holds the last size.
	grep -qE '^#\[Max += +[0-9.]+, Total count += +5\]$' "$BATS_TEST_TMPDIR/a.hgrm"
}

# --- histograms -----------------------------------------------------------------------

@test "lat --histogram: 16 log-spaced rows after the row, counts adding up to the iterations" {
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" -n 400 --histogram
	assert_success
	assert_line --regexp '^ +from\[usec\] +to\[usec\] +count$'
	run python3 - "$output" <<-'PY'
	import re, sys
	lines = sys.argv[1].splitlines()
	i = next(k for k, l in enumerate(lines) if "from[usec]" in l)
	rows = []
	for l in lines[i + 1:]:
	    m = re.match(r"^ +([0-9.]+) +([0-9.]+) +([0-9]+) (#*)$", l)
	    if not m:
	        break
	    rows.append((float(m[1]), float(m[2]), int(m[3]), len(m[4])))
	assert len(rows) == 16, rows
	assert sum(r[2] for r in rows) == 400, rows
	assert all(a[1] == b[0] for a, b in zip(rows, rows[1:])), rows
	assert max(r[3] for r in rows) == 40, rows
	ratios = [r[1] / r[0] for r in rows]
	assert max(ratios) - min(ratios) < 0.01, ratios    # evenly spaced on a log scale
	PY
	assert_success
}

@test "lat --hgrm: HdrHistogram's percentile distribution, agreeing with the JSON" {
	local f=$BATS_TEST_TMPDIR/x.hgrm
	run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" -n 500 --hgrm "$f"
	assert_success
	doc=$output
	run python3 - "$f" "$doc" <<-'PY'
	import json, re, sys
	text = open(sys.argv[1]).read()
	r = json.loads(sys.argv[2])["results"][0]
	lines = text.split("\n")
	assert re.fullmatch(r" +Value +Percentile +TotalCount +1/\(1-Percentile\)", lines[0]), lines[0]
	assert lines[1] == "", lines[1]
	body = [l for l in lines[2:] if l and not l.startswith("#")]
	foot = [l for l in lines[2:] if l.startswith("#")]
	assert lines[-1] == "" and lines[-2] == foot[-1], lines[-3:]
	num = r"[0-9]+(?:\.[0-9]+)?"
	rows = []
	for l in body[:-1]:
	    m = re.fullmatch(rf" *({num}) +({num}) +([0-9]+) +({num})", l)
	    assert m, ("not 4 numeric columns", l)
	    rows.append((float(m[1]), float(m[2]), int(m[3]), float(m[4])))
	m = re.fullmatch(rf" *({num}) +(1\.0+) +([0-9]+)", body[-1])
	assert m, ("the last row is not max, 1.0, count", body[-1])
	last = (float(m[1]), 1.0, int(m[3]))
	assert len(rows) >= 10, rows
	assert rows[0][1] == 0.0, rows[0]
	for a, b in zip(rows, rows[1:]):
	    assert a[0] <= b[0] and a[1] < b[1] and a[2] <= b[2], (a, b)
	for v, p, c, inv in rows:
	    assert abs(inv - 1 / (1 - p)) <= 0.01 * inv, (v, p, inv)
	    assert 0 < c <= 500, c
	assert last[2] == 500 and rows[-1][0] <= last[0], (rows[-1], last)
	assert abs(last[0] - r["t_max_us"]) < 0.0015, (last, r["t_max_us"])
	assert len(foot) == 3, foot
	assert foot[0].startswith("#[Mean"), foot
	assert foot[1].startswith("#[Max"), foot
	assert foot[2].startswith("#[Buckets"), foot
	mean, sd = map(float, re.fullmatch(rf"#\[Mean += +({num}), StdDeviation += +({num})\]", foot[0]).groups())
	mx, total = re.fullmatch(rf"#\[Max += +({num}), Total count += +([0-9]+)\]", foot[1]).groups()
	assert abs(mean - r["t_avg_us"]) < 0.0015 and abs(sd - r["t_stdev_us"]) < 0.0015, (foot, r)
	assert abs(float(mx) - r["t_max_us"]) < 0.0015 and int(total) == 500, foot
	assert re.fullmatch(r"#\[Buckets += +[0-9]+, SubBuckets += +[0-9]+\]", foot[2]), foot[2]
	# The median row agrees with p50 within the histogram's resolution.
	med = next(v for v, p, c, inv in rows if p >= 0.5)
	assert abs(med - r["p50_us"]) <= 0.01 * r["p50_us"] + 0.002, (med, r["p50_us"])
	PY
	assert_success
}

@test "lat --hgrm to a file that cannot be written: exit 3 with one line" {
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" -n 10 --hgrm "$BATS_TEST_TMPDIR/no/such/dir/x.hgrm"
	assert_equal "$status" 3
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr == "rdmakit lat: cannot write --hgrm file '$BATS_TEST_TMPDIR/no/such/dir/x.hgrm': No such file or directory" ]] ||
		fail "unexpected message: $stderr"
}

# --- thresholds ---------------------------------------------------------------------

@test "lat --expect-p99-us: a tail above the limit is exit 1 with one line; below it, 0" {
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" -n 200 --expect-p99-us 0.001
	assert_equal "$status" 1
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr =~ ^"rdmakit lat: 99th percentile "[0-9.]+" us exceeds --expect-p99-us 0.001"$ ]] ||
		fail "unexpected message: $stderr"
	assert_line --regexp '^ 2 +200 '
	run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" -n 200 --expect-p99-us 0.001
	assert_equal "$status" 1
	json_eval '(e,) = d["errors"]; assert "exceeds --expect-p99-us" in e, e'
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" -n 200 --expect-p99-us 10000000
	assert_success
	assert_equal "$stderr" ""
}

# --- perftest's -I and --cpu_util ------------------------------------------------

@test "lat -I: perftest's defaults (send 236, write 220, read 0), -I 0 and -I 912 verified; 913 refused" {
	local op want
	while IFS='|' read -r op want; do
		run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" --op "$op" -n 200 --verify
		assert_success
		json_eval 'assert d["params"]["inline_size_bytes"] == int(sys.argv[2]), d["params"]' "$want"
	done <<-'EOF2'
	send|236
	write|220
	read|0
	atomic|0
	EOF2
	for op in send write; do
		run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" --op "$op" -I 912 -s 912 -n 500 --verify
		assert_success
		json_eval 'assert d["params"]["inline_size_bytes"] == 912 and d["errors"] == [], d'
		run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" --op "$op" -I 0 -n 100
		json_eval 'assert d["params"]["inline_size_bytes"] == 0, d["params"]'
	done
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" -I 913 -n 10
	assert_one_line_error 3 "exceeds the soft engine's maximum of 912"
}

@test "lat -I: a server echoes inline with the client's size" {
	assert_server_inline lat 64 --op write -s 64 -n 300
}

@test "lat --cpu_util: a CPU_Util[%] column; cpu_util_percent between 0 and 100 x CPUs" {
	assert_cpu_util lat '99\.9% percentile\[usec\] +CPU_Util\[%\] *$' '^ 2 +[0-9]+( +[0-9.]+){8} *$' \
		--bind "$ADDR" -D 0.5
}

# --- usage errors -------------------------------------------------------------------

@test "lat usage errors: exit 2, nothing on stdout, one line naming the problem" {
	local args want
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" lat $args
		assert_one_line_error 2 "$want"
		[[ $stderr == "rdmakit lat: "* ]] || fail "not prefixed 'rdmakit lat: ': $stderr"
	done <<-'EOF2'
	-q 2 --loopback|latency is measured on one QP
	-q 2 127.0.0.1|drop -q/--qp
	-n 3|-n/--iters
	-n 10 -D 1|exclude each other
	--loopback 127.0.0.1|drop HOST
	-a --op atomic|drop -a
	-m 100|-m/--mtu
	--op bogus|--op
	-d mlx5_0 --engine soft|--engine verbs
	--hgrm|'--hgrm'
	--expect-p99-us x|--expect-p99-us
	--interval 1|'--interval'
	--unit MiB|'--unit'
	--expect-gbps 1|'--expect-gbps'
	-I x|-I/--inline_size
	-b|'-b'
	--rate_limit 1|'--rate_limit'
	-R --loopback|-R/--rdma-cm connects a client to a server
	--rdma_cm --engine soft 127.0.0.1|-R/--rdma-cm needs the verbs engine
	127.0.0.1 127.0.0.2|unexpected argument
	EOF2
}

# --- runtime errors -------------------------------------------------------------

@test "lat --engine verbs on a host without RDMA devices: exit 3, one line saying so" {
	compgen -G '/sys/class/infiniband/*' >/dev/null && skip "this host has RDMA devices"
	run --separate-stderr "$RDMAKIT" lat --engine verbs --loopback -n 5
	assert_one_line_error 3 "no RDMA devices found; load the driver or use --engine soft"
}

@test "lat to a port where nothing listens: exit 3 within --timeout, one line" {
	local port t0
	port=$(free_port)
	t0=$(now)
	run --separate-stderr timeout -k 2 20 "$RDMAKIT" lat 127.0.0.1 -p "$port" --timeout 2
	assert_one_line_error 3 "no rdmakit server at 127.0.0.1:$port after 2 s"
	elapsed_below "$t0" 4
}

# --- client and server ----------------------------------------------------------

@test "lat server and client on one host: WRITE latency, the server adopts it" {
	start_server lat
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" -j lat "$ADDR" -p "$PORT" --bind "$ADDR" \
		--op write -s 256 -n 300 --verify
	assert_success
	json_eval '
assert d["params"]["role"] == "client" and d["params"]["op"] == "write", d["params"]
(r,) = d["results"]
assert r["bytes"] == 256 and r["iterations"] == 300 and r["p50_us"] > 0, r'
	server_output "$SRV"
	json_eval '
p = d["params"]
assert p["role"] == "server" and p["op"] == "write" and p["runs_served"] == 1, p
assert d["results"] == [], d'
}

@test "lat against a server that dies mid-run: exit 3 within its timeouts, one line" {
	local port t0
	port=$(free_port)
	bg /dev/null /dev/null "$RDMAKIT" lat -p "$port" --bind "$ADDR"
	local srv=$BG
	wait_listen "$port"
	# 4.096 us * 2^14 = 67 ms ACK timeout, 3 retries: retry-exceeded about
	# 0.3 s after the server is gone, or --timeout when it died between a
	# ping's ACK and its echo.
	bg "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err" \
		"$RDMAKIT" lat "$ADDR" -p "$port" --bind "$ADDR" -D 30 --timeout 3 -u 14 --retry-cnt 3
	local cli=$BG
	sleep 1
	kill -0 "$cli" || fail "the client ended before the server was killed: $(cat "$BATS_TEST_TMPDIR/err")"
	kill -KILL "$srv"
	t0=$(now)
	wait_pid "$cli" 6
	assert_equal "$WAIT_RC" 3
	elapsed_below "$t0" 4
	run cat "$BATS_TEST_TMPDIR/err"
	assert_equal "${#lines[@]}" 1
	assert_output --regexp '^rdmakit lat: (a work request failed: transport retry counter exceeded|no answer from the peer)'
}

# --- regression tests for defects found while writing this file (now fixed) ---

@test "SIGINT ends lat -D at once and prints the partial results" {
	# lib/perf/lat.c: the stop flag is only looked at when one ping spins
	# 1024 times without an answer, so with fast answers (loopback) SIGINT
	# is ignored until the run ends.
	interrupt_run 1 2 "$RDMAKIT" -j lat --loopback --bind "$ADDR" -D 4
	json_eval '(r,) = d["results"]; assert r["iterations"] > 0, r'
}

@test "lat --help names lat's own default operation (send)" {
	# cmd/perf_cli.h: the shared help line says "(default write)", bw's
	# default; lat's is send.
	run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" -n 5
	assert_success
	default_op=$(json_eval 'print(d["params"]["op"])')
	assert_equal "$default_op" send
	run "$RDMAKIT" lat --help
	assert_line --regexp "^ +--op OP +.*\(default $default_op\)"
}

@test "lat and bw over IPv6 (::1): verified, and the captured RoCEv2/IPv6 packets have good ICRCs" {
	require_root "capture on lo"
	local f=$BATS_TEST_TMPDIR/v6.pcap
	# A 64 MiB ring: the default one overflows in the bursts below.
	"$RDMAKIT" capture -i lo -w "$f" -U -B 65536 ip6 and udp >/dev/null 2>&1 &
	local cap=$! i
	BG_PIDS+=("$cap")	# killed in teardown, whatever happens
	# Warm up until packets reach the file: the capture is then filtering.
	for ((i = 0; i < 20; i++)); do
		"$RDMAKIT" lat --loopback --bind ::1 -n 5 >/dev/null
		(( $(stat -c %s "$f" 2>/dev/null || echo 0) > 24 )) && break
		sleep 0.2
	done
	run "$RDMAKIT" lat --loopback --bind ::1 --op read -n 200 --verify
	assert_success
	run "$RDMAKIT" bw --loopback --bind ::1 -s 8k -n 100 --verify
	assert_success
	sleep 0.3
	kill -INT "$cap"
	wait_pid "$cap" 5
	run --separate-stderr "$RDMAKIT" -j capture -r "$f" --summary
	assert_success
	json_eval '
s = d["summary"]
assert s["packets"] > 300 and s["icrc_bad"] == 0 and s["icrc_unchecked"] == 0, s
assert all(":" in f["src"] for f in s["flows"]), s["flows"]'
}
