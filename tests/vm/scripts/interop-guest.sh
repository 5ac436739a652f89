#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of the soft <-> rxe interop check (tests/vm/run --net tap --host
# scripts/interop-host.sh scripts/interop-guest.sh [ENGINE]).
#   ENGINE verbs (default): rdmakit --engine verbs on rxe0, GID index 1.
#   ENGINE soft: rdmakit --engine soft bound to 198.18.0.2 instead (rxe holds
#   UDP 4791 here, so it takes another port): a dry run of this plumbing
#   while rdmakit has no verbs engine.
# The guest serves bw (TCP 18515) and lat (18516) for the host's soft-engine
# clients (soft requester -> rxe responder), then runs its own clients against
# the host's servers on 198.18.0.1 (bw 18517, lat 18518: rxe requester ->
# soft responder), for every op with --verify.  Records
# $VM_SHARE/results/guest_{bw,lat}_OP.{out,rc} and the servers' output.
set -u
. /usr/lib/rdmakit-vm/guest.sh

engine=${1:-verbs}
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

case $engine in
verbs) eng=(--engine verbs -d "$VM_RXE" -x "$VM_GID_INDEX") ;;
soft) eng=(--engine soft --bind "$VM_IP") ;;
*) echo "interop-guest.sh: ENGINE is verbs or soft" >&2; exit 2 ;;
esac

rdmakit bw "${eng[@]}" --persistent -p 18515 >"$R/guest_bw_server.out" 2>&1 &
bw_pid=$!
rdmakit lat "${eng[@]}" --persistent -p 18516 >"$R/guest_lat_server.out" 2>&1 &
lat_pid=$!
wait_tcp_listen 18515 30 && wait_tcp_listen 18516 30 || exit 1
vm_signal guest-servers-ready

vm_wait host-clients-done 900 || exit 1
vm_wait host-servers-ready 60 || exit 1
for op in write read send atomic; do
	check "guest_bw_$op" timeout 180 rdmakit -j bw "${eng[@]}" --op "$op" --verify -n 50 -p 18517 "$VM_HOST_IP"
	check "guest_lat_$op" timeout 180 rdmakit -j lat "${eng[@]}" --op "$op" --verify -n 50 -p 18518 "$VM_HOST_IP"
done
vm_signal guest-clients-done
# The lossy phase (the host drops 3% each way; see interop-host.sh): rxe as
# the requester toward the soft engine.
vm_wait lossy-guest-go 900 || exit 1
for op in write read; do
	check "guest_lossy_bw_$op" timeout 300 rdmakit -j bw "${eng[@]}" --op "$op" --verify -s 16k -n 200 -p 18517 "$VM_HOST_IP"
done
vm_signal guest-lossy-done
vm_wait host-lossy-done 120 || exit 1
# UC and UD: rxe toward the host's soft engine (the host captures).
vm_wait unrel-guest-go 900 || exit 1
while read -r name kind args; do	# the host's list (interop-host.sh)
	port=18517
	[[ $kind == lat ]] && port=18518
	# shellcheck disable=SC2086
	check "guest_$name" timeout 180 rdmakit -j "$kind" "${eng[@]}" $args --verify -p "$port" \
		"$VM_HOST_IP" </dev/null
done <"$VM_SHARE/unrel-cases"
vm_signal guest-unrel-done
# incast -c UD and -c UC SEND (interop-host.sh): rxe's senders toward the
# soft engine's coordinator, then rxe's coordinator for the soft engine's.
for c in UD UC; do
	lc=${c,,}
	vm_wait "incast-$lc-go" 300 || exit 1
	check "guest_incast_${lc}_senders" timeout 240 rdmakit -j incast --local 2 "${eng[@]}" \
		-c "$c" --op send -p 18520 "$VM_HOST_IP" </dev/null
	check "guest_incast_$lc" timeout 240 rdmakit -j incast --serve --senders 2 "${eng[@]}" \
		-c "$c" --op send -s 1024 --bytes 1m --verify -p 18521 --wait-timeout 200 </dev/null &
	co=$!
	wait_tcp_listen 18521 30 || exit 1
	vm_signal "guest-incast-$lc-ready"
	wait "$co"
done
vm_signal guest-incast-done
vm_wait host-unrel-done 120 || exit 1
# The host's rdmakit probe tests this stack (interop-host.sh).
rdmakit probe --serve "${eng[@]}" --timeout 60 -p 18522 >"$R/guest_probe_serve.out" 2>&1 </dev/null &
probe_pid=$!
wait_tcp_listen 18522 30 || exit 1
vm_signal guest-probe-ready
vm_wait host-probe-done 300 || exit 1
wait "$probe_pid"
echo $? >"$R/guest_probe_serve.rc"
# A --persistent server waiting for a client does not end on SIGTERM (seen
# with rdmakit 0.1.0): SIGKILL after a second.
for pid in "$bw_pid" "$lat_pid"; do
	kill "$pid" 2>/dev/null
done
sleep 1
for pid in "$bw_pid" "$lat_pid"; do
	kill -KILL "$pid" 2>/dev/null
	{ wait "$pid"; } 2>/dev/null
done
step "guest servers' output"
cat "$R/guest_bw_server.out" "$R/guest_lat_server.out"
check rxe_counters rxe_counters
vm_signal guest-done
exit 0
