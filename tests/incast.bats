#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit incast on the soft engine over loopback, no root needed: many-to-one
# and all-to-all runs, the report's arithmetic re-done from its own per-flow
# numbers (aggregate, Jain's index, FCT percentiles), --verify, adoption of
# the senders' test and refusal of conflicting settings, a sender killed
# mid-run, a coordinator whose senders never come, launcher mode under
# Open MPI's mpirun and without a launcher (pdsh-style), and usage errors.
#
# Every background rdmakit is killed in teardown, and every wait on one is
# bounded, so a hang fails a test instead of the suite.  The runs are short
# (-D 1) and sleep on the engine when idle, so they share 2 cores well.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_rdmakit
	# Loopback addresses of this test's own: the coordinator's and a sender's.
	local net=$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1))
	ADDR=127.$net.2
	ADDR2=127.$net.3
	ADDR3=127.$net.4
	PORT=$(free_port)
	BG_PIDS=()
}

teardown() {
	kill_bg
}

# coordinator ARGS...: starts `rdmakit incast --serve` on ADDR:PORT in the
# background (stdout $BATS_TEST_TMPDIR/co.out, stderr co.err); CO is its pid.
coordinator() {
	bg "$BATS_TEST_TMPDIR/co.out" "$BATS_TEST_TMPDIR/co.err" \
		"$RDMAKIT" incast --serve -p "$PORT" --bind "$ADDR" "$@"
	CO=$BG
	wait_listen "$PORT"
}

# json_check PYTHON: runs PYTHON with d = the coordinator's JSON document.
json_check() {
	python3 - "$BATS_TEST_TMPDIR/co.out" <<EOF
import json, sys, math
d = json.load(open(sys.argv[1]))
r = d["results"]
def close(a, b, rel=1e-6):
    assert abs(a - b) <= rel * max(abs(a), abs(b), 1e-12), (a, b)
$1
EOF
}

@test "incast --local 3: three flows into one receiver, one report whose sums and Jain's index check out" {
	coordinator --senders 3 --json
	run -0 timeout 30 "$RDMAKIT" incast --local 3 -p "$PORT" --bind "$ADDR2" -D 1 "$ADDR"
	assert_line --regexp '^ Role +: sender$'
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/co.err"; false; }
	json_check '
p = d["params"]
assert p["pattern"] == "incast" and p["role"] == "coordinator" and p["participants"] == 4
assert p["op"] == "write" and p["duration_s"] == 1 and p["size_bytes"] == 65536
f = r["flows"]
assert [(x["src_rank"], x["dst_rank"]) for x in f] == [(1, 0), (2, 0), (3, 0)], f
assert all(x["status"] == "ok" and x["bytes"] > 0 and x["fct_us"] is None for x in f)
assert all(x["bytes"] == x["messages"] * 65536 for x in f)
assert [x["sender"] for x in f] == ["%s#%d" % ("'"$ADDR2"'", i) for i in (1, 2, 3)], f
assert all(x["receiver"] == "'"$ADDR"'" for x in f)
# Every flow ran about -D seconds from the common start.
assert all(0.9 < x["seconds"] < 3 for x in f), f
g = [x["goodput_gbps"] for x in f]
for x in f:
    close(x["goodput_gbps"], x["bytes"] * 8 / x["seconds"] / 1e9, 1e-3)
close(r["fairness_jain"], sum(g) ** 2 / (len(g) * sum(v * v for v in g)), 1e-6)
close(r["aggregate"]["goodput_gbps"], sum(x["bytes"] for x in f) * 8 / max(x["seconds"] for x in f) / 1e9, 1e-3)
assert r["fct_us"] is None and r["failed_participants"] == 0
l = r["latency_us"]
assert l["count"] == sum(x["messages"] for x in f)
assert 0 < l["p50"] <= l["p90"] <= l["p99"] <= l["p99_9"] <= l["max"] * 1.01
e = r["counters"]["engine"]
# The receiver and the senders both count: every data packet sent was received.
assert e["tx_packets"] > 0 and e["icrc_errors"] == 0 and e["retransmits"] == 0
assert "InCEPkts" in r["counters"]["IpExt"]
'
}

@test "incast --interval: each flow's goodput per interval adds up to its bytes, on every interval's line" {
	# The senders ask for the sampling; the coordinator adopts it.
	coordinator --senders 2 --json
	run -0 timeout 30 "$RDMAKIT" incast --local 2 -p "$PORT" --bind "$ADDR2" -D 1 --interval 0.25 "$ADDR"
	assert_line --regexp '^ Interval +: 0.25$'
	assert_line --regexp '^ \[ +0.00- +0.25 sec\] +[0-9.]+ +[0-9.]+ \.\. [0-9.]+ +[01]\.[0-9]{4}$'
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/co.err"; false; }
	json_check '
assert d["params"]["interval_s"] == 0.25 and r["interval_s"] == 0.25
iv, f = r["intervals"], r["flows"]
longest = max(x["seconds"] for x in f)
# A last interval under a tenth of one (the drain after -D) joins the one before.
n = math.ceil(longest / 0.25 - 1e-9)
if n >= 2 and (longest - (n - 1) * 0.25) * 10 < 0.25:
    n -= 1
assert len(iv) == n, (len(iv), longest)
for k, x in enumerate(iv):
    close(x["start_s"], 0.25 * k)
    close(x["end_s"], 0.25 * (k + 1) if k < n - 1 else longest)
    assert [y["flow"] for y in x["flows"]] == [y["flow"] for y in f]
    assert x["bytes"] == sum(y["bytes"] for y in x["flows"])
    secs = x["end_s"] - x["start_s"]
    close(x["goodput_gbps"], x["bytes"] * 8 / secs / 1e9, 1e-6)
    g = [y["goodput_gbps"] for y in x["flows"]]
    close(x["slowest_gbps"], min(g)); close(x["fastest_gbps"], max(g))
    moved = [v for v in g if v > 0]
    close(x["fairness_jain"], sum(moved) ** 2 / (len(moved) * sum(v * v for v in moved)) if moved else 0)
# Every byte a flow moved is in exactly one of its intervals.
for y in f:
    got = sum(z["bytes"] for x in iv for z in x["flows"] if z["flow"] == y["flow"])
    assert got == y["bytes"], (got, y)
# The middle intervals carry data on both flows.
assert all(z["bytes"] > 0 for x in iv[1:-1] for z in x["flows"])
'
}

@test "incast --interval: a run longer than 512 samples widens them, still adding up" {
	coordinator --senders 1 --json --interval 0.01
	run -0 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -D 6 -s 4096 "$ADDR"
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/co.err"; false; }
	json_check '
assert d["params"]["interval_s"] == 0.01
assert r["interval_s"] == 0.02, r["interval_s"]
iv, (f,) = r["intervals"], r["flows"]
assert 290 <= len(iv) <= 512, len(iv)
assert sum(x["flows"][0]["bytes"] for x in iv) == f["bytes"]
'
}

@test "incast --interval: out of range is a usage error naming the range" {
	run -2 "$RDMAKIT" incast --interval 0 127.0.0.1
	assert_output --partial "--interval"
	assert_output --partial "0.01"
}

@test "incast --bytes: every flow moves exactly BYTES and the FCT percentiles are its own flows' times" {
	coordinator --senders 2 --json
	bg "$BATS_TEST_TMPDIR/s1.out" "$BATS_TEST_TMPDIR/s1.err" \
		"$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" --bytes 3000000 -s 64k -q 2 "$ADDR"
	local s1=$BG
	run -0 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR3" "$ADDR"
	wait_pid "$s1" 20
	[ "$WAIT_RC" -eq 0 ]
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ]
	json_check '
f = r["flows"]
assert len(f) == 2 and d["params"]["flow_bytes"] == 3000000 and d["params"]["qps"] == 2
# 3000000 = 45 full 64 KiB messages and one of 50880 bytes.
assert all(x["bytes"] == 3000000 and x["messages"] == 46 for x in f), f
fct = sorted(x["fct_us"] for x in f)
close(r["fct_us"]["max"], fct[-1], 1e-9)
close(r["fct_us"]["p50"], fct[0], 1e-9)    # nearest rank of 2 values
close(r["fct_us"]["p99"], fct[-1], 1e-9)
for x in f:
    close(x["fct_us"], x["seconds"] * 1e6, 1e-6)
'
}

@test "incast --pattern all-to-all: every ordered pair of 3 participants is a flow, --verify checks every byte" {
	coordinator --senders 2 --pattern all-to-all --verify --json
	bg "$BATS_TEST_TMPDIR/s1.out" "$BATS_TEST_TMPDIR/s1.err" \
		"$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -D 1 "$ADDR"
	local s1=$BG
	run -0 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR3" "$ADDR"
	wait_pid "$s1" 20
	[ "$WAIT_RC" -eq 0 ]
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ]
	json_check '
f = r["flows"]
assert sorted((x["src_rank"], x["dst_rank"]) for x in f) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
assert all(x["status"] == "ok" and x["bytes"] > 0 for x in f), f
assert d["params"]["pattern"] == "all-to-all" and d["params"]["verify"] is True
assert r["aggregate"]["link_share"] is None   # no single receiver link
'
}

@test "incast --op send --verify: SENDs land in posted receives and are checked on arrival" {
	coordinator --senders 1
	run -0 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" --op send --verify -s 4096 -D 1 "$ADDR"
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ]
	run cat "$BATS_TEST_TMPDIR/co.out"
	assert_line --regexp '^ Operation +: send$'
	assert_line --regexp '^ Verify +: yes$'
	assert_line --regexp "^ 1 +1 +0 +$ADDR2 +$ADDR +[1-9][0-9]* +[1-9][0-9]* +[0-9.]+ +- +ok"
}

@test "the coordinator adopts what it did not set, and refuses a sender that contradicts what it did set" {
	coordinator --senders 1 -s 4096 --json
	run -3 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -s 8192 -D 1 "$ADDR"
	assert_output --partial "asked for -s 8192, but this run has -s 4096"
	# The coordinator keeps waiting for a sender that agrees.
	kill -0 "$CO"
	run -0 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -q 2 -D 1 "$ADDR"
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ]
	json_check '
assert d["params"]["size_bytes"] == 4096 and d["params"]["qps"] == 2
assert r["flows"][0]["bytes"] % 4096 == 0
'
}

@test "incast --max-memory: senders cannot make the coordinator allocate more; one line on both sides before anything is allocated" {
	coordinator --senders 2 --max-memory 8m -D 0.5
	run -3 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -s 1m -q 8 --local 2 "$ADDR"
	local want="this run needs 16 MiB of buffers on $ADDR (2 flow ends x 8 QPs x 1048576 bytes), more than its --max-memory of 8 MiB: fewer senders or QPs, smaller messages, or a larger --max-memory there"
	assert_output "rdmakit incast: peer: $want"
	wait_pid "$CO" 10
	[ "$WAIT_RC" -eq 3 ]
	run cat "$BATS_TEST_TMPDIR/co.err"
	assert_output "rdmakit incast: $want"
}

@test "two senders that disagree: the second is refused naming both values" {
	coordinator --senders 2
	bg "$BATS_TEST_TMPDIR/s1.out" "$BATS_TEST_TMPDIR/s1.err" \
		"$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -D 1 "$ADDR"
	sleep 0.5
	run -3 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR3" --bytes 1m "$ADDR"
	assert_output --regexp "asked for --bytes, but this run goes by -D: give -D or --bytes to one side only"
}

@test "a sender killed mid-run is reported by name; the rest of the report still prints; exit 3" {
	coordinator --senders 2 -D 4
	bg "$BATS_TEST_TMPDIR/s1.out" "$BATS_TEST_TMPDIR/s1.err" \
		"$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" "$ADDR"
	local victim=$BG
	bg "$BATS_TEST_TMPDIR/s2.out" "$BATS_TEST_TMPDIR/s2.err" \
		"$RDMAKIT" incast -p "$PORT" --bind "$ADDR3" "$ADDR"
	local s2=$BG
	sleep 1.5
	kill -KILL "$victim"
	wait_pid "$s2" 20
	[ "$WAIT_RC" -eq 0 ]
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 3 ]
	run cat "$BATS_TEST_TMPDIR/co.err"
	assert_output --regexp "flow [12] \\($ADDR2 -> $ADDR\\): rank [12] \\($ADDR2\\) went away mid-run"
	run cat "$BATS_TEST_TMPDIR/co.out"
	assert_line --regexp " $ADDR2 +$ADDR +[0-9]+ +[0-9]+ +[0-9.]+ +- +failed"
	assert_line --regexp " $ADDR3 +$ADDR +[1-9][0-9]* +[1-9][0-9]* +[0-9.]+ +- +ok"
	assert_line --regexp '^ Fairness \(Jain.s index\) +: 1\.0000 over 1 flows$'
}

@test "a coordinator whose senders never come gives up after --wait-timeout with one line, exit 3" {
	local t0
	t0=$(now)
	run -3 timeout 20 "$RDMAKIT" incast --serve --senders 3 -p "$PORT" --wait-timeout 1
	elapsed_below "$t0" 5
	assert_output --partial "only 0 of 3 senders joined within 1 s (--wait-timeout)"
}

@test "a sender whose coordinator is not there fails within --timeout, exit 3" {
	run -3 timeout 20 "$RDMAKIT" incast -p "$PORT" --timeout 1 "$ADDR"
	assert_output --regexp "^rdmakit incast: .*$ADDR.*"
	[ "${#lines[@]}" -eq 1 ]
}

@test "under mpirun: rank 0 serves, ranks 1..3 send, one JSON report on rank 0's stdout" {
	require_tool mpirun "launching ranks (Debian's openmpi-bin)"
	local extra=()
	[[ $(id -u) -eq 0 ]] && extra=(--allow-run-as-root)
	run -0 timeout 60 mpirun "${extra[@]}" --oversubscribe -np 4 \
		"$RDMAKIT" incast --coordinator "127.0.0.1:$PORT" -D 1 --json
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/co.out"
	json_check '
assert d["params"]["participants"] == 4 and d["params"]["role"] == "coordinator"
f = r["flows"]
assert sorted(x["src_rank"] for x in f) == [1, 2, 3] and all(x["dst_rank"] == 0 for x in f)
assert all(x["status"] == "ok" and x["bytes"] > 0 for x in f)
# The ranks share 127.0.0.1: all but one soft engine are off UDP 4791.
assert len(set(x["sender"] for x in f) | {f[0]["receiver"]}) == 4, f
'
}

@test "under mpirun, overload: a 32-rank all-to-all on one host (992 flows of 1 MiB) ends with every flow ok" {
	require_tool mpirun "launching ranks (Debian's openmpi-bin)"
	local extra=()
	[[ $(id -u) -eq 0 ]] && extra=(--allow-run-as-root)
	# 32 engines on 2 cores, no PFC and no ECN: receive buffers overflow and
	# ACKs come late.  Before the engine backed off on loss and timeouts,
	# go-back-N resent whole windows until the retries ran out (exit 3).
	run -0 timeout 180 mpirun "${extra[@]}" --oversubscribe -np 32 \
		"$RDMAKIT" incast --coordinator "127.0.0.1:$PORT" --pattern all-to-all --bytes 1m --json
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/co.out"
	json_check '
f = r["flows"]
assert len(f) == 32 * 31, len(f)
assert sorted((x["src_rank"], x["dst_rank"]) for x in f) == \
       [(s, t) for s in range(32) for t in range(32) if s != t]
bad = [x for x in f if x["status"] != "ok" or x["bytes"] != 1 << 20]
assert not bad, bad[:3]
c = r["counters"]["engine"]
# Not a retransmission storm: a collapse resent most of what it sent.
assert c["retransmits"] * 3 <= c["tx_packets"], c
print("goodput %.2f Gb/s, Jain %.3f, retransmits %d of %d packets, timeouts %d" %
      (r["aggregate"]["goodput_gbps"], r["fairness_jain"], c["retransmits"],
       c["tx_packets"], c["timeouts"]), file=sys.stderr)
'
}

@test "without a launcher (pdsh, ssh loops): --world-size, the first to bind is rank 0, the rest in order" {
	local i pids=()
	for i in 1 2 3; do
		bg "$BATS_TEST_TMPDIR/p$i.out" "$BATS_TEST_TMPDIR/p$i.err" \
			"$RDMAKIT" incast --coordinator "127.0.0.1:$PORT" --world-size 3 -D 1
		pids+=("$BG")
	done
	for i in 0 1 2; do
		wait_pid "${pids[$i]}" 30
		[ "$WAIT_RC" -eq 0 ]
	done
	run cat "$BATS_TEST_TMPDIR"/p*.out
	# Exactly one report (rank 0's), with flows from ranks 1 and 2.
	[ "$(grep -c '^ Role *: coordinator$' <<<"$output")" -eq 1 ]
	assert_line --regexp '^ 1 +1 +0 .* ok'
	assert_line --regexp '^ 2 +2 +0 .* ok'
}

@test "incast usage errors name the problem, exit 2" {
	run -2 "$RDMAKIT" incast --serve
	assert_output "rdmakit incast: --serve needs --senders N: how many senders to wait for"
	run -2 "$RDMAKIT" incast --serve --senders 2 somehost
	assert_output --partial "--serve waits for senders: drop HOST 'somehost'"
	run -2 "$RDMAKIT" incast -D 1 --bytes 1m somehost
	assert_output --partial "-D/--duration and --bytes exclude each other"
	run -2 "$RDMAKIT" incast
	assert_output --partial "give the coordinator's HOST, or --serve to be it"
	run -2 "$RDMAKIT" incast --coordinator nohostport
	assert_output --partial "expected HOST:PORT"
	run -2 env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u SLURM_NTASKS "$RDMAKIT" incast --coordinator h:1
	assert_output --partial "the number of ranks is unknown"
	run -2 "$RDMAKIT" incast --pattern ring h
	assert_output --partial "--pattern"
	run -2 "$RDMAKIT" incast --op read h
	assert_output --partial "--op"
	run -2 "$RDMAKIT" incast --senders 2 h
	assert_output --partial "--senders is for the coordinator"
	run -2 "$RDMAKIT" incast --local 0 h
	assert_output --partial "--local"
}

@test "incast -c UD and -c UC: every flow says what it sent, what arrived and what was lost, and it adds up" {
	local conn
	for conn in "UD" "UC --op send"; do
		# shellcheck disable=SC2086
		coordinator --senders 2 --json -c $conn --verify
		# shellcheck disable=SC2086
		run -0 timeout 30 "$RDMAKIT" incast --local 2 -p "$PORT" --bind "$ADDR2" -c $conn \
			-s 1024 --bytes 4m "$ADDR"
		assert_line --regexp "^ Connection type : ${conn%% *}$"
		assert_line --partial "the coordinator's report counts what arrived"
		wait_pid "$CO" 20
		[ "$WAIT_RC" -eq 0 ] || fail "$conn: $(cat "$BATS_TEST_TMPDIR/co.err")"
		json_check '
p, f, l = d["params"], r["flows"], r["loss"]
assert p["connection"] == "'"${conn%% *}"'" and p["op"] == "send" and p["size_bytes"] == 1024, p
assert len(f) == 2 and all(x["status"] == "ok" for x in f), f
for x in f:
    # 4 MiB in 1 KiB messages, however many arrived; --bytes ends by what was sent.
    assert x["sent_msgs"] == 4096 and x["sent_bytes"] == 4 << 20 and x["fct_us"] > 0, x
    assert x["messages"] + x["lost_msgs"] == x["sent_msgs"], x
    assert x["bytes"] == 1024 * x["messages"], x
    close(x["goodput_gbps"], x["bytes"] * 8 / x["seconds"] / 1e9, 1e-3)
    close(x["loss_percent"], 100 * x["lost_msgs"] / x["sent_msgs"], 1e-9)
assert l["sent_msgs"] == 8192 and l["received_msgs"] == sum(x["messages"] for x in f), l
assert l["lost_msgs"] == sum(x["lost_msgs"] for x in f), l
assert l["received_bytes"] == sum(x["bytes"] for x in f), l
w = l["lost_where"]
assert set(w) == {"host_tx_drops", "rcvbuf_drops", "no_recv_drops", "qkey_drops", "uc_msgs_cut"}, w'
	done
}

@test "incast -c UC WRITE counts at the senders; -c UD runs -s over the MTU at the MTU, said in a note" {
	coordinator --senders 1 --json -c UC --verify
	run -0 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -D 0.5 "$ADDR"
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ] || fail "$(cat "$BATS_TEST_TMPDIR/co.err")"
	json_check '
(x,), l = r["flows"], r["loss"]
assert d["params"]["op"] == "write" and x["status"] == "ok" and x["sent_msgs"] > 0, x
assert x["lost_msgs"] is None and x["messages"] == x["sent_msgs"], x
assert l["received_msgs"] is None and l["sent_msgs"] == x["sent_msgs"], l'
	coordinator --senders 1 --json -c UD -s 9000
	run -0 timeout 30 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -D 0.5 "$ADDR"
	wait_pid "$CO" 20
	[ "$WAIT_RC" -eq 0 ] || fail "$(cat "$BATS_TEST_TMPDIR/co.err")"
	json_check '
p, (x,) = d["params"], r["flows"]
assert "-s 9000 is over the path MTU" in p["ud_size_note"], p
assert p["size_bytes"] == p["mtu_bytes"] and x["bytes"] == x["messages"] * p["mtu_bytes"], (p, x)'
}

@test "incast -c: what the transport cannot carry is refused, on the command line and at the coordinator" {
	run --separate-stderr "$RDMAKIT" incast -c UD --op write "$ADDR"
	assert_one_line_error 2 "-c UD carries SEND only"
	run --separate-stderr "$RDMAKIT" incast -c XRC "$ADDR"
	assert_one_line_error 2 "it runs RC, UC and UD"
	coordinator --senders 1 -c UD --wait-timeout 3
	run --separate-stderr timeout 20 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" --op write "$ADDR"
	assert_one_line_error 3 "-c UD carries SEND only"
	run --separate-stderr timeout 20 "$RDMAKIT" incast -p "$PORT" --bind "$ADDR2" -c UC "$ADDR"
	assert_one_line_error 3 "asked for -c UC, but this run has -c UD"
}
