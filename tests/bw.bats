#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit bw on the soft engine: every operation with --verify through the
# kernel on loopback, the JSON document, sizes, intervals, thresholds, and
# the usage and runtime errors with their exit codes.

bats_require_minimum_version 1.5.0

load test_helper

setup() {
	setup_rdmakit
	# A loopback address of this test's own, so nothing else holds its 4791.
	ADDR=127.0.$((RANDOM % 200 + 20)).$((RANDOM % 200 + 20))
}

@test "bw --loopback moves and verifies every operation" {
	for op in write read send; do
		run "$RDMAKIT" bw --loopback --bind "$ADDR" --op "$op" -s 64k -n 200 --verify
		assert_success
		assert_line --partial "BW peak[Gb/sec]"
		assert_line --regexp "^ 65536 +200 +[0-9.]+ +[0-9.]+ +[0-9.]+ *$"
	done
	for t in FETCH_AND_ADD CMP_AND_SWAP; do
		run "$RDMAKIT" bw --loopback --bind "$ADDR" -A "$t" -n 500 --verify
		assert_success
		assert_line --regexp "^ 8 +500 "
	done
}

@test "bw -j: the document, its params and one result per size" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -s 4k -n 300 -q 2
	assert_success
	json_eval '
assert list(d) == ["rdmakit", "command", "params", "results", "errors"], list(d)
p = d["params"]
assert p["engine"] == "soft" and p["role"] == "loopback" and p["qps"] == 2, p
assert p["op"] == "write" and p["mtu_bytes"] in (256, 512, 1024, 2048, 4096), p
(r,) = d["results"]
assert r["bytes"] == 4096 and r["iterations"] == 300, r
for k in ("bw_peak_gbps", "bw_avg_gbps", "msg_rate_mpps", "seconds"):
    assert isinstance(r[k], float) and r[k] > 0, (k, r)
assert r["bw_peak_gbps"] >= r["bw_avg_gbps"] * 0.99, r
assert abs(r["msg_rate_mpps"] * r["seconds"] * 1e6 - 300) < 2, r
assert isinstance(r["retransmits"], int) and d["errors"] == []'
}

@test "bw -a sweeps 2 bytes to 8 MiB, one row each" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -a -n 5 --op read --verify
	assert_success
	json_eval 'assert [r["bytes"] for r in d["results"]] == [2 << i for i in range(23)], d'
}

@test "bw -D with --interval: the intervals add up to the run" {
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -s 16k -D 1 --interval 0.25
	assert_success
	json_eval '
(r,) = d["results"]
iv = r["intervals"]
assert 3 <= len(iv) <= 5, iv
assert sum(i["bytes"] for i in iv) == r["iterations"] * 16384, (iv, r)
assert all(a["end_s"] <= b["start_s"] + 1e-9 for a, b in zip(iv, iv[1:])), iv'
}

@test "bw --unit MiB: perftest's MiB/sec heading and keys" {
	run "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 --unit MiB
	assert_success
	assert_line --partial "BW average[MiB/sec]"
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR" -n 100 --unit MiB
	json_eval 'r = d["results"][0]; assert "bw_avg_mibps" in r and "bw_avg_gbps" not in r, r'
}

@test "bw --expect-gbps and -w: a threshold not met is exit 1 with one line" {
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 --expect-gbps 100000
	assert_equal "$status" 1
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr =~ ^"rdmakit bw: average "[0-9.]+" Gb/s is below --expect-gbps 100000.00"$ ]]
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 -y 1000000
	assert_equal "$status" 1
	run "$RDMAKIT" bw --loopback --bind "$ADDR" -n 100 -w 0.000001
	assert_success
}

@test "bw usage errors: exit 2, one line naming the problem" {
	local args
	while IFS= read -r args; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" bw $args
		assert_one_line_error 2
	done <<-'EOF2'
	-n 100 -D 1
	--loopback 127.0.0.1
	-m 1000
	--op bogus
	-A bogus
	-a --op atomic
	-q 0
	-s 0
	-s 9g
	-d mlx5_0
	--unit Mb
	--interval 0
	--persistent 127.0.0.1
	h1 h2
	EOF2
}

@test "bw --engine verbs without RDMA devices: exit 3, says so" {
	if "$RDMAKIT" -j version | grep -q '"verbs":true'; then
		skip "this host has an RDMA device"
	fi
	run --separate-stderr "$RDMAKIT" bw --engine verbs --loopback -n 5
	assert_equal "$status" 3
	[[ $stderr == *"no RDMA devices found; load the driver or use --engine soft"* ]]
}

@test "bw to a server that is not there: exit 3 within --timeout" {
	local t0=$SECONDS
	run --separate-stderr "$RDMAKIT" bw 127.0.0.1 -p 1 --timeout 2 -n 5
	assert_equal "$status" 3
	(( SECONDS - t0 <= 4 ))
	assert_equal "${#stderr_lines[@]}" 1
}

@test "bw server and client on one host, both on 127.0.0.1: the second engine takes another UDP port" {
	local port=$((20000 + RANDOM % 20000))
	"$RDMAKIT" bw -p "$port" --bind "$ADDR" >"$BATS_TEST_TMPDIR/srv" 2>&1 &
	local srv=$!
	sleep 0.5
	run --separate-stderr "$RDMAKIT" -j bw "$ADDR" -p "$port" --bind "$ADDR" -s 64k -n 500 --verify
	wait "$srv"
	assert_success
	json_eval 'assert d["results"][0]["iterations"] == 500 and d["errors"] == [], d'
	grep -q "Runs served     : 1" "$BATS_TEST_TMPDIR/srv"
}
