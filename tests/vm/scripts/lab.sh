#!/bin/bash
# SPDX-License-Identifier: MIT
# Guest script (tests/vm/run scripts/lab.sh [--verbs]): one guest, rxe0 on
# dummy0 (198.18.0.2).  Runs every single-guest check and records each one
# for tests/vm/vm.bats as $VM_SHARE/results/NAME.out (stdout and stderr) and
# NAME.rc (exit status); it also prints them.  Exits 0 when the records are
# complete: whether each check passed is for the suite to judge.
#   --verbs   also run rdmakit's verbs engine (bw and lat, every op, --verify)
set -u
. /usr/lib/rdmakit-vm/guest.sh

verbs=0
[ "${1:-}" = --verbs ] && verbs=1
R=$VM_SHARE/results
mkdir -p "$R"
DEV=$VM_RXE GIDX=$VM_GID_INDEX

# check NAME CMD...: runs CMD, records its output and status.
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

# run_pair NAME: "${SERVER[@]}" as a server, then "${CLIENT[@]}" as its
# client (TCP control port 18515); records NAME-server and NAME-client.
run_pair() {
	local name=$1 spid rc
	step "$name: ${SERVER[*]} (server and client on $DEV)"
	timeout 120 "${SERVER[@]}" >"$R/$name-server.out" 2>&1 &
	spid=$!
	if wait_tcp_listen 18515 30 2>"$R/$name-client.out"; then
		timeout 120 "${CLIENT[@]}" >"$R/$name-client.out" 2>&1
		echo $? >"$R/$name-client.rc"
	else
		echo 125 >"$R/$name-client.rc"
		kill "$spid" 2>/dev/null
	fi
	wait "$spid"
	rc=$?
	echo "$rc" >"$R/$name-server.rc"
	cat "$R/$name-server.out" "$R/$name-client.out"
	echo "--- $name: server exit $rc, client exit $(cat "$R/$name-client.rc")"
}

# pair NAME CMD...: CMD as a server, CMD $VM_IP as its client.
pair() {
	local name=$1
	shift
	SERVER=("$@")
	CLIENT=("$@" "$VM_IP")
	run_pair "$name"
}

# The kernel IB CM's message counters for rxe0 ("tx_req 8" ...): proof
# that -R connections went through the CM.
cm_msgs() {
	local d=/sys/class/infiniband/$DEV/ports/1 dir f
	for dir in cm_tx_msgs cm_rx_msgs; do
		for f in req rep rtu; do
			echo "${dir#cm_}_$f $(cat "$d/$dir/$f")"
		done
	done
}

# A server given -R and a client without: both refuse, naming the fix.
cm_mismatch() {
	SERVER=(rdmakit bw --engine verbs -R -d "$DEV")
	CLIENT=(rdmakit bw --engine verbs -d "$DEV" -n 50 "$VM_IP")
	run_pair rdmakit_cm_mismatch
}

# Ground truth for rdmakit devices: what the kernel says about rxe0, one
# "index gid type netdev" a line for the GIDs in use (one grep for the whole
# table: a process per entry of its hundreds costs half a minute under TCG).
sysfs_gids() {
	local p=/sys/class/infiniband/$DEV/ports/1 path gid i
	grep -H -v '^0000:0000:0000:0000:0000:0000:0000:0000$' "$p"/gids/* |
		while IFS=: read -r path gid; do
			i=${path##*/}
			echo "$i $gid $(tr ' ' _ <"$p/gid_attrs/types/$i") $(cat "$p/gid_attrs/ndevs/$i")"
		done | sort -n
}
check sysfs_gids sysfs_gids
check sysfs_port sh -c "cat /sys/class/infiniband/$DEV/ports/1/state /sys/class/infiniband/$DEV/ports/1/link_layer"
check ibv_devices ibv_devices
check ibv_devinfo ibv_devinfo -d "$DEV" -v
check devices rdmakit devices
check devices_json rdmakit -j devices
check devices_dev_json rdmakit -j devices -d "$DEV"
check devices_missing rdmakit devices -d nosuchdev

pair write_bw ib_write_bw -d "$DEV" -x "$GIDX" -s 65536 -n 100
pair send_lat ib_send_lat -d "$DEV" -x "$GIDX" -s 2 -n 200

if [ "$verbs" = 1 ]; then
	for op in write read send atomic; do
		pair "rdmakit_bw_$op" rdmakit -j bw --engine verbs -d "$DEV" -x "$GIDX" --op "$op" --verify -n 50
		pair "rdmakit_lat_$op" rdmakit -j lat --engine verbs -d "$DEV" -x "$GIDX" --op "$op" --verify -n 50
	done
	# -R/--rdma-cm: the QPs connected by the kernel's RDMA CM (REQ/REP/RTU
	# MADs through rxe), every op, several QPs, and a lat run.
	check cm_msgs_before cm_msgs
	for op in write read send atomic; do
		pair "rdmakit_cm_bw_$op" rdmakit -j bw --engine verbs -R -d "$DEV" --op "$op" --verify -n 50
	done
	pair rdmakit_cm_bw_qps rdmakit -j bw --engine verbs -R -d "$DEV" -q 3 --verify -n 50
	pair rdmakit_cm_lat_send rdmakit -j lat --engine verbs -R -d "$DEV" --verify -n 50
	check cm_msgs_after cm_msgs
	cm_mismatch
	check rdmakit_bad_gid rdmakit bw --engine verbs -d "$DEV" -x 99 --loopback -n 5
	check rdmakit_no_dev rdmakit bw --engine verbs -d nosuchdev --loopback -n 5
fi
check rxe_counters rxe_counters

# rdmakit top on a real RDMA device: rxe0's sysfs counters sampled every
# second while perftest moves traffic, with the counters before and after.
check top_counters_before rxe_counters
timeout 60 rdmakit top --json -d 1 -n 7 "$DEV" >"$R/top_rxe.out" 2>"$R/top_rxe.err" &
top_pid=$!
sleep 1.5
pair top_traffic ib_write_bw -d "$DEV" -x "$GIDX" -s 65536 -n 1000
wait "$top_pid"
echo $? >"$R/top_rxe.rc"
check top_counters_after rxe_counters
check top_rxe_batch rdmakit top -b -n 1 "$DEV"

# The RDMA netlink statistics against iproute2's `rdma statistic`: at rest
# (no traffic between the three readings), then interleaved readings while
# ib_write_bw runs, one JSON document a line: rdma, rdmakit, rdma, ...
rdma_stat() { rdma -j statistic show link "$DEV/1"; }
netlink_rest() { rdma_stat && rdmakit top --json -n 1 "$DEV" && rdma_stat; }
netlink_during() {
	local i
	for i in 1 2 3 4 5 6; do
		rdma_stat && rdmakit top --json -n 1 "$DEV" || return 1
		sleep 0.3
	done
	rdma_stat
}
check netlink_rest netlink_rest
netlink_during >"$R/netlink_during.out" 2>&1 &
nl_pid=$!
pair netlink_traffic ib_write_bw -d "$DEV" -x "$GIDX" -s 65536 -n 2000
wait "$nl_pid"
echo $? >"$R/netlink_during.rc"

# A real ethtool netlink PAUSE_GET reply: e1000 has pause parameters (and
# no pause statistics, no DCB).  ethtool -a says what they are.
e1000_iface() {
	local d
	for d in /sys/class/net/*; do
		[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = e1000 ] &&
			echo "${d##*/}" && return 0
	done
	return 1
}
modprobe e1000 2>/dev/null
sleep 0.5
if IF=$(e1000_iface); then
	ip link set "$IF" up
	echo "$IF" >"$R/e1000_iface"
	check e1000_ethtool_a ethtool -a "$IF"
	check e1000_ethtool_ia ethtool -I -a "$IF"
	check top_e1000 rdmakit top --json -n 1 -d 0.2 -i "$IF"
fi
exit 0
