#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit top: batch text and NDJSON on the fixture trees of
# tests/fixtures/top (values, rates between two samples, saturated and reset
# counters, devices appearing and disappearing), -n, the device filter,
# errors and their exit statuses, the message when there is nothing to show,
# host ECN counters moving on real CE-marked traffic between two network
# namespaces (root), ethtool statistics of a veth (root), and the live screen
# driven in tmux (keys, resize, terminal restored on q and on Ctrl-C).

bats_require_minimum_version 1.5.0

load test_helper

setup() {
	setup_rdmakit
	FX=$RDMAKIT_ROOT/tests/fixtures/top
	S1=(--sysfs-root "$FX/sample1/sys" --proc-root "$FX/sample1/proc")
	NS_TX='' NS_RX='' TMUX_SOCK=''
}

teardown() {
	[[ -n $NS_TX ]] && ip netns del "$NS_TX" 2>/dev/null
	[[ -n $NS_RX ]] && ip netns del "$NS_RX" 2>/dev/null
	[[ -n $TMUX_SOCK ]] && tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
	true
}

# --- batch text ------------------------------------------------------------------

@test "batch: the table shows every fixture port with state, link and host ECN" {
	run --separate-stderr "$RDMAKIT" top -b -n 1 -d 0.05 "${S1[@]}"
	assert_success
	assert_line --index 0 --regexp '^rdmakit top - .* - interval 0\.[0-9]+ s - rates per second$'
	assert_line --regexp '^ port +netdev +state +link +rxGb/s +txGb/s '
	assert_line --regexp '^ mlx5_0/1 +ens1f0np0 +ACTIVE +100G +0\.00 +0\.00 '
	assert_line --regexp '^ mlx5_1/1 +ens1f1np1 +DOWN +25G '
	assert_line --regexp '^ rxe0/1 +enp0s8 +ACTIVE +10G +- +- '
	assert_line --regexp '^ irdma0/1 +ens2f0 +ACTIVE +100G '
	assert_line --regexp '^ mlx4_0/1 +- +ACTIVE +56G +0\.00 +sat '
	assert_line --regexp '^ rxe1/1 '
	assert_line --regexp "^ host ECN \\(.*/sample1/proc/net/netstat IpExt\\): InCEPkts 0/s  InECT0Pkts 0/s  InECT1Pkts 0/s  InNoECTPkts 0/s$"
	refute_output --partial 'no RDMA devices'
}

@test "batch -t -v: totals and every counter, names verbatim, without lifespan or N/A" {
	run --separate-stderr "$RDMAKIT" top -b -t -v -n 1 -d 0.05 "${S1[@]}"
	assert_success
	assert_line --index 0 --regexp ' - totals$'
	assert_line --regexp '^ port +netdev +state +link +rx_B +tx_B +rx_pkts +tx_pkts '
	# mlx5_0: ecn 91.2k, cnp_tx 45.6k, cnp_rx 48.2k, oos 210, seqerr 37+5
	assert_line --regexp '^ mlx5_0/1 .* 91\.2k +45\.6k +48\.2k +210 +42 +2 +0 *$'
	assert_line ' mlx5_0/1: every counter (source, value, rate/s)'
	assert_line --regexp '^  np_cnp_sent +hw_counters +45617 *$'
	assert_line --regexp '^  port_xmit_data +counters +1234567890123 *$'
	assert_line --regexp '^  Nak Sequence Error +hw_counters +11 *$'
	assert_line --regexp '^  RNR received +hw_counters +9 *$'
	assert_line --regexp '^  out_of_buffer +device hw_counters +1200 *$'
	assert_line --regexp '^  InCEPkts|^ host ECN .*InCEPkts 1234 '
	refute_output --partial 'lifespan'
	refute_output --partial 'N/A'
	# -v without -b on a terminal-less run is batch anyway; -v alone implies -b.
	run --separate-stderr "$RDMAKIT" top -v -n 1 -d 0.05 "${S1[@]}" rxe0
	assert_success
	assert_line --regexp '^  sent_pkts +hw_counters +1200345 +0 *$'
}

@test "-n N prints N intervals, text and JSON; without a terminal the screen falls back to text" {
	run --separate-stderr "$RDMAKIT" top -b -n 3 -d 0.02 "${S1[@]}"
	assert_success
	[[ $(grep -c '^rdmakit top - ' <<<"$output") -eq 3 ]]
	run --separate-stderr "$RDMAKIT" top --json -n 4 -d 0.02 "${S1[@]}"
	assert_success
	assert_equal "${#lines[@]}" 4
	run json_eval 'print(len(d["ports"]))'
	# 'run' captures stdout: not a terminal, so text, as with -b.
	run --separate-stderr "$RDMAKIT" top -n 2 -d 0.02 "${S1[@]}"
	assert_success
	[[ $(grep -c '^rdmakit top - ' <<<"$output") -eq 2 ]]
}

# --- JSON and rates ---------------------------------------------------------------

# A sysfs/proc tree that is sample1 at the first sample and sample2 from
# about half a second later on (one directory symlink, renamed over), well
# before the second sample (-d 1.5).
swap_samples_in_background() {
	CUR=$BATS_TEST_TMPDIR/cur
	ln -s "$FX/sample1" "$CUR"
	(sleep 0.5 && ln -s "$FX/sample2" "$CUR.new" && mv -Tf "$CUR.new" "$CUR") &
}

# replayed_json [DEVICE...]: one --json sample of sample2 taken 1.5 s after
# sample1, with the fixture's recorded netlink answers; PORTS_PY starts a
# json_eval on it (dt, ports by device, close).
replayed_json() {
	swap_samples_in_background
	RDMAKIT_NETLINK_REPLAY=$CUR/netlink run --separate-stderr "$RDMAKIT" top --json -n 1 -d 1.5 \
		--sysfs-root "$CUR/sys" --proc-root "$CUR/proc" "$@"
	wait
	assert_success
}
PORTS_PY='
dt = d["interval_s"]
ports = {p["device"]: p for p in d["ports"]}
def close(a, b): return abs(a - b) <= 1e-6 * max(1, abs(b))'

@test "--json: rates between two samples, saturated and reset counters, ports new and gone" {
	swap_samples_in_background
	run --separate-stderr "$RDMAKIT" top --json -n 2 -d 1.5 --sysfs-root "$CUR/sys" --proc-root "$CUR/proc"
	wait
	assert_success
	assert_equal "${#lines[@]}" 2
	json_lines=("${lines[@]}")
	output=${json_lines[0]}
	run json_eval '
import math
dt = d["interval_s"]
assert 1.4 < dt < 2.5, dt
assert set(d) >= {"time", "interval_s", "ports", "engines", "netstat", "gone"}, sorted(d)
assert d["engines"] == [] and d["gone"] == ["rxe1/1"], d["gone"]
assert d["rdma_devices"] == 6
ports = {(p["device"], p["port"]): p for p in d["ports"]}
assert sorted(k[0] for k in ports) == ["bnxt_re0", "irdma0", "mlx4_0", "mlx5_0", "mlx5_1", "rxe0"]
def close(a, b): return abs(a - b) <= 1e-6 * max(1, abs(b))
m = ports[("mlx5_0", 1)]
assert set(m) >= {"device", "port", "netdev", "state", "rx_gbps", "tx_gbps", "rx_mpps",
                  "tx_mpps", "counters", "pfc"}
assert m["netdev"] == "ens1f0np0" and m["state"] == "ACTIVE" and m["new"] is False
# port_xmit_data counts 4-byte words: +2.5e9 words = 10 GB = 80 Gbit.
assert close(m["tx_gbps"], 80 / dt) and close(m["rx_gbps"], 40 / dt), (m["tx_gbps"], dt)
assert close(m["tx_mpps"], 2.44 / dt) and close(m["rx_mpps"], 1.22 / dt)
c = m["counters"]
assert c["port_xmit_data"]["value"] == 1234567890123 + 2500000000
assert close(c["port_xmit_data"]["rate"], 2500000000 / dt)
assert c["np_cnp_sent"] == {"value": 45617 + 750, "rate": c["np_cnp_sent"]["rate"]}
assert close(c["np_cnp_sent"]["rate"], 750 / dt)
assert close(c["rp_cnp_handled"]["rate"], 320 / dt)
assert close(c["np_ecn_marked_roce_packets"]["rate"], 1500 / dt)
assert close(c["out_of_sequence"]["rate"], 12 / dt)
assert close(c["local_ack_timeout_err"]["rate"], 1 / dt)
assert "lifespan" not in c
s = m["semantic"]
assert close(s["ecn_marked"]["rate"], 1500 / dt) and close(s["cnp_sent"]["rate"], 750 / dt)
assert close(s["seq_err"]["rate"], 3 / dt) and s["seq_err"]["value"] == 40 + 5
assert m["pfc"] is None and m["ethtool"] == {}
# mlx4: 32-bit port_xmit_data stuck at 2^32-1; symbol_error went 500 -> 3.
x = ports[("mlx4_0", 1)]["counters"]
assert x["port_xmit_data"] == {"value": 4294967295, "rate": None, "saturated": True}
assert x["symbol_error"] == {"value": 3, "rate": 0.0, "reset": True}
assert close(x["port_rcv_data"]["rate"], 1e8 / dt)
assert ports[("mlx4_0", 1)]["tx_gbps"] is None
# irdma: names with spaces, verbatim; N/A files absent.
i = ports[("irdma0", 1)]
assert close(i["counters"]["Nak Sequence Error"]["rate"], 4 / dt)
assert "port_xmit_data" not in i["counters"]
assert close(i["rx_gbps"], 16 / dt) and close(i["semantic"]["ecn_marked"]["rate"], 100 / dt)
# mlx5 switchdev: device-level hw_counters.
assert close(ports[("mlx5_1", 1)]["counters"]["out_of_buffer"]["rate"], 40 / dt)
# rxe: packets, no bytes.
r = ports[("rxe0", 1)]
assert r["rx_gbps"] is None and close(r["tx_mpps"], 0.05 / dt)
# bnxt_re0 appeared: values, no rates yet.
b = ports[("bnxt_re0", 1)]
assert b["new"] is True and b["counters"]["tx_bytes"] == {"value": 555000, "rate": None}
assert b["tx_gbps"] is None and b["tx_bytes"] == 555000
n = d["netstat"]
assert n["InCEPkts"]["value"] == 1734 and close(n["InCEPkts"]["rate"], 500 / dt)
assert close(n["InECT0Pkts"]["rate"], 25000 / dt) and n["InECT1Pkts"]["rate"] == 0
print("ok")'
	assert_output ok
	# The second interval: sample2 again, so every rate is 0; nothing gone.
	output=${json_lines[1]}
	run json_eval '
assert d["gone"] == []
for p in d["ports"]:
    assert p["new"] is False
    for name, c in p["counters"].items():
        assert c["rate"] in (0, None), (p["device"], name, c)
    assert p["tx_gbps"] in (0, None)
print("ok")'
	assert_output ok
}

@test "--json: DCB PFC per priority and ethtool pause statistics from recorded netlink replies" {
	replayed_json
	run json_eval "$PORTS_PY"'
m = ports["mlx5_0"]
assert m["dcb"]["pfc_cap"] == 8 and m["dcb"]["pfc_enabled"] == [3], m["dcb"]
dc = m["dcb"]["counters"]
assert sorted(dc) == sorted([f"requests[{i}]" for i in range(8)] + [f"indications[{i}]" for i in range(8)])
assert dc["requests[3]"]["value"] == 121500 and close(dc["requests[3]"]["rate"], 1500 / dt)
assert dc["indications[3]"]["value"] == 45600 and close(dc["indications[3]"]["rate"], 600 / dt)
# PFC from DCB: requests are sent (tx), indications received (rx).
f = m["pfc"]
assert f["source"] == "dcb" and f["tx_pause"][3] == 121500 and f["rx_pause"][3] == 45600, f
assert close(f["tx_pause_rate"][3], 1500 / dt) and f["tx_pause_rate"][0] == 0
assert m["pause"] == {"autoneg": False, "rx": False, "tx": False, "counters": {
    "rx_pause_frames": {"value": 0, "rate": 0.0}, "tx_pause_frames": {"value": 0, "rate": 0.0}}}
assert "dcb_error" not in m and "pause_error" not in m
# ice under irdma: PFC on 3 and 4; pause settings without statistics.
i = ports["irdma0"]
assert i["dcb"]["pfc_enabled"] == [3, 4] and i["pfc"]["tx_pause"][3:5] == [9250, 100]
assert close(i["pfc"]["rx_pause_rate"][3], 40 / dt)
assert i["pause"] == {"autoneg": True, "rx": True, "tx": True, "counters": {}}, i["pause"]
# virtio under rxe: neither, and why.
r = ports["rxe0"]
assert r["dcb"] is None and r["pause"] is None and r["pfc"] is None
assert r["dcb_error"] == "enp0s8: DCB: Operation not supported", r["dcb_error"]
assert r["pause_error"] == "enp0s8: pause statistics: Operation not supported"
# bnxt_re0 appeared: values without rates.
b = ports["bnxt_re0"]
assert b["pause"]["counters"]["tx_pause_frames"] == {"value": 12, "rate": None}
assert b["pfc"]["tx_pause"][3] == 31 and b["pfc"]["tx_pause_rate"][3] is None
# No netdev (InfiniBand mlx4): nothing asked.
x = ports["mlx4_0"]
assert x["dcb"] is None and "dcb_error" not in x
print("ok")'
	assert_output ok
}

@test "--json and -v: the RDMA netlink's port, optional and QP counters win over sysfs hw_counters" {
	replayed_json mlx5_0 rxe0 irdma0
	run json_eval "$PORTS_PY"'
m = ports["mlx5_0"]
assert m["hw_counters_source"] == "netlink" and "netlink_error" not in m, m.get("netlink_error")
c = m["counters"]
# The netlink value (ahead of sysfs by 1000), with its rate.
assert c["rx_write_requests"]["value"] == 88123456 + 1220000 + 1000, c["rx_write_requests"]
assert close(c["rx_write_requests"]["rate"], 1220000 / dt)
assert c["cc_rx_ce_pkts"] == {"value": 92500, "rate": c["cc_rx_ce_pkts"]["rate"], "optional": True}
assert "optional" not in c["np_ecn_marked_roce_packets"]
assert m["semantic"]["ecn_marked"]["value"] == 91234 + 1500, m["semantic"]["ecn_marked"]
q = {x["id"]: x for x in m["qp_counters"]}
assert sorted(q) == [3, 4] and q[3]["mode"] == "auto" and q[3]["qpns"] == [0x11a, 0x11b] and q[3]["qps_bound"] == 2
assert q[3]["counters"]["rx_write_requests"]["value"] == 60900000
assert close(q[3]["counters"]["rx_write_requests"]["rate"], 900000 / dt)
assert not any("/" in k for k in c), [k for k in c if "/" in k]
r = ports["rxe0"]
assert r["hw_counters_source"] == "netlink" and r["qp_counters"] == []
assert r["counters"]["sent_pkts"]["value"] == 1200345 + 50000 + 30
i = ports["irdma0"]
assert i["hw_counters_source"] == "sysfs" and i["qp_counters"] is None and "netlink_error" not in i
print("ok")'
	assert_output ok
	RDMAKIT_NETLINK_REPLAY=$FX/sample1/netlink run --separate-stderr "$RDMAKIT" top -b -n 1 -v \
		"${S1[@]}" mlx5_0
	assert_success
	assert_line --regexp '^  rx_write_requests +netlink +88124456 '
	assert_line --regexp '^  cc_rx_ce_pkts +netlink optional +91000 '
	assert_line --regexp '^  3/rx_write_requests +netlink qp +60000000 '
	assert_line '  (QP counter 3, auto mode: 2 QPs 0x11a 0x11b)'
	assert_line '  (QP counter 4, auto mode: 1 QP 0x2c0)'
	refute_line --regexp ' hw_counters +[0-9]'
	# A broken recorded answer: sysfs, and why.
	cp -r "$FX/sample1/netlink" "$BATS_TEST_TMPDIR/nl"
	printf 'garbage' >"$BATS_TEST_TMPDIR/nl/mlx5_0.1.nldev"
	RDMAKIT_NETLINK_REPLAY=$BATS_TEST_TMPDIR/nl run --separate-stderr "$RDMAKIT" top -b -n 1 -v \
		"${S1[@]}" mlx5_0
	assert_success
	assert_line --regexp '^  rx_write_requests +hw_counters +88123456 '
	assert_line '  (no RDMA netlink statistics, sysfs read: mlx5_0/1: RDMA netlink statistics: malformed netlink reply)'
}

@test "batch: the pause column sums PFC priorities from DCB; -v says why DCB or pause is missing" {
	RDMAKIT_NETLINK_REPLAY=$FX/sample1/netlink run --separate-stderr "$RDMAKIT" top -b -n 1 -t -v \
		"${S1[@]}" mlx5_0 rxe0 irdma0
	assert_success
	assert_line --regexp '^ mlx5_0/1 +ens1f0np0 +ACTIVE .* 45k/120k '
	assert_line --regexp '^ irdma0/1 +ens2f0 .* 700/9.1k '
	assert_line --regexp '^ rxe0/1 +enp0s8 .* - +'
	assert_line --regexp '^  requests\[3\] +dcb +120000'
	assert_line '  (DCB: pfc_cap 8, PFC enabled on priorities 0x08)'
	assert_line '  (pause: autoneg off, rx off, tx off)'
	assert_line '  (no DCB PFC: enp0s8: DCB: Operation not supported)'
	assert_line '  (no pause statistics: enp0s8: pause statistics: Operation not supported)'
	# The kernel may itself answer ENOMEM: that port's DCB is missing, said
	# why; the sample goes on.
	cp -r "$FX/sample1/netlink" "$BATS_TEST_TMPDIR/nl"
	python3 -c 'import struct, sys
hdr = struct.pack("<IHHII", 16, 78, 1, 7, 0)
open(sys.argv[1], "wb").write(struct.pack("<IHHIIi", 36, 2, 0, 7, 0, -12) + hdr)' \
		"$BATS_TEST_TMPDIR/nl/ens1f0np0.dcb"
	RDMAKIT_NETLINK_REPLAY=$BATS_TEST_TMPDIR/nl run --separate-stderr "$RDMAKIT" top -b -n 1 -v \
		"${S1[@]}" mlx5_0
	assert_success
	assert_line '  (no DCB PFC: ens1f0np0: DCB: Cannot allocate memory)'
	assert_line '  (pause: autoneg off, rx off, tx off)'
	# A replay directory that is not one: exit 3 naming it and the fix.
	RDMAKIT_NETLINK_REPLAY=$FX/make-fixtures.py run --separate-stderr "$RDMAKIT" top -b -n 1 "${S1[@]}"
	assert_one_line_error 3 'RDMAKIT_NETLINK_REPLAY='
	[[ $stderr == *'not a directory; unset it'* ]] || fail "no fix named: $stderr"
}

@test "DEVICE and DEVICE/PORT operands filter the ports" {
	run --separate-stderr "$RDMAKIT" top --json -n 1 -d 0.02 "${S1[@]}" mlx5_0 rxe0/1
	assert_success
	run json_eval 'print(" ".join("%s/%s" % (p["device"], p["port"]) for p in d["ports"]))'
	assert_output 'mlx5_0/1 rxe0/1'
}

# --- errors ------------------------------------------------------------------------

@test "usage errors exit 2 naming the option" {
	run --separate-stderr "$RDMAKIT" top -n 0
	assert_one_line_error 2 '-n/--iterations'
	run --separate-stderr "$RDMAKIT" top -d 0
	assert_one_line_error 2 '-d/--delay'
	run --separate-stderr "$RDMAKIT" top --delay soon
	assert_one_line_error 2 "'soon'"
	run --separate-stderr "$RDMAKIT" top -i ''
	assert_one_line_error 2 '-i/--interface'
	run --separate-stderr "$RDMAKIT" top --bogus
	assert_one_line_error 2 "'--bogus'"
	run --separate-stderr "$RDMAKIT" top /mlx5_0
	assert_one_line_error 2 "'/mlx5_0'"
}

@test "runtime errors exit 3 naming what is missing" {
	run --separate-stderr "$RDMAKIT" top -b -n 1 "${S1[@]}" mlx9_9
	assert_one_line_error 3 "no RDMA device 'mlx9_9' under $FX/sample1/sys/class/infiniband"
	run --separate-stderr "$RDMAKIT" top -b -n 1 "${S1[@]}" mlx5_0/7
	assert_one_line_error 3 "no RDMA device port 'mlx5_0/7'"
	run --separate-stderr "$RDMAKIT" top -b -n 1 --sysfs-root /nonexistent/sys
	assert_one_line_error 3 '--sysfs-root /nonexistent/sys: No such file or directory'
	run --separate-stderr "$RDMAKIT" top -b -n 1 --proc-root "$FX/make-fixtures.py"
	assert_one_line_error 3 'not a directory'
	run --separate-stderr "$RDMAKIT" top -b -n 1 "${S1[@]}" -i rdmakit-none0
	assert_one_line_error 3 "no network interface 'rdmakit-none0'"
}

# --- nothing to show ------------------------------------------------------------------

@test "no RDMA devices: says what it looked for, and still shows host ECN" {
	mkdir -p "$BATS_TEST_TMPDIR/sys/class"
	run --separate-stderr "$RDMAKIT" top -b -n 1 -d 0.02 --sysfs-root "$BATS_TEST_TMPDIR/sys" \
		--proc-root "$FX/sample1/proc"
	assert_success
	assert_line --index 0 "no RDMA devices under $BATS_TEST_TMPDIR/sys/class/infiniband (no RDMA driver loaded); no soft-engine processes (no rdmakit-* segments in /dev/shm)"
	assert_line --regexp '^ host ECN .*InCEPkts 0/s'
	# JSON: the message on stderr, stdout stays NDJSON.
	run --separate-stderr "$RDMAKIT" top --json -n 1 -d 0.02 --sysfs-root "$BATS_TEST_TMPDIR/sys" \
		--proc-root "$FX/sample1/proc"
	assert_success
	[[ $stderr == *"no RDMA devices under $BATS_TEST_TMPDIR/sys/class/infiniband"* ]]
	run json_eval 'print(d["ports"], d["engines"], d["netstat"]["InCEPkts"]["value"])'
	assert_output '[] [] 1234'
}

@test "this host: no RDMA devices under /sys/class/infiniband is said, not an empty screen" {
	compgen -G '/sys/class/infiniband/*' >/dev/null && skip "this host has RDMA devices"
	run --separate-stderr "$RDMAKIT" top -b -n 1 -d 0.02
	assert_success
	assert_line --index 0 --partial 'no RDMA devices under /sys/class/infiniband'
	assert_line --partial 'no soft-engine processes'
	assert_line --regexp '^ host ECN \(/proc/net/netstat IpExt\): InCEPkts [0-9.kMG]+/s'
}

# --- real traffic: host ECN and ethtool on a veth (root) -----------------------------

@test "host ECN: InCEPkts rises with CE-marked ECT(0) traffic between namespaces; veth ethtool" {
	require_root "network namespaces, veth and nftables"
	require_tool ip "network namespaces"
	require_tool nft "marking packets CE"
	NS_TX=rdmakit-toptx-$$
	NS_RX=rdmakit-toprx-$$
	local vtx=rktt$$ vrx=rktr$$
	ip netns add "$NS_TX"
	ip netns add "$NS_RX"
	ip link add "$vtx" netns "$NS_TX" type veth peer name "$vrx" netns "$NS_RX"
	ip -n "$NS_TX" addr add 198.18.0.1/24 dev "$vtx"
	ip -n "$NS_RX" addr add 198.18.0.2/24 dev "$vrx"
	ip -n "$NS_TX" link set "$vtx" up
	ip -n "$NS_RX" link set "$vrx" up
	# The receiver counts ECN at IP input, before its own netfilter hooks:
	# mark CE on the sender's way out (kernel-here.md: nftables ip ecn set ce).
	ip netns exec "$NS_TX" nft add table ip rdmakit
	ip netns exec "$NS_TX" nft add chain ip rdmakit out '{ type filter hook output priority 0; }'
	ip netns exec "$NS_TX" nft add rule ip rdmakit out udp dport 4791 ip ecn set ce
	send='
import socket, sys, time
port, count, gap = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 2)   # ECT(0)
for i in range(count):
    s.sendto(b"x" * 64, ("198.18.0.2", port))
    time.sleep(gap)'
	out=$BATS_TEST_TMPDIR/top.json
	ip netns exec "$NS_RX" "$RDMAKIT" top --json -n 2 -d 1 --proc-root /proc -i "$vrx" >"$out" &
	top_pid=$!
	# 250 CE-marked datagrams over ~2.5 s, while top samples.
	ip netns exec "$NS_TX" python3 -c "$send" 4791 250 0.01
	wait "$top_pid"
	# Then 40 ECT(0) datagrams to a port the rule leaves alone.
	ip netns exec "$NS_TX" python3 -c "$send" 9 40 0
	run --separate-stderr ip netns exec "$NS_RX" "$RDMAKIT" top --json -n 1 -d 0.05 \
		--proc-root /proc -i "$vrx"
	assert_success
	final=$output
	run python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
final = json.loads(sys.argv[2])
assert len(lines) == 2, len(lines)
ce = [l["netstat"]["InCEPkts"] for l in lines]
assert any(c["rate"] > 0 for c in ce), ce
assert ce[1]["value"] > 0
# A fresh namespace counted nothing before: every datagram, exactly.
n = final["netstat"]
assert n["InCEPkts"]["value"] == 250, n
assert n["InECT0Pkts"]["value"] == 40, n
assert n["InNoECTPkts"]["value"] == 0 and n["InECT1Pkts"]["value"] == 0, n
# The veth row: its statistics and its ethtool statistics (veth has peer_ifindex).
p = final["ports"][0]
assert p["device"] is None and p["netdev"] == sys.argv[3], p["netdev"]
assert p["counters"]["rx_packets"]["value"] >= 290, p["counters"]["rx_packets"]
assert "peer_ifindex" in p["ethtool"], sorted(p["ethtool"])
assert any(l["ports"][0]["rx_mpps"] > 0 for l in lines)
# The kernel asked over netlink: veth has neither DCB ops nor pause
# parameters (as dcb pfc show and ethtool -I -a say below).
assert p["dcb"] is None and p["dcb_error"] == f"{sys.argv[3]}: DCB: Operation not supported", p
assert p["pause"] is None, p["pause"]
assert p["pause_error"] == f"{sys.argv[3]}: pause statistics: Operation not supported", p
print("ok")' "$out" "$final" "$vrx"
	assert_output ok
	# iproute2's dcb and ethtool are installed by tests/install-deps.
	run ip netns exec "$NS_RX" dcb pfc show dev "$vrx"
	assert_failure
	assert_output --partial 'Operation not supported'
	run ip netns exec "$NS_RX" ethtool -I -a "$vrx"
	assert_failure
	assert_output --partial 'Operation not supported'
}

# --- the live screen in tmux ---------------------------------------------------------

# tmux on a private server (-L), without the user's configuration.
tm() {
	tmux -L "$TMUX_SOCK" -f /dev/null "$@"
}

# wait_pane TEXT: until the pane shows TEXT (5 s at most); then $pane holds it.
wait_pane() {
	local i
	for ((i = 0; i < 100; i++)); do
		pane=$(tm capture-pane -p -t top)
		[[ $pane == *"$1"* ]] && return 0
		sleep 0.05
	done
	fail "the pane never showed '$1'; it shows:
$pane"
}

# start_screen ARGS...: a shell in an 80x24 tmux pane runs 'rdmakit top ARGS'
# and then prints its exit status.
start_screen() {
	require_tool tmux "driving the live screen"
	TMUX_SOCK=rdmakit-top-$$-$BATS_TEST_NUMBER
	tm new-session -d -s top -x 80 -y 24 "env -i PATH=$PATH TERM=screen LANG=C.UTF-8 bash --norc --noprofile"
	tm set-option -t top status off
	tm send-keys -t top "PS1='$ '; clear; echo shell-ready" Enter
	wait_pane 'shell-ready'
	tm send-keys -t top "${SCREEN_ENV:-} '$RDMAKIT' top $*; echo \"rc=\$?\"" Enter
}

@test "screen: fixture ports at 80x24; d, s, Enter, Esc, h; resize to 100x30; q restores the terminal" {
	start_screen -d 0.2 "${S1[*]}"
	wait_pane 'q quit'
	[[ $(tm display -p -t top '#{alternate_on}') == 1 ]]
	for dev in mlx5_0/1 mlx5_1/1 rxe0/1 rxe1/1 irdma0/1 mlx4_0/1; do
		[[ $pane == *"$dev "* ]] || fail "no $dev on the screen: $pane"
	done
	[[ $pane == *' rdmakit top - '*'rates/s'* ]]
	# Rates from the second sample on: "-" until then.
	wait_pane '6 RDMA devices, 6 ports; host ECN InCEPkts 0/s'
	[[ $pane == *'port     state  rxGb/s txGb/s pause r/t   ecn cnp_tx cnp_rx   oos seqerr   tmo'* ]]
	# No line is wider than the screen.
	while IFS= read -r line; do
		((${#line} <= 80)) || fail "line wider than 80: $line"
	done <<<"$pane"
	# d: totals.
	tm send-keys -t top d
	wait_pane 'rx_B'
	[[ $pane == *' - totals'* ]]
	[[ $pane == *'mlx5_0/1 ACTIVE  3.95T  4.94T'* ]] || fail "no mlx5_0 totals: $pane"
	# s: sort by rx bytes, largest first.
	tm send-keys -t top s
	wait_pane 'sort:rx_B'
	first=$(grep -m1 -oE '^[a-z0-9_]+/1 ' <<<"$pane")
	[[ $first == 'mlx5_0/1 ' ]] || fail "mlx5_0 (the most bytes) is not first: $pane"
	# The selection stays on its port (irdma0/1) when rows move; k to the top.
	tm send-keys -t top k k k k k k
	sleep 0.3
	# Enter: details of the selected port, every counter; PgDn scrolls.
	tm send-keys -t top Enter
	wait_pane 'last minute'
	[[ $pane == *' mlx5_0/1  netdev ens1f0np0  ACTIVE (LinkUp)  Ethernet  100 Gb/s'* ]] ||
		fail "not mlx5_0's details: $pane"
	[[ $pane == *'port_xmit_data'*'pma'*'1234567890123'* ]] || fail "no PMA counters: $pane"
	tm send-keys -t top NPage
	wait_pane 'np_cnp_sent'
	[[ $pane != *lifespan* ]]
	tm send-keys -t top Escape
	wait_pane 'Enter detail'
	tm send-keys -t top h
	wait_pane 'this help; any key closes it'
	tm send-keys -t top x
	wait_pane 'Enter detail'
	# Resize: more columns fit.
	tm resize-window -t top -x 100 -y 30
	wait_pane 'rx_pkts'
	[[ $(tm display -p -t top '#{pane_width}x#{pane_height}') == 100x30 ]]
	while IFS= read -r line; do
		((${#line} <= 100)) || fail "line wider than 100: $line"
	done <<<"$pane"
	# q: the shell is back, the normal screen and cursor restored.
	tm send-keys -t top q
	wait_pane 'rc=0'
	[[ $(tm display -p -t top '#{alternate_on}') == 0 ]]
	[[ $(tm display -p -t top '#{cursor_flag}') == 1 ]]
	[[ $(tm display -p -t top '#{keypad_cursor_flag}') == 0 ]]
	[[ $pane != *'Enter detail'* ]]
}

@test "screen: the detail view shows PFC per enabled priority from DCB and the pause settings" {
	SCREEN_ENV="RDMAKIT_NETLINK_REPLAY=$FX/sample1/netlink" start_screen -d 0.2 "${S1[*]}"
	wait_pane 'Enter detail'
	# Ports with PFC figures: mlx5_0, mlx5_1 and irdma0 (DCB).
	wait_pane '6 RDMA devices, 6 ports (PFC on 3); host ECN'
	tm send-keys -t top d
	wait_pane 'rx_B'
	# Rows by name: irdma0/1, mlx4_0/1, mlx5_0/1, ...
	tm send-keys -t top j j Enter
	wait_pane 'last minute'
	[[ $pane == *' mlx5_0/1  netdev ens1f0np0'* ]] || fail "not mlx5_0's details: $pane"
	[[ $pane == *'PFC pause rx/tx (dcb): prio3 45k/120k  | pause autoneg off rx off tx off'* ]] ||
		fail "no DCB PFC line: $pane"
	tm send-keys -t top Escape
	wait_pane 'Enter detail'
	tm send-keys -t top k k Enter
	wait_pane 'last minute'
	[[ $pane == *'prio3 700/9k prio4 0/100  | pause autoneg on rx on tx on'* ]] ||
		fail "no irdma0 PFC line: $pane"
	tm send-keys -t top q
	wait_pane 'rc=0'
}

@test "screen: Ctrl-C ends it and restores the terminal; -n ends it too" {
	start_screen -d 0.2 "${S1[*]}"
	wait_pane 'q quit'
	tm send-keys -t top C-c
	wait_pane 'rc=0'
	[[ $(tm display -p -t top '#{alternate_on}') == 0 ]]
	[[ $(tm display -p -t top '#{cursor_flag}') == 1 ]]
	tm send-keys -t top "clear; '$RDMAKIT' top -n 2 -d 0.1 ${S1[*]}; echo \"rc2=\$?\"" Enter
	wait_pane 'rc2=0'
	[[ $(tm display -p -t top '#{alternate_on}') == 0 ]]
}

@test "screen: a terminal too small says so" {
	start_screen -d 0.2 "${S1[*]}"
	wait_pane 'q quit'
	tm resize-window -t top -x 30 -y 6
	wait_pane 'terminal too small'
	tm send-keys -t top q
	wait_pane 'rc=0'
}

# --- soft engine counters ------------------------------------------------------------

@test "soft-engine counters published in /dev/shm move during a bw run" {
	# A private address on loopback, so nothing else competes for its 4791.
	"$RDMAKIT" bw --loopback --bind 127.0.0.77 -D 4 -s 4k >/dev/null 2>&1 &
	local bw=$!
	sleep 1
	run "$RDMAKIT" -j top -b -n 2 -d 0.5
	kill "$bw" 2>/dev/null
	wait "$bw" 2>/dev/null
	assert_success
	echo "$output" | tail -1 | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
e = [x for x in d["engines"] if x["name"].endswith("127.0.0.77:4791")]
assert e, d["engines"]
c = e[0]["counters"]
assert c["tx_packets"]["value"] > 0 and c["tx_packets"]["rate"] > 0, c["tx_packets"]
assert c["rx_packets"]["rate"] > 0
qps = {k.split("/")[0] for k in c if k.startswith("qp ")}
assert len(qps) == 2, qps
'
	# When the process is gone, its segment is not shown any more.
	run "$RDMAKIT" -j top -b -n 1
	assert_success
	refute_output --partial "127.0.0.77:4791"
}

@test "screen: a running soft engine shows on the live screen with its counters" {
	"$RDMAKIT" bw --loopback --bind 127.0.0.78 -D 6 -s 4k >/dev/null 2>&1 &
	local bw=$!
	sleep 0.5
	mkdir -p "$BATS_TEST_TMPDIR/nosys"
	start_screen -d 0.3 --sysfs-root "$BATS_TEST_TMPDIR/nosys"
	wait_pane '127.0.0.78:4791 (pid '
	# Rates from the second sample on.
	sleep 1
	pane=$(tm capture-pane -p -t top)
	[[ $pane =~ soft\ 127\.0\.0\.78:4791\ \(pid\ [0-9]+\):\ tx_packets\ [0-9]+/s ]] || fail "$pane"
	tm send-keys -t top d
	wait_pane 'totals'
	[[ $pane =~ 127\.0\.0\.78:4791\ \(pid\ [0-9]+\):\ tx_packets\ [1-9][0-9]* ]] || fail "$pane"
	tm send-keys -t top q
	wait_pane 'rc=0'
	kill "$bw" 2>/dev/null
	wait "$bw" 2>/dev/null
	true
}
