#!/bin/bash
# SPDX-License-Identifier: MIT
# Host side of the capture check, run by tests/vm/run --host inside the lab's
# network namespace: captures the bridge with rdmakit (and tcpdump, as an
# independent count), and plays ibv_rc_pingpong's server for the TCP exchange
# only (QPN 0x000011 at 198.18.0.1), so that the guest's rxe really sends RC
# traffic onto the tap.  Leaves $VM_SHARE/rxe.pcap (rdmakit capture -w) and
# $VM_SHARE/tcpdump.pcap.
set -u
S=$VM_SHARE
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT

# wait_for TEST SECONDS WHAT: polls TEST every 50 ms.
wait_for() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		eval "$1" && return 0
		sleep 0.05
	done
	echo "timed out after $2 s waiting for $3" >&2
	return 1
}


"$RDMAKIT" capture -i "$VM_BRIDGE" -w "$S/rxe.pcap" -U >"$S/capture.out" 2>"$S/capture.err" </dev/null &
cap=$!
pids+=("$cap")
wait_for '(($(wc -l </proc/net/packet) > 1))' 10 "rdmakit capture to open its socket" || exit 1
if command -v tcpdump >/dev/null; then
	# --immediate-mode: without it libpcap hands packets over a block at a
	# time (TPACKET_V3, a 1 s block timeout), and the block still open
	# when tcpdump is stopped is never written: the last packets before
	# the stop went missing from its count now and then.
	tcpdump -i "$VM_BRIDGE" --immediate-mode -U -w "$S/tcpdump.pcap" -Z root 'udp port 4791' 2>"$S/tcpdump.err" </dev/null &
	tcpd=$!
	pids+=("$tcpd")
	wait_for '(($(wc -l </proc/net/packet) > 2))' 10 "tcpdump to open its socket" || exit 1
fi
sleep 0.3 # let both finish setting their filters

# ibv_rc_pingpong's exchange: the client sends "LID:QPN:PSN:GID" (52 bytes
# with the NUL), the server answers the same, the client sends "done".
python3 - "$VM_HOST_IP" >"$S/peer.out" 2>&1 <<'PY' &
import socket, sys
host = sys.argv[1]
gid = bytes(10) + b"\xff\xff" + socket.inet_aton(host)
reply = ("%04x:%06x:%06x:%s" % (0, 0x11, 0x123, gid.hex())).encode() + b"\0"
assert len(reply) == 52
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((host, 18515))
s.listen(4)
print("listening", flush=True)
while True:
    c, peer = s.accept()
    msg = b""
    while len(msg) < 52:
        chunk = c.recv(52 - len(msg))
        if not chunk:
            break
        msg += chunk
    print("client", peer[0], msg.rstrip(b"\0").decode(errors="replace"), flush=True)
    c.sendall(reply)
    print("done:", c.recv(16), flush=True)
    c.close()
PY
peer=$!
pids+=("$peer")
wait_for 'grep -qs listening "$S/peer.out"' 20 "the fake ibv_rc_pingpong server" || exit 1
: >"$S/host-ready"

wait_for '[[ -e $S/guest-done ]]' 200 "the guest's guest-done" || exit 1
sleep 0.5 # the last retransmissions

# stop PID NAME: SIGINT, then SIGKILL after 3 s.  rdmakit capture does not
# end on SIGINT/SIGTERM while its interface is idle (no packet wakes its
# poll): -U above keeps the file complete even then.
stop() {
	local i
	kill -INT "$1" 2>/dev/null
	for ((i = 0; i < 60; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "$2 did not end within 3 s of SIGINT; killed it"
		kill -KILL "$1" 2>/dev/null
	fi
	{ wait "$1"; } 2>/dev/null
	echo "$2 exit $?"
}
stop "$cap" "rdmakit capture" >>"$S/capture.err"
[[ -n ${tcpd:-} ]] && stop "$tcpd" tcpdump >>"$S/tcpdump.err"
cat "$S/capture.err"
cat "$S/peer.out"
echo "captured: $(grep -c . "$S/capture.out") lines from rdmakit capture"
exit 0
