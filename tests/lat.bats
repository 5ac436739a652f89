#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit lat on the soft engine: every operation with --verify on loopback,
# the JSON document and its percentiles, --histogram, --hgrm, thresholds and
# errors.

bats_require_minimum_version 1.5.0

load test_helper

setup() {
	setup_rdmakit
	ADDR=127.0.$((RANDOM % 200 + 20)).$((RANDOM % 200 + 20))
}

@test "lat --loopback times and verifies every operation, perftest's heading" {
	for op in send write read atomic; do
		run "$RDMAKIT" lat --loopback --bind "$ADDR" --op "$op" -n 300 --verify
		assert_success
		assert_line --partial "t_typical[usec]"
		assert_line --regexp "^ [0-9]+ +300 +[0-9.]+ +[0-9.]+ +[0-9.]+ "
	done
}

@test "lat -j: percentiles in order, histogram counts add up" {
	run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" --op read -s 64 -n 500
	assert_success
	json_eval '
(r,) = d["results"]
assert r["bytes"] == 64 and r["iterations"] == 500, r
ks = ["t_min_us", "p50_us", "p90_us", "p99_us", "p99_9_us", "p99_99_us", "t_max_us"]
vals = [r[k] for k in ks]
assert all(isinstance(v, float) for v in vals), r
assert vals == sorted(vals), vals
assert abs(r["t_typical_us"] - r["p50_us"]) < 1e-6, r
assert r["t_min_us"] <= r["t_avg_us"] <= r["t_max_us"] and r["t_stdev_us"] >= 0, r
assert sum(b["count"] for b in r["histogram"]) == 500, r["histogram"]
assert all(b["from_us"] <= b["to_us"] for b in r["histogram"])'
}

@test "lat -D: percentiles in duration mode too" {
	run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" -D 0.5
	assert_success
	json_eval 'r = d["results"][0]; assert r["iterations"] > 100 and r["p99_us"] > 0, r'
}

@test "lat --histogram prints bars; --hgrm writes HdrHistogram's format" {
	run "$RDMAKIT" lat --loopback --bind "$ADDR" -n 300 --histogram --hgrm "$BATS_TEST_TMPDIR/x.hgrm"
	assert_success
	assert_line --regexp "^ +from\[usec\] +to\[usec\] +count$"
	run head -1 "$BATS_TEST_TMPDIR/x.hgrm"
	assert_output --regexp "^ +Value +Percentile +TotalCount +1/\(1-Percentile\)$"
	run python3 - "$BATS_TEST_TMPDIR/x.hgrm" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
rows = [r for r in rows if r[0][0].isdigit()]
assert len(rows) > 10, rows
assert all(float(a[1]) <= float(b[1]) for a, b in zip(rows, rows[1:]))
assert int(rows[-1][2]) == 300, rows[-1]
tail = open(sys.argv[1]).read()
assert "#[Mean    =" in tail and "Total count    =          300]" in tail, tail
PY
	assert_success
}

@test "lat --expect-p99-us: a tail above the limit is exit 1" {
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" -n 200 --expect-p99-us 0.001
	assert_equal "$status" 1
	[[ $stderr == "rdmakit lat: 99th percentile "*" us exceeds --expect-p99-us 0.00" ]]
}

@test "lat usage errors: exit 2, one line" {
	local args
	while IFS= read -r args; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" lat $args
		assert_one_line_error 2
	done <<-'EOF2'
	-q 2 --loopback
	-n 3
	--hgrm
	--expect-p99-us x
	EOF2
}

@test "lat against a server that dies: exit 3 within --timeout" {
	local port=$((20000 + RANDOM % 20000))
	"$RDMAKIT" lat -p "$port" --bind "$ADDR" >/dev/null 2>&1 &
	local srv=$!
	sleep 0.5
	"$RDMAKIT" lat "$ADDR" -p "$port" --bind "$ADDR" -D 30 --timeout 2 -u 12 --retry-cnt 3 \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	local cli=$! t0=$SECONDS
	sleep 1
	kill -9 "$srv"
	local rc=0
	wait "$cli" || rc=$?
	assert_equal "$rc" 3
	(( SECONDS - t0 <= 6 ))
	[[ $(wc -l <"$BATS_TEST_TMPDIR/err") -eq 1 ]]
}
