#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# valgrind memcheck over whole runs: bw --loopback (both ends of the soft
# engine in one process, every byte verified), lat, capture on a real
# Soft-RoCE capture, and an incast coordinator with its sender.  Clean means
# no invalid access, no uninitialised use, and no leak ("definitely" or
# "indirectly" lost).  The runs are small: memcheck is 20-50x slower.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_perf
	require_tool valgrind "memcheck"
}

teardown() {
	kill_bg
}

VG=(valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect)

@test "valgrind: bw --loopback --verify (write, read, send) is memcheck-clean" {
	local op
	for op in write read send; do
		run -0 timeout 300 "${VG[@]}" "$RDMAKIT" bw --loopback --bind "$ADDR" --op "$op" \
			-s 16k -n 200 --verify
	done
}

@test "valgrind: lat --loopback (send, atomic) is memcheck-clean" {
	run -0 timeout 300 "${VG[@]}" "$RDMAKIT" lat --loopback --bind "$ADDR" -n 200
	run -0 timeout 300 "${VG[@]}" "$RDMAKIT" lat --loopback --bind "$ADDR" --op atomic -n 200
}

@test "valgrind: capture of a real Soft-RoCE capture, text and JSON, is memcheck-clean" {
	local f=$RDMAKIT_ROOT/tests/captures/rxe-soft-interop.pcap
	run -0 timeout 300 "${VG[@]}" "$RDMAKIT" capture -r "$f"
	run -0 timeout 300 "${VG[@]}" "$RDMAKIT" -j capture -r "$f" --summary
}

@test "valgrind: an incast coordinator and its sender are memcheck-clean" {
	# Memcheck makes each end 20-50x slower, and CI runs it on two busy
	# cores: long control-channel and ACK timeouts (-u 18: ~1 s per try) keep
	# a slow peer from being mistaken for a dead one.
	local port
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/co.out" "$BATS_TEST_TMPDIR/co.err" timeout 300 "${VG[@]}" \
		"$RDMAKIT" incast --serve --senders 2 -p "$port" --bind "$ADDR" --timeout 120 -u 18
	local co=$BG
	wait_listen "$port"
	run timeout 300 "${VG[@]}" "$RDMAKIT" incast --local 2 -p "$port" --bytes 2m -s 64k \
		--timeout 120 -u 18 "$ADDR"
	[[ $status -eq 0 ]] || fail "sender exited $status: $output
coordinator: $(cat "$BATS_TEST_TMPDIR/co.out" "$BATS_TEST_TMPDIR/co.err")"
	wait_pid "$co" 120
	[[ $WAIT_RC -eq 0 ]] || fail "coordinator exited $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/co.err")"
}
