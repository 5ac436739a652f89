#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/capture.sh [PACKETS]: how fast `rdmakit capture -r` decodes a large
# file of real RoCEv2 packets, against tshark and tcpdump, and whether its
# memory stays flat in the file size.  See bench/README.md.
#
# Environment (all optional):
#   BENCH_PACKETS         packets in the big file (default 3000000; or argument 1)
#   BENCH_RUNS            timed runs per tool, the best one counts (default 3)
#   BENCH_REPEAT_BUDGET_S stop repeating a tool once its timed runs add up to
#                         this many seconds (default 30), so a slow mode cannot
#                         push the whole run past a few minutes
#   BENCH_TSHARK_PACKETS  tshark decodes only this prefix of the file (default
#                         200000); its rate is computed from that prefix
#   BENCH_STRICT=1        also exit 1 when a speed goal is missed
#   RDMAKIT               the binary (default ./rdmakit)
#   RDMAKIT_CAPTURES      the shared captures (default ../shared/captures)
#
# Exit: 0 ok; 1 a tool processed the wrong number of packets, failed, or
# (with BENCH_STRICT=1) a goal was missed; 2 a tool or input is missing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

# C numbers (a '.' in $EPOCHREALTIME and awk), and one fixed time zone: with
# TZ unset, glibc's localtime() stats /etc/localtime for every call, which
# costs tcpdump (one call per packet) more than half its run time.  Setting
# TZ to the same file keeps local times and measures every tool at its best.
export LC_ALL=C
export TZ=${TZ:-:/etc/localtime}

packets=${1:-${BENCH_PACKETS:-3000000}}
runs=${BENCH_RUNS:-3}
budget=${BENCH_REPEAT_BUDGET_S:-30}
tshark_packets=${BENCH_TSHARK_PACKETS:-200000}
rdmakit=${RDMAKIT:-./rdmakit}
captures=${RDMAKIT_CAPTURES:-../shared/captures}
out=bench/out

die() {
	echo "bench/capture: $*" >&2
	exit 2
}

for v in packets runs tshark_packets budget; do
	[[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || die "$v must be a positive integer, not '${!v}'"
done
(( packets >= 10 )) || die "packets must be at least 10 (the memory check uses a tenth)"

# --- what the run needs ------------------------------------------------------
missing=()
command -v tshark >/dev/null || missing+=(tshark)
command -v tcpdump >/dev/null || missing+=(tcpdump)
command -v python3 >/dev/null || missing+=(python3)
# GNU time for the peak RSS (the shell keyword cannot report it).
/usr/bin/time -f %M true >/dev/null 2>&1 || missing+=("time (GNU /usr/bin/time)")
if (( ${#missing[@]} )); then
	echo "bench/capture: missing: ${missing[*]}" >&2
	echo "bench/capture: run 'make deps' as root to install what rdmakit's benchmarks need" \
	     "(or: apt-get install tshark tcpdump python3 time)" >&2
	exit 2
fi
[[ -x $rdmakit ]] || die "$rdmakit is not built: run 'make' (or 'make bench')"
shopt -s nullglob
sources=("$captures"/rxe/*.pcap)
shopt -u nullglob
(( ${#sources[@]} )) || die "no real RoCEv2 captures in $captures/rxe/ (set RDMAKIT_CAPTURES)"

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- the input files -----------------------------------------------------------
# Named after the sources and the generator, so that a new source capture or a
# changed generator makes new files, and identical ones are reused.
key=$(cat "${sources[@]}" bench/mkbig.py | sha256sum | cut -c1-10)
tenth=$(( packets / 10 ))
(( tshark_packets > packets )) && tshark_packets=$packets
make_file() {	# PACKETS -> prints the path
	local f="$out/capture-$key-$1.pcap"
	if [[ ! -s $f ]]; then
		python3 bench/mkbig.py "$f" "$1" "${sources[@]}" >&2 || die "mkbig.py failed"
	fi
	echo "$f"
}
# Files of other keys are stale (a gigabyte each): remove them.
for f in "$out"/capture-*.pcap "$out"/capture-*.pcap.tmp; do
	[[ -e $f && $f != "$out/capture-$key-"* ]] && rm -f "$f"
done
big=$(make_file "$packets") || exit 2
small=$(make_file "$tenth") || exit 2
prefix=$(make_file "$tshark_packets") || exit 2

# --- validation: every tool sees every packet (not timed) ------------------------
# Run once per tool with the output counted instead of thrown away; the rdmakit
# passes also record the peak RSS.  These passes also warm the page cache, so
# every timed run reads the file from memory.
fail=0
bad() {
	echo "bench/capture: COUNT WRONG: $*" >&2
	fail=1
}
rss() {	# FILE MODE... -> peak RSS in KiB; the output goes to $tmp/out
	/usr/bin/time -f %M -o "$tmp/rss" "$rdmakit" capture -r "$@" >"$tmp/out" 2>"$tmp/err" ||
		{ bad "rdmakit capture -r $* failed: $(head -3 "$tmp/err")"; echo 0; return; }
	tail -1 "$tmp/rss"
}

echo "bench/capture: $packets packets in $big ($(( $(stat -c %s "$big") / 1000000 )) MB);" \
     "validating every tool's packet count" >&2
declare -A rss_full rss_small
for mode in lines summary json; do
	case $mode in
	lines) args=() ;;
	summary) args=(--summary) ;;
	json) args=(--json) ;;
	esac
	rss_full[$mode]=$(rss "$big" "${args[@]}")
	case $mode in
	lines)
		read -r n ok < <(awk '{n++} / ICRC ok$/ {ok++} END {print n+0, ok+0}' "$tmp/out")
		(( n == packets )) || bad "rdmakit capture printed $n lines for $packets packets"
		(( ok == packets )) || bad "rdmakit capture: $ok of $packets lines end in 'ICRC ok'"
		;;
	summary)
		head=$(grep -m1 ' RDMA packets, ' "$tmp/out")
		[[ $head == "$packets RDMA packets, "*"; 0 other, 0 malformed; ICRC 0 bad, 0 unchecked" ]] ||
			bad "rdmakit capture --summary: '$head' (want $packets RDMA packets, all ICRC ok)"
		;;
	json)
		read -r n ok < <(awk '{n++} /"icrc":"ok"/ {ok++} END {print n+0, ok+0}' "$tmp/out")
		(( n == packets + 1 )) || bad "rdmakit capture --json printed $n lines for $packets packets + summary"
		(( ok == packets )) || bad "rdmakit capture --json: $ok of $packets objects have \"icrc\":\"ok\""
		tail -1 "$tmp/out" | grep -q "^{\"summary\":{\"packets\":$packets," ||
			bad "rdmakit capture --json: last line is not {\"summary\":{\"packets\":$packets,...}}"
		;;
	esac
	rss_small[$mode]=$(rss "$small" "${args[@]}")
done
rm -f "$tmp/out"

tshark_fields=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn)
read -r n full < <(tshark -n -r "$prefix" -T fields "${tshark_fields[@]}" 2>"$tmp/err" |
	awk -F'\t' '{n++} NF == 4 && $2 != "" && $3 != "" && $4 != "" {f++} END {print n+0, f+0}')
(( n == tshark_packets )) || bad "tshark printed $n lines for $tshark_packets packets: $(head -3 "$tmp/err")"
(( full == tshark_packets )) || bad "tshark decoded opcode, dest QP and PSN of $full of $tshark_packets packets"

read -r n udp < <(tcpdump -nn -r "$big" 2>"$tmp/err" |
	awk '{n++} /\.4791: UDP, length/ {u++} END {print n+0, u+0}')
(( n == packets )) || bad "tcpdump printed $n lines for $packets packets: $(head -3 "$tmp/err")"
(( udp == packets )) || bad "tcpdump: $udp of $packets lines are UDP to port 4791"

if (( fail )); then
	echo "bench/capture: a tool did not process the expected packets; no timings" >&2
	exit 1
fi

# --- timing: wall clock, output to /dev/null, best of $runs ------------------------
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# Sets best (seconds) and nrun.  Stops early once the runs add up to $budget s.
best_of() {
	local t0 t1 total=0
	best='' nrun=0
	while (( nrun < runs )); do
		t0=$EPOCHREALTIME
		"$@" >/dev/null 2>"$tmp/err" || { bad "$* failed: $(head -3 "$tmp/err")"; return; }
		t1=$EPOCHREALTIME
		nrun=$(( nrun + 1 ))
		read -r best total < <(awk -v a="$t0" -v b="$t1" -v best="$best" -v tot="$total" \
			'BEGIN {d = b - a; if (best == "" || d < best) best = d; printf "%.6f %.6f\n", best, tot + d}')
		awk -v t="$total" -v b="$budget" 'BEGIN {exit !(t >= b)}' && break
	done
}

declare -A secs count nruns
timeit() {	# NAME PACKETS CMD...
	local name=$1 n=$2
	shift 2
	echo "bench/capture: timing $name" >&2
	best_of "$@"
	secs[$name]=$best count[$name]=$n nruns[$name]=$nrun
}
timeit "rdmakit capture" "$packets" "$rdmakit" capture -r "$big"
timeit "rdmakit capture --summary" "$packets" "$rdmakit" capture -r "$big" --summary
timeit "rdmakit capture --json" "$packets" "$rdmakit" capture -r "$big" --json
timeit "tshark -T fields" "$tshark_packets" tshark -n -r "$prefix" -T fields "${tshark_fields[@]}"
timeit "tcpdump -nn" "$packets" tcpdump -nn -r "$big"
(( fail )) && exit 1
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report ------------------------------------------------------------------
rate() { awk -v n="${count[$1]}" -v s="${secs[$1]}" 'BEGIN {printf "%.0f", n / s}'; }
{
	echo "rdmakit capture benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(uname -r);" \
	     "load average $load_before before the timed runs, $load_after after"
	echo "rdmakit $("$rdmakit" version 2>/dev/null | head -1 | awk '{print $2}')" \
	     "($(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- lib cmd 2>/dev/null || echo '+changes'))," \
	     "$(tshark --version 2>/dev/null | head -1 | awk '{print "tshark", $3}')," \
	     "$(tcpdump --version 2>&1 | head -1 | sed 's/ version//')"
	echo "input: $packets real Soft-RoCE RoCEv2 packets (${#sources[@]} captures of $captures/rxe repeated," \
	     "every ICRC valid), $(( $(stat -c %s "$big") / 1000000 )) MB; output to /dev/null; TZ=$TZ"
	echo
	printf '%-28s %10s %5s %9s %12s\n' tool packets runs "best s" packets/s
	for name in "rdmakit capture" "rdmakit capture --summary" "rdmakit capture --json" \
		    "tshark -T fields" "tcpdump -nn"; do
		printf '%-28s %10s %5s %9.3f %12s\n' "$name" "${count[$name]}" "${nruns[$name]}" \
			"${secs[$name]}" "$(rate "$name")"
	done
	if (( tshark_packets < packets )); then
		echo "(tshark decodes only the first $tshark_packets packets of the same file; its rate is from that prefix)"
	fi
	echo
	ratio() {	# LABEL A B GOAL
		local r
		r=$(awk -v a="$(rate "$2")" -v b="$(rate "$3")" 'BEGIN {printf "%.1f", a / b}')
		if [[ -z $4 ]]; then
			printf '%-44s %7sx\n' "$1" "$r"
		elif awk -v r="$r" -v g="$4" 'BEGIN {exit !(r >= g)}'; then
			printf '%-44s %7sx  (goal >= %sx: met)\n' "$1" "$r" "$4"
		else
			printf '%-44s %7sx  (goal >= %sx: MISSED)\n' "$1" "$r" "$4"
		fi
	}
	ratio "rdmakit lines  vs tshark fields" "rdmakit capture" "tshark -T fields" 20
	ratio "rdmakit lines  vs tcpdump lines" "rdmakit capture" "tcpdump -nn" 1
	ratio "rdmakit --json vs tshark fields" "rdmakit capture --json" "tshark -T fields" 20
	ratio "rdmakit --json vs tcpdump lines" "rdmakit capture --json" "tcpdump -nn" ""
	ratio "rdmakit --summary vs tshark fields" "rdmakit capture --summary" "tshark -T fields" ""
	echo
	printf 'peak RSS (KiB)     %14s %14s\n' "$packets pkts" "$tenth pkts"
	flat=1
	for mode in lines summary json; do
		printf '  %-16s %14s %14s\n' "$mode" "${rss_full[$mode]}" "${rss_small[$mode]}"
		# Flat: ten times the packets costs less than 25% (and 2 MiB) more.
		awk -v a="${rss_full[$mode]}" -v b="${rss_small[$mode]}" \
			'BEGIN {exit !(a <= b * 1.25 || a - b <= 2048)}' || flat=0
	done
	if (( flat )); then
		echo "memory: flat (10x the packets, about the same peak RSS)"
	else
		echo "memory: NOT flat: the peak RSS grows with the file"
	fi
} | tee "$out/capture-report.txt"
missed=$(grep -c 'MISSED\|NOT flat' "$out/capture-report.txt")
echo "(report saved in $out/capture-report.txt)" >&2
if (( missed )) && [[ ${BENCH_STRICT:-0} == 1 ]]; then
	exit 1
fi
exit 0
