#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit in perftest's protocol (lib/perf/pt_*.c) on the soft engine, no
# root needed: an rdmakit client forced to perftest's exchange (--perftest)
# against an rdmakit server, which takes it for perftest; both halves of the
# exchange in one run, every test's sync sequence, with and without the 6.28+
# negotiation.  The real peers (Debian's perftest and upstream 6.29 on
# Soft-RoCE) are in tests/vm/vm.bats ("perftest:"), the byte sequences in
# tests/unit/test_pt_session.c.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_perf
	# The client's soft engine needs an address of its own (both bind 4791).
	CADDR=${ADDR%.*}.$(((${ADDR##*.} % 250) + 1))
}

teardown() {
	kill_bg
}

# pt_pair CMD OP SERVER-ARGS -- CLIENT-ARGS: a server and a --perftest client;
# leaves the client's JSON in output and the server's in $BATS_TEST_TMPDIR/srv.
pt_pair() {
	local cmd=$1 op=$2 srv=() cli=()
	shift 2
	while [[ $# -gt 0 && $1 != -- ]]; do srv+=("$1"); shift; done
	[[ ${1:-} == -- ]] && shift
	cli=("$@")
	start_server "$cmd" --op "$op" "${srv[@]}"
	run --separate-stderr "$RDMAKIT" -j "$cmd" --bind "$CADDR" --timeout 5 --perftest -p "$PORT" \
		--op "$op" "${cli[@]}" "$ADDR"
	wait_pid "$SRV" 10
}

# srv_eval CODE: Python CODE with d = the server's JSON document.
srv_eval() {
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
$1" "$BATS_TEST_TMPDIR/srv"
}

@test "perftest protocol: bw, every op: the server takes a --perftest client for perftest and measures for itself" {
	local op
	for op in write read send atomic; do
		pt_pair bw "$op" -n 2000 -- -n 2000
		assert_success
		[[ $WAIT_RC -eq 0 ]] || fail "$op: server exit $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/srv.err")"
		json_eval '
p = d["params"]
assert p["peer_protocol"] == "perftest" and p["peer_perftest_version"] == "6.06", p
assert p["perftest_negotiated"] is False and "perftest_note" in p, p
(r,) = d["results"]
assert r["iterations"] == 2000, r
print(r["bw_avg_gbps"])'
		run srv_eval '
p = d["params"]
assert p["peer_protocol"] == "perftest" and p["role"] == "server", p
(r,) = d["results"]
assert r["iterations"] == 2000 and r["bw_avg_gbps"] > 0, r'
		assert_success
	done
}

@test "perftest protocol: lat write and send ping-pong both ways; read and atomic servers say they measured nothing" {
	local op
	for op in write send read atomic; do
		pt_pair lat "$op" -n 300 -- -n 300
		assert_success
		[[ $WAIT_RC -eq 0 ]] || fail "$op: server exit $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/srv.err")"
		# The side that answers first-sent messages times one round trip
		# fewer (perftest's write_lat server and send_lat client send first).
		json_eval '(r,) = d["results"]; assert r["iterations"] in (299, 300) and r["t_typical_us"] > 0, r'
		if [[ $op == write || $op == send ]]; then
			run srv_eval '(r,) = d["results"]; assert r["iterations"] in (299, 300), r'
		else
			run srv_eval 'assert d["results"] == [] and "passive target" in d["params"]["measured"], d'
		fi
		assert_success
	done
}

@test "perftest protocol: --perftest-version 6.29 negotiates; the server adopts the client's test, -q 2 and -a included" {
	pt_pair bw send -- --perftest-version 6.29 -s 4096 -n 500 -q 2
	assert_success
	json_eval 'p = d["params"]; assert p["perftest_negotiated"] is True and p["perftest_struct_bytes"] == 320, p'
	# The server was started without -s, -n or -q: it learned them.
	run srv_eval '
p = d["params"]
assert p["perftest_negotiated"] is True and p["peer_perftest_version"] == "6.29", p
assert p["qps"] == 2 and p["iterations"] == 1000, p
(r,) = d["results"]
assert r["bytes"] == 4096 and r["iterations"] == 1000, r'
	assert_success
	# -a: the client negotiates the sweep, the server runs every size with it.
	pt_pair bw send -- --perftest-version 6.29 --perftest-struct 312 -a -n 20
	assert_success
	json_eval 'assert [r["bytes"] for r in d["results"]] == [2 ** i for i in range(1, 24)], d["results"]'
	run srv_eval '
assert d["params"]["perftest_struct_bytes"] == 312, d["params"]
assert [r["bytes"] for r in d["results"]] == [2 ** i for i in range(1, 24)], d["results"]'
	assert_success
}

@test "perftest protocol: -b, regular and -a: both sides print the same sum of both directions" {
	local op
	for op in write send; do
		pt_pair bw "$op" -b -n 1000 -- -b -n 1000
		assert_success
		[[ $WAIT_RC -eq 0 ]] || fail "$op: server exit $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/srv.err")"
		local client_row
		client_row=$(json_eval '(r,) = d["results"]; print(r["bw_avg_gbps"], r["local_bw_avg_gbps"], r["peer_bw_avg_gbps"])')
		run srv_eval '(r,) = d["results"]; print(r["bw_avg_gbps"], r["peer_bw_avg_gbps"], r["local_bw_avg_gbps"])'
		assert_success
		# The server's sum and parts, the other way round (6 digits: the report's MiB/s).
		run python3 -c '
import sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
assert all(abs(x - y) <= 1e-6 * max(x, 1) for x, y in zip(a, b)) and a[1] > 0 and a[2] > 0, (a, b)
print("ok")' "$client_row" "$output"
		assert_output ok
	done
	pt_pair bw write -b -a -n 20 -- -b -a -n 20
	assert_success
	json_eval 'assert len(d["results"]) == 23 and all(r["peer_bw_avg_gbps"] > 0 for r in d["results"]), d["results"]'
}

@test "perftest protocol: a negotiated test that differs from the server's own options: both exit 3 with one line" {
	pt_pair bw write -s 4096 -- --perftest-version 6.29 -s 1024
	assert_failure 3
	[[ $WAIT_RC -eq 3 ]] || fail "server exit $WAIT_RC"
	assert_equal "$(wc -l <<<"$stderr")" 1
	run grep -c "negotiated --op write, -s 1024.*differ from this server's own options" "$BATS_TEST_TMPDIR/srv.err"
	assert_output 1
}

@test "perftest protocol: an rdmakit client refuses --verify with a perftest peer, naming why" {
	pt_pair bw write -- --verify
	assert_failure 3
	[[ $stderr == *"is perftest 6.06: drop --verify (perftest fills its buffers with rand()"* ]] || fail "$stderr"
}

@test "perftest options: bad --perftest-version and --perftest-struct values are usage errors" {
	run --separate-stderr "$RDMAKIT" bw --perftest-version 5.2 127.0.0.1
	assert_one_line_error 2 "perftest refuses peers older than 5.70"
	run --separate-stderr "$RDMAKIT" bw --perftest-version 6.x 127.0.0.1
	assert_one_line_error 2 "invalid perftest version '6.x'"
	run --separate-stderr "$RDMAKIT" bw --perftest-version 6.29 --perftest-struct 316 127.0.0.1
	assert_one_line_error 2 "expected 312 (perftest built without mlx5dv) or 320"
	run --separate-stderr "$RDMAKIT" bw --perftest-struct 312 127.0.0.1
	assert_one_line_error 2 "give --perftest-version 6.28 or later too"
	run --separate-stderr "$RDMAKIT" lat --perftest --loopback
	assert_one_line_error 2 "--loopback runs both ends here"
}

@test "perftest spellings: --output prints one number, -N a zero peak, --out_json_file the JSON document, -F and --report_gbits and -c RC accepted" {
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 500 --output bandwidth -F --report_gbits -c RC
	assert_success
	[[ $output =~ ^[0-9]+\.[0-9]{2}$ ]] || fail "not one number: '$output'"
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" -n 300 --output latency --latency_gap 3
	assert_success
	[[ $output =~ ^[0-9]+\.[0-9]{2}$ ]] || fail "not one number: '$output'"
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 500 -N --retry_count 5 \
		--out_json_file "$BATS_TEST_TMPDIR/out.json"
	assert_success
	[[ $output == *"BW peak[Gb/sec]"* ]] || fail "$output"
	run python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
(r,) = d["results"]
assert r["bw_peak_gbps"] == 0 and r["bw_avg_gbps"] > 0 and d["command"] == "bw", r
print("ok")' "$BATS_TEST_TMPDIR/out.json"
	assert_output ok
	# -w is in the report's unit, as perftest's: MiB/sec with --unit MiB.
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 300 --unit MiB -w 1000000
	assert_failure 1
	[[ $stderr =~ ^"rdmakit bw: average "[0-9.]+" MiB/sec is below -w/--limit_bw 1000000.00"$ ]] || fail "$stderr"
	# lat -U and -H: every sample, perftest's lines, and in JSON.
	run --separate-stderr "$RDMAKIT" lat --loopback --bind "$ADDR" -n 50 -U -H
	assert_success
	assert_equal "$(grep -c '^#, usec$' <<<"$output")" 2
	assert_equal "$(grep -cE '^[0-9]+, [0-9.e+]+$' <<<"$output")" 100
	run --separate-stderr "$RDMAKIT" -j lat --loopback --bind "$ADDR" -n 50 -H
	json_eval '(r,) = d["results"]; assert len(r["samples_us"]) == 50 and r["samples_truncated"] is False, r'
	# -W reads an RDMA port's counters: not the soft engine's.
	run --separate-stderr "$RDMAKIT" bw --loopback --bind "$ADDR" -n 500 -W hw_counters/sent_pkts
	assert_one_line_error 3 "-W/--report-counters reads an RDMA port's counters (--engine verbs)"
	# perftest's default for a write bw: 5000 iterations.
	run --separate-stderr "$RDMAKIT" -j bw --loopback --bind "$ADDR"
	assert_success
	json_eval 'assert d["params"]["iterations"] == 5000 and d["results"][0]["iterations"] == 5000, d'
}

@test "perftest spellings: perftest's options rdmakit does not have are refused in one line naming them and why" {
	local cmd opt want
	while IFS='|' read -r cmd opt want; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" $cmd $opt
		assert_one_line_error 2 "$want"
	done <<'LIST'
bw|--use-srq 127.0.0.1|perftest's '--use-srq' is not in rdmakit: not implemented in rdmakit yet
lat|-W counters/port_xmit_data 127.0.0.1|perftest's '-W' is not in rdmakit: lat: not implemented in rdmakit yet; bw -W reports them
bw|-W counters/../x 127.0.0.1|invalid counter 'counters/../x' in -W/--report-counters
bw|-H 127.0.0.1|perftest's '-H' is not in rdmakit: bw: it is lat's
bw|--use_cuda=0 127.0.0.1|perftest's '--use_cuda' is not in rdmakit: rdmakit registers host memory only
bw|--run_infinitely 127.0.0.1|-D SECONDS with --interval
lat|-e 127.0.0.1|rdmakit polls its completion queues
bw|-c UD --op write 127.0.0.1|-c UD carries SEND only
bw|-c SRD 127.0.0.1|not a transport this build runs
bw|--output latency 127.0.0.1|--output latency: bw prints bandwidth or message_rate
bw|--bind_source_ip 127.0.0.1|--bind_source_ip is the client's control connection
LIST
}

@test "perftest protocol: a SEND latency peer that counts other iterations: both sides exit 3 with one line naming -n, neither hangs" {
	local t0=$SECONDS
	pt_pair lat send -n 300 -- -n 200
	assert_failure 3
	[[ $WAIT_RC -eq 3 ]] || fail "server exit $WAIT_RC"
	[[ $stderr == *"counts the messages of its own -n/-D"* ]] || fail "$stderr"
	assert_equal "$(wc -l <<<"$stderr")" 1
	((SECONDS - t0 < 30)) || fail "took $((SECONDS - t0)) s"
}

@test "docs/perftest.md accounts for every option: 'same' ones are in --help, 'refused' ones are refused in one line by bw and lat" {
	[[ -f docs/perftest.md ]] || fail "docs/perftest.md is missing"
	run python3 - docs/perftest.md <<'PY'
import re, sys
rows = []
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 4 or not cells[0].startswith("`"):
        continue
    opts = re.findall(r"`(-[-A-Za-z0-9_]+|-[A-Za-z])`", cells[0])
    state = next((c for c in cells if c in ("same", "different", "refused") or c.startswith("same ")), None)
    applies = next((c for c in cells if c in ("bw", "lat", "both")), "both")
    for o in opts:
        print(o, applies, state.replace(" ", "_") if state else "?")
PY
	assert_success
	local opt applies state cmd cmds n=0 bad=()
	while read -r opt applies state; do
		n=$((n + 1))
		case $applies in bw) cmds=(bw) ;; lat) cmds=(lat) ;; *) cmds=(bw lat) ;; esac
		for cmd in "${cmds[@]}"; do
			if [[ $state == same || $state == different ]]; then
				"$RDMAKIT" "$cmd" --help | grep -qE -- "(^|[ ,])$opt([ =,]|$)" ||
					bad+=("$cmd $opt: '$state' in docs/perftest.md but not in 'rdmakit $cmd --help'")
			elif [[ $state == refused ]]; then
				local arg=$opt=1
				[[ $opt == --* ]] || arg=${opt}1
				run --separate-stderr "$RDMAKIT" "$cmd" "$arg" 127.0.0.1
				if [[ $status -ne 2 || $stderr != *"perftest's '$opt' is not in rdmakit: "* || -n $output ]]; then
					bad+=("$cmd $opt: 'refused' in docs/perftest.md, but exit $status: $stderr")
				fi
			fi
		done
	done <<<"$output"
	((n > 150)) || fail "only $n options read from docs/perftest.md"
	((${#bad[@]} == 0)) || fail "$(printf '%s\n' "${bad[@]}")"
}
