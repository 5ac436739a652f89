# SPDX-License-Identifier: MIT
# Helpers for the bw and lat suites: free ports, background processes that
# teardown kills, bounded waits, and time checks.

# free_port: a TCP port nothing on this host listens on.
free_port() {
	local p
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		p=$((20000 + RANDOM % 40000))
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
