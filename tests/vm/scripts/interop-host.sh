#!/bin/bash
# SPDX-License-Identifier: MIT
# Host side of the soft <-> rxe interop check, run by tests/vm/run --host in
# the lab's network namespace (see interop-guest.sh): rdmakit --engine soft
# on 198.18.0.1 serves bw (TCP 18517) and lat (18518) for the guest's clients
# and runs its own clients against the guest's servers, every op with
# --verify, while rdmakit capture (and tcpdump) record the bridge.  Records
# $VM_SHARE/results/host_{bw,lat}_OP.{out,rc}, $VM_SHARE/interop.pcap and
# $VM_SHARE/interop-tcpdump.pcap; then, with 3% loss each way, bw write and
# read both ways (host_lossy_bw_OP, the guest's guest_lossy_bw_OP, the nft
# counters in lossy_nft) captured in $VM_SHARE/interop-lossy.pcap.
set -u
S=$VM_SHARE
R=$S/results
mkdir -p "$R"
pids=()
# SIGKILL: a --persistent server waiting for a client ignores SIGTERM.
trap 'kill -KILL "${pids[@]}" 2>/dev/null' EXIT
soft=(--engine soft --bind "$VM_HOST_IP")

wait_for() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		eval "$1" && return 0
		sleep 0.05
	done
	echo "timed out after $2 s waiting for $3" >&2
	return 1
}
listening() { grep -q " [0-9A-F]*$(printf ':%04X ' "$1")[0-9A-F:]* 0A " /proc/net/tcp /proc/net/tcp6; }
check() {
	local name=$1 rc
	shift
	echo "=== $name: $*"
	"$@" >"$R/$name.out" 2>&1
	rc=$?
	echo "$rc" >"$R/$name.rc"
	cat "$R/$name.out"
	echo "--- $name: exit $rc"
}
stop() {
	local i
	kill -INT "$1" 2>/dev/null
	for ((i = 0; i < 60; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$1" 2>/dev/null && kill -KILL "$1" 2>/dev/null
	{ wait "$1"; } 2>/dev/null
}

"$RDMAKIT" capture -i "$VM_BRIDGE" -w "$S/interop.pcap" -U >"$S/interop-capture.out" 2>&1 </dev/null &
cap=$!
pids+=("$cap")
wait_for '(($(wc -l </proc/net/packet) > 1))' 10 "rdmakit capture to open its socket" || exit 1
tcpd=
if command -v tcpdump >/dev/null; then
	tcpdump -i "$VM_BRIDGE" -U -w "$S/interop-tcpdump.pcap" -Z root udp 2>/dev/null </dev/null &
	tcpd=$!
	pids+=("$tcpd")
fi

"$RDMAKIT" bw "${soft[@]}" --persistent -p 18517 >"$R/host_bw_server.out" 2>&1 </dev/null &
host_servers=($!)
"$RDMAKIT" lat "${soft[@]}" --persistent -p 18518 >"$R/host_lat_server.out" 2>&1 </dev/null &
host_servers+=($!)
pids+=("${host_servers[@]}")
wait_for 'listening 18517 && listening 18518' 20 "the host's soft-engine servers" || exit 1

wait_for '[[ -e $S/guest-servers-ready ]]' 200 "the guest's servers" || exit 1
for op in write read send atomic; do
	check "host_bw_$op" timeout 180 "$RDMAKIT" -j bw "${soft[@]}" --op "$op" --verify -n 50 -p 18515 "$VM_GUEST_IP"
	check "host_lat_$op" timeout 180 "$RDMAKIT" -j lat "${soft[@]}" --op "$op" --verify -n 50 -p 18516 "$VM_GUEST_IP"
done
: >"$S/host-clients-done"
: >"$S/host-servers-ready"

wait_for '[[ -e $S/guest-clients-done ]]' 900 "the guest's clients" || exit 1
stop "$cap"
[[ -n $tcpd ]] && stop "$tcpd"

# The lossy phase: LOSS% of RoCEv2 packets dropped each way in the kernel
# datapath, where a lossy link would lose them (never in the output hook:
# the sender would see EPERM): host -> guest at tap0's egress (netdev
# family), guest -> host in the host's prerouting.  Both stacks must
# recover (go-back-N on NAK and on ACK timeout) with every byte verified.
LOSS=3
"$RDMAKIT" capture -i "$VM_BRIDGE" -w "$S/interop-lossy.pcap" -U >"$S/interop-lossy-capture.out" 2>&1 </dev/null &
cap=$!
pids+=("$cap")
wait_for '(($(wc -l </proc/net/packet) > 1))' 10 "rdmakit capture to open its socket" || exit 1
nft -f - <<EOF || exit 1
table netdev rdmakit_loss {
	chain to_guest {
		type filter hook egress device "$VM_TAP" priority 0;
		udp dport 4791 numgen random mod 100 < $LOSS counter drop
	}
}
table ip rdmakit_loss {
	chain from_guest {
		type filter hook prerouting priority 0;
		ip saddr $VM_GUEST_IP udp dport 4791 numgen random mod 100 < $LOSS counter drop
	}
}
EOF
for op in write read; do
	check "host_lossy_bw_$op" timeout 300 "$RDMAKIT" -j bw "${soft[@]}" --op "$op" --verify -s 16k -n 200 -p 18515 "$VM_GUEST_IP"
done
: >"$S/lossy-guest-go"
wait_for '[[ -e $S/guest-lossy-done ]]' 900 "the guest's lossy clients" || exit 1
check lossy_nft nft list ruleset
nft delete table netdev rdmakit_loss
nft delete table ip rdmakit_loss
stop "$cap"
: >"$S/host-lossy-done"

# UC and UD (-c), captured: the soft engine toward rxe here, then rxe
# toward the soft engine (interop-guest.sh), --verify on what arrives.
"$RDMAKIT" capture -i "$VM_BRIDGE" -w "$S/interop-unrel.pcap" -U >"$S/interop-unrel-capture.out" 2>&1 </dev/null &
cap=$!
pids+=("$cap")
wait_for '(($(wc -l </proc/net/packet) > 1))' 10 "rdmakit capture to open its socket" || exit 1
# The cases, NAME KIND ARGS a line; the guest runs the same (from the share).
cat >"$S/unrel-cases" <<'EOF'
ud_bw bw -c UD -s 1024 -n 500
ud_lat lat -c UD -n 200
uc_bw_send bw -c UC --op send -s 4096 -n 200
uc_bw_write bw -c UC --op write -s 4096 -n 200
uc_lat_send lat -c UC --op send -n 200
uc_lat_write lat -c UC --op write -n 200
EOF
while read -r name kind args; do
	port=18515
	[[ $kind == lat ]] && port=18516
	# shellcheck disable=SC2086
	check "host_$name" timeout 180 "$RDMAKIT" -j "$kind" "${soft[@]}" $args --verify -p "$port" \
		"$VM_GUEST_IP" </dev/null
done <"$S/unrel-cases"
: >"$S/unrel-guest-go"
wait_for '[[ -e $S/guest-unrel-done ]]' 900 "the guest's UC/UD clients" || exit 1
stop "$cap"
# incast -c UD and -c UC SEND: rxe's two senders into the soft engine's
# coordinator here, then the soft engine's two into rxe's there, --verify.
for c in UD UC; do
	lc=${c,,}
	check "host_incast_$lc" timeout 240 "$RDMAKIT" -j incast --serve --senders 2 "${soft[@]}" \
		-c "$c" --op send -s 1024 --bytes 1m --verify -p 18520 --wait-timeout 200 </dev/null &
	co=$!
	pids+=("$co")
	wait_for 'listening 18520' 10 "the incast coordinator" || exit 1
	: >"$S/incast-$lc-go"
	wait "$co"
	wait_for '[[ -e $S/guest-incast-$lc-ready ]]' 300 "rxe's incast coordinator" || exit 1
	check "host_incast_${lc}_senders" timeout 240 "$RDMAKIT" -j incast --local 2 "${soft[@]}" \
		-c "$c" --op send -p 18521 "$VM_GUEST_IP" </dev/null
done
wait_for '[[ -e $S/guest-incast-done ]]' 300 "the guest's incast coordinators" || exit 1
: >"$S/host-unrel-done"

# rdmakit probe against probe --serve on the guest's stack: the probe needs
# UDP 4791 on this address (rxe sends nowhere else), so the soft-engine
# servers that hold it go first.
kill -KILL "${host_servers[@]}" 2>/dev/null
wait_for '[[ -e $S/guest-probe-ready ]]' 300 "the guest's probe --serve" || exit 1
# rxe's one known deviation (retry_cnt 7 taken as "forever"), accepted as a
# CI job would accept it.
printf '# rxe: retry_cnt 7 retries forever (rxe_comp.c)\nretry_count_7\n' >"$S/probe-accept"
check host_probe timeout 240 "$RDMAKIT" -j probe --accept "$S/probe-accept" --timeout 30 \
	-w "$S/probe.pcap" -p 18522 "$VM_GUEST_IP" </dev/null
: >"$S/host-probe-done"

wait_for '[[ -e $S/guest-done ]]' 120 "the guest to finish" || exit 1
echo "=== host servers' output"
cat "$R/host_bw_server.out" "$R/host_lat_server.out"
exit 0
