#!/usr/bin/env bash
# The soft engine against its peers on loopback, in one run:
#   rdmakit bw -s 64k WRITE  vs  iperf3 single-stream TCP      (throughput)
#   rdmakit lat --op send -s 8 t_typical  vs  qperf udp_lat    (one-way latency)
# rdmakit runs as two processes (server and client), as iperf3 and qperf do,
# and also as one --loopback process.  Reports ratios; prints the figures
# as a table and writes them to bench/out/perf-report.txt.
# CPU cost: the user + system CPU seconds of both processes (server and
# client, from GNU time) per GB delivered, rdmakit bw against iperf3 in the
# same run.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${BENCH_SECONDS:-5}
out=bench/out
mkdir -p "$out"
report=$out/perf-report.txt

for t in iperf3 qperf python3 /usr/bin/time; do
	command -v "$t" >/dev/null || { echo "bench: $t is missing; run 'make deps'" >&2; exit 2; }
done
[[ -x ./rdmakit ]] || { echo "bench: build first ('make')" >&2; exit 2; }

json_get() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# Each tool gets its own ports so nothing collides with a running test.
iperf_port=5299 qperf_port=19799 ctl_port=18599

# timed FILE CMD...: runs CMD, its user + system CPU seconds to FILE.
timed() { /usr/bin/time -f '%U %S' -o "$1" "${@:2}"; }
cpu_s() { awk '{ s += $1 + $2 } END { printf "%.3f", s }' "$@"; }

timed "$out/iperf-srv.cpu" iperf3 -s -1 -p $iperf_port -B 127.0.0.1 >/dev/null 2>&1 &
sleep 0.5
timed "$out/iperf-cli.cpu" iperf3 -c 127.0.0.1 -p $iperf_port -t "$secs" -J >"$out/iperf.json"
wait
iperf_gbps=$(json_get 'd["end"]["sum_received"]["bits_per_second"]/1e9' <"$out/iperf.json")
iperf_gb=$(json_get 'd["end"]["sum_received"]["bytes"]/1e9' <"$out/iperf.json")
iperf_cpu=$(cpu_s "$out/iperf-srv.cpu" "$out/iperf-cli.cpu")

timed "$out/rk-srv.cpu" ./rdmakit bw -p $ctl_port --bind 127.0.0.1 >/dev/null 2>&1 &
sleep 0.5
timed "$out/rk-cli.cpu" ./rdmakit -j bw 127.0.0.1 -p $ctl_port --bind 127.0.0.2 -s 64k -m 4096 \
	-D "$secs" --cpu_util >"$out/rk-bw.json"
wait
rk2_gbps=$(json_get 'd["results"][0]["bw_avg_gbps"]' <"$out/rk-bw.json")
rk2_gb=$(json_get 'd["results"][0]["bytes"]*d["results"][0]["iterations"]/1e9' <"$out/rk-bw.json")
rk2_cpu=$(cpu_s "$out/rk-srv.cpu" "$out/rk-cli.cpu")
# The same at RoCE's common 1024-byte MTU: four times the packets per byte.
./rdmakit bw -p $ctl_port --bind 127.0.0.1 >/dev/null 2>&1 &
sleep 0.5
rk1k_gbps=$(./rdmakit -j bw 127.0.0.1 -p $ctl_port --bind 127.0.0.2 -s 64k -m 1024 -D "$secs" |
	json_get 'd["results"][0]["bw_avg_gbps"]')
wait
rk1_gbps=$(./rdmakit -j bw --loopback --bind 127.0.0.3 -s 64k -m 4096 -D "$secs" |
	json_get 'd["results"][0]["bw_avg_gbps"]')

qperf -lp $qperf_port >/dev/null 2>&1 &
qpid=$!
sleep 0.5
# qperf prints "latency = 12.3 us"; udp_lat is half the round trip.
qperf_us=$(qperf 127.0.0.1 -lp $qperf_port -t "$secs" -m 8 -vu udp_lat 2>/dev/null |
	awk '/latency/ { v=$3; if ($4=="ms") v*=1000; if ($4=="ns") v/=1000; print v }')
kill $qpid 2>/dev/null; wait $qpid 2>/dev/null

./rdmakit lat -p $ctl_port --bind 127.0.0.1 >/dev/null 2>&1 &
sleep 0.5
rk_lat=$(./rdmakit -j lat 127.0.0.1 -p $ctl_port --bind 127.0.0.2 --op send -s 8 -D "$secs" |
	json_get 'd["results"][0]["t_typical_us"]')
wait

ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.2f}' if b else 'n/a')" "$1" "$2"; }
iperf_cpu_gb=$(ratio "$iperf_cpu" "$iperf_gb")
rk2_cpu_gb=$(ratio "$rk2_cpu" "$rk2_gb")
{
	echo "# rdmakit soft engine vs peers, loopback, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
	printf '%-44s %12s\n' "measure" "value"
	printf '%-44s %9.2f Gb/s\n' "iperf3 TCP single stream" "$iperf_gbps"
	printf '%-44s %9.2f Gb/s\n' "rdmakit bw WRITE 64k, 2 processes" "$rk2_gbps"
	printf '%-44s %9.2f Gb/s\n' "rdmakit bw WRITE 64k MTU 1024, 2 processes" "$rk1k_gbps"
	printf '%-44s %9.2f Gb/s\n' "rdmakit bw WRITE 64k, --loopback (1 process)" "$rk1_gbps"
	printf '%-44s %9s CPU s/GB (%s CPU s, %.2f GB)\n' "iperf3 CPU cost, both processes" \
		"$iperf_cpu_gb" "$iperf_cpu" "$iperf_gb"
	printf '%-44s %9s CPU s/GB (%s CPU s, %.2f GB)\n' "rdmakit bw CPU cost, both processes" \
		"$rk2_cpu_gb" "$rk2_cpu" "$rk2_gb"
	printf '%-44s %9.2f us\n' "qperf udp_lat 8 B" "$qperf_us"
	printf '%-44s %9.2f us\n' "rdmakit lat SEND 8 B t_typical, 2 processes" "$rk_lat"
	echo "bandwidth ratio rdmakit/iperf3 (2 processes): $(ratio "$rk2_gbps" "$iperf_gbps")"
	echo "bandwidth ratio rdmakit/iperf3 at MTU 1024 (2 processes): $(ratio "$rk1k_gbps" "$iperf_gbps")"
	echo "CPU per GB ratio rdmakit/iperf3 (lower is better): $(ratio "$rk2_cpu_gb" "$iperf_cpu_gb")"
	echo "latency ratio rdmakit/qperf (lower is better): $(ratio "$rk_lat" "$qperf_us")"
} | tee "$report"
