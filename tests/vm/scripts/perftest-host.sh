#!/bin/bash
# SPDX-License-Identifier: MIT
# Host side of the perftest drop-in check (see perftest-guest.sh): rdmakit
# --engine soft on 198.18.0.1 as the client of Debian perftest servers on the
# guest's rxe0, then as the server of Debian perftest clients, for write,
# read and send, bw and lat.  rdmakit capture records the write bw run
# ($VM_SHARE/perftest-soft.pcap).  Records results/soft_{cli,srv}_KIND_OP.*.
set -u
S=$VM_SHARE
R=$S/results
mkdir -p "$R"
soft=(--engine soft --bind "$VM_HOST_IP")
N_BW=200
N_LAT=200
pids=()
trap 'kill -KILL "${pids[@]}" 2>/dev/null' EXIT

wait_for() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[[ -e $S/$1 ]] && return 0
		sleep 0.05
	done
	echo "timed out after $2 s waiting for $1" >&2
	return 1
}
listening() { grep -q " [0-9A-F]*$(printf ':%04X ' "$1")[0-9A-F:]* 0A " /proc/net/tcp /proc/net/tcp6; }

wait_for guest-matrix-done 900 || exit 1
i=0
for kind in bw lat; do
	for op in write read send; do
		n=$N_BW
		[[ $kind == lat ]] && n=$N_LAT
		p=$((18900 + i))
		i=$((i + 1))
		wait_for "pt-server-$kind-$op" 120 || exit 1
		cap=
		if [[ $kind-$op == bw-write ]]; then
			"$RDMAKIT" capture -i "$VM_BRIDGE" -w "$S/perftest-soft.pcap" -U \
				>"$S/perftest-capture.out" 2>&1 </dev/null &
			cap=$!
			pids+=("$cap")
			for ((k = 0; k < 200 && $(wc -l </proc/net/packet) <= 1; k++)); do sleep 0.05; done
		fi
		timeout 100 "$RDMAKIT" -j "$kind" "${soft[@]}" --op "$op" -p "$p" -n "$n" "$VM_GUEST_IP" \
			>"$R/soft_cli_${kind}_$op.cli" 2>&1
		echo $? >"$R/soft_cli_${kind}_$op.clirc"
		if [[ -n $cap ]]; then
			sleep 0.3
			kill -INT "$cap"
			wait "$cap"
		fi
		: >"$S/host-client-done-$kind-$op"
	done
done
i=0
for kind in bw lat; do
	for op in write read send; do
		n=$N_BW
		[[ $kind == lat ]] && n=$N_LAT
		p=$((18950 + i))
		i=$((i + 1))
		timeout 120 "$RDMAKIT" -j "$kind" "${soft[@]}" --op "$op" -p "$p" -n "$n" \
			>"$R/soft_srv_${kind}_$op.srv" 2>&1 </dev/null &
		spid=$!
		pids+=("$spid")
		for ((k = 0; k < 200; k++)); do listening "$p" && break; sleep 0.05; done
		: >"$S/host-server-$kind-$op"
		wait "$spid"
		echo $? >"$R/soft_srv_${kind}_$op.srvrc"
		wait_for "pt-client-done-$kind-$op" 120 || exit 1
	done
done
: >"$S/host-done"
