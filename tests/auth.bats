#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# --auth-key on the control channel, no root needed: matching keys run (bw,
# lat, incast, and the key from RDMAKIT_AUTH_KEY_FILE); a wrong key, a
# missing key on either side and a foreign client are each refused in one
# line on both sides while a --persistent server goes on to serve the next
# client; key files open to others or of the wrong size are usage errors; a
# server without a key says who can use it; a flood of silent connections
# does not keep a client out.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_perf
	KEY=$BATS_TEST_TMPDIR/key
	OTHER=$BATS_TEST_TMPDIR/other
	head -c 32 /dev/urandom >"$KEY"
	head -c 32 /dev/urandom >"$OTHER"
	chmod 600 "$KEY" "$OTHER"
}

teardown() {
	kill_bg
}

@test "auth: bw and lat with the same key on both sides run and verify" {
	local port
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR" --auth-key "$KEY"
	wait_listen "$port"
	run --separate-stderr "$RDMAKIT" -j bw "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$KEY" -s 4k -n 200 --verify
	assert_success
	json_eval 'assert d["params"]["verify"] is True and d["results"][0]["bytes"] == 4096, d' 
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv2" "$BATS_TEST_TMPDIR/srv2.err" env RDMAKIT_AUTH_KEY_FILE="$KEY" "$RDMAKIT" lat -p "$port" --bind "$ADDR"
	wait_listen "$port"
	RDMAKIT_AUTH_KEY_FILE=$KEY run --separate-stderr "$RDMAKIT" lat "$ADDR" -p "$port" --bind "$ADDR" -n 200
	assert_success
	# A server with a key does not print the open-door line.
	run grep -c "No --auth-key" "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv2"
	assert_output "$BATS_TEST_TMPDIR/srv:0
$BATS_TEST_TMPDIR/srv2:0"
}

@test "auth: a wrong key, no key, or a key the server lacks: one line on each side; a persistent server serves the next client" {
	local port srv
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR" --auth-key "$KEY" --persistent
	srv=$BG
	wait_listen "$port"
	run --separate-stderr "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$OTHER" -n 100
	assert_failure 3
	assert_equal "$stderr" "rdmakit bw: peer: authentication failed: this client's --auth-key is not the server's"
	run --separate-stderr "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" -n 100
	assert_failure 3
	assert_equal "$stderr" "rdmakit bw: the server at $ADDR:$port requires authentication: give this client the server's key with --auth-key FILE (or RDMAKIT_AUTH_KEY_FILE)"
	run --separate-stderr "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$KEY" -n 100 --verify
	assert_success
	kill -0 "$srv"
	run cat "$BATS_TEST_TMPDIR/srv.err"
	assert_line --index 0 --regexp "^rdmakit bw: client at [0-9.]+:[0-9]+ failed authentication: its --auth-key is not this server's$"
	assert_line --index 1 --regexp "^rdmakit bw: client at [0-9.]+:[0-9]+ left without authenticating: this server requires --auth-key, give the client the same key$"
	assert_equal "${#lines[@]}" 2
	# The other way round: the client has a key, the server none.
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/open" "$BATS_TEST_TMPDIR/open.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR"
	wait_listen "$port"
	run --separate-stderr "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$KEY" -n 100
	assert_failure 3
	assert_equal "$stderr" "rdmakit bw: the server at $ADDR:$port does not authenticate its clients, and this client has an --auth-key: give the server the same key (a client with a key talks only to a server that proves it holds it)"
	run grep -x "No --auth-key: anyone who can reach TCP port $port of this host can run tests (see docs/security.md)" "$BATS_TEST_TMPDIR/open"
	assert_success
}

@test "auth: a key file open to group or others, too short, or absent is a usage error naming the fix" {
	chmod 640 "$KEY"
	run --separate-stderr "$RDMAKIT" bw 127.0.0.1 --auth-key "$KEY"
	assert_failure 2
	assert_equal "$stderr" "rdmakit bw: key file $KEY is open to group or others (mode 0640); a shared secret must not be: chmod 600 $KEY"
	head -c 8 /dev/urandom >"$OTHER"
	run --separate-stderr "$RDMAKIT" lat --auth-key "$OTHER"
	assert_failure 2
	assert_equal "$stderr" "rdmakit lat: key file $OTHER holds 8 bytes; a key is 16 to 4096 bytes (head -c 32 /dev/urandom > FILE)"
	RDMAKIT_AUTH_KEY_FILE=$BATS_TEST_TMPDIR/none run --separate-stderr "$RDMAKIT" incast 127.0.0.1
	assert_failure 2
	assert_equal "$stderr" "rdmakit incast: cannot read the key file $BATS_TEST_TMPDIR/none: No such file or directory; make one with: head -c 32 /dev/urandom > FILE && chmod 600 FILE"
}

@test "auth: incast with a key; a sender without it is refused and the coordinator still waits for the right ones" {
	local port coord
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/coord" "$BATS_TEST_TMPDIR/coord.err" "$RDMAKIT" -j incast --serve --senders 2 -p "$port" --bind "$ADDR" --auth-key "$KEY" -D 0.5 --wait-timeout 20
	coord=$BG
	wait_listen "$port"
	run --separate-stderr "$RDMAKIT" incast "$ADDR" -p "$port" --bind "$ADDR"
	assert_failure 3
	assert_equal "$stderr" "rdmakit incast: the server at $ADDR:$port requires authentication: give this client the server's key with --auth-key FILE (or RDMAKIT_AUTH_KEY_FILE)"
	bg /dev/null "$BATS_TEST_TMPDIR/s1.err" "$RDMAKIT" incast "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$KEY"
	local s1=$BG
	bg /dev/null "$BATS_TEST_TMPDIR/s2.err" "$RDMAKIT" incast "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$KEY"
	local s2=$BG
	wait_pid "$coord" 20
	assert_equal "$WAIT_RC" 0
	wait_pid "$s1" 5
	assert_equal "$WAIT_RC" 0
	wait_pid "$s2" 5
	assert_equal "$WAIT_RC" 0
	run cat "$BATS_TEST_TMPDIR/coord"
	json_eval 'assert d["results"]["aggregate"]["goodput_gbps"] > 0 and len(d["results"]["flows"]) == 2, d'
}

@test "auth: 1000 silent connections held against a server do not keep a client out" {
	local port
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR" --auth-key "$KEY"
	wait_listen "$port"
	# Held by a python process: 1000 connections that never say a word.
	bg "$BATS_TEST_TMPDIR/flood" "$BATS_TEST_TMPDIR/flood.err" python3 -c '
import socket, sys, time
held = []
for _ in range(1000):
    s = socket.socket(); s.setblocking(False)
    try: s.connect((sys.argv[1], int(sys.argv[2])))
    except BlockingIOError: pass
    held.append(s)
print("holding", len(held), flush=True)
time.sleep(60)' "$ADDR" "$port"
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q holding "$BATS_TEST_TMPDIR/flood" && break
		sleep 0.05
	done
	run grep -c holding "$BATS_TEST_TMPDIR/flood"
	assert_output 1
	local t0
	t0=$(now)
	run --separate-stderr "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$KEY" -n 100
	assert_success
	elapsed_below "$t0" 5
}

@test "auth: forged openings (an old rdmakit's, perftest's, a wrong MAC) do not end a server's wait; the real client is served" {
	local port srv
	port=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" bw -p "$port" --bind "$ADDR" --auth-key "$KEY"
	srv=$BG
	wait_listen "$port"
	# An rdmakit 0.1 opening, then perftest's: each refused in one line.
	printf 'RDMK\0\1\0\1\0\0\0\x80\0\0\0\0' >/dev/tcp/127.0.0.1/"$port"
	printf '6.06\0\0\0\0\0\0\0\0\0\0\0\0' >/dev/tcp/127.0.0.1/"$port"
	sleep 0.3
	kill -0 "$srv" || fail "the server ended on a forged opening: $(cat "$BATS_TEST_TMPDIR/srv.err")"
	run --separate-stderr "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$OTHER" -n 100
	assert_failure 3
	run --separate-stderr "$RDMAKIT" bw "$ADDR" -p "$port" --bind "$ADDR" --auth-key "$KEY" -n 100 --verify
	assert_success
	wait_pid "$srv" 10
	assert_equal "$WAIT_RC" 0
	run cat "$BATS_TEST_TMPDIR/srv.err"
	# The two forged openings may be read in either order (both wait in the gate).
	assert_line --partial "runs an older rdmakit (control protocol 1)"
	assert_line --partial "is perftest (version 6.06), which cannot authenticate"
	assert_line --index 2 --partial "failed authentication"
	assert_equal "${#lines[@]}" 3
}
