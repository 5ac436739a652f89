#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Chaos soak: long bw --verify and lat --verify runs between two network
# namespaces while tests/soak/chaos changes loss, duplication, payload
# corruption and CE marking (nftables, in the kernel datapath) every few
# seconds and flaps the link.  Nothing lost (every iteration completes),
# nothing corrupted (--verify checks every byte), no hang (each run ends
# within its duration plus a bounded slack), memory flat (RSS sampled every
# second, the anonymous RSS at the end within 4 MiB of its level after
# warm-up).
#
# SOAK_SECONDS (default 60) sets the first test's length, the second runs
# half as long: the file takes about 2 minutes.  'make soak' runs it for
# 600 s.  Figures (duration, bytes verified, faults injected, RSS) are
# printed as TAP comments and appended to $SOAK_FIGURES when it is set.
#
# Needs root, ip and nft; skipped without them, failed under CI=true.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper
load soak/net

setup() {
	setup_rdmakit
	require_root "network namespaces and veth pairs"
	require_tool ip "network namespaces"
	require_tool nft "impairments in the kernel datapath"
	SOAK_SECONDS=${SOAK_SECONDS:-60}
	BG_PIDS=()
	soak_net_up "rksoak$$n$BATS_TEST_NUMBER" || fail "cannot set up the soak's namespaces"
	export SOAK_PORTS="4791, 4792"
}

teardown() {
	((${#BG_PIDS[@]} == 0)) || { kill -KILL "${BG_PIDS[@]}"; wait "${BG_PIDS[@]}"; } 2>/dev/null
	soak_net_down
}

# in_ns NAME NS CMD...: CMD in NS in the background, output in
# $BATS_TEST_TMPDIR/NAME.{out,err}; its pid in BG.
in_ns() {
	local name=$1 ns=$2
	shift 2
	bg "$BATS_TEST_TMPDIR/$name.out" "$BATS_TEST_TMPDIR/$name.err" ip netns exec "$ns" "$@"
}

# sample_rss PID...: one line a second, "SECONDS KB..." (0 once gone): the
# anonymous resident memory (heap, stacks, buffers: what a leak grows; the
# file-backed part is code paged in, which comes and goes).
sample_rss() {
	local t=0 pid line
	while :; do
		line=$t
		for pid in "$@"; do
			line+=" $(awk '/^RssAnon:/ { print $2; f = 1 } END { if (!f) print 0 }' \
				"/proc/$pid/status" 2>/dev/null || echo 0)"
		done
		echo "$line"
		sleep 1
		t=$((t + 1))
	done
}

# rss_flat FILE COLUMN WARMUP: the RSS in COLUMN (1 = the first pid) at the
# end of the run is within 4 MiB of its first level from WARMUP seconds on;
# prints "START->END".
rss_flat() {
	awk -v c=$(($2 + 1)) -v w="$3" '
		$1 >= w && $c > 0 && !start { start = $c } $c > 0 { end = $c }
		END { printf "%d->%d kB\n", start, end; exit !(start > 0 && end - start <= 4096) }' "$1"
}

# verified bw|lat FILE: the run in FILE (JSON) verified every byte and saw
# no error; prints its figures in one line.
verified() {
	python3 - "$@" <<-'PY'
	import json, sys
	d = json.load(open(sys.argv[2]))
	(r,) = d["results"]
	assert d["params"]["verify"] and d["errors"] == [] and r["iterations"] > 0, d
	if sys.argv[1] == "bw":
	    print(f'{r["bytes"] * r["iterations"]} bytes in {r["iterations"]} x {r["bytes"]} B, '
	          f'{r["bw_avg_gbps"]:.3f} Gb/s avg, {r["retransmits"]} retransmits')
	else:
	    print(f'{r["iterations"]} iterations, p50 {r["p50_us"]:.1f} us, '
	          f'p99 {r["p99_us"]:.1f} us, max {r["t_max_us"]:.0f} us')
	PY
}

# soak_log: what the servers said and the chaos did, for a failure message.
soak_log() {
	local f
	for f in srv_bw srv_lat chaos; do
		echo
		echo "--- $f:"
		tail -n 20 "$BATS_TEST_TMPDIR/$f.out" "$BATS_TEST_TMPDIR/$f.err" 2>/dev/null
	done
}

# soak SECONDS BW_ARGS LAT_ARGS: bw and lat, both verified, side by side
# for SECONDS under chaos; checks the outcome and records the figures.
soak() {
	local secs=$1 bw_args=$2 lat_args=$3 t0 slack
	# A lost tail costs an ACK timeout of 4.096 us * 2^16 = 268 ms; 7
	# retries ride out a flap (at most 0.6 s) with room to spare.  Each
	# side sets its own ACK timeout (the lat server sends too).
	local both=(--timeout 30 -u 16) common=(--verify -D "$secs")
	in_ns srv_bw "$NS_S" "$RDMAKIT" bw -p 18515 --udp-port 4791 "${both[@]}"
	local srv_bw=$BG
	in_ns srv_lat "$NS_S" "$RDMAKIT" lat -p 18516 --udp-port 4792 "${both[@]}"
	local srv_lat=$BG
	local i
	for ((i = 0; i < 100; i++)); do
		(( $(ip netns exec "$NS_S" ss -Htln '( sport = :18515 or sport = :18516 )' | wc -l) == 2 )) && break
		sleep 0.05
	done
	t0=$(now)
	# shellcheck disable=SC2086
	in_ns cli_bw "$NS_C" "$RDMAKIT" -j bw "$IP_S" -p 18515 --udp-port 4791 "${both[@]}" "${common[@]}" $bw_args
	local cli_bw=$BG
	# shellcheck disable=SC2086
	in_ns cli_lat "$NS_C" "$RDMAKIT" -j lat "$IP_S" -p 18516 --udp-port 4792 "${both[@]}" "${common[@]}" $lat_args
	local cli_lat=$BG
	bg "$BATS_TEST_TMPDIR/chaos.out" "$BATS_TEST_TMPDIR/chaos.err" \
		"$RDMAKIT_ROOT/tests/soak/chaos" "$secs" 3
	local chaos=$BG
	bg "$BATS_TEST_TMPDIR/rss.out" /dev/null sample_rss "$cli_bw" "$srv_bw" "$cli_lat" "$srv_lat"
	local sampler=$BG

	# No hang: each run ends within its duration and 45 s of slack.
	slack=$((secs + 45))
	wait_pid "$cli_bw" "$slack" || return 1
	local bw_rc=$WAIT_RC
	wait_pid "$cli_lat" 15 || return 1
	local lat_rc=$WAIT_RC
	local took
	took=$(awk -v t0="$t0" -v t1="$(now)" 'BEGIN { printf "%.1f", t1 - t0 }')
	wait_pid "$chaos" 15 || return 1
	kill "$sampler" 2>/dev/null
	[[ $bw_rc -eq 0 ]] || fail "bw exited $bw_rc: $(cat "$BATS_TEST_TMPDIR/cli_bw.err"; soak_log)"
	[[ $lat_rc -eq 0 ]] || fail "lat exited $lat_rc: $(cat "$BATS_TEST_TMPDIR/cli_lat.err"; soak_log)"
	local srv
	for srv in bw lat; do
		local pid_var=srv_$srv
		wait_pid "${!pid_var}" 15 || return 1
		[[ $WAIT_RC -eq 0 ]] ||
			fail "the $srv server exited $WAIT_RC: $(cat "$BATS_TEST_TMPDIR/srv_$srv.err")"
	done

	# Nothing lost, nothing corrupted: every run verified and error-free.
	local bw_fig lat_fig
	bw_fig=$(verified bw "$BATS_TEST_TMPDIR/cli_bw.out") ||
		fail "bw: $(cat "$BATS_TEST_TMPDIR/cli_bw.out")"
	lat_fig=$(verified lat "$BATS_TEST_TMPDIR/cli_lat.out") ||
		fail "lat: $(cat "$BATS_TEST_TMPDIR/cli_lat.out")"

	# The chaos happened.
	local summary
	summary=$(tail -n 1 "$BATS_TEST_TMPDIR/chaos.out")
	[[ $summary == "chaos: "* ]] || fail "chaos did not finish: $(cat "$BATS_TEST_TMPDIR/chaos.err")"
	local dropped duplicated corrupted marked
	dropped=$(soak_counter dropped) duplicated=$(soak_counter duplicated)
	corrupted=$(soak_counter corrupted) marked=$(soak_counter marked)
	(( dropped > 0 && duplicated > 0 && corrupted > 0 && marked > 0 )) ||
		fail "an impairment never fired: $dropped dropped, $duplicated duplicated, $corrupted corrupted, $marked marked"

	# Memory flat, after 20% of the run (at least 2 s) of warm-up.
	local warm=$((secs / 5 > 2 ? secs / 5 : 2)) rss=() col
	for col in 1 2 3 4; do
		rss+=("$(rss_flat "$BATS_TEST_TMPDIR/rss.out" "$col" "$warm")") ||
			fail "RSS grew (process $col of bw client, bw server, lat client, lat server): ${rss[-1]}"
	done

	local fig
	fig=$(printf '%s\n' \
		"soak: ${secs} s asked, ${took} s taken; bw $bw_args: $bw_fig" \
		"soak: lat $lat_args: $lat_fig" \
		"soak: $summary; nft counted $dropped dropped, $duplicated duplicated, $corrupted corrupted, $marked CE-marked" \
		"soak: anonymous RSS bw client ${rss[0]}, bw server ${rss[1]}, lat client ${rss[2]}, lat server ${rss[3]}")
	sed 's/^/# /' <<<"$fig" >&3
	[[ -z ${SOAK_FIGURES:-} ]] || printf '%s\n' "$fig" >>"$SOAK_FIGURES"
}

@test "soak: bw WRITE on 2 QPs and lat SEND, verified, under chaos for SOAK_SECONDS" {
	soak "$SOAK_SECONDS" "--op write -s 64k -q 2" "--op send -s 4k"
}

@test "soak: bw READ and lat atomics, verified, under chaos for SOAK_SECONDS / 2" {
	soak $((SOAK_SECONDS / 2)) "--op read -s 16k" "-A FETCH_AND_ADD"
}
