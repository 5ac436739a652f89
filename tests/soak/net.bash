# SPDX-License-Identifier: MIT
# The chaos soak's network: two namespaces joined by a veth pair, addresses
# from 198.18.0.0/15 only, and the nftables tables tests/soak/chaos fills:
#   inet soak / chain pre     at each receiver (prerouting): loss, payload
#                             corruption, CE marks, with named counters;
#   ip soakdup / chain post   at each sender (postrouting): duplication
#                             ('dup to' the peer), with a named counter.
# The counters live as long as the tables, so they sum every rule set the
# chaos loop installs.  The same approach as tests/perf_netns.bats.
#
#   soak_net_up PREFIX     sets and exports NS_C NS_S VETH_C VETH_S IP_C IP_S
#   soak_neigh             pins each side's neighbour entry for the other
#   soak_net_down          removes both namespaces (and with them the veth)
#   soak_counter NAME      packets counted by NAME in both namespaces

soak_net_up() {
	local prefix=$1 ns
	# Interface names stay under 16 bytes.
	export NS_C=$prefix-c NS_S=$prefix-s
	export VETH_C=${prefix:0:12}c VETH_S=${prefix:0:12}s
	export IP_C=198.18.11.1 IP_S=198.18.11.2
	ip netns add "$NS_C" || return 1
	ip netns add "$NS_S" || return 1
	ip link add "$VETH_C" netns "$NS_C" type veth peer name "$VETH_S" netns "$NS_S" || return 1
	ip -n "$NS_C" addr add "$IP_C/24" dev "$VETH_C"
	ip -n "$NS_S" addr add "$IP_S/24" dev "$VETH_S"
	for ns in "$NS_C" "$NS_S"; do
		ip -n "$ns" link set lo up
		ip netns exec "$ns" nft -f - <<-'NFT' || return 1
		table inet soak {
			counter dropped {}
			counter corrupted {}
			counter marked {}
			chain pre { type filter hook prerouting priority 0; }
		}
		table ip soakdup {
			counter duplicated {}
			chain post { type filter hook postrouting priority 0; }
		}
		NFT
	done
	ip -n "$NS_C" link set "$VETH_C" up
	ip -n "$NS_S" link set "$VETH_S" up
	soak_neigh || return 1
	# One RoCEv2 packet per frame: each is impaired on its own.
	if command -v ethtool >/dev/null 2>&1; then
		ip netns exec "$NS_C" ethtool -K "$VETH_C" tx-udp-segmentation off gro off >/dev/null 2>&1
		ip netns exec "$NS_S" ethtool -K "$VETH_S" tx-udp-segmentation off gro off >/dev/null 2>&1
	fi
	return 0
}

# A link flap flushes the neighbour table; an ARP request sent while the
# link is down is retried only a second later, which would stretch a 0.1 s
# flap past the transport's retry budget.  Pinned entries make a flap cost
# its own length and no more.
soak_neigh() {
	local mac_c mac_s
	mac_c=$(ip -n "$NS_C" -br link show "$VETH_C" | awk '{ print $3 }')
	mac_s=$(ip -n "$NS_S" -br link show "$VETH_S" | awk '{ print $3 }')
	ip -n "$NS_C" neigh replace "$IP_S" lladdr "$mac_s" dev "$VETH_C" nud permanent &&
		ip -n "$NS_S" neigh replace "$IP_C" lladdr "$mac_c" dev "$VETH_S" nud permanent
}

soak_net_down() {
	[[ -n ${NS_C:-} ]] && ip netns del "$NS_C" 2>/dev/null
	[[ -n ${NS_S:-} ]] && ip netns del "$NS_S" 2>/dev/null
	return 0
}

soak_counter() {
	local ns n=0 c
	for ns in "$NS_C" "$NS_S"; do
		c=$(ip netns exec "$ns" nft list counters 2>/dev/null |
			awk -v want="$1" '$1 == "counter" { name = $2 }
				$1 == "packets" && name == want { print $2; exit }')
		n=$((n + ${c:-0}))
	done
	echo "$n"
}
