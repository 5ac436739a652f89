#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The spine-leaf test fabric (tests/fabric/fabric.sh): namespaces come and
# go cleanly, every host reaches every other, ECMP spreads flows over the
# spines by UDP source port, tbf holds a link to its rate, UDP GSO bursts
# cross as single frames, and the tc-bpf marker sets CE on an overloaded
# downlink (and nothing does without it).
#
# Traffic comes from tests/fabric/udpflow.py (python3), not from rdmakit.
# Needs root, ip and tc (iproute2), python3; the ECN tests also clang,
# libbpf-dev and bpftool.  Skipped without them, failed under CI=true.
# Every fabric is removed in teardown, pass or fail.

bats_require_minimum_version 1.5.0

load test_helper

setup() {
	case ":${BATS_LIB_PATH:-}:" in
	*:/usr/lib/bats:*) ;;
	*) export BATS_LIB_PATH=${BATS_LIB_PATH:+$BATS_LIB_PATH:}/usr/lib/bats ;;
	esac
	bats_load_library bats-support
	bats_load_library bats-assert
	FABRIC=$BATS_TEST_DIRNAME/fabric/fabric.sh
	UDPFLOW=$BATS_TEST_DIRNAME/fabric/udpflow.py
	require_root "network namespaces, veth pairs and tc"
	require_tool ip "network namespaces"
	require_tool tc "link rates and the ECN marker"
	require_tool python3 "test traffic (tests/fabric/udpflow.py)"
	# Unique per run and test, so parallel runs and other users never collide.
	P=fbt$$t${BATS_TEST_NUMBER}-
	P2=
	BG_PIDS=()
}

teardown() {
	local pid
	for pid in "${BG_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${BG_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	[[ -n ${P:-} ]] && "$FABRIC" --prefix "$P" down
	[[ -n ${P2:-} ]] && "$FABRIC" --prefix "$P2" down
	true
}

fab() { "$FABRIC" --prefix "$P" "$@"; }

# Namespaces whose name starts with PREFIX, one a line.
namespaces_of() { ip netns list | awk '{ print $1 }' | grep -F -- "$1" | grep "^$1" || true; }

# sink HOST SECONDS: a UDP sink on port 4791 in HOST, in the background.
# (fabric.sh and ip netns exec both exec, so the PID is python's own; fd 3
# is bats' own and must not stay open in it.)
sink() {
	"$FABRIC" --prefix "$P" exec "$1" python3 "$UDPFLOW" sink --seconds "$2" >/dev/null 3>&- &
	BG_PIDS+=($!)
}

# send_bg HOST ARGS...: udpflow.py send from HOST in the background.
send_bg() {
	"$FABRIC" --prefix "$P" exec "$1" python3 "$UDPFLOW" send "${@:2}" \
		>"$BATS_TEST_TMPDIR/send-$1.json" 3>&- &
	BG_PIDS+=($!)
}

# Packets a spine sent towards leaf LEAF (column tx_packets of 'stats').
spine_tx() { fab stats | awk -v s="$1" -v l="l$2" '$1 == s && $2 == l { print $6 }'; }

# A link counter read straight from sysfs in node NODE (fast, for timing).
link_counter() { ip netns exec "$P$1" cat "/sys/class/net/$2/statistics/$3"; }

# rate_over NODE IFACE SECONDS: bits per second NODE/IFACE sent over SECONDS.
rate_over() {
	local b0 b1 t0 t1
	t0=$(date +%s%N)
	b0=$(link_counter "$1" "$2" tx_bytes)
	sleep "$3"
	t1=$(date +%s%N)
	b1=$(link_counter "$1" "$2" tx_bytes)
	echo $(((b1 - b0) * 8 * 1000000000 / (t1 - t0)))
}

# within_percent VALUE WANT PCT: fails with both numbers unless |VALUE-WANT| <= PCT% of WANT.
within_percent() {
	local diff=$(($1 - $2))
	((diff < 0)) && diff=$((-diff))
	if ((diff * 100 > $3 * $2)); then
		fail "$1 is not within $3% of $2"
	fi
}

require_marker_tools() {
	require_tool clang "compiling the ECN marker"
	require_file /usr/include/bpf/bpf_helpers.h libbpf-dev "compiling the ECN marker"
	require_tool bpftool "reading the ECN marker's counters"
}

@test "fabric: up builds the default shape, down removes every namespace, also after a half-failed up" {
	local links_before
	links_before=$(ip -o link | wc -l)
	run fab up
	assert_success
	assert_output --partial "2 spines, 2 leaves, 4 hosts per leaf"
	[[ $(namespaces_of "$P" | wc -l) -eq 12 ]] || fail "expected 12 namespaces: $(namespaces_of "$P")"
	run fab hosts
	assert_success
	assert_equal "$(echo "$output" | tr '\n' ' ')" \
		"${P}h1_1 ${P}h1_2 ${P}h1_3 ${P}h1_4 ${P}h2_1 ${P}h2_2 ${P}h2_3 ${P}h2_4 "
	run fab addr h2_3
	assert_output 198.18.2.3
	run fab addr "${P}h1_4"
	assert_output 198.18.1.4
	# Interface names never carry the prefix, so they stay short.
	run ip -n "${P}l1" -o link show
	assert_equal "$(echo "$output" | awk -F': ' '{ sub(/@.*/, "", $2); printf "%s ", $2 }')" "lo h1 h2 h3 h4 s1 s2 "
	# A second up of the same prefix is refused and leaves the first alone.
	run -3 fab up
	assert_output --partial "already up"
	[[ $(namespaces_of "$P" | wc -l) -eq 12 ]]
	assert_equal "$(ip -o link | wc -l)" "$links_before"

	run fab down
	assert_success
	assert_equal "$(namespaces_of "$P")" ""
	run fab down
	assert_success
	assert_equal "$(ip -o link | wc -l)" "$links_before"

	# Namespaces left by an up that was killed (no state): down finds them.
	ip netns add "${P}l1"
	ip netns add "${P}h1_2"
	ip netns add "${P}s7"
	run fab down
	assert_success
	assert_equal "$(namespaces_of "$P")" ""

	# An up that fails half way (here: tc fails after a few qdiscs) removes what it built.
	mkdir "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/tc" <<-EOF
		#!/bin/sh
		n=\$(cat "$BATS_TEST_TMPDIR/tc-calls" 2>/dev/null || echo 0)
		echo \$((n + 1)) >"$BATS_TEST_TMPDIR/tc-calls"
		[ "\$n" -lt 5 ] || { echo "tc: injected failure" >&2; exit 1; }
		exec $(command -v tc) "\$@"
	EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/tc"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run -3 fab up
	assert_output --partial "injected failure"
	assert_output --partial "up failed; removing what it built"
	assert_equal "$(namespaces_of "$P")" ""
}

@test "fabric: two fabrics with different prefixes coexist; usage errors exit 2" {
	P2=fbt$$u${BATS_TEST_NUMBER}-
	run fab up --spines 1 --leaves 2 --hosts 1
	assert_success
	run "$FABRIC" --prefix "$P2" up --spines 1 --leaves 2 --hosts 1
	assert_success
	run fab exec h1_1 ping -c 1 -W 2 198.18.2.1
	assert_success
	"$FABRIC" --prefix "$P2" down
	assert_equal "$(namespaces_of "$P2")" ""
	run fab exec h1_1 ping -c 1 -W 2 198.18.2.1
	assert_success

	run -2 fab up --rate fast
	assert_output --partial "rate 'fast'"
	run -2 fab up --ecn-threshold 999999999
	assert_output --partial "below the queue limit"
	run -2 "$FABRIC" --prefix 'bad/prefix' down
	run -2 fab addr h9_9
	assert_output --partial "no host 'h9_9'"
}

@test "fabric: every host reaches every other host, across leaves and under one leaf" {
	run fab up
	assert_success
	local hosts=() addrs=() h
	mapfile -t hosts < <(fab hosts)
	for h in "${hosts[@]}"; do addrs+=("$(fab addr "$h")"); done
	for h in "${hosts[@]}"; do
		run fab exec "$h" sh -c 'for a; do ping -c 1 -W 2 -q "$a" >/dev/null || echo "unreachable: $a"; done' \
			sh "${addrs[@]}"
		assert_success
		[[ -z $output ]] || fail "from $h: $output"
	done
}

@test "fabric: ECMP spreads flows with distinct UDP source ports over both spines; one flow keeps to one spine" {
	run fab up --rate 100mbit
	assert_success
	sink h2_1 12
	local s1 s2 d1 d2
	s1=$(spine_tx s1 2) s2=$(spine_tx s2 2)
	run fab exec h1_1 python3 "$UDPFLOW" send --dst 198.18.2.1 --size 200 \
		--sports 40000-40063 --count 6400 --rate 20e6
	assert_success
	d1=$(($(spine_tx s1 2) - s1)) d2=$(($(spine_tx s2 2) - s2))
	echo "# 64 flows, 6400 packets: spine 1 carried $d1, spine 2 $d2" >&3
	((d1 + d2 >= 6400)) || fail "only $((d1 + d2)) of 6400 packets crossed the spines"
	((d1 >= 1600 && d2 >= 1600)) || fail "uneven split: spine 1 $d1, spine 2 $d2 (want >= 25% each)"

	local port
	for port in 40000 40001 40002; do
		s1=$(spine_tx s1 2) s2=$(spine_tx s2 2)
		run fab exec h1_1 python3 "$UDPFLOW" send --dst 198.18.2.1 --size 200 \
			--sports "$port" --count 2000 --rate 20e6
		assert_success
		d1=$(($(spine_tx s1 2) - s1)) d2=$(($(spine_tx s2 2) - s2))
		echo "# one flow from port $port: spine 1 $d1, spine 2 $d2" >&3
		if ! ((d1 >= 2000 && d2 < 20 || d2 >= 2000 && d1 < 20)); then
			fail "one flow was split: spine 1 $d1, spine 2 $d2"
		fi
	done
}

@test "fabric: tbf holds a host link and an overloaded downlink to the configured rate (never above; within 20% below, python senders)" {
	run fab up --rate 200mbit
	assert_success
	local rate
	sink h2_1 8
	# One sender: its own uplink's tbf paces it (it blocks, never drops).
	send_bg h1_1 --dst 198.18.2.1 --size 1400 --seconds 3.5 --gso 8
	sleep 1
	rate=$(rate_over l2 h1 2)
	echo "# one sender: downlink carried $((rate / 1000000)) Mb/s of 200" >&3
	# Never above the rate; below it only as far as a python sender on a
	# busy 2-core machine falls short of 200 Mb/s.
	((rate <= 210000000)) || fail "the link carried $rate b/s, above its 200 Mb/s"
	within_percent "$rate" 200000000 20
	wait "${BG_PIDS[-1]}"
	# Two senders into one receiver: the downlink's tbf is the bottleneck and drops.
	# GSO bursts keep python's per-packet cost from being the limit on a busy CPU.
	send_bg h1_2 --dst 198.18.2.1 --size 1400 --seconds 3.5 --gso 8
	send_bg h2_2 --dst 198.18.2.1 --size 1400 --seconds 3.5 --gso 8
	sleep 1
	rate=$(rate_over l2 h1 2)
	echo "# two senders: downlink carried $((rate / 1000000)) Mb/s of 200" >&3
	((rate <= 210000000)) || fail "the downlink carried $rate b/s, above its 200 Mb/s"
	within_percent "$rate" 200000000 20
	local drops
	drops=$(fab stats | awk '$1 == "l2" && $2 == "h1" { print $8 }')
	((drops > 0)) || fail "the overloaded downlink dropped nothing"
}

@test "fabric: UDP GSO bursts cross the fabric as single frames, none lost" {
	# A 64 kB burst may reach the downlink faster than 200 Mb/s over the
	# 400 Mb/s spine links: a queue deep enough for it, so only framing counts.
	run fab up --rate 200mbit --queue 1000000
	assert_success
	sink h2_1 10
	local rx0 in0 rx in
	rx0=$(link_counter h2_1 eth0 rx_packets)
	in0=$(fab counter h2_1 Ip:InReceives)
	# 46 datagrams of 1400 bytes per sendto, paced below the link rate.
	run fab exec h1_1 python3 "$UDPFLOW" send --dst 198.18.2.1 --size 1400 --gso 46 \
		--count 4600 --rate 100e6
	assert_success
	assert_output --partial '"datagrams": 4600'
	sleep 0.3
	rx=$(($(link_counter h2_1 eth0 rx_packets) - rx0))
	in=$(($(fab counter h2_1 Ip:InReceives) - in0))
	echo "# 4600 datagrams in 100 GSO sends: receiver saw $rx frames, $in IP packets" >&3
	# Each frame is one skb on the veth: a GSO skb crossing whole would count once.
	((rx >= 4600 && rx < 4650)) || fail "the receiver's link saw $rx frames for 4600 datagrams"
	((in >= 4600 && in < 4650)) || fail "the receiver got $in IP packets for 4600 datagrams"
}

# overload_receiver: two ECT(0) senders, on both leaves, into h2_1 for 3 s
# (a sink must be running there).
overload_receiver() {
	send_bg h1_2 --dst 198.18.2.1 --size 1000 --tos 2 --seconds 3 --gso 8
	send_bg h2_2 --dst 198.18.2.1 --size 1000 --tos 2 --seconds 3 --gso 8
	wait "${BG_PIDS[@]: -2}"
}

@test "fabric: with the ECN marker, an overloaded downlink marks CE and the receiver counts it" {
	require_marker_tools
	run fab up --rate 100mbit --ecn-threshold 15000
	assert_success
	assert_output --partial "above 15000 bytes"
	# Below the link rate the queue stays short: (almost) no marks.  A busy
	# CPU can stall forwarding for a few ms and let the queue build now and
	# then, so a few marks are tolerated, not a share of the flow.
	sink h2_1 8
	run fab exec h1_2 python3 "$UDPFLOW" send --dst 198.18.2.1 --size 1000 --tos 2 \
		--seconds 1 --rate 50e6
	assert_success
	local base_ce base_ect0
	base_ce=$(fab counter h2_1 InCEPkts) base_ect0=$(fab counter h2_1 InECT0Pkts)
	((base_ect0 > 3000)) || fail "the paced ECT(0) flow did not arrive"
	((base_ce * 20 <= base_ect0)) || fail "a flow below the link rate got $base_ce CE of $((base_ce + base_ect0))"
	overload_receiver
	local ce ect0 marks
	ce=$(fab counter h2_1 InCEPkts)
	ect0=$(fab counter h2_1 InECT0Pkts)
	marks=$(fab stats | awk '$1 == "l2" && $2 == "h1" { print $9 }')
	echo "# receiver: $ce CE, $ect0 ECT(0) packets; the marker counted $marks marks" >&3
	((ce > 1000)) || fail "the receiver counted only $ce CE packets"
	((marks >= ce)) || fail "the marker counted $marks marks, fewer than the $ce CE packets received"
	# Only the overloaded downlink marks.
	run fab stats
	assert_success
	local other
	other=$(echo "$output" | awk '$1 ~ /^l/ && $2 ~ /^h/ && !($1 == "l2" && $2 == "h1") { n += $9 } END { print n + 0 }')
	assert_equal "$other" 0
}

@test "fabric: without the marker the same overload reaches the receiver with no CE at all" {
	run fab up --rate 100mbit
	assert_success
	assert_output --partial "ECN marking off"
	sink h2_1 6
	overload_receiver
	local ce ect0
	ce=$(fab counter h2_1 InCEPkts)
	ect0=$(fab counter h2_1 InECT0Pkts)
	echo "# receiver: $ce CE, $ect0 ECT(0) packets" >&3
	((ect0 > 1000)) || fail "only $ect0 ECT(0) packets arrived; the senders did not run"
	assert_equal "$ce" 0
	run fab stats
	assert_success
	local marked
	marked=$(echo "$output" | awk 'NR > 1 && $9 != "-"' | wc -l)
	assert_equal "$marked" 0
}
