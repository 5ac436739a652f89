#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit probe: the command line, and whole runs against probe --serve on
# the soft engine (loopback here; two network namespaces in
# probe_netns.bats; rxe in the guest lab, tests/vm/vm.bats).

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_perf
}

teardown() {
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}

# serve ARGS...: probe --serve on a free port ($PORT) in the background; a
# server that outlives its TERM (an ASan build stuck in its exit-time leak
# check was seen to spin for half an hour) gets KILL 5 s later.
serve() {
	PORT=$(free_port)
	bg "$BATS_TEST_TMPDIR/serve.out" "$BATS_TEST_TMPDIR/serve.err" \
		timeout -k 5 60 "$RDMAKIT" probe --serve -p "$PORT" "$@"
	SERVE=$BG
	wait_listen "$PORT"
}

@test "probe --list: every test with its group, IBTA reference and expectation, text and JSON" {
	run -0 "$RDMAKIT" probe --list
	assert_line --regexp '^ Test +Group +Reference +Expected'
	assert_line --regexp '^ write_invalid_rkey +responder +IBTA 9\.9\.3\.1\.3'
	assert_line --regexp '^ bad_icrc +responder '
	run -0 "$RDMAKIT" -j probe --list
	run json_eval '
names = [t["name"] for t in d["results"]]
assert len(names) == len(set(names)) >= 10, names
assert all(t["group"] and t["reference"].startswith("IBTA") and t["expected"] for t in d["results"])
print(len(names))'
	assert_success
}

@test "probe: bad command lines are one-line usage errors (exit 2)" {
	run --separate-stderr "$RDMAKIT" probe
	assert_one_line_error 2 "give the HOST"
	run --separate-stderr "$RDMAKIT" probe --serve 127.0.0.1
	assert_one_line_error 2 "--serve takes no HOST"
	run --separate-stderr "$RDMAKIT" probe --test no_such_test 127.0.0.1
	assert_one_line_error 2 "no test named 'no_such_test'"
	run --separate-stderr "$RDMAKIT" probe --test , 127.0.0.1
	assert_one_line_error 2 "--test needs at least one test name"
	run --separate-stderr "$RDMAKIT" probe --engine verbs 127.0.0.1
	assert_one_line_error 2 "give them to 'rdmakit probe --serve'"
	run --separate-stderr "$RDMAKIT" probe --serve --test bad_icrc
	assert_one_line_error 2 "--test, --accept and -w belong to the probe"
	printf 'bad_icrc\n# a comment\n\nnot_a_test  # why\n' >"$BATS_TEST_TMPDIR/accept"
	run --separate-stderr "$RDMAKIT" probe --accept "$BATS_TEST_TMPDIR/accept" 127.0.0.1
	assert_one_line_error 2 "line 4: no test named 'not_a_test'"
	run --separate-stderr "$RDMAKIT" probe --accept "$BATS_TEST_TMPDIR/nonexistent" 127.0.0.1
	assert_one_line_error 2 "--accept"
}

@test "probe against probe --serve --engine soft on loopback: every test passes (the IPv4 ID is informational), with its frames" {
	serve --engine soft
	run -0 timeout 60 "$RDMAKIT" -j probe -p "$PORT" "$ADDR"
	run json_eval '
r = d["results"]
assert d["params"]["remote_engine"] == "soft", d["params"]
# GSO segments from the soft engine may carry IPv4 IDs 0, 1, ...: any ID is
# allowed under DF, so that one may be informational; what a QP does past
# its READ limit and the credits it keeps are informational by nature;
# everything else passes.
info = {"ipv4_header", "outstanding_reads", "aeth_credits"}
ok = lambda x: x["verdict"] == "pass" or (x["test"] in info and x["verdict"] == "informational")
assert len(r) >= 10 and all(ok(x) for x in r), [(x["test"], x["verdict"], x["observed"]) for x in r]
for x in r:
    ev = x["evidence"]
    assert ev and all(e["frame"] >= 1 for e in ev), x
    # Every verdict rests on something the remote sent; one of the responder
    # group also on what this side sent it.
    assert any(e["direction"] == "received" for e in ev), x
    assert x["group"] != "responder" or any(e["direction"] == "sent" for e in ev), x
assert set(x["group"] for x in r) == {"responder", "requester", "packets"}, r
s = d["summary"]
assert s["pass"] >= len(r) - len(info) and s["deviation"] == 0 and s["fail"] == 0, s
byname = dict((x["test"], x) for x in r)
nak = byname["write_invalid_rkey"]["evidence"][1]
assert nak["aeth"] == "NAK remote access error" and nak["direction"] == "received", nak
print(len(r))'
	assert_success
	wait_pid "$SERVE" 10
	assert_equal "$WAIT_RC" 0
	run cat "$BATS_TEST_TMPDIR/serve.out"
	assert_output --partial ": done"
}

@test "probe --test runs only the tests named, in that order; the text table names frames" {
	serve --engine soft
	run -0 timeout 60 "$RDMAKIT" probe --test bad_icrc,psn_ahead -p "$PORT" "$ADDR"
	assert_line --regexp '^ bad_icrc +pass +1,2,3 +silent for the bad ICRC'
	assert_line --regexp '^ psn_ahead +pass +[0-9,]+ +one NAK PSN sequence error'
	refute_output --partial write_invalid_rkey
	assert_line '2 pass, 0 informational, 0 deviation (0 not accepted), 0 not implemented, 0 fail, 0 skipped'
}

@test "probe against a bw server, or something that is not rdmakit: one line, exit 3" {
	PORT=$(free_port)
	bg "$BATS_TEST_TMPDIR/bw.out" "$BATS_TEST_TMPDIR/bw.err" timeout 30 "$RDMAKIT" bw --engine soft -p "$PORT"
	wait_listen "$PORT"
	run --separate-stderr timeout 30 "$RDMAKIT" probe -p "$PORT" "$ADDR"
	assert_one_line_error 3 "is rdmakit but not 'rdmakit probe --serve'"
	PORT=$(free_port)
	bg /dev/null /dev/null timeout 30 python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(4)
c, _ = s.accept(); c.sendall(b"SSH-2.0-OpenSSH_9.2\r\n"); time.sleep(5)' "$ADDR" "$PORT"
	wait_listen "$PORT"
	run --separate-stderr timeout 30 "$RDMAKIT" probe --timeout 2 -p "$PORT" "$ADDR"
	[[ $status -eq 3 ]] || fail "exit $status: $stderr"
	[[ $stderr != *$'\n'* && -n $stderr ]] || fail "not one line: $stderr"
}

@test "a bw client at probe --serve is told it reached a probe server; the server goes on" {
	serve --engine soft --persistent
	run --separate-stderr timeout 30 "$RDMAKIT" bw --engine soft -n 10 -p "$PORT" "$ADDR"
	[[ $status -eq 3 ]] || fail "exit $status: $stderr"
	assert_equal "$stderr" "${stderr%%$'\n'*}"
	[[ $stderr == *"this is rdmakit probe --serve"* ]] || fail "$stderr"
	run -0 timeout 60 "$RDMAKIT" probe --test write_invalid_rkey -p "$PORT" "$ADDR"
	assert_line --regexp '^ write_invalid_rkey +pass '
}

@test "a probe that goes silent: probe --serve gives up after --timeout and serves the next" {
	serve --engine soft --persistent --timeout 1
	bg /dev/null /dev/null timeout 20 python3 -c '
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2]))); time.sleep(10)' "$ADDR" "$PORT"
	sleep 0.5
	run -0 timeout 60 "$RDMAKIT" probe --test duplicate_send -p "$PORT" "$ADDR"
	assert_line --regexp '^ duplicate_send +pass '
}

@test "a one-shot probe --serve outlives a client it refuses (no key) and serves the next" {
	head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/key"
	chmod 600 "$BATS_TEST_TMPDIR/key"
	serve --engine soft --auth-key "$BATS_TEST_TMPDIR/key"
	run --separate-stderr timeout 30 "$RDMAKIT" probe --test write_invalid_rkey -p "$PORT" "$ADDR"
	[[ $status -eq 3 ]] || fail "exit $status without the key: $stderr"
	run -0 timeout 60 "$RDMAKIT" probe --auth-key "$BATS_TEST_TMPDIR/key" --test write_invalid_rkey \
		-p "$PORT" "$ADDR"
	assert_line --regexp '^ write_invalid_rkey +pass '
	wait_pid "$SERVE" 10
	assert_equal "$WAIT_RC" 0
}

@test "a persistent soft-engine probe --serve whose UDP port is taken tells that probe why and goes on" {
	UPORT=$(free_port)
	bg /dev/null /dev/null timeout 30 python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((sys.argv[1], int(sys.argv[2])))
time.sleep(30)' "$ADDR" "$UPORT"
	HOLDER=$BG
	sleep 0.5
	serve --engine soft --persistent --udp-port "$UPORT"
	run --separate-stderr timeout 30 "$RDMAKIT" probe --test write_invalid_rkey -p "$PORT" "$ADDR"
	[[ $status -eq 3 ]] || fail "exit $status with the port taken: $stderr"
	[[ $stderr == *"$UPORT"* ]] || fail "the error does not name UDP port $UPORT: $stderr"
	kill "$HOLDER"
	wait_pid "$HOLDER" 5
	run -0 timeout 60 "$RDMAKIT" probe --test write_invalid_rkey -p "$PORT" "$ADDR"
	assert_line --regexp '^ write_invalid_rkey +pass '
}

@test "probe -w: every packet of the run in a pcap whose frames the verdicts name, ICRCs intact" {
	serve --engine soft
	run -0 timeout 60 "$RDMAKIT" -j probe -w "$BATS_TEST_TMPDIR/probe.pcap" -p "$PORT" "$ADDR"
	echo "$output" >"$BATS_TEST_TMPDIR/probe.json"
	# The probe's own UDP port: on loopback the soft-engine remote holds 4791,
	# so its answers go to this one, and the decoder is told.
	lport=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["params"]["local"].rsplit(":",1)[1])' \
		"$BATS_TEST_TMPDIR/probe.json")
	run -0 "$RDMAKIT" -j capture -r "$BATS_TEST_TMPDIR/probe.pcap" --udp-port "$lport"
	echo "$output" >"$BATS_TEST_TMPDIR/capture.json"
	run python3 - "$BATS_TEST_TMPDIR/probe.json" "$BATS_TEST_TMPDIR/capture.json" <<-'EOF2'
		import json, sys
		d = json.load(open(sys.argv[1]))
		cap = {}
		for line in open(sys.argv[2]):
		    x = json.loads(line)
		    if "frame" in x:
		        cap[x["frame"]] = x
		# Every frame decodes as RoCEv2; numbering has no gaps.
		assert sorted(cap) == list(range(1, len(cap) + 1)), sorted(cap)[:5]
		# The remote's headers are rebuilt with the IPv4 ID solved from the
		# ICRC, so every ICRC holds but the one corrupted on purpose.
		corrupt = [e["frame"] for r in d["results"] for e in r["evidence"] if e.get("icrc_corrupt")]
		bad = [f for f, x in cap.items() if x.get("icrc") != "ok"]
		assert bad == corrupt and len(bad) == 1, (bad, corrupt)
		last = 0
		for r in d["results"]:
		    for e in r["evidence"]:
		        c = cap[e["frame"]]
		        assert (c["psn"], c["opcode_name"]) == (e["psn"], e["opcode"]), (r["test"], e, c)
		        last = max(last, e["frame"])
		# Frames count across the run: the last test's evidence is near the end.
		assert last > len(cap) - 10, (last, len(cap))
		print(len(cap))
	EOF2
	assert_success
}

@test "probe -w: a path that cannot be written is one line, exit 3, before any connection; -w is not for --serve" {
	run --separate-stderr "$RDMAKIT" probe -w /nonexistent-dir/x.pcap -p "$(free_port)" 127.0.0.1
	assert_equal "$status" 3
	[[ $stderr == *"/nonexistent-dir/x.pcap"*"-w"* ]] || fail "$stderr"
	[[ $(wc -l <<<"$stderr") -eq 1 ]] || fail "$stderr"
	run --separate-stderr "$RDMAKIT" probe --serve -w x.pcap
	assert_equal "$status" 2
	[[ $stderr == *"-w belong"* ]] || fail "$stderr"
}
