#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/anchor.sh: anchor figures in one Soft-RoCE guest (tests/vm, qemu),
# side by side: perftest on rxe0, rdmakit --engine verbs on rxe0, rdmakit
# --engine soft over the guest's loopback.  64 KiB RDMA WRITE bandwidth and
# 2-byte SEND latency, each the median of 3 runs, and the 2-byte RDMA WRITE
# message rate with -Q 100 and with -l 16, perftest against the verbs
# engine, medians of 5 (tests/vm/scripts/anchor.sh).
# Under TCG absolute numbers mean little; the ratios are the figures:
# verbs/perftest (~1: the verbs path adds nothing) and soft/rxe.
# Needs root, qemu and the guest packages (make deps); exit 2 without them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

[[ $(id -u) -eq 0 ]] || { echo "anchor: needs root (the lab's guest)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "anchor: qemu missing (make deps)" >&2; exit 2; }
share=$(mktemp -d)
trap 'rm -rf "$share"' EXIT
if ! tests/vm/run --share "$share" tests/vm/scripts/anchor.sh >"$share/log" 2>&1; then
	echo "anchor: the guest run failed; its log ends with:" >&2
	tail -20 "$share/log" >&2
	exit 1
fi
python3 - "$share/anchor.txt" <<'PY'
import math, sys
f = dict((l.split()[0], float(l.split()[1])) for l in open(sys.argv[1]) if l.strip())

def val(x, digits):
    # a tool that gave no result (perftest prints inf) is shown as such, not as a figure
    return "%.*f" % (digits, x) if math.isfinite(x) and x > 0 else "no result"

def ratio(a, b):
    ok = all(math.isfinite(x) and x > 0 for x in (a, b))
    return "%.2f" % (a / b) if ok else "n/a"

print("anchor (qemu guest, medians of 3/5)   perftest      rdmakit verbs  rdmakit soft   verbs/perftest  soft/rxe")
print("64 KiB RDMA WRITE bw [Gb/s]           %-13s %-14s %-14s %-15s %s" % (
    val(f["perftest_write_bw"], 3), val(f["verbs_write_bw"], 3), val(f["soft_write_bw"], 3),
    ratio(f["verbs_write_bw"], f["perftest_write_bw"]), ratio(f["soft_write_bw"], f["perftest_write_bw"])))
print("2 B SEND latency t_typical [usec]     %-13s %-14s %-14s %-15s %s" % (
    val(f["perftest_send_lat"], 2), val(f["verbs_send_lat"], 2), val(f["soft_send_lat"], 2),
    ratio(f["verbs_send_lat"], f["perftest_send_lat"]), ratio(f["soft_send_lat"], f["perftest_send_lat"])))
for opt in ("q100", "l16"):
    p, v = f["perftest_write_rate_" + opt], f["verbs_write_rate_" + opt]
    r = ratio(v, p)
    print("2 B WRITE msg rate %-6s [Mpps]      %-13s %-14s %-14s %-15s (goal >= 0.8: %s)" % (
        "-Q 100" if opt == "q100" else "-l 16", val(p, 4), val(v, 4), "-", r,
        "no result" if r == "n/a" else "met" if v >= 0.8 * p else "MISSED"))
PY
