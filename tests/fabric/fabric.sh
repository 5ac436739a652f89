#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A two-tier Clos (spine-leaf) test fabric in network namespaces, for
# rdmakit's incast tests.  See tests/fabric/README.md for the shape, the
# addresses and how ECN marking works.
#
#   fabric.sh [--prefix P] up [--spines N] [--leaves N] [--hosts N]
#             [--rate R] [--fabric-rate R|none] [--queue BYTES]
#             [--ecn-threshold BYTES]
#   fabric.sh [--prefix P] down | hosts | show | stats [--json]
#   fabric.sh [--prefix P] addr HOST
#   fabric.sh [--prefix P] exec HOST|sS|lL CMD [ARG...]
#   fabric.sh [--prefix P] counter HOST NAME
#
# Exit status: 0 ok, 2 usage, 3 runtime (a command that failed).
set -euo pipefail

FABRIC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE_ROOT=${FABRIC_STATE_ROOT:-/run/rdmakit-fabric}
MTU=1500
FRAME=$((MTU + 14)) # the largest skb a tbf sees: offloads are off on every veth
# A host's own uplink never drops: its tbf queue is deeper than any socket
# buffer, so a sender faster than its link blocks in sendto, as with a real
# NIC, instead of losing packets before they reach the fabric.
HOST_TX_QUEUE=${FABRIC_HOST_QUEUE:-$((16 * 1024 * 1024))}

# usage [STATUS]: the header above; on stderr unless asked for (--help).
usage() {
	if [[ ${1:-2} -eq 0 ]]; then
		sed -n '3,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	else
		sed -n '3,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	fi
	exit "${1:-2}"
}
die_usage() {
	echo "fabric.sh: $*" >&2
	exit 2
}
die() {
	echo "fabric.sh: $*" >&2
	exit 3
}

# --- names and addresses ----------------------------------------------------------
# Namespaces: ${P}sS (spine S), ${P}lL (leaf L), ${P}hL_H (host H under leaf L).
# Interfaces are named inside their own namespace, so the prefix never
# lengthens them: a host's eth0, a leaf's hH (to host H) and sS (to spine S),
# a spine's lL (to leaf L).
# Host hL_H is 198.18.L.H; every leaf downlink is 198.18.L.254 (point to
# point, peer addressing); the leaf L - spine S link is 198.19.S.(2L)/31 on
# the leaf and 198.19.S.(2L+1) on the spine.
host_ns() { echo "${PREFIX}h$1_$2"; }
leaf_ns() { echo "${PREFIX}l$1"; }
spine_ns() { echo "${PREFIX}s$1"; }
host_ip() { echo "198.18.$1.$2"; }
leaf_gw() { echo "198.18.$1.254"; }
uplink_leaf_ip() { echo "198.19.$2.$((2 * $1))"; }      # leaf L, spine S
uplink_spine_ip() { echo "198.19.$2.$((2 * $1 + 1))"; } # leaf L, spine S

state_dir() { echo "$STATE_ROOT/$PREFIX"; }

# Every namespace of this prefix that exists, whatever the state says (a
# half-failed up or a lost state directory leaves no orphan behind).
existing_namespaces() {
	# The prefix holds only letters, digits, '-' and '_' (set_prefix).
	local re="^$PREFIX(s[0-9]+|l[0-9]+|h[0-9]+_[0-9]+)\$"
	ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "$re" || true
}

load_config() {
	local f
	f=$(state_dir)/config
	[[ -r $f ]] || die "no fabric with prefix '$PREFIX' is up; start one with 'fabric.sh --prefix $PREFIX up'"
	# shellcheck source=/dev/null
	source "$f"
}

# HOST is hL_H or the namespace name ${P}hL_H; prints the namespace.
resolve_host() {
	local name=${1#"$PREFIX"}
	[[ $name =~ ^h([0-9]+)_([0-9]+)$ ]] ||
		die_usage "'$1' is not a host name; hosts are hL_H (leaf L, host H), see 'fabric.sh hosts'"
	HOST_LEAF=${BASH_REMATCH[1]} HOST_INDEX=${BASH_REMATCH[2]}
	if ((HOST_LEAF < 1 || HOST_LEAF > LEAVES || HOST_INDEX < 1 || HOST_INDEX > HOSTS)); then
		die_usage "no host '$1' in this fabric ($LEAVES leaves of $HOSTS hosts); see 'fabric.sh hosts'"
	fi
	host_ns "$HOST_LEAF" "$HOST_INDEX"
}

# --- rates ------------------------------------------------------------------------

# Prints bits per second for a tc-style rate: 1gbit, 200mbit, 500kbit, 8000bit.
rate_bps() {
	local num unit
	[[ $1 =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] ||
		die_usage "rate '$1' is not a number with a unit bit, kbit, mbit or gbit (e.g. 1gbit)"
	num=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]}
	case $unit in
	bit) echo "$num" ;;
	kbit) echo $((num * 1000)) ;;
	mbit) echo $((num * 1000000)) ;;
	gbit) echo $((num * 1000000000)) ;;
	esac
}

# tbf burst: ${FABRIC_BURST_US:-1000} us at the rate, at least four full frames.  A
# tbf that wakes late (a busy CPU) loses the time beyond its burst, so a
# burst much shorter than a millisecond falls short of the rate here.
tbf_burst() {
	local b=$(($1 * ${FABRIC_BURST_US:-1000} / 8000000))
	((b < 4 * FRAME)) && b=$((4 * FRAME))
	echo "$b"
}

# tbf on the egress of IFACE in NS at BPS bits/s with a QUEUE-byte tail-drop queue.
add_tbf() {
	local ns=$1 dev=$2 bps=$3 queue=$4
	ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: tbf \
		rate "${bps}bit" burst "$(tbf_burst "$bps")" limit "$queue"
}

# --- building -----------------------------------------------------------------------

make_ns() {
	echo "$1" >>"$(state_dir)/namespaces"
	ip netns add "$1"
	ip -n "$1" link set lo up
	# IPv4 only: no router solicitations, DAD or MLD in the link counters.
	ip netns exec "$1" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
}

make_router_ns() {
	make_ns "$1"
	# rp_filter off (default too, so links created later inherit it); ECMP
	# hashes the L4 ports, so RoCEv2's UDP source port spreads flows.
	ip netns exec "$1" sysctl -q -w net.ipv4.ip_forward=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0 \
		net.ipv4.fib_multipath_hash_policy=1
}

# Every frame its own skb: no segmentation or receive offloads, so the soft
# engine's UDP GSO bursts leave the sending host as single RoCEv2 packets
# and the tbf, ECMP and the marker act per packet.  Checksum offload stays
# on: UDP GSO needs it on the sending device.
plain_frames() {
	local ns=$1 dev=$2
	if ((HAVE_ETHTOOL)); then
		ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off \
			tx-udp-segmentation off tx-gso-list off 2>/dev/null ||
			ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off
	fi
}

# A veth hands each packet to the backlog of the CPU that sent it, so a
# flow whose packets are sent or dequeued (tbf) on different CPUs reaches
# the next hop reordered: RoCE's receivers NAK that and go back N, although
# no link reordered anything.  RPS over every CPU keeps each flow on the CPU
# its hash picks, in order, as one switch queue would.
flow_ordered() {
	local ns=$1 dev=$2 mask q
	mask=$(printf '%x' $(((1 << $(nproc)) - 1)))
	for q in $(ip netns exec "$ns" sh -c "ls -d /sys/class/net/$dev/queues/rx-*"); do
		ip netns exec "$ns" sh -c "echo $mask > $q/rps_cpus" ||
			die "cannot set RPS on $dev in $ns (flows would be reordered)"
	done
}

# A veth between NS_A/DEV_A and NS_B/DEV_B, created inside the namespaces
# (never in the caller's), MTU 1500, offloads off, flows kept in order, both
# ends up.
make_link() {
	local ns_a=$1 dev_a=$2 ns_b=$3 dev_b=$4
	ip -n "$ns_a" link add "$dev_a" mtu "$MTU" type veth peer name "$dev_b" mtu "$MTU" netns "$ns_b"
	plain_frames "$ns_a" "$dev_a"
	plain_frames "$ns_b" "$dev_b"
	flow_ordered "$ns_a" "$dev_a"
	flow_ordered "$ns_b" "$dev_b"
	ip -n "$ns_a" link set "$dev_a" up
	ip -n "$ns_b" link set "$dev_b" up
}

compile_marker() {
	local out=$1 rate_Bps=$2 burst=$3 threshold=$4 queue=$5 arch_inc
	command -v clang >/dev/null || die "clang is needed for --ecn-threshold (tests/install-deps installs it)"
	arch_inc=/usr/include/$(uname -m)-linux-gnu
	[[ -r /usr/include/bpf/bpf_helpers.h ]] ||
		die "/usr/include/bpf/bpf_helpers.h is missing: install libbpf-dev (tests/install-deps installs it)"
	clang -O2 -g -target bpf -Wall -Werror -I"$arch_inc" \
		-DVQ_RATE_BPS="$rate_Bps" -DVQ_BURST="$burst" -DVQ_THRESHOLD="$threshold" -DVQ_LIMIT="$queue" \
		-c "$FABRIC_DIR/ecn_marker.bpf.c" -o "$out" ||
		die "compiling $FABRIC_DIR/ecn_marker.bpf.c failed (see clang's message above)"
}

attach_marker() {
	local ns=$1 dev=$2 obj=$3
	ip netns exec "$ns" tc qdisc add dev "$dev" clsact
	ip netns exec "$ns" tc filter add dev "$dev" egress bpf da obj "$obj" sec tc
}

cmd_up() {
	local spines=2 leaves=2 hosts=4 rate=1gbit fabric_rate='' queue='' threshold=''
	while (($#)); do
		case $1 in
		--spines | --leaves | --hosts | --rate | --fabric-rate | --queue | --ecn-threshold | --prefix)
			(($# >= 2)) || die_usage "$1 needs a value"
			case $1 in
			--spines) spines=$2 ;;
			--leaves) leaves=$2 ;;
			--hosts) hosts=$2 ;;
			--rate) rate=$2 ;;
			--fabric-rate) fabric_rate=$2 ;;
			--queue) queue=$2 ;;
			--ecn-threshold) threshold=$2 ;;
			--prefix) set_prefix "$2" ;;
			esac
			shift 2
			;;
		*) die_usage "up: unknown option '$1'" ;;
		esac
	done
	check_count --spines "$spines" 1 255
	check_count --leaves "$leaves" 1 126
	check_count --hosts "$hosts" 1 253
	local bps fabric_bps
	bps=$(rate_bps "$rate")
	if [[ -z $fabric_rate ]]; then
		fabric_bps=$((bps * hosts / spines)) # non-blocking: uplinks carry what the hosts can send
	elif [[ $fabric_rate == none ]]; then
		fabric_bps=0
	else
		fabric_bps=$(rate_bps "$fabric_rate")
	fi
	if [[ -z $queue ]]; then
		queue=$((bps / 8 / 500)) # 2 ms at the host link rate
		((queue < 40 * FRAME)) && queue=$((40 * FRAME))
	fi
	[[ $queue =~ ^[0-9]+$ ]] && ((queue >= 2 * FRAME)) ||
		die_usage "--queue must be a byte count of at least $((2 * FRAME)) (two frames)"
	# Fabric links queue 10 ms (at least the downlinks' queue): drops and
	# marks belong to the downlinks, not to CPU jitter on the way there.
	local fabric_queue=$((fabric_bps / 8 / 100))
	((fabric_queue < queue)) && fabric_queue=$queue
	if [[ -n $threshold ]]; then
		[[ $threshold =~ ^[0-9]+$ ]] && ((threshold < queue)) ||
			die_usage "--ecn-threshold must be a byte count below the queue limit ($queue bytes, --queue)"
	fi
	command -v ip >/dev/null && command -v tc >/dev/null ||
		die "ip and tc (iproute2) are needed; tests/install-deps installs them"
	[[ $(id -u) -eq 0 ]] || die "building namespaces needs root; run as root"
	HAVE_ETHTOOL=0
	if command -v ethtool >/dev/null; then
		HAVE_ETHTOOL=1
	else
		echo "fabric.sh: ethtool is missing, veth offloads stay on (GSO bursts cross as one skb); tests/install-deps installs it" >&2
	fi

	local dir
	dir=$(state_dir)
	if [[ -e $dir/config || -n $(existing_namespaces) ]]; then
		die "a fabric with prefix '$PREFIX' is already up; remove it with 'fabric.sh --prefix $PREFIX down'"
	fi
	mkdir -p "$dir"
	: >"$dir/namespaces"
	deepen_backlog "$dir"
	# Written first, so down finds a half-built fabric.
	cat >"$dir/config" <<-EOF
		SPINES=$spines
		LEAVES=$leaves
		HOSTS=$hosts
		RATE_BPS=$bps
		FABRIC_RATE_BPS=$fabric_bps
		QUEUE=$queue
		ECN_THRESHOLD=${threshold:-}
	EOF
	# Any failure from here on (set -e, or die) removes what was built.
	trap 'up_failed $?' EXIT

	local obj=''
	if [[ -n $threshold ]]; then
		obj=$dir/ecn_marker.o
		compile_marker "$obj" $((bps / 8)) "$(tbf_burst "$bps")" "$threshold" "$queue"
	fi

	local s l h
	for ((s = 1; s <= spines; s++)); do make_router_ns "$(spine_ns $s)"; done
	for ((l = 1; l <= leaves; l++)); do
		make_router_ns "$(leaf_ns $l)"
		for ((h = 1; h <= hosts; h++)); do make_ns "$(host_ns $l $h)"; done
	done

	for ((l = 1; l <= leaves; l++)); do
		local leaf
		leaf=$(leaf_ns $l)
		for ((h = 1; h <= hosts; h++)); do
			local host
			host=$(host_ns $l $h)
			make_link "$host" eth0 "$leaf" "h$h"
			ip -n "$host" addr add "$(host_ip $l $h)/32" peer "$(leaf_gw $l)/32" dev eth0
			ip -n "$host" route add default via "$(leaf_gw $l)" dev eth0
			ip -n "$leaf" addr add "$(leaf_gw $l)/32" peer "$(host_ip $l $h)/32" dev "h$h"
			add_tbf "$host" eth0 "$bps" "$HOST_TX_QUEUE"
			add_tbf "$leaf" "h$h" "$bps" "$queue"
			[[ -z $obj ]] || attach_marker "$leaf" "h$h" "$obj"
		done
		for ((s = 1; s <= spines; s++)); do
			local spine
			spine=$(spine_ns $s)
			make_link "$leaf" "s$s" "$spine" "l$l"
			ip -n "$leaf" addr add "$(uplink_leaf_ip $l $s)/31" dev "s$s"
			ip -n "$spine" addr add "$(uplink_spine_ip $l $s)/31" dev "l$l"
			ip -n "$spine" route add "198.18.$l.0/24" via "$(uplink_leaf_ip $l $s)" dev "l$l"
			if ((fabric_bps > 0)); then
				add_tbf "$leaf" "s$s" "$fabric_bps" "$fabric_queue"
				add_tbf "$spine" "l$l" "$fabric_bps" "$fabric_queue"
			fi
		done
	done

	# Each leaf reaches the other leaves' hosts over every spine (ECMP).
	local m
	for ((l = 1; l <= leaves; l++)); do
		for ((m = 1; m <= leaves; m++)); do
			((m == l)) && continue
			local hops=()
			for ((s = 1; s <= spines; s++)); do
				hops+=(nexthop via "$(uplink_spine_ip $l $s)" dev "s$s")
			done
			if ((spines == 1)); then
				ip -n "$(leaf_ns $l)" route add "198.18.$m.0/24" via "$(uplink_spine_ip $l 1)" dev s1
			else
				ip -n "$(leaf_ns $l)" route add "198.18.$m.0/24" "${hops[@]}"
			fi
		done
	done
	trap - EXIT
	local ecn="ECN marking off"
	[[ -z $threshold ]] || ecn="ECN marking on leaf downlinks above $threshold bytes"
	echo "fabric '$PREFIX' up: $spines spines, $leaves leaves, $hosts hosts per leaf;" \
		"host links $(human_rate "$bps"), fabric links $(human_rate "$fabric_bps"), queue $queue bytes; $ecn"
}

up_failed() {
	(($1 == 0)) && return
	echo "fabric.sh: up failed; removing what it built" >&2
	do_down
	exit 3
}

check_count() {
	[[ $2 =~ ^[0-9]+$ ]] && (($2 >= $3 && $2 <= $4)) || die_usage "$1 must be a number from $3 to $4"
}

human_rate() {
	if (($1 == 0)); then
		echo unshaped
	elif (($1 % 1000000000 == 0)); then
		echo "$(($1 / 1000000000))gbit"
	elif (($1 % 1000000 == 0)); then
		echo "$(($1 / 1000000))mbit"
	else
		echo "${1}bit"
	fi
}

# --- the other commands -------------------------------------------------------------

# Every hop of every namespace queues packets on the host's per-CPU backlog
# (veth, then RPS), which holds net.core.netdev_max_backlog packets (1000 by
# default, a global setting): UDP GSO bursts of a few senders overflow it
# and packets vanish between hops.  Raised while a fabric is up; the old
# value is restored by `down` (the value is shared by every fabric).
FABRIC_BACKLOG=20000
deepen_backlog() {
	local cur
	cur=$(sysctl -n net.core.netdev_max_backlog)
	((cur >= FABRIC_BACKLOG)) && return 0
	echo "$cur" >"$1/backlog"
	sysctl -q -w net.core.netdev_max_backlog=$FABRIC_BACKLOG ||
		echo "fabric.sh: cannot raise net.core.netdev_max_backlog; bursts may be dropped between hops" >&2
}

restore_backlog() {
	local dir=$1 other
	[[ -r $dir/backlog ]] || return 0
	# Another fabric still up keeps it raised and inherits the old value.
	for other in "$STATE_ROOT"/*/config; do
		[[ -e $other && ${other%/config} != "$dir" ]] || continue
		cp "$dir/backlog" "${other%/config}/backlog"
		return 0
	done
	sysctl -q -w net.core.netdev_max_backlog="$(cat "$dir/backlog")" || true
}

do_down() {
	local dir ns
	dir=$(state_dir)
	restore_backlog "$dir"
	{
		[[ -r $dir/namespaces ]] && cat "$dir/namespaces"
		existing_namespaces
	} | sort -u | while read -r ns; do
		[[ -n $ns ]] || continue
		if [[ -e /run/netns/$ns ]] || ip netns list | awk '{ print $1 }' | grep -qxF "$ns"; then
			ip netns del "$ns" 2>/dev/null || true
		fi
	done
	rm -rf "$dir"
}

cmd_down() {
	do_down
	local left
	left=$(existing_namespaces)
	[[ -z $left ]] || die "could not remove namespaces: $(echo "$left" | tr '\n' ' ')"
}

cmd_hosts() {
	load_config
	local l h
	for ((l = 1; l <= LEAVES; l++)); do
		for ((h = 1; h <= HOSTS; h++)); do host_ns $l $h; done
	done
}

cmd_addr() {
	(($# == 1)) || die_usage "usage: fabric.sh addr HOST"
	load_config
	resolve_host "$1" >/dev/null
	host_ip "$HOST_LEAF" "$HOST_INDEX"
}

# exec NODE CMD...: NODE is a host, or a router (sS, lL) for a capture or
# a look at its routes.
cmd_exec() {
	(($# >= 2)) || die_usage "usage: fabric.sh exec HOST|sS|lL CMD [ARG...]"
	load_config
	local ns name=${1#"$PREFIX"}
	if [[ $name =~ ^s([0-9]+)$ ]] && ((BASH_REMATCH[1] >= 1 && BASH_REMATCH[1] <= SPINES)); then
		ns=$(spine_ns "${BASH_REMATCH[1]}")
	elif [[ $name =~ ^l([0-9]+)$ ]] && ((BASH_REMATCH[1] >= 1 && BASH_REMATCH[1] <= LEAVES)); then
		ns=$(leaf_ns "${BASH_REMATCH[1]}")
	else
		ns=$(resolve_host "$1")
	fi
	shift
	exec ip netns exec "$ns" "$@"
}

# counter HOST NAME: a counter of /proc/net/netstat or /proc/net/snmp in the
# host, by name (InCEPkts) or group and name (Udp:InErrors).
cmd_counter() {
	(($# == 2)) || die_usage "usage: fabric.sh counter HOST NAME (e.g. InCEPkts or Udp:RcvbufErrors)"
	load_config
	local ns value
	ns=$(resolve_host "$1")
	value=$(ip netns exec "$ns" cat /proc/net/netstat /proc/net/snmp | awk -v want="$2" '
		$1 == prev { for (i = 2; i <= NF; i++) { g = substr($1, 1, length($1) - 1)
			if (names[i] == want || g ":" names[i] == want) { print $i; exit } } next }
		{ prev = $1; for (i = 2; i <= NF; i++) names[i] = $i }')
	[[ -n $value ]] || die_usage "no counter '$2' in /proc/net/netstat or /proc/net/snmp"
	echo "$value"
}

cmd_show() {
	load_config
	echo "prefix=$PREFIX spines=$SPINES leaves=$LEAVES hosts=$HOSTS rate=$(human_rate "$RATE_BPS")" \
		"fabric_rate=$(human_rate "$FABRIC_RATE_BPS") queue=$QUEUE ecn_threshold=${ECN_THRESHOLD:-off}"
}

cmd_stats() {
	load_config
	command -v python3 >/dev/null || die "python3 is needed for stats"
	exec python3 "$FABRIC_DIR/fabric_stats.py" --prefix "$PREFIX" --spines "$SPINES" \
		--leaves "$LEAVES" --hosts "$HOSTS" "$@"
}

set_prefix() {
	[[ $1 =~ ^[A-Za-z][A-Za-z0-9_-]{0,23}$ ]] ||
		die_usage "prefix '$1' must start with a letter and hold up to 24 letters, digits, '-' or '_'"
	PREFIX=$1
}

main() {
	set_prefix "${FABRIC_PREFIX:-fab-}"
	while (($#)); do
		case $1 in
		--prefix)
			(($# >= 2)) || die_usage "--prefix needs a value"
			set_prefix "$2"
			shift 2
			;;
		-h | --help | help) usage 0 ;;
		*) break ;;
		esac
	done
	(($#)) || usage
	local cmd=$1
	shift
	case $cmd in
	up) cmd_up "$@" ;;
	down)
		[[ ${1:-} == --prefix ]] && { set_prefix "${2:-}"; shift 2; }
		(($# == 0)) || die_usage "down takes no arguments besides --prefix"
		cmd_down
		;;
	hosts) cmd_hosts ;;
	show) cmd_show ;;
	addr) cmd_addr "$@" ;;
	exec) cmd_exec "$@" ;;
	counter) cmd_counter "$@" ;;
	stats) cmd_stats "$@" ;;
	*) die_usage "unknown command '$cmd'; commands: up down hosts show addr exec counter stats" ;;
	esac
}

main "$@"
