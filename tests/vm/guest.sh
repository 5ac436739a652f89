# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Helpers for guest test scripts (installed in the guest as
# /usr/lib/rdmakit-vm/guest.sh):  . /usr/lib/rdmakit-vm/guest.sh
#
# The guest's /init exports VM_SHARE (the 9p share, the host's share
# directory), VM_NET (none|tap), VM_NETDEV, VM_RXE (rxe0), VM_GID_INDEX (1:
# the IPv4-mapped RoCE v2 GID), VM_IP and VM_HOST_IP.

# step TEXT...: a visible heading in the console log, with the guest's uptime.
step() { echo "=== [$(cut -d' ' -f1 /proc/uptime)] $*"; }

# vm_signal NAME: tells the host side (tests/vm/run --host) that NAME happened.
vm_signal() { : >"$VM_SHARE/$1"; }

# vm_wait NAME [SECONDS]: waits for the host side's vm_signal NAME (default
# 30 s); fails with a message on timeout.
vm_wait() {
	local i=0 n=$((${2:-30} * 20))
	while [ ! -e "$VM_SHARE/$1" ]; do
		if [ $i -ge $n ]; then
			echo "timed out waiting ${2:-30} s for the host's '$1'" >&2
			return 1
		fi
		sleep 0.05
		i=$((i + 1))
	done
}

# wait_tcp_listen PORT [SECONDS]: waits until something listens on TCP PORT.
wait_tcp_listen() {
	local i=0 n=$((${2:-20} * 20)) hex
	hex=$(printf ':%04X ' "$1")
	while ! grep -q " [0-9A-F]*${hex}[0-9A-F:]* 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
		if [ $i -ge $n ]; then
			echo "nothing listens on TCP port $1 after ${2:-20} s" >&2
			return 1
		fi
		sleep 0.05
		i=$((i + 1))
	done
}

# rxe_counters: rxe0's hw counters, "name value" a line (retries are normal
# under TCG; never assert that they are zero).
rxe_counters() {
	local f
	for f in /sys/class/infiniband/"$VM_RXE"/ports/1/hw_counters/*; do
		echo "${f##*/} $(cat "$f")"
	done
}
