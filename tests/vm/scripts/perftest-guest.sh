#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest side of the perftest drop-in check (tests/vm/run --net tap --host
# scripts/perftest-host.sh scripts/perftest-guest.sh).  rdmakit speaks
# perftest's own protocol with nothing of rdmakit on the other side:
#
#  1. In the guest, on rxe0, rdmakit --engine verbs against Debian's perftest
#     (6.06) and, when the host put them in the share ($VM_SHARE/pt629/),
#     upstream perftest 6.29: for bw and lat and every op, a perftest server
#     with an rdmakit client and an rdmakit server with a perftest client;
#     with 6.29 once announcing 6.06 and once 6.29 (the negotiation runs).
#     Then -a (with -n 20), -q 2 and -b.  Records
#     results/NAME.{cli,srv} (the two sides' output) and NAME.rc
#     ("CLIENT_RC SERVER_RC").
#  2. With the host: Debian perftest servers here for the host's soft-engine
#     clients (write, read, send; bw and lat), then Debian perftest clients
#     here against the host's soft-engine servers (perftest-host.sh).
set -u
. /usr/lib/rdmakit-vm/guest.sh

R=$VM_SHARE/results
mkdir -p "$R"
V=(--engine verbs -d "$VM_RXE" -x "$VM_GID_INDEX")
P=(-d "$VM_RXE" -x "$VM_GID_INDEX")
N_BW=500
CLIENT_LIMIT=50		# seconds a pair's client may take (-a: more)
N_LAT=200
port=18700

PT629=
if [[ -x $VM_SHARE/pt629/ib_write_bw ]]; then
	PT629=$VM_SHARE/pt629
	export LD_LIBRARY_PATH=$PT629
fi

# calibration_failed FILE...: perftest could not calibrate its clock (it
# says so, or prints "inf" in its row: the same failure unannounced).
calibration_failed() {
	grep -qsE "Can't produce a report|[[:space:]]inf([[:space:]]|$)" "$@"
}

# pair NAME SERVER-CMD... -- CLIENT-CMD...: the server in the background, the
# client once it listens (PORT in either command is replaced by the pair's port).
# perftest's own clock calibration fails now and then under TCG ("Correlation
# coefficient r^2 ... < 0.9", "Can't produce a report", exit 1): such a pair
# runs again, up to five times in all (each failed try noted in NAME.retried).
# It is perftest's own measurement of its clock, not the exchange: CI once
# saw three failures in a row on a loaded host, an -a run (one calibration
# at the end of a long run) among them.
pair() {
	local try
	for try in 1 2 3 4 5; do
		pair_once "$@"
		calibration_failed "$R/$1.srv" "$R/$1.cli" || return 0
		echo "try $try: perftest could not calibrate its clock" >>"$R/$1.retried"
	done
}

pair_once() {
	local name=$1 srv=() cli=() crc src spid
	shift
	while [[ $1 != -- ]]; do srv+=("${1//PORT/$port}"); shift; done
	shift
	for a in "$@"; do cli+=("${a//PORT/$port}"); done
	step "$name: server: ${srv[*]}; client: ${cli[*]}"
	timeout $((CLIENT_LIMIT + 10)) "${srv[@]}" >"$R/$name.srv" 2>&1 &
	spid=$!
	if wait_tcp_listen "$port" 30; then
		timeout "$CLIENT_LIMIT" "${cli[@]}" >"$R/$name.cli" 2>&1
		crc=$?
	else
		crc=125
	fi
	wait "$spid"
	src=$?
	echo "$crc $src" >"$R/$name.rc"
	echo "--- $name: client exit $crc, server exit $src"
	if [[ $crc != 0 || $src != 0 ]]; then
		tail -n 5 "$R/$name.cli" "$R/$name.srv"
	fi
	port=$((port + 1))
}

# The perftest binary for KIND OP from DIR (empty: Debian's).
ptbin() {
	local dir=$1 kind=$2 op=$3
	echo "${dir:+$dir/}ib_${op}_${kind}"
}

for kind in bw lat; do
	for op in write read send atomic; do
		n=$N_BW
		[[ $kind == lat ]] && n=$N_LAT
		deb=$(ptbin "" "$kind" "$op")
		pair "deb_srv_${kind}_$op" "$deb" "${P[@]}" -p PORT -n "$n" -- \
			rdmakit -j "$kind" "${V[@]}" --op "$op" -p PORT -n "$n" "$VM_IP"
		pair "deb_cli_${kind}_$op" rdmakit -j "$kind" "${V[@]}" --op "$op" -p PORT -n "$n" -- \
			"$deb" "${P[@]}" -p PORT -n "$n" "$VM_IP"
		[[ -n $PT629 ]] || continue
		up=$(ptbin "$PT629" "$kind" "$op")
		pair "up_srv06_${kind}_$op" "$up" "${P[@]}" -p PORT -n "$n" -- \
			rdmakit -j "$kind" "${V[@]}" --op "$op" -p PORT -n "$n" "$VM_IP"
		pair "up_srv29_${kind}_$op" "$up" "${P[@]}" -p PORT -n "$n" -- \
			rdmakit -j "$kind" "${V[@]}" --op "$op" -p PORT -n "$n" --perftest-version 6.29 "$VM_IP"
		pair "up_cli29_${kind}_$op" rdmakit -j "$kind" "${V[@]}" --op "$op" -p PORT -n "$n" -- \
			"$up" "${P[@]}" -p PORT -n "$n" "$VM_IP"
		pair "up_cli06_${kind}_$op" rdmakit -j "$kind" "${V[@]}" --op "$op" -p PORT -n "$n" \
			--perftest-version 6.06 -- "$up" "${P[@]}" -p PORT -n "$n" "$VM_IP"
	done
done
# -a (within a time budget: -n 20) and -q 2, once each way.
CLIENT_LIMIT=150	# 23 sizes under TCG
pair deb_srv_bw_write_all ib_write_bw "${P[@]}" -p PORT -a -n 20 -- \
	rdmakit -j bw "${V[@]}" -p PORT -a -n 20 "$VM_IP"
pair deb_cli_bw_send_all rdmakit -j bw "${V[@]}" --op send -p PORT -a -n 20 -- \
	ib_send_bw "${P[@]}" -p PORT -a -n 20 "$VM_IP"
CLIENT_LIMIT=50
pair deb_srv_bw_send_q2 ib_send_bw "${P[@]}" -p PORT -q 2 -n 100 -- \
	rdmakit -j bw "${V[@]}" --op send -p PORT -q 2 -n 100 "$VM_IP"
pair deb_cli_bw_write_q2 rdmakit -j bw "${V[@]}" -p PORT -q 2 -n 100 -- \
	ib_write_bw "${P[@]}" -p PORT -q 2 -n 100 "$VM_IP"
# -b: both sides send; each prints the sum of both directions.
pair deb_srv_bw_write_bidir ib_write_bw "${P[@]}" -p PORT -b -n 100 -- \
	rdmakit -j bw "${V[@]}" -p PORT -b -n 100 "$VM_IP"
pair deb_cli_bw_read_bidir rdmakit -j bw "${V[@]}" --op read -p PORT -b -n 100 -- \
	ib_read_bw "${P[@]}" -p PORT -b -n 100 "$VM_IP"
pair deb_cli_bw_send_bidir rdmakit -j bw "${V[@]}" --op send -p PORT -b -n 100 -- \
	ib_send_bw "${P[@]}" -p PORT -b -n 100 "$VM_IP"
# -W: rxe's port counters over the run, perftest's syntax.
pair deb_srv_bw_write_counters ib_write_bw "${P[@]}" -p PORT -n 100 -- \
	rdmakit -j bw "${V[@]}" -p PORT -n 100 -W hw_counters/sent_pkts,hw_counters/rcvd_pkts "$VM_IP"
# Bad input: a perftest server sized for 4 KiB and an rdmakit client of 64 KiB.
pair deb_srv_bw_write_mismatch ib_write_bw "${P[@]}" -p PORT -s 4096 -n 50 -- \
	rdmakit -j bw "${V[@]}" -p PORT -s 65536 -n 50 "$VM_IP"

# -A CMP_AND_SWAP, both roles (FETCH_AND_ADD is the default, above).
pair deb_srv_bw_cas ib_atomic_bw "${P[@]}" -A CMP_AND_SWAP -p PORT -n 200 -- \
	rdmakit -j bw "${V[@]}" --op atomic -A CMP_AND_SWAP -p PORT -n 200 "$VM_IP"
pair deb_cli_bw_cas rdmakit -j bw "${V[@]}" --op atomic -A CMP_AND_SWAP -p PORT -n 200 -- \
	ib_atomic_bw "${P[@]}" -A CMP_AND_SWAP -p PORT -n 200 "$VM_IP"
# -D: by duration, both roles.
pair deb_srv_bw_write_dur ib_write_bw "${P[@]}" -p PORT -D 2 -- \
	rdmakit -j bw "${V[@]}" -p PORT -D 2 "$VM_IP"
pair deb_cli_bw_write_dur rdmakit -j bw "${V[@]}" -p PORT -D 2 -- \
	ib_write_bw "${P[@]}" -p PORT -D 2 "$VM_IP"
pair deb_cli_bw_send_dur rdmakit -j bw "${V[@]}" --op send -p PORT -D 2 -- \
	ib_send_bw "${P[@]}" -p PORT -D 2 "$VM_IP"
pair deb_srv_lat_write_dur ib_write_lat "${P[@]}" -p PORT -D 2 -- \
	rdmakit -j lat "${V[@]}" --op write -p PORT -D 2 "$VM_IP"
# The path MTU is the smaller of the two sides' (-m), as perftest takes it.
pair deb_srv_bw_write_mtu ib_write_bw "${P[@]}" -m 512 -p PORT -n 100 -- \
	rdmakit -j bw "${V[@]}" -p PORT -n 100 "$VM_IP"
# -c UD and -c UC, both roles; a 6.29 client negotiates UD with a server
# that was not told (it adopts connection_type).
pair deb_srv_bw_send_ud ib_send_bw "${P[@]}" -c UD -p PORT -n 200 -- \
	rdmakit -j bw "${V[@]}" -c UD -p PORT -n 200 "$VM_IP"
pair deb_cli_bw_send_ud rdmakit -j bw "${V[@]}" -c UD -p PORT -n 200 -- \
	ib_send_bw "${P[@]}" -c UD -p PORT -n 200 "$VM_IP"
pair deb_srv_lat_send_ud ib_send_lat "${P[@]}" -c UD -p PORT -n 200 -- \
	rdmakit -j lat "${V[@]}" -c UD -p PORT -n 200 "$VM_IP"
pair deb_cli_lat_send_ud rdmakit -j lat "${V[@]}" -c UD -p PORT -n 200 -- \
	ib_send_lat "${P[@]}" -c UD -p PORT -n 200 "$VM_IP"
pair deb_srv_bw_write_uc ib_write_bw "${P[@]}" -c UC -p PORT -n 200 -- \
	rdmakit -j bw "${V[@]}" -c UC -p PORT -n 200 "$VM_IP"
pair deb_cli_bw_send_uc rdmakit -j bw "${V[@]}" -c UC --op send -p PORT -n 200 -- \
	ib_send_bw "${P[@]}" -c UC -p PORT -n 200 "$VM_IP"
pair deb_srv_bw_send_uc ib_send_bw "${P[@]}" -c UC -p PORT -n 200 -- \
	rdmakit -j bw "${V[@]}" -c UC --op send -p PORT -n 200 "$VM_IP"
pair deb_cli_bw_write_uc rdmakit -j bw "${V[@]}" -c UC -p PORT -n 200 -- \
	ib_write_bw "${P[@]}" -c UC -p PORT -n 200 "$VM_IP"
pair deb_srv_lat_send_uc ib_send_lat "${P[@]}" -c UC -p PORT -n 200 -- \
	rdmakit -j lat "${V[@]}" -c UC -p PORT -n 200 "$VM_IP"
pair deb_cli_lat_send_uc rdmakit -j lat "${V[@]}" -c UC -p PORT -n 200 -- \
	ib_send_lat "${P[@]}" -c UC -p PORT -n 200 "$VM_IP"
pair deb_srv_lat_write_uc ib_write_lat "${P[@]}" -c UC -p PORT -n 200 -- \
	rdmakit -j lat "${V[@]}" -c UC --op write -p PORT -n 200 "$VM_IP"
pair deb_cli_lat_write_uc rdmakit -j lat "${V[@]}" -c UC --op write -p PORT -n 200 -- \
	ib_write_lat "${P[@]}" -c UC -p PORT -n 200 "$VM_IP"
if [[ -n $PT629 ]]; then
	pair up_cli29_bw_send_ud rdmakit -j bw "${V[@]}" --op send -p PORT -n 200 -- \
		"$PT629/ib_send_bw" "${P[@]}" -c UD -p PORT -n 200 "$VM_IP"
fi
# Bad input: a SEND test whose two sides count different -n, both ways.
pair deb_srv_bw_send_iters ib_send_bw "${P[@]}" -p PORT -n 100 -- \
	rdmakit -j bw "${V[@]}" --op send -p PORT -n 200 --timeout 10 "$VM_IP"
pair deb_cli_bw_send_iters rdmakit -j bw "${V[@]}" --op send -p PORT -n 200 --timeout 10 -- \
	ib_send_bw "${P[@]}" -p PORT -n 100 "$VM_IP"

# Part 2: the host's soft engine against perftest on rxe0 (the strongest
# check: nothing of rdmakit on this side).  Each case may take three tries
# (perftest's clock calibration, as above): the guest says which try runs
# (pt-server-CASE-TRY / host-server-CASE-TRY from the host) and when a case
# is over (case-done-CASE).
vm_signal guest-matrix-done
i=0
for kind in bw lat; do
	for op in write read send; do
		n=$N_BW
		[[ $kind == lat ]] && n=$N_LAT
		c=soft_cli_${kind}_$op
		for try in 1 2 3; do
			p=$((18900 + 10 * i + try))
			"ib_${op}_${kind}" "${P[@]}" -p "$p" -n "$n" >"$R/$c.srv" 2>&1 &
			spid=$!
			wait_tcp_listen "$p" 30 || exit 1
			vm_signal "pt-server-$c-$try"
			wait "$spid"
			echo $? >"$R/$c.srvrc"
			vm_wait "host-client-done-$c-$try" 200 || exit 1
			calibration_failed "$R/$c.srv" "$R/$c.cli" || break
			echo "try $try: perftest could not calibrate its clock" >>"$R/$c.retried"
		done
		vm_signal "case-done-$c"
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
			p=$((19100 + 10 * i + try))
			vm_signal "go-$c-$try"
			vm_wait "host-server-$c-$try" 200 || exit 1
			timeout 100 "ib_${op}_${kind}" "${P[@]}" -p "$p" -n "$n" "$VM_HOST_IP" \
				>"$R/$c.cli" 2>&1
			echo $? >"$R/$c.clirc"
			vm_wait "host-server-done-$c-$try" 200 || exit 1
			calibration_failed "$R/$c.cli" "$R/$c.srv" || break
			echo "try $try: perftest could not calibrate its clock" >>"$R/$c.retried"
		done
		vm_signal "case-done-$c"
		i=$((i + 1))
	done
done
vm_wait host-done 200 || exit 1
exit 0
