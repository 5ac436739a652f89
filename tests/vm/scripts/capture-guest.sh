#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of the capture check (tests/vm/run --net tap --host
# scripts/capture-host.sh scripts/capture-guest.sh): makes the guest's rxe0
# put RoCEv2 packets on the wire toward the host (198.18.0.1), which has no
# RDMA stack, while the host captures them on the bridge:
#   - ibv_rc_pingpong as a client: the host's fake peer answers the TCP
#     exchange with a QPN at 198.18.0.1, so rxe sends RC SENDs (4 KiB, MTU
#     1024: First/Middle/Last) and retransmits them every ACK timeout (67 ms)
#     for 4 s: rxe takes retry_cnt 7 (what ibv_rc_pingpong sets) as "retry
#     forever", as IBTA does only for the RNR retry count;
#   - rping as a client: rdma_cm sends CM REQ MADs (UD SEND to QP1).
# Both fail in the end (nobody answers over RoCE): their records are kept
# for the suite, which checks the packets, not these exit statuses.
set -u
. /usr/lib/rdmakit-vm/guest.sh

R=$VM_SHARE/results
mkdir -p "$R"
check() {
	local name=$1 rc
	shift
	step "$name: $*"
	"$@" >"$R/$name.out" 2>&1
	rc=$?
	echo "$rc" >"$R/$name.rc"
	cat "$R/$name.out"
	echo "--- $name: exit $rc"
}

vm_wait host-ready 60 || exit 1
check ping ping -c 1 -W 5 "$VM_HOST_IP"
check rc_pingpong timeout 4 ibv_rc_pingpong -d "$VM_RXE" -g "$VM_GID_INDEX" -s 4096 -n 2 "$VM_HOST_IP"
check rping timeout 5 rping -c -a "$VM_HOST_IP" -C 1 -v
check rxe_counters rxe_counters
vm_signal guest-done
exit 0
