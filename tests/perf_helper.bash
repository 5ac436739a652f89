# SPDX-License-Identifier: MIT
# Helpers for the bw and lat suites: free ports, background processes that
# teardown kills, bounded waits, and time checks.

# setup_perf: a loopback address of this test's own (so no other soft engine,
# in this suite or elsewhere on the host, shares its UDP port 4791) in ADDR,
# and no background processes yet; for setup().
setup_perf() {
	setup_rdmakit
	ADDR=127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 2))
	BG_PIDS=()
}

# free_port: a TCP port nothing on this host listens on, below the kernel's
# ephemeral range: a port there can be held by any client connection (or
# its TIME_WAIT) that ss -tln does not list, and the listener then fails.
free_port() {
	local p lo=32768 span
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
	span=$((lo - 20000))
	((span >= 1000)) || span=40000
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		p=$((20000 + RANDOM % span))
		ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
	echo "$p"
}

# bg OUT ERR CMD...: runs CMD in the background (stdout to OUT, stderr to
# ERR); its pid is in BG (and killed in teardown).
bg() {
	local out=$1 err=$2
	shift 2
	"$@" >"$out" 2>"$err" </dev/null 3>&- &
	BG=$!
	BG_PIDS+=("$BG")
}

# wait_pid PID SECONDS: waits for PID to exit, at most SECONDS (fractions
# allowed); sets WAIT_RC to its exit status, or fails when it still runs.
wait_pid() {
	local pid=$1 ticks i
	ticks=$(awk -v s="$2" 'BEGIN { printf "%d", s * 20 }')
	for ((i = 0; i < ticks; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		fail "process $pid still runs after $2 s"
		return 1
	fi
	WAIT_RC=0
	wait "$pid" || WAIT_RC=$?
}

# wait_listen PORT: waits (up to 5 s) until something listens on TCP PORT.
wait_listen() {
	local i
	for ((i = 0; i < 100; i++)); do
		ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.05
	done
	fail "nothing listens on TCP port $1 after 5 s"
}

# now: seconds since the epoch, with fractions.
now() {
	date +%s.%N
}

# elapsed_below T0 SECONDS: the time since T0 is below SECONDS.
elapsed_below() {
	awk -v t0="$1" -v t1="$(now)" -v max="$2" 'BEGIN { d = t1 - t0;
		if (d >= max) { printf "took %.2f s, limit %s s\n", d, max; exit 1 } }'
}

# server_output PID: waits (10 s) for the background server PID to exit 0;
# its stdout ($BATS_TEST_TMPDIR/srv) then becomes $output, for json_eval.
server_output() {
	wait_pid "$1" 10 || return 1
	assert_equal "$WAIT_RC" 0
	# shellcheck disable=SC2034  # json_eval reads it
	output=$(cat "$BATS_TEST_TMPDIR/srv")
}

# assert_cpu_util CMD HEADING_RE ROW_RE ARGS...: 'rdmakit -j CMD --loopback
# ARGS --cpu_util' reports a cpu_util_percent above idle (the engines
# busy-poll) and at most every CPU busy; without --cpu_util the key is
# absent; the text table's heading and row match the regular expressions.
assert_cpu_util() {
	local cmd=$1 heading=$2 row=$3
	shift 3
	run --separate-stderr "$RDMAKIT" -j "$cmd" --loopback "$@" --cpu_util
	assert_success
	json_eval '
(r,) = d["results"]
assert 5 < r["cpu_util_percent"] <= 100 * int(sys.argv[2]) + 1, r' "$(nproc)"
	run --separate-stderr "$RDMAKIT" -j "$cmd" --loopback "$@"
	assert_success
	json_eval 'assert "cpu_util_percent" not in d["results"][0], d["results"]'
	run --separate-stderr "$RDMAKIT" "$cmd" --loopback "$@" --cpu_util
	assert_success
	assert_line --regexp "$heading"
	assert_line --regexp "$row"
}

# start_server CMD ARGS...: 'rdmakit -j CMD -p PORT --bind $ADDR --timeout 5
# ARGS' in the background on a free port; returns once it listens.  Sets
# PORT and SRV (its pid); its stdout goes to $BATS_TEST_TMPDIR/srv.
start_server() {
	PORT=$(free_port)
	bg "$BATS_TEST_TMPDIR/srv" "$BATS_TEST_TMPDIR/srv.err" "$RDMAKIT" -j "$1" -p "$PORT" \
		--bind "$ADDR" --timeout 5 "${@:2}"
	SRV=$BG
	wait_listen "$PORT"
}

# assert_server_inline CMD BYTES ARGS...: a client run of CMD with -I BYTES
# ARGS --verify against a fresh server succeeds, and the server used BYTES.
assert_server_inline() {
	start_server "$1"
	run --separate-stderr timeout -k 2 30 "$RDMAKIT" -j "$1" "$ADDR" -p "$PORT" --bind "$ADDR" \
		-I "$2" "${@:3}" --verify
	assert_success
	json_eval 'assert d["errors"] == [] and d["results"][0]["iterations"] > 0, d'
	server_output "$SRV"
	json_eval 'assert d["params"]["inline_size_bytes"] == int(sys.argv[2]), d["params"]' "$2"
}

# interrupt_run SECONDS LIMIT CMD...: runs CMD in the background, sends it
# SIGINT after SECONDS; it must end within LIMIT seconds of that.  Its exit
# status is then in WAIT_RC and its stdout in $output.
interrupt_run() {
	local after=$1 limit=$2 pid t0
	shift 2
	bg "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err" "$@"
	pid=$BG
	sleep "$after"
	kill -INT "$pid"
	t0=$(now)
	wait_pid "$pid" $((limit + 3)) || return 1
	elapsed_below "$t0" "$limit"
	# shellcheck disable=SC2034  # json_eval reads it
	output=$(cat "$BATS_TEST_TMPDIR/out")
}

# kill_bg: kills (SIGKILL) and reaps every process in BG_PIDS, for teardown.
kill_bg() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	true
}
