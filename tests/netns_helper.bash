# SPDX-License-Identifier: MIT
# Two network namespaces joined by a veth pair, for tests whose traffic
# crosses the kernel datapath: netns_pair PREFIX sets NS_R/NS_S (receiver,
# sender), VETH_R/VETH_S, IP_R=198.18.9.1 and IP_S=198.18.9.2, one RoCEv2
# packet per frame (no GSO or GRO on the veth); netns_pair_down removes them
# and every process in BG_PIDS.  bg_ns runs a command in a namespace.

netns_pair() {
	local tag=$1
	require_root "network namespaces and veth pairs"
	require_tool ip "network namespaces"
	NS_R=${tag}r-$$-$BATS_TEST_NUMBER
	NS_S=${tag}s-$$-$BATS_TEST_NUMBER
	VETH_R=${tag}r$$n$BATS_TEST_NUMBER
	VETH_S=${tag}s$$n$BATS_TEST_NUMBER
	IP_R=198.18.9.1
	IP_S=198.18.9.2
	BG_PIDS=()
	ip netns add "$NS_R"
	ip netns add "$NS_S"
	ip link add "$VETH_R" netns "$NS_R" type veth peer name "$VETH_S" netns "$NS_S"
	ip -n "$NS_R" addr add "$IP_R/24" dev "$VETH_R"
	ip -n "$NS_S" addr add "$IP_S/24" dev "$VETH_S"
	ip -n "$NS_R" link set lo up
	ip -n "$NS_S" link set lo up
	ip -n "$NS_R" link set "$VETH_R" up
	ip -n "$NS_S" link set "$VETH_S" up
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$NS_R" ethtool -K "$VETH_R" tx-udp-segmentation off gro off >/dev/null 2>&1 || true
		ip netns exec "$NS_S" ethtool -K "$VETH_S" tx-udp-segmentation off gro off >/dev/null 2>&1 || true
	fi
	flow_ordered "$NS_R" "$VETH_R"
	flow_ordered "$NS_S" "$VETH_S"
}

# flow_ordered NS DEV: RPS over every CPU on DEV's receive queues.  A veth
# queues each packet on the backlog of the CPU that sent it (or that
# dequeued it from a tbf), so one flow handled on two CPUs arrives reordered
# and RoCE receivers NAK it; RPS keeps each flow on the CPU its hash picks.
flow_ordered() {
	local mask q
	mask=$(printf '%x' $(((1 << $(nproc)) - 1)))
	for q in $(ip netns exec "$1" sh -c "ls -d /sys/class/net/$2/queues/rx-*"); do
		ip netns exec "$1" sh -c "echo $mask > $q/rps_cpus"
	done
}

netns_pair_down() {
	kill_bg
	[[ -n ${NS_R:-} ]] && ip netns del "$NS_R" 2>/dev/null
	[[ -n ${NS_S:-} ]] && ip netns del "$NS_S" 2>/dev/null
	true
}

# bg_ns OUT ERR NS CMD...: CMD in namespace NS in the background; BG its pid.
bg_ns() {
	local out=$1 err=$2 ns=$3
	shift 3
	ip netns exec "$ns" "$@" >"$out" 2>"$err" </dev/null 3>&- &
	BG=$!
	BG_PIDS+=("$BG")
}

# wait_listen_ns NS PORT: until something listens on TCP PORT in NS (5 s).
wait_listen_ns() {
	local i
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$1" ss -Htln "sport = :$2" | grep -q . && return 0
		sleep 0.05
	done
	fail "nothing listens on TCP port $2 in $1 after 5 s"
}
