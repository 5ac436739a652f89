#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The soft engine under overload, where nothing but loss and late ACKs tells
# a sender to slow down (no PFC; ECN only on the fabric):
#   a 32-rank all-to-all on one host (992 flows) and a 63:1 incast (64
#     ranks), under mpirun on loopback, 1 MiB per flow: exit status, flows
#     ok, aggregate goodput, Jain's index, retransmissions and timeouts
#   a 7:1 incast across the spine-leaf fabric (tests/fabric, 200 Mbit/s host
#     links) with a 1 MB downlink queue (ECN above 100 kB) and with a 60 kB
#     queue (ECN above 30 kB), same run: the shallow queue's goodput as a
#     share of the deep one's (root only; skipped with a note otherwise)
# Prints a table, writes it to bench/out/overload-report.txt.  Exit 1 when a
# run fails or a flow is not ok, 2 when a tool is missing.  Arguments are
# ignored (bench/run passes its own on to every benchmark).
set -uo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
report=$out/overload-report.txt

for t in mpirun python3; do
	command -v "$t" >/dev/null || { echo "bench: $t is missing; run 'make deps'" >&2; exit 2; }
done
[[ -x ./rdmakit ]] || { echo "bench: build first ('make')" >&2; exit 2; }
mpi_root=()
[[ $(id -u) -eq 0 ]] && mpi_root=(--allow-run-as-root)
port=18598
rc=0
rows=()

# summarize FILE EXIT LABEL: one row from a coordinator's JSON report.
summarize() {
	python3 - "$@" <<'EOF'
import json, sys
path, code, label = sys.argv[1:4]
try:
    d = json.load(open(path))
    r = d["results"]
    f = r["flows"]
    c = r["counters"]["engine"]
    ok = sum(1 for x in f if x["status"] == "ok")
    print("%-34s exit %s  flows ok %4d/%-4d %7.3f Gb/s  Jain %.3f  retx %d of %d pkts (%.1f%%)  timeouts %d"
          % (label, code, ok, len(f), r["aggregate"]["goodput_gbps"], r["fairness_jain"],
             c["retransmits"], c["tx_packets"], 100.0 * c["retransmits"] / max(c["tx_packets"], 1),
             c["timeouts"]))
    sys.exit(0 if code == "0" and ok == len(f) else 1)
except (OSError, ValueError, KeyError) as e:
    print("%-34s exit %s  no report (%s)" % (label, code, e))
    sys.exit(1)
EOF
}

# mpi_run NP PATTERN LABEL
mpi_run() {
	local code
	timeout 300 mpirun "${mpi_root[@]}" --oversubscribe -np "$1" ./rdmakit -j incast \
		--coordinator "127.0.0.1:$port" --pattern "$2" --bytes 1m >"$out/overload-$1.json" \
		2>"$out/overload-$1.err"
	code=$?
	rows+=("$(summarize "$out/overload-$1.json" "$code" "$3")") || rc=1
}
mpi_run 32 all-to-all "all-to-all, 32 ranks (992 flows)"
mpi_run 64 incast "incast 63:1, 64 ranks"

# The fabric: goodput of the demo's 7:1 incast for a queue size.
fabric_row() {
	local q=$1 mark=$2 text
	text=$(QUEUE=$q ECN_THRESHOLD=$mark RATE=200mbit DURATION=5 timeout 180 tests/fabric/demo.sh 2>&1)
	awk -v label="7:1 fabric incast, queue $q B" '
		/Aggregate goodput/ { g = $4 }
		/Jain/ { j = $(NF - 3) }
		/^ +engine +tx_packets/ { tx = $3; rt = $7; to = $9 }
		END { if (g == "") exit 1
		      printf "%-34s %s Gb/s  Jain %s  retx %s of %s pkts  timeouts %s\n", label, g, j, rt, tx, to }' \
		<<<"$text"
}
fabric_note=""
if [[ $(id -u) -eq 0 ]]; then
	deep=$(fabric_row 1000000 100000) || { deep="fabric incast, 1 MB queue: failed"; rc=1; }
	shallow=$(fabric_row 60000 30000) || { shallow="fabric incast, 60 kB queue: failed"; rc=1; }
	rows+=("$deep" "$shallow")
	g_deep=$(awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "Gb/s") { print $i; exit } }' <<<"$deep")
	g_shallow=$(awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "Gb/s") { print $i; exit } }' <<<"$shallow")
	if [[ -n $g_deep && -n $g_shallow ]]; then
		fabric_note="goodput ratio 60 kB queue / 1 MB queue (fabric, same run): $(awk -v a="$g_shallow" -v b="$g_deep" 'BEGIN { printf "%.2f", a / b }')"
	fi
else
	fabric_note="fabric rows skipped: network namespaces need root"
fi

{
	echo "rdmakit soft engine under overload, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%s\n' "${rows[@]}"
	[[ -n $fabric_note ]] && echo "$fabric_note"
} | tee "$report"
exit $rc
