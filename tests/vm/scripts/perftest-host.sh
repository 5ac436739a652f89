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
N_BW=500
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

# first_of A B SECONDS: waits for either file; says which (1 or 2).
first_of() {
	local k
	for ((k = 0; k < $3 * 20; k++)); do
		[[ -e $S/$1 ]] && { echo 1; return 0; }
		[[ -e $S/$2 ]] && { echo 2; return 0; }
		sleep 0.05
	done
	echo "timed out after $3 s waiting for $1 or $2" >&2
	return 1
}

wait_for guest-matrix-done 900 || exit 1
i=0
for kind in bw lat; do
	for op in write read send; do
		n=$N_BW
		[[ $kind == lat ]] && n=$N_LAT
		c=soft_cli_${kind}_$op
		for try in 1 2 3; do
			w=$(first_of "pt-server-$c-$try" "case-done-$c" 120) || exit 1
			[[ $w == 2 ]] && break
			p=$((18900 + 10 * i + try))
			cap=
			if [[ $c == soft_cli_bw_write ]]; then
				"$RDMAKIT" capture -i "$VM_BRIDGE" -w "$S/perftest-soft.pcap" -U \
					>"$S/perftest-capture.out" 2>&1 </dev/null &
				cap=$!
				pids+=("$cap")
				for ((k = 0; k < 200 && $(wc -l </proc/net/packet) <= 1; k++)); do sleep 0.05; done
			fi
			timeout 100 "$RDMAKIT" -j "$kind" "${soft[@]}" --op "$op" -p "$p" -n "$n" "$VM_GUEST_IP" \
				>"$R/$c.cli" 2>&1
			echo $? >"$R/$c.clirc"
			if [[ -n $cap ]]; then
				sleep 0.3
				kill -INT "$cap"
				wait "$cap"
			fi
			: >"$S/host-client-done-$c-$try"
		done
		wait_for "case-done-$c" 200 || exit 1
		i=$((i + 1))
	done
done
i=0
for kind in bw lat; do
	for op in write read send; do
		n=$N_BW
		[[ $kind == lat ]] && n=$N_LAT
		c=soft_srv_${kind}_$op
		for try in 1 2 3; do
			w=$(first_of "go-$c-$try" "case-done-$c" 200) || exit 1
			[[ $w == 2 ]] && break
			p=$((19100 + 10 * i + try))
			timeout 120 "$RDMAKIT" -j "$kind" "${soft[@]}" --op "$op" -p "$p" -n "$n" \
				>"$R/$c.srv" 2>&1 </dev/null &
			spid=$!
			pids+=("$spid")
			for ((k = 0; k < 200; k++)); do listening "$p" && break; sleep 0.05; done
			: >"$S/host-server-$c-$try"
			wait "$spid"
			echo $? >"$R/$c.srvrc"
			: >"$S/host-server-done-$c-$try"
		done
		wait_for "case-done-$c" 200 || exit 1
		i=$((i + 1))
	done
done
: >"$S/host-done"
