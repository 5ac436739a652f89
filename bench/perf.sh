#!/usr/bin/env bash
# The soft engine against its peers and the kernel's own limit, on loopback,
# in one run (so every ratio is taken minutes apart, not days):
#   the kernel's UDP ceiling (build/bench/udp_ceiling: a sender and a
#     receiver process, 64 KiB UDP GSO sends of RoCEv2 WRITE Only-sized
#     segments, UDP GRO on the receiver; and 36-byte datagrams in
#     sendmmsg/recvmmsg batches for the message rate), counted as RDMA payload
#   rdmakit bw -s 64k WRITE at MTU 4096 and 1024  vs  that ceiling, and
#     vs iperf3 single-stream TCP (plain iperf3 -c, no -Z)   (throughput)
#   rdmakit bw -s 2 WRITE message rate  vs  the small-datagram ceiling
#   rdmakit bw WRITE and SEND at 1, 2 and 4 KiB, MTU 1024 (the multi-packet
#     message rates, side by side), the 2 and 4 KiB WRITEs against the
#     kernel's floor for sends of that shape (udp_ceiling --packets 2, 4:
#     one or two GSO sends per message, as a WRITE's FIRST packet forces)
#   rdmakit lat --op send -s 8 t_typical  vs  qperf udp_lat  (one-way latency)
# rdmakit runs as two processes (server and client), as iperf3 and qperf do,
# and also as one --loopback process.  Reports ratios; prints the figures
# as a table and writes them to bench/out/perf-report.txt.
# CPU cost: the user + system CPU seconds of both processes (server and
# client, from GNU time) per GB delivered, rdmakit bw against iperf3 in the
# same run.  Each ceiling runs right before the rdmakit run it is compared
# with: on this VM the kernel's own loopback rate swings by 2x within
# minutes (the host), so only neighbours make a ratio.
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
ceiling=build/bench/udp_ceiling
[[ -x $ceiling ]] || { echo "bench: $ceiling is missing; run 'make bench'" >&2; exit 2; }

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

# ceiling NAME ARGS...: the kernel's ceiling run, its JSON in $out/ceiling-NAME.json.
ceiling_run() {
	"$ceiling" "${@:2}" --seconds "$secs" >"$out/ceiling-$1.json" ||
		{ echo "bench: $ceiling ${*:2} failed" >&2; exit 3; }
}

# bw_row ARGS...: "Gb/s Mpps" of a two-process rdmakit bw run.
bw_row() {
	./rdmakit bw -p $ctl_port --bind 127.0.0.1 >/dev/null 2>&1 &
	sleep 0.5
	./rdmakit -j bw 127.0.0.1 -p $ctl_port --bind 127.0.0.2 -D "$secs" "$@" |
		json_get '"%.3f %.4f" % (d["results"][0]["bw_avg_gbps"], d["results"][0]["msg_rate_mpps"])'
	wait
}
# pair MTU N: ceiling run N at MTU, then the two-process 64 KiB WRITE
# right after it; appends "ceiling_gbps rdmakit_gbps" to pairs_MTU.  The
# first pair at MTU 4096 also times both rdmakit processes (CPU per GB).
pair() {
	local mtu=$1 n=$2 g
	ceiling_run "$mtu-$n" --mtu "$mtu"
	if [[ $mtu == 4096 && $n == 1 ]]; then
		timed "$out/rk-srv.cpu" ./rdmakit bw -p $ctl_port --bind 127.0.0.1 >/dev/null 2>&1 &
		sleep 0.5
		timed "$out/rk-cli.cpu" ./rdmakit -j bw 127.0.0.1 -p $ctl_port --bind 127.0.0.2 \
			-s 64k -m "$mtu" -D "$secs" --cpu_util >"$out/rk-bw.json"
		wait
		rk2_gb=$(json_get 'd["results"][0]["bytes"]*d["results"][0]["iterations"]/1e9' <"$out/rk-bw.json")
		rk2_cpu=$(cpu_s "$out/rk-srv.cpu" "$out/rk-cli.cpu")
		g=$(json_get 'd["results"][0]["bw_avg_gbps"]' <"$out/rk-bw.json")
	else
		read -r g _ <<<"$(bw_row -s 64k -m "$mtu")"
	fi
	[[ $g ]] || { echo "bench: rdmakit bw at MTU $mtu (pair $n) failed" >&2; exit 3; }
	local -n into=pairs_$mtu
	into+=("$(json_get 'd["payload_gbps"]' <"$out/ceiling-$mtu-$n.json") $g")
}
# The kernel's loopback rate swings by 2x within minutes on this VM, so
# each ratio is a median over BENCH_PAIRS neighbouring (ceiling, rdmakit)
# pairs, every pair printed; MTU 1024 has four times the packets per byte.
npairs=${BENCH_PAIRS:-3}
[[ $npairs =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_PAIRS must be a whole number of at least 1" >&2; exit 2; }
pairs_4096=() pairs_1024=()
for n in $(seq "$npairs"); do
	pair 4096 "$n"
	pair 1024 "$n"
done
rk1_gbps=$(./rdmakit -j bw --loopback --bind 127.0.0.3 -s 64k -m 4096 -D "$secs" |
	json_get 'd["results"][0]["bw_avg_gbps"]')

# median_of COLUMN PAIR...: the median of one column (0: ceiling,
# 1: rdmakit, 2: rdmakit/ceiling) over the pairs.
median_of() {
	python3 -c 'import sys, statistics as st
c = int(sys.argv[1]); rows = [list(map(float, r.split())) for r in sys.argv[2:]]
v = [r[1] / r[0] if c == 2 else r[c] for r in rows]
print(f"{st.median(v):.4f}")' "$@"
}
ceil4k_gbps=$(median_of 0 "${pairs_4096[@]}")
ceil1k_gbps=$(median_of 0 "${pairs_1024[@]}")
rk2_gbps=$(median_of 1 "${pairs_4096[@]}")
rk1k_gbps=$(median_of 1 "${pairs_1024[@]}")
ratio4k=$(median_of 2 "${pairs_4096[@]}")
ratio1k=$(median_of 2 "${pairs_1024[@]}")

ceiling_run small --small
ceil_small_mpps=$(json_get 'd["mpps"]' <"$out/ceiling-small.json")
read -r _ rk_small_mpps <<<"$(bw_row -s 2)"
rows=() shape_rows=()
for op in write send; do
	for size in 1024 2048 4096; do
		packets=$((size / 1024))
		if [[ $op == write && $packets -gt 1 ]]; then
			ceiling_run "write$packets" --mtu 1024 --packets $packets
			shape_rows+=("$size $(json_get '"%.3f %.4f" % (d["payload_gbps"], d["mpps"] / '$packets')' \
				<"$out/ceiling-write$packets.json")")
		fi
		rows+=("$op $size $(bw_row --op $op -s $size -m 1024)")
	done
done

# Not loopback alone: the same 64 KiB WRITE between two namespaces over a
# veth pair (MTU 1500: RoCE MTU 1024), with UDP GSO/GRO on the veth and
# without (one RoCEv2 packet per frame, as on a NIC without offloads).
veth_rows=()
if [[ $(id -u) -eq 0 ]] && command -v ip >/dev/null && command -v ethtool >/dev/null; then
	ns_r=rkbench-r-$$ ns_s=rkbench-s-$$
	trap 'ip netns del $ns_r 2>/dev/null; ip netns del $ns_s 2>/dev/null' EXIT
	ip netns add $ns_r && ip netns add $ns_s
	ip link add rkbr$$ netns $ns_r type veth peer name rkbs$$ netns $ns_s
	ip -n $ns_r addr add 198.18.9.1/24 dev rkbr$$
	ip -n $ns_s addr add 198.18.9.2/24 dev rkbs$$
	for ns in $ns_r $ns_s; do ip -n $ns link set lo up; done
	ip -n $ns_r link set rkbr$$ up
	ip -n $ns_s link set rkbs$$ up
	for offload in on off; do
		ip netns exec $ns_r ethtool -K rkbr$$ tx-udp-segmentation $offload gro $offload >/dev/null 2>&1
		ip netns exec $ns_s ethtool -K rkbs$$ tx-udp-segmentation $offload gro $offload >/dev/null 2>&1
		ip netns exec $ns_r ./rdmakit bw -p $ctl_port >/dev/null 2>&1 &
		sleep 0.5
		g=$(ip netns exec $ns_s ./rdmakit -j bw 198.18.9.1 -p $ctl_port -s 64k -D "$secs" |
			json_get '"%.3f" % d["results"][0]["bw_avg_gbps"]')
		wait
		veth_rows+=("$offload ${g:-n/a}")
	done
	ip netns del $ns_r
	ip netns del $ns_s
	trap - EXIT
fi

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

# print_pairs MTU: one line per (ceiling, rdmakit) pair at that MTU.
print_pairs() {
	local -n prs=pairs_$1
	local n c g

	for n in "${!prs[@]}"; do
		read -r c g <<<"${prs[$n]}"
		printf '%-44s %9.2f Gb/s  after the kernel ceiling %6.2f Gb/s: %sx\n' \
			"rdmakit bw WRITE 64k MTU $1, pair $((n + 1))" "$g" "$c" "$(ratio "$g" "$c")"
	done
}
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.2f}' if b else 'n/a')" "$1" "$2"; }
iperf_cpu_gb=$(ratio "$iperf_cpu" "$iperf_gb")
rk2_cpu_gb=$(ratio "$rk2_cpu" "$rk2_gb")
{
	echo "# rdmakit soft engine vs peers, loopback, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
	printf '%-44s %12s\n' "measure" "value"
	printf '%-44s %9.2f Gb/s\n' "iperf3 TCP single stream" "$iperf_gbps"
	print_pairs 4096
	print_pairs 1024
	printf '%-44s %9.2f Gb/s\n' "rdmakit bw WRITE 64k, 2 processes (median)" "$rk2_gbps"
	printf '%-44s %9.2f Gb/s\n' "rdmakit bw WRITE 64k MTU 1024 (median)" "$rk1k_gbps"
	printf '%-44s %9.2f Gb/s\n' "rdmakit bw WRITE 64k, --loopback (1 process)" "$rk1_gbps"
	printf '%-44s %9s CPU s/GB (%s CPU s, %.2f GB)\n' "iperf3 CPU cost, both processes" \
		"$iperf_cpu_gb" "$iperf_cpu" "$iperf_gb"
	printf '%-44s %9s CPU s/GB (%s CPU s, %.2f GB)\n' "rdmakit bw CPU cost, both processes" \
		"$rk2_cpu_gb" "$rk2_cpu" "$rk2_gb"
	printf '%-44s %9.2f us\n' "qperf udp_lat 8 B" "$qperf_us"
	printf '%-44s %9.2f us\n' "rdmakit lat SEND 8 B t_typical, 2 processes" "$rk_lat"
	printf '%-44s %9.2f Gb/s\n' "kernel UDP GSO/GRO ceiling, MTU 4096 (median)" "$ceil4k_gbps"
	printf '%-44s %9.2f Gb/s\n' "kernel UDP GSO/GRO ceiling, MTU 1024 (median)" "$ceil1k_gbps"
	printf '%-44s %9.4f Mpps\n' "kernel UDP 36 B datagrams, sendmmsg/recvmmsg" "$ceil_small_mpps"
	printf '%-44s %9.4f Mpps\n' "rdmakit bw WRITE 2 B, 2 processes" "$rk_small_mpps"
	for r in "${rows[@]}"; do
		read -r op size gbps mpps <<<"$r"
		printf '%-44s %9.2f Gb/s %9.4f Mpps\n' "rdmakit bw ${op^^} $size B MTU 1024, 2 processes" \
			"$gbps" "$mpps"
	done
	for r in "${shape_rows[@]}"; do
		read -r size gbps mpps <<<"$r"
		printf '%-44s %9.2f Gb/s %9.4f Mmsg/s\n' "kernel GSO sends shaped as $size B WRITEs" \
			"$gbps" "$mpps"
	done
	for r in "${veth_rows[@]}"; do
		read -r offload gbps <<<"$r"
		printf '%-44s %9s Gb/s\n' "rdmakit bw WRITE 64k, veth netns, GSO/GRO $offload" "$gbps"
	done
	printf 'bandwidth ratio rdmakit/kernel ceiling at MTU 4096 (2 processes, median of %s pairs): %.2f\n' "$npairs" "$ratio4k"
	printf 'bandwidth ratio rdmakit/kernel ceiling at MTU 1024 (2 processes, median of %s pairs): %.2f\n' "$npairs" "$ratio1k"
	echo "bandwidth ratio rdmakit/iperf3 (2 processes): $(ratio "$rk2_gbps" "$iperf_gbps")"
	echo "bandwidth ratio rdmakit/iperf3 at MTU 1024 (2 processes): $(ratio "$rk1k_gbps" "$iperf_gbps")"
	echo "CPU per GB ratio rdmakit/iperf3 (lower is better): $(ratio "$rk2_cpu_gb" "$iperf_cpu_gb")"
	echo "message rate ratio rdmakit 2 B WRITE/kernel small datagrams: $(ratio "$rk_small_mpps" "$ceil_small_mpps")"
	for r in "${shape_rows[@]}"; do
		read -r size _ mpps <<<"$r"
		for w in "${rows[@]}"; do
			read -r op wsize _ wmpps <<<"$w"
			[[ $op == write && $wsize == "$size" ]] &&
				echo "message rate ratio rdmakit $size B WRITE/kernel sends of that shape: $(ratio "$wmpps" "$mpps")"
		done
	done
	echo "latency ratio rdmakit/qperf (lower is better): $(ratio "$rk_lat" "$qperf_us")"
} | tee "$report"
