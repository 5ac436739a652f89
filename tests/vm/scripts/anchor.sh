#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest script (tests/vm/run scripts/anchor.sh): anchor figures in one guest,
# side by side, each the median of 3 runs (5 for message rates).  Bandwidth
# (64 KiB RDMA WRITE), latency (2-byte SEND) and the 2-byte RDMA WRITE
# message rate with perftest's -Q 100 and with -l 16 (perftest and the
# verbs engine only), by perftest on rxe0, by rdmakit --engine verbs
# on rxe0, and by rdmakit --engine soft (its own userspace RoCEv2 over the
# guest's loopback; rxe holds UDP 4791 there, so the soft engines take free
# ports, as two soft engines on one address always do).  Writes one line per
# figure to $VM_SHARE/anchor.txt: "NAME VALUE" (Gb/s, usec or Mpps), and the raw
# outputs to $VM_SHARE/anchor/.  Exits 0 when every run produced a figure.
set -u
. /usr/lib/rdmakit-vm/guest.sh

DEV=$VM_RXE GIDX=$VM_GID_INDEX
OUT=$VM_SHARE/anchor
mkdir -p "$OUT"
: >"$VM_SHARE/anchor.txt"
BW_ITERS=${ANCHOR_BW_ITERS:-300}
LAT_ITERS=${ANCHOR_LAT_ITERS:-500}
RATE_ITERS=${ANCHOR_RATE_ITERS:-20000}	# a multiple of 100 and of 16
failed=0
failures=()

# pair FILE PORT CMD...: CMD as server (control port PORT), then as client
# to this guest; the client's output in FILE.
pair() {
	local file=$1 port=$2 spid
	shift 2
	timeout 120 "$@" >"$file.server" 2>&1 &
	spid=$!
	wait_tcp_listen "$port" 30 || { kill "$spid" 2>/dev/null; return 1; }
	timeout 120 "$@" "$VM_IP" >"$file" 2>&1
	local rc=$?
	wait "$spid"
	return $rc
}

# median VALUE...: the middle one of an odd count.
median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }

# figure NAME AWK-PROGRAM CMD...: RUNS (default 3) runs of the pair;
# AWK-PROGRAM prints the figure from the client's output; records the median.
figure() {
	local name=$1 prog=$2 port=18515 v vals=() i
	shift 2
	for ((i = 1; i <= ${RUNS:-3}; i++)); do
		step "$name run $i: $*"
		if pair "$OUT/$name.$i" "$port" "$@"; then
			v=$(awk "$prog" "$OUT/$name.$i")
		else
			v=
		fi
		cat "$OUT/$name.$i"
		if [ -z "$v" ]; then
			echo "anchor: $name run $i gave no figure; its server said:" >&2
			cat "$OUT/$name.$i.server" >&2
			failures+=("$name run $i")
			failed=1
			return
		fi
		vals+=("$v")
	done
	echo "$name $(median "${vals[@]}")" | tee -a "$VM_SHARE/anchor.txt"
}

# Tables: perftest's "#bytes #iterations BW peak BW average MsgRate" (MB/sec
# unless --report_gbits) and "#bytes #iterations t_min t_max t_typical ...".
bw_col='$1 == 65536 && $2 ~ /^[0-9]+$/ { print $4 }'
lat_col='$1 == 2 && $2 ~ /^[0-9]+$/ { print $5 }'
rate_col='$1 == 2 && $2 ~ /^[0-9]+$/ { print $5 }'	# MsgRate[Mpps]

figure perftest_write_bw "$bw_col" ib_write_bw -d "$DEV" -x "$GIDX" -s 65536 -n "$BW_ITERS" --report_gbits
figure verbs_write_bw "$bw_col" rdmakit bw --engine verbs -d "$DEV" -x "$GIDX" -s 65536 -n "$BW_ITERS"
figure soft_write_bw "$bw_col" rdmakit bw --engine soft -s 65536 -n "$BW_ITERS"
figure perftest_send_lat "$lat_col" ib_send_lat -d "$DEV" -x "$GIDX" -s 2 -n "$LAT_ITERS"
figure verbs_send_lat "$lat_col" rdmakit lat --engine verbs -d "$DEV" -x "$GIDX" -s 2 -n "$LAT_ITERS"
figure soft_send_lat "$lat_col" rdmakit lat --engine soft -s 2 -n "$LAT_ITERS"
# Selective signaling and post lists: the same -Q and -l on both sides.
RUNS=5 figure perftest_write_rate_q100 "$rate_col" ib_write_bw -d "$DEV" -x "$GIDX" -s 2 -n "$RATE_ITERS" -Q 100
RUNS=5 figure verbs_write_rate_q100 "$rate_col" rdmakit bw --engine verbs -d "$DEV" -x "$GIDX" -s 2 -n "$RATE_ITERS" -Q 100
RUNS=5 figure perftest_write_rate_l16 "$rate_col" ib_write_bw -d "$DEV" -x "$GIDX" -s 2 -n "$RATE_ITERS" -l 16
RUNS=5 figure verbs_write_rate_l16 "$rate_col" rdmakit bw --engine verbs -d "$DEV" -x "$GIDX" -s 2 -n "$RATE_ITERS" -l 16
# Last, so that it ends the console the test shows on failure.
[ $failed -eq 0 ] || echo "anchor: no figure from: ${failures[*]} (see above)" >&2
exit $failed
