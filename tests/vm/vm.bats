#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The real-stack lab: Linux Soft-RoCE (rdma_rxe) in a qemu guest built from
# this machine's Debian packages (tests/vm/build-image, tests/vm/run).
#
#   lab   one guest, rxe0 on a dummy netdev: ibv_devices, rdmakit devices
#         (its verbs listing against the kernel's own GID table), perftest
#         ib_write_bw and ib_send_lat in guest loopback; with a verbs engine
#         in the build, rdmakit bw/lat --engine verbs for every op.
#   tap   (root) a namespace with a bridge 198.18.0.1/24 and a tap, the guest
#         at 198.18.0.2: the guest's rxe sends RC SENDs and CM MADs to the
#         host, rdmakit capture records them on the bridge, and every ICRC is
#         checked by rdmakit and by tests/vm/icrc-check; tshark and tcpdump
#         are the outside references for the decode and the packet count.
#   interop (root, verbs engine) rdmakit --engine soft on the host against
#         rdmakit --engine verbs on the guest's rxe0, both directions; then
#         with 3% loss each way (nftables on the host), both recovering.
#   perftest (root, verbs engine) rdmakit in perftest's own protocol against
#         Debian's perftest and upstream 6.29 (../shared/peers) on rxe0, both
#         roles, bw and lat, every op, with and without the 6.28+ negotiation;
#         then the host's soft engine against perftest on rxe0 (write, read,
#         send), one of its runs captured and decoded by tshark too.
#
# Each guest boots once, in the first test that needs it; the following
# tests read what it recorded ($BATS_FILE_TMPDIR/NAME/results/*.out|.rc and
# NAME.log, the console).  A TCG boot takes ~10 s here; see README.md.
# Skipped with the reason when qemu, the kernel or a package is missing (CI=true:
# failed), and the tap tests when not root.
#
#   bats --tap tests/vm/vm.bats          RDMAKIT=path/to/rdmakit to test another build

bats_require_minimum_version 1.5.0

load ../test_helper

setup_file() {
	# The suite's own paths (test_helper's setup_rdmakit expects tests/*.bats).
	export VM_DIR=$BATS_TEST_DIRNAME
	local root
	root=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	: "${RDMAKIT:=$root/rdmakit}"
	[[ $RDMAKIT == /* ]] || RDMAKIT=$root/$RDMAKIT
	export RDMAKIT
}

setup() {
	setup_rdmakit
	RDMAKIT_ROOT=$(cd "$VM_DIR/../.." && pwd)
	cd "$RDMAKIT_ROOT" || return 1
	export RDMAKIT_ROOT
	# shellcheck source=tests/vm/lib.sh
	source "$VM_DIR/lib.sh"
	local why
	if why=$(vm_missing); then
		_require_missing "the Soft-RoCE lab cannot run in CI: $why" "Soft-RoCE lab: $why"
	fi
}

# --- helpers --------------------------------------------------------------------

# lab_boot NAME RUN-ARGS...: boots the guest with 'tests/vm/run RUN-ARGS'
# once per file; later calls reuse what it recorded.  Sets LAB (its share)
# and LAB_LOG, and fails unless the guest script exited 0.
lab_boot() {
	local name=$1 rc
	shift
	LAB=$BATS_FILE_TMPDIR/$name
	LAB_LOG=$BATS_FILE_TMPDIR/$name.log
	if [[ ! -f $LAB.status ]]; then
		mkdir -p "$LAB"
		local start=$SECONDS
		rc=0
		"$VM_DIR/run" --share "$LAB" "$@" >"$LAB_LOG" 2>&1 </dev/null || rc=$?
		echo "$rc" >"$LAB.status"
		echo "# lab '$name' booted and ran in $((SECONDS - start)) s (exit $rc)" >&3
	fi
	rc=$(cat "$LAB.status")
	if [[ $rc -ne 0 ]]; then
		fail "the '$name' guest failed (tests/vm/run exit $rc); its console ends with:
$(tail -n 40 "$LAB_LOG")"
		return 1
	fi
}

# result NAME: sets output and status from the guest's record of check NAME.
result() {
	if [[ ! -f $LAB/results/$1.rc ]]; then
		fail "the guest recorded no check '$1' (see $LAB_LOG)"
		return 1
	fi
	output=$(cat "$LAB/results/$1.out")
	status=$(cat "$LAB/results/$1.rc")
	mapfile -t lines <<<"$output"
}

# verbs_engine_built: true when this rdmakit has a verbs engine.  'rdmakit
# -j version' says "engines": {"verbs": true} only where an RDMA device
# exists (not on this host), so otherwise a verbs run decides: a build without
# the engine answers that it is "not available in this build", one with it
# that there is no RDMA device.
verbs_engine_built() {
	local v
	v=$("$RDMAKIT" -j version 2>/dev/null) || return 1
	if python3 -c '
import json, sys
e = json.loads(sys.argv[1])["results"][0].get("engines")
sys.exit(0 if (e.get("verbs") if isinstance(e, dict) else e and "verbs" in e) else 1)' "$v" 2>/dev/null; then
		return 0
	fi
	v=$("$RDMAKIT" bw --engine verbs --loopback -n 5 2>&1)
	[[ $v != *"not available in this build"* && $v != *"unknown engine"* ]]
}

require_verbs_engine() {
	verbs_engine_built || skip "verbs engine not in this build"
}

# The lab guest; with a verbs engine it runs rdmakit's verbs checks too.
boot_lab() {
	if verbs_engine_built; then
		lab_boot lab "$VM_DIR/scripts/lab.sh" --verbs
	else
		lab_boot lab "$VM_DIR/scripts/lab.sh"
	fi
}

boot_tap() {
	require_root "a network namespace with a bridge and a tap"
	require_tool ip "network namespaces"
	lab_boot tap --net tap --host "$VM_DIR/scripts/capture-host.sh" \
		"$VM_DIR/scripts/capture-guest.sh"
}

# capture_json FILE: rdmakit's JSON lines for FILE in $BATS_TEST_TMPDIR/cap.json.
capture_json() {
	run -0 "$RDMAKIT" -j capture -r "$1"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/cap.json"
}

# cap_eval CODE [ARGS]: Python CODE with pkts (packet objects) and summary
# from $BATS_TEST_TMPDIR/cap.json.
cap_eval() {
	python3 -c "
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pkts = [l for l in lines if 'frame' in l]
summary = next((l['summary'] for l in lines if 'summary' in l), None)
$1" "$BATS_TEST_TMPDIR/cap.json" "${@:2}"
}

# cap_eval code (a prefix): every packet's ICRC verified.
ICRC_ALL_OK='
bad = [p["frame"] for p in pkts if p.get("icrc") != "ok"]
assert not bad, f"ICRC not ok in frames {bad[:20]}"'

# tshark_agrees FILE: tshark decodes every RoCEv2 packet of FILE (already in
# $BATS_TEST_TMPDIR/cap.json via capture_json) with the same opcode, QP, PSN.
tshark_agrees() {
	tshark -r "$1" -Y infiniband -T fields -e frame.number -e infiniband.bth.opcode \
		-e infiniband.bth.destqp -e infiniband.bth.psn 2>/dev/null >"$BATS_TEST_TMPDIR/tshark.txt"
	run cap_eval '
ref = {}
for l in open(sys.argv[2]):
    f = l.split()
    ref[int(f[0])] = (int(f[1]), int(f[2], 16), int(f[3]))
mine = {p["frame"]: (p["opcode"], p["dest_qp"], p["psn"]) for p in pkts}
assert mine == ref, [(k, mine.get(k), ref.get(k)) for k in sorted(set(mine) | set(ref)) if mine.get(k) != ref.get(k)][:10]
assert ref, "tshark decoded nothing"
print(len(ref))' "$BATS_TEST_TMPDIR/tshark.txt"
	assert_success
}

# ---------------------------------------------------------------------------------
# lab: one guest, rxe0 on dummy0

@test "lab: the guest boots and rxe0 comes up ACTIVE with an IPv4 RoCE v2 GID" {
	boot_lab
	run grep -a 'rdmakit-vm: rxe0 ACTIVE on dummy0' "$LAB_LOG"
	assert_success
	result sysfs_port
	assert_success
	assert_line --partial ACTIVE
	assert_line Ethernet
}

@test "lab: ibv_devices lists rxe0" {
	boot_lab
	result ibv_devices
	assert_success
	assert_output --regexp '(^|[[:space:]])rxe0[[:space:]]'
}

@test "lab: rdmakit -j devices lists rxe0 with exactly the kernel's GIDs and picks the IPv4 RoCE v2 GID" {
	boot_lab
	result devices_json
	assert_success
	local gids
	gids=$(cat "$LAB/results/sysfs_gids.out")
	[[ -n $gids ]] || fail "the guest's sysfs listed no GIDs"
	run python3 -c '
import json, sys
doc = json.loads(sys.argv[1])
sysfs = [l.split() for l in sys.argv[2].splitlines()]
ports = [r for r in doc["results"] if r.get("engine") == "verbs"]
assert len(ports) == 1, f"one verbs port expected, got {len(ports)}: {ports}"
p = ports[0]
assert p["device"] == "rxe0" and p["port"] == 1, p
assert p["state"].lower() == "active", p["state"]
assert p["link_layer"] == "Ethernet", p["link_layer"]
assert p["netdev"] == "dummy0", p["netdev"]
assert p["mtu_bytes"] == 1024, p["mtu_bytes"]
want = [(int(i), g, t.replace("_", " "), n) for i, g, t, n in sysfs]
got = [(g["index"], g["gid"], g["type"], g["netdev"]) for g in p["gids"]]
assert got == want, f"rdmakit {got} != sysfs {want}"
ipv4 = [g for g in p["gids"] if g["gid"].startswith("0000:0000:0000:0000:0000:ffff:")
        and g["type"] == "RoCE v2"]
assert ipv4, "no IPv4-mapped RoCE v2 GID"
assert ipv4[0]["gid"] == "0000:0000:0000:0000:0000:ffff:c612:0002", ipv4[0]
assert p["default_gid_index"] == ipv4[0]["index"] == 1, p["default_gid_index"]
soft = [r for r in doc["results"] if r.get("engine") == "soft"]
assert any(s["address"] == "198.18.0.2" and s["port_4791"] == "in use" for s in soft), soft
print("ok")' "$output" "$gids"
	assert_success
	assert_output ok
}

@test "lab: rdmakit devices shows rxe0's GID table and the index --engine verbs picks" {
	boot_lab
	result devices
	assert_success
	assert_output --regexp 'rxe0[[:space:]]+1[[:space:]]+active[[:space:]]+Ethernet[[:space:]]+1024'
	assert_output --partial 'GIDs of rxe0 port 1 (--engine verbs picks index 1)'
	assert_output --regexp '1[[:space:]]+0000:0000:0000:0000:0000:ffff:c612:0002[[:space:]]+RoCE v2[[:space:]]+dummy0[[:space:]]+198\.18\.0\.2[[:space:]]+yes'
	# The soft engine sees that rxe holds UDP 4791 here.
	assert_output --regexp 'dummy0[[:space:]]+198\.18\.0\.2[[:space:]]+IPv4.*in use'
}

@test "lab: rdmakit devices -d rxe0 lists only rxe0; -d nosuchdev is a runtime error" {
	boot_lab
	result devices_dev_json
	assert_success
	run json_eval '
ports = d["results"]
assert ports and all(p["engine"] == "verbs" and p["device"] == "rxe0" for p in ports), ports
print(len(ports))'
	assert_success
	assert_output 1
	result devices_missing
	assert_equal "$status" 3
	assert_output --partial "nosuchdev"
}

# pair_ok NAME: the guest's perftest (or rdmakit) server and client both exited 0.
# A failure shows both sides: one side's error is often the other's cause
# (a client that failed makes perftest's server "Couldn't read remote address").
pair_ok() {
	local srv_rc srv_out
	result "$1-server"
	srv_rc=$status srv_out=$output
	result "$1-client"
	[[ $srv_rc -eq 0 && $status -eq 0 ]] ||
		fail "$1: server exited $srv_rc, client exited $status
--- client:
$output
--- server:
$srv_out"
}

@test "lab: perftest ib_write_bw in guest loopback on rxe0 (GID index 1, 64 KiB x 100)" {
	boot_lab
	pair_ok write_bw
	# "#bytes #iterations BW peak BW average MsgRate": a positive average.
	run awk '$1 == 65536 && $2 == 100 && $4 > 0 { ok = 1 } END { exit !ok }' \
		"$LAB/results/write_bw-client.out"
	assert_success
}

@test "lab: perftest ib_send_lat in guest loopback on rxe0 (2 bytes x 200)" {
	boot_lab
	pair_ok send_lat
	# "#bytes #iterations t_min t_max t_typical ...": positive latencies.
	run awk '$1 == 2 && $2 == 200 && $3 > 0 && $5 > 0 { ok = 1 } END { exit !ok }' \
		"$LAB/results/send_lat-client.out"
	assert_success
}

@test "lab: rdmakit bw and lat --engine verbs on rxe0, every op, --verify" {
	require_verbs_engine
	boot_lab
	local op kind
	for op in write read send atomic; do
		for kind in bw lat; do
			pair_ok "rdmakit_${kind}_$op"
			run json_eval 'assert not d["errors"], d["errors"]; assert d["results"], "no results"; print("ok")'
			assert_output ok
		done
	done
}

@test "lab: rdmakit -R/--rdma-cm on rxe0: the RDMA CM connects the QPs, every op and -q 3, --verify" {
	require_verbs_engine
	boot_lab
	local name
	for name in cm_bw_write cm_bw_read cm_bw_send cm_bw_atomic cm_bw_qps cm_lat_send; do
		pair_ok "rdmakit_$name"
		run json_eval 'assert not d["errors"], d["errors"]; assert d["results"], "no results"
assert d["params"]["connection_method"] == "rdma_cm", d["params"]; print("ok")'
		assert_output ok
	done
	# The kernel's CM counted one REQ, REP and RTU each way per QP: 4 + 3 + 1.
	result cm_msgs_before
	local before=$output
	result cm_msgs_after
	run python3 -c '
import sys
parse = lambda t: {l.split()[0]: int(l.split()[1]) for l in t.splitlines()}
b, a = parse(sys.argv[1]), parse(sys.argv[2])
d = {k: a[k] - b[k] for k in a}
assert all(v == 8 for v in d.values()), d
print("ok")' "$before" "$output"
	assert_output ok
}

@test "lab: rdmakit -R on the server only: both sides exit 3 naming -R" {
	require_verbs_engine
	boot_lab
	result rdmakit_cm_mismatch-server
	assert_equal "$status" 3
	assert_output --partial "give -R to the client"
	result rdmakit_cm_mismatch-client
	assert_equal "$status" 3
	assert_output --partial "give -R to the client"
}

@test "lab: rdmakit --engine verbs: a wrong GID index and a missing device are runtime errors" {
	require_verbs_engine
	boot_lab
	result rdmakit_bad_gid
	assert_equal "$status" 3
	assert_output --partial 99
	result rdmakit_no_dev
	assert_equal "$status" 3
	assert_output --partial nosuchdev
}

@test "lab: rdmakit top on rxe0's real sysfs: every hw counter, verbatim, moving with perftest traffic" {
	boot_lab
	pair_ok top_traffic
	result top_rxe
	[[ $status -eq 0 ]] || fail "top exited $status: $(cat "$LAB/results/top_rxe.err")"
	result top_counters_before
	assert_success
	result top_counters_after
	assert_success
	# Names from the guest's own listing of hw_counters; values bounded by
	# the readings before and after; each rate the change of its value
	# over interval_s; traffic seen while perftest ran.
	run python3 - "$LAB/results" <<'PY'
import json, sys
r = sys.argv[1]
def listing(name):
    return {l.split()[0]: int(l.split()[1]) for l in open(f"{r}/{name}.out")
            if len(l.split()) == 2 and l.split()[1].isdigit()}
before, after = listing("top_counters_before"), listing("top_counters_after")
rows = [json.loads(l) for l in open(f"{r}/top_rxe.out")]
assert len(rows) == 7, len(rows)
moved = False
prev = None
for row in rows:
    assert [(p["device"], p["port"]) for p in row["ports"]] == [("rxe0", 1)], row["ports"]
    p = row["ports"][0]
    assert p["netdev"] == "dummy0" and p["state"] == "ACTIVE" and p["link_layer"] == "Ethernet", p
    c = p["counters"]
    want = set(before) - {"lifespan"}
    assert want <= set(c), sorted(want - set(c))
    for n in want:
        assert before[n] <= c[n]["value"] <= after[n], (n, before[n], c[n], after[n])
    if prev:
        for n in ("sent_pkts", "rcvd_pkts"):
            d = c[n]["value"] - prev[n]["value"]
            assert d >= 0, (n, d)
            assert abs(c[n]["rate"] * row["interval_s"] - d) <= 0.01 * d + 1, (n, c[n], d, row["interval_s"])
        moved |= c["sent_pkts"]["rate"] > 0 and (p["tx_mpps"] or 0) > 0 and (p["rx_mpps"] or 0) > 0
    prev = c
assert moved, "no sample saw rxe0 send while ib_write_bw ran"
print("ok", after["sent_pkts"] - before["sent_pkts"])
PY
	assert_success
	assert_line --partial ok
	result top_rxe_batch
	assert_success
	assert_output --regexp 'rxe0/1 +dummy0 +ACTIVE'
}

@test "lab: rdmakit's RDMA netlink port statistics equal rdma statistic at rest and lie between its readings under traffic" {
	boot_lab
	result netlink_rest
	assert_success
	pair_ok netlink_traffic
	result netlink_during
	assert_success
	# Each rdmakit reading (the port's counters, source netlink) against
	# the rdma statistic readings just before and after it: equal at rest,
	# between them while ib_write_bw runs, and the traffic seen.
	run python3 - "$LAB/results" <<'PY'
import json, sys
r = sys.argv[1]
def docs(name):
    return [json.loads(l) for l in open(f"{r}/{name}.out") if l.startswith(("[", "{"))]
def rdma(doc):
    (link,) = doc
    assert link["ifname"] == "rxe0" and link["port"] == 1, link
    return {k: v for k, v in link.items() if isinstance(v, int) and k not in ("ifindex", "port")}
def ours(doc):
    (p,) = doc["ports"]
    assert p["hw_counters_source"] == "netlink" and "netlink_error" not in p, p
    assert p["qp_counters"] == [], p["qp_counters"]   # rxe binds no QP counters
    return {k: v["value"] for k, v in p["counters"].items()}
rest = docs("netlink_rest")
assert len(rest) == 3, len(rest)
a, mine, b = rdma(rest[0]), ours(rest[1]), rdma(rest[2])
assert a == b, "rxe0 moved at rest"
assert set(a) and all(mine[k] == v for k, v in a.items()), [(k, v, mine.get(k)) for k, v in a.items() if mine.get(k) != v]
seq = docs("netlink_during")
assert len(seq) == 13, len(seq)
moved = 0
for i in range(0, 12, 2):
    before, mine, after = rdma(seq[i]), ours(seq[i + 1]), rdma(seq[i + 2])
    for k in before:
        assert before[k] <= mine[k] <= after[k], (i, k, before[k], mine[k], after[k])
    moved += after["sent_pkts"] - before["sent_pkts"]
assert moved > 0, "no traffic between the readings"
print("ok", len(a), "counters,", moved, "packets sent while read")
PY
	assert_success
	assert_line --partial ok
}

@test "lab: rdmakit bw --engine verbs reports rxe0's port counters over the run, from the RDMA netlink" {
	require_verbs_engine
	boot_lab
	pair_ok rdmakit_bw_write
	run json_eval '
(res,) = d["results"]
pc = res["port_counters"]
assert pc["device"] == "rxe0" and pc["port"] == 1 and pc["source"] == "netlink", pc
# 50 WRITEs of 64 KiB at MTU 1024 are 3200 packets at the least, with ACKs.
assert pc["deltas"]["sent_pkts"] >= 50 and pc["deltas"]["rcvd_pkts"] >= 50, pc["deltas"]
print("ok")'
	assert_output ok
}

@test "lab: rdmakit top reads e1000's pause parameters over ethtool netlink, as ethtool -a shows them" {
	boot_lab
	[[ -f $LAB/results/e1000_iface ]] || fail "the guest found no e1000 interface (see $LAB_LOG)"
	result e1000_ethtool_a
	assert_success
	result top_e1000
	assert_success
	run python3 - "$LAB/results" <<'PY'
import json, re, sys
r = sys.argv[1]
iface = open(f"{r}/e1000_iface").read().strip()
a = open(f"{r}/e1000_ethtool_a.out").read()
want = {k: re.search(rf"^{k}:\s+(on|off)", a, re.M).group(1) == "on"
        for k in ("Autonegotiate", "RX", "TX")}
ia = open(f"{r}/e1000_ethtool_ia.out").read()
stats = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\w+_pause_frames): (\d+)", ia, re.M)}
row = json.loads(open(f"{r}/top_e1000.out").read().splitlines()[0])
# rxe0's row first (its netdev, dummy0: no DCB, no pause), then the -i row.
rows = {q["netdev"]: q for q in row["ports"]}
assert rows["dummy0"]["pause"] is None and rows["dummy0"]["dcb"] is None
p = rows[iface]
assert p["device"] is None, p
pause = p["pause"]
assert pause is not None, p.get("pause_error")
assert (pause["autoneg"], pause["rx"], pause["tx"]) == (want["Autonegotiate"], want["RX"], want["TX"]), (pause, want)
got = {k: v["value"] for k, v in pause["counters"].items()}
assert got == stats, (got, stats)
# e1000 has no DCB ops.
assert p["dcb"] is None and p["dcb_error"] == f"{iface}: DCB: Operation not supported", p
print("ok", iface, want, stats)
PY
	assert_success
	assert_line --partial ok
}

# ---------------------------------------------------------------------------------
# tap: the guest's rxe on the wire, captured on the host's bridge

@test "tap: the guest's rxe sends RC SENDs (with retransmissions) and CM MADs to 198.18.0.1:4791" {
	boot_tap
	[[ -s $LAB/rxe.pcap ]] || fail "no capture file $LAB/rxe.pcap"
	capture_json "$LAB/rxe.pcap"
	run cap_eval '
assert len(pkts) >= 20, f"only {len(pkts)} packets"
for p in pkts:
    assert p["encap"] == "rocev2", p
    assert (p["src"], p["dst"], p["dst_port"]) == ("198.18.0.2", "198.18.0.1", 4791), p
names = {p["opcode_name"] for p in pkts}
for want in ("RC Send First", "RC Send Middle", "RC Send Last", "UD Send Only"):
    assert want in names, f"{want} not in {names}"
assert any(p["opcode_name"] == "UD Send Only" and p["dest_qp"] == 1 for p in pkts), "no MAD to QP1"
rc = [p for p in pkts if p["dest_qp"] == 0x11]
psns = [p["psn"] for p in rc]
assert len(psns) > len(set(psns)), "no retransmission seen"
print(len(pkts))'
	assert_success
}

@test "tap: every captured RoCEv2 packet's ICRC verifies, by rdmakit and by an independent check" {
	boot_tap
	capture_json "$LAB/rxe.pcap"
	run cap_eval "$ICRC_ALL_OK"'
assert summary is not None, "no summary"
assert summary["icrc_bad"] == 0 and summary["icrc_unchecked"] == 0 and summary["malformed"] == 0, summary
assert summary["packets"] == len(pkts), summary
print(len(pkts))'
	assert_success
	local n=$output
	run -0 "$VM_DIR/icrc-check" "$LAB/rxe.pcap"
	run json_eval 'assert d["bad"] == 0, d; print(d["ok"])'
	assert_output "$n"
}

@test "tap: rdmakit capture saw what tcpdump saw, and decodes opcode, QP and PSN as tshark does" {
	boot_tap
	require_tool tshark "the reference InfiniBand decode"
	capture_json "$LAB/rxe.pcap"
	if [[ -s $LAB/tcpdump.pcap ]]; then
		run -0 "$VM_DIR/icrc-check" "$LAB/tcpdump.pcap"
		local n last_ns upto total
		# The guest's rxe retransmits to the fake peer until the end, and
		# rdmakit capture is stopped just before tcpdump: compare what both
		# saw up to the last packet rdmakit's file holds (the same skb, the
		# same timestamp; tcpdump's has microseconds).
		run cap_eval 'print(len(pkts), pkts[-1]["time_ns"] if pkts else 0)'
		read -r n last_ns <<<"$output"
		run -0 "$RDMAKIT" -j capture -r "$LAB/tcpdump.pcap"
		printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/tcpdump.json"
		run -0 python3 -c '
import json, sys
ts = [json.loads(l)["time_ns"] for l in open(sys.argv[1]) if l.startswith("{\"frame\"")]
print(sum(t <= int(sys.argv[2]) for t in ts), len(ts))' "$BATS_TEST_TMPDIR/tcpdump.json" "$last_ns"
		read -r upto total <<<"$output"
		assert_equal "$upto" "$n"
		(( total >= n && total - n <= 20 )) || fail "tcpdump saw $total packets, rdmakit $n"
	fi
	tshark_agrees "$LAB/rxe.pcap"
}

@test "tap: icrc-check itself rejects a corrupted packet" {
	boot_tap
	# Flip one payload byte of the first frame (after 24 + 16 bytes of pcap
	# headers, 14 Ethernet, 20 IPv4, 8 UDP, 12 BTH): its ICRC must fail.
	cp "$LAB/rxe.pcap" "$BATS_TEST_TMPDIR/bad.pcap"
	printf '\x5a' | dd of="$BATS_TEST_TMPDIR/bad.pcap" bs=1 seek=$((24 + 16 + 14 + 20 + 8 + 12 + 3)) \
		conv=notrunc status=none
	run -1 "$VM_DIR/icrc-check" "$BATS_TEST_TMPDIR/bad.pcap"
	run json_eval 'print(d["bad"], d["bad_frames"])'
	assert_output "1 [1]"
}

# ---------------------------------------------------------------------------------
# interop: rdmakit --engine soft (host) <-> rdmakit --engine verbs (guest rxe0)

@test "interop: soft engine <-> rxe over the tap, every op in both directions, --verify, ICRC ok both ways" {
	require_verbs_engine
	require_root "a network namespace with a bridge and a tap"
	lab_boot interop --net tap --host "$VM_DIR/scripts/interop-host.sh" \
		"$VM_DIR/scripts/interop-guest.sh" verbs
	# Every run first, then one failure listing them all (host_* is the soft
	# engine as requester toward rxe, guest_* rxe as requester toward soft).
	local side kind op failed=() err
	for side in host guest; do
		for kind in bw lat; do
			for op in write read send atomic; do
				result "${side}_${kind}_$op"
				err=$(grep -v '^{' <<<"$output" | grep -m1 . || true)
				if [[ $status -ne 0 ]]; then
					failed+=("${side}_${kind}_$op: exit $status: ${err:-$(tail -c 300 <<<"$output")}")
				elif ! json_eval 'assert not d["errors"] and d["results"]' >/dev/null 2>&1; then
					failed+=("${side}_${kind}_$op: exit 0 but errors or no results: $(tail -c 300 <<<"$output")")
				fi
			done
		done
	done
	# rdmakit 0.1.0's control channel refuses a peer of the other engine: that
	# is the interop not implemented yet, not a failure of the stacks.
	local refusal
	refusal=$(grep -h -m1 -o 'the client asked for --engine [a-z]*, this server runs --engine [a-z]*' \
		"$LAB"/results/guest_*.out "$LAB"/results/host_*.out 2>/dev/null | head -n 1)
	if ((${#failed[@]})) && [[ -n $refusal ]]; then
		skip "rdmakit refuses mixed engines over its control channel ('$refusal'): soft <-> verbs interop not implemented yet"
	fi
	if ((${#failed[@]})); then
		fail "$(printf '%s\n' "${#failed[@]} of 16 runs failed:" "${failed[@]}" \
			"guest servers said: $(grep -h -m3 '^rdmakit' "$LAB/results/guest_bw_server.out" "$LAB/results/guest_lat_server.out")")"
	fi
	capture_json "$LAB/interop.pcap"
	run cap_eval "$ICRC_ALL_OK"'
srcs = {p["src"] for p in pkts}
assert srcs == {"198.18.0.1", "198.18.0.2"}, f"packets from {srcs} only"
print(len(pkts))'
	assert_success
	run -0 "$VM_DIR/icrc-check" "$LAB/interop.pcap"
	# Both stacks' packets decode the same in Wireshark's dissector.
	require_tool tshark "the reference InfiniBand decode"
	tshark_agrees "$LAB/interop.pcap"
}

# ---------------------------------------------------------------------------------
# perftest: rdmakit speaks perftest's own exchange, nothing of rdmakit on the other side

# The 6.29 peers: ../shared/peers/perftest-6.29 beside the clone (a plain clone has none).
PT629_DIR=
pt629_bins() {
	local d
	d=$(cd "$RDMAKIT_ROOT/.." && pwd)/shared/peers/perftest-6.29/bin
	[[ -x $d/ib_write_bw ]] && PT629_DIR=$d
}

# The perftest lab: the 6.29 binaries (when present) go into the share first.
boot_perftest() {
	require_verbs_engine
	require_root "a network namespace with a bridge and a tap"
	require_tool ip "network namespaces"
	if pt629_bins && [[ ! -e $BATS_FILE_TMPDIR/perftest/pt629 ]]; then
		mkdir -p "$BATS_FILE_TMPDIR/perftest/pt629"
		cp "$PT629_DIR"/* "$BATS_FILE_TMPDIR/perftest/pt629/"
	fi
	lab_boot perftest --timeout 1500 --net tap --host "$VM_DIR/scripts/perftest-host.sh" \
		"$VM_DIR/scripts/perftest-guest.sh"
}

# pt_check PREFIX VERSION NEGOTIATED: every pair PREFIX_{srv,cli}_{bw,lat}_OP
# ended 0 on both sides; rdmakit's JSON names the peer's protocol, its version
# and whether the 6.28+ struct was exchanged; perftest printed its row.
pt_check() {
	python3 - "$VM_DIR" "$LAB/results" "$@" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from pt_results import js, pt_row
res, pairs = sys.argv[2], sys.argv[3:]
bad = []
for spec in pairs:
    name, version, negotiated = spec.split(":")
    for kind in ("bw", "lat"):
        for op in ("write", "read", "send", "atomic"):
            n = f"{name}_{kind}_{op}"
            rc_file = f"{res}/{n}.rc"
            if not os.path.exists(rc_file):
                bad.append(f"{n}: not run"); continue
            rc = open(rc_file).read().split()
            if rc != ["0", "0"]:
                bad.append(f"{n}: exit {rc}: " + open(f"{res}/{n}.cli").read()[-300:] + open(f"{res}/{n}.srv").read()[-300:]); continue
            rdmakit_side = "cli" if "_srv" in name else "srv"
            perftest_side = "srv" if rdmakit_side == "cli" else "cli"
            d = js(f"{res}/{n}.{rdmakit_side}")
            p = d["params"]
            if (p.get("peer_protocol"), p.get("peer_perftest_version"), p.get("perftest_negotiated")) != ("perftest", version, negotiated == "yes"):
                bad.append(f"{n}: params say {p.get('peer_protocol')} {p.get('peer_perftest_version')} negotiated={p.get('perftest_negotiated')}")
            if d["errors"]:
                bad.append(f"{n}: errors {d['errors']}")
            passive = kind == "lat" and op in ("read", "atomic") and rdmakit_side == "srv"
            if passive:
                if "measured" not in p:
                    bad.append(f"{n}: a passive latency server should say it measured nothing")
            elif not d["results"] or d["results"][0]["iterations"] < 199:
                bad.append(f"{n}: rdmakit results {d['results'][:1]}")
            # perftest printed its row, except where perftest prints none
            # (a READ/atomic latency server, a WRITE/READ/atomic bw server
            # prints the client's report).
            if not (kind == "lat" and op in ("read", "atomic") and perftest_side == "srv"):
                row = pt_row(f"{res}/{n}.{perftest_side}")
                if not row or int(row[1]) < 199:
                    bad.append(f"{n}: perftest's row {row}")
assert not bad, "\n".join(bad)
print("ok")
PY
}

@test "perftest: Debian's perftest 6.06 and rdmakit --engine verbs on rxe0, both roles, bw and lat, every op" {
	boot_perftest
	run pt_check deb_srv:6.06:no deb_cli:6.06:no
	assert_output ok
}

@test "perftest: upstream 6.29 announcing 6.06 and 6.29 (the 6.28+ negotiation on the wire), both roles, every op" {
	pt629_bins || _require_missing "../shared/peers/perftest-6.29 is missing in CI" \
		"no ../shared/peers/perftest-6.29 beside this clone (upstream perftest to test against)"
	boot_perftest
	[[ -e $LAB/pt629/ib_write_bw ]] || fail "the 6.29 binaries did not reach the guest"
	# up_srv06/29: a 6.29 server, rdmakit announcing 6.06 / 6.29; up_cli29: a
	# 6.29 client and an rdmakit server that echoes 6.29; up_cli06: that
	# server announcing 6.06 (--perftest-version), so no negotiation.
	run pt_check up_srv06:6.29:no up_srv29:6.29:yes up_cli29:6.29:yes up_cli06:6.29:no
	assert_output ok
	# The struct a 6.29 built with mlx5dv sends is 320 bytes; the server measured it.
	run python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from pt_results import js
d = js(sys.argv[2])
print(d["params"]["perftest_struct_bytes"])' "$VM_DIR" "$LAB/results/up_cli29_bw_write.srv"
	assert_output 320
}

@test "perftest: rdmakit as the server measures for itself, within 10% of the perftest client's bandwidth (one unit) and from the same iterations" {
	boot_perftest
	run python3 - "$VM_DIR" "$LAB/results" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from pt_results import js, pt_row, to_gbps, verdict
res = sys.argv[2]
out, bad = [], []
names = [f"{p}_bw_{op}" for p in ("deb_cli", "soft_srv") for op in ("write", "read", "send")]
for n in names:
    srv = f"{res}/{n}.srv"
    if not os.path.exists(srv):
        bad.append(f"{n}: missing"); continue
    r = js(srv)["results"][0]
    row = pt_row(f"{res}/{n}.cli")
    # perftest's MB/sec is 2^20 bytes/s; ours Gb/s (10^9 bits)
    theirs = to_gbps(float(row[3]))
    ratio = r["bw_avg_gbps"] / theirs
    out.append(f"{n} {ratio:.3f}")
    if r["iterations"] != int(row[1]):
        bad.append(f"{n}: {r['iterations']} iterations here, {row[1]} at perftest")
    if not 0.9 <= ratio <= 1.1:
        bad.append(f"{n}: rdmakit {r['bw_avg_gbps']:.4f} Gb/s vs perftest {theirs:.4f} Gb/s = {ratio:.3f}")
# Latency: both sides time the same ping-pong, so their typical values
# (medians) agree.  Within 0.6-1.6, not closer: a TCG guest's turns fall
# in two or more modes and a median can sit in either (0.70 in the CI run
# of 2026-12-06, 1.03 re-run alone), while 0.6-1.6 still tells a round
# trip from half of one, and microseconds from anything else.  Averages
# are no better: a first turn that waits for the other side to start
# (100+ ms) dominates them on either tool.
for n in ("deb_cli_lat_write", "deb_cli_lat_send", "soft_srv_lat_write", "soft_srv_lat_send"):
    r = js(f"{res}/{n}.srv")["results"][0]
    row = pt_row(f"{res}/{n}.cli")
    ratio = r["t_typical_us"] / float(row[4])
    out.append(f"{n} {ratio:.3f}")
    if not 0.6 <= ratio <= 1.6 or r["iterations"] < int(row[1]) - 1:
        bad.append(f"{n}: typical {r['t_typical_us']} us over {r['iterations']} vs perftest {row[4]} over {row[1]}")
verdict(out, bad)
PY
	echo "# $output" >&3
	assert_success
}

@test "perftest: -a (-n 20) and -q 2 against Debian's perftest, both roles" {
	boot_perftest
	local n rc
	for n in deb_srv_bw_write_all deb_cli_bw_send_all deb_srv_bw_send_q2 deb_cli_bw_write_q2; do
		rc=$(cat "$LAB/results/$n.rc")
		[[ $rc == "0 0" ]] || fail "$n: exit $rc: $(tail -c 400 "$LAB/results/$n.cli") $(tail -c 400 "$LAB/results/$n.srv") $(cat "$LAB/results/$n.retried" 2>/dev/null)"
	done
	# The client's -a rows: 2 bytes to 8 MiB, 20 messages each; the send server's too.
	run python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from pt_results import js
for f in sys.argv[2:]:
    d = js(f)
    sizes = [r["bytes"] for r in d["results"]]
    assert sizes == [2 ** i for i in range(1, 24)], (f, sizes)
    assert all(r["iterations"] == 20 for r in d["results"]), f
print("ok")' "$VM_DIR" "$LAB/results/deb_srv_bw_write_all.cli" "$LAB/results/deb_cli_bw_send_all.srv"
	assert_output ok
}

@test "perftest: -b against Debian's perftest, both roles: both sides print the same sum of both directions" {
	boot_perftest
	run python3 - "$VM_DIR" "$LAB/results" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from pt_results import js, pt_row, to_gbps, verdict
res, bad, out = sys.argv[2], [], []
for n, mine in (("deb_srv_bw_write_bidir", "cli"), ("deb_cli_bw_read_bidir", "srv"), ("deb_cli_bw_send_bidir", "srv")):
    rc = open(f"{res}/{n}.rc").read().split()
    if rc != ["0", "0"]:
        bad.append(f"{n}: exit {rc}"); continue
    (r,) = js(f"{res}/{n}.{mine}")["results"]
    theirs = to_gbps(float(pt_row(f"{res}/{n}." + ("srv" if mine == "cli" else "cli"))[3]))
    ratio = r["bw_avg_gbps"] / theirs
    out.append(f"{n} {ratio:.3f}")
    if not (r["local_bw_avg_gbps"] > 0 and r["peer_bw_avg_gbps"] > 0 and 0.98 <= ratio <= 1.02):
        bad.append(f"{n}: rdmakit {r['local_bw_avg_gbps']:.4f} + {r['peer_bw_avg_gbps']:.4f} = {r['bw_avg_gbps']:.4f} Gb/s, perftest's sum {theirs:.4f}")
verdict(out, bad)
PY
	echo "# $output" >&3
	assert_success
}

@test "perftest: -W hw_counters/sent_pkts,hw_counters/rcvd_pkts: rxe0's counters over the run, as perftest names them" {
	boot_perftest
	[[ $(cat "$LAB/results/deb_srv_bw_write_counters.rc") == "0 0" ]] ||
		fail "exit $(cat "$LAB/results/deb_srv_bw_write_counters.rc"): $(tail -c 400 "$LAB/results/deb_srv_bw_write_counters.cli")"
	run python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from pt_results import js
d = js(sys.argv[2])
(r,) = d["results"]
c = r["report_counters"]
# 100 WRITEs of 64 KiB at MTU 1024: 6400 data packets out, their ACKs in (both
# ends are rxe0 here, so each counter sees both sides).
assert set(c) == {"hw_counters/sent_pkts", "hw_counters/rcvd_pkts"}, c
assert c["hw_counters/sent_pkts"] >= 6400 and c["hw_counters/rcvd_pkts"] >= 6400, c
print("ok")' "$VM_DIR" "$LAB/results/deb_srv_bw_write_counters.cli"
	assert_output ok
}

@test "perftest: a perftest server sized for 4 KiB and an rdmakit client of 64 KiB: one line naming -s, neither side hangs" {
	boot_perftest
	local rc
	rc=$(cat "$LAB/results/deb_srv_bw_write_mismatch.rc")
	# 124/143: killed by the lab's timeout (a hang); rdmakit exits 3.
	[[ ${rc%% *} == 3 && ${rc##* } != 124 && ${rc##* } != 143 ]] || fail "exit $rc"
	run grep -c '^rdmakit bw: .*remote access error.*start it with the same -s/-a' \
		"$LAB/results/deb_srv_bw_write_mismatch.cli"
	assert_output 1
}

@test "perftest: atomics: -A CMP_AND_SWAP both roles; a FETCH_AND_ADD server counts in its memory exactly the atomics the perftest client reports" {
	boot_perftest
	run python3 - "$VM_DIR" "$LAB/results" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from pt_results import js, pt_row, verdict
res, bad, out = sys.argv[2], [], []
for n in ("deb_srv_bw_cas", "deb_cli_bw_cas"):
    rc = open(f"{res}/{n}.rc").read().split()
    if rc != ["0", "0"]:
        bad.append(f"{n}: exit {rc}")
# rdmakit serving perftest's FETCH_AND_ADD (+1 each): the sum of its
# buffer's words grew by the client's count, wherever they landed.
for n in ("deb_cli_bw_atomic", "up_cli29_bw_atomic", "up_cli06_bw_atomic"):
    if not os.path.exists(f"{res}/{n}.srv"):
        continue
    (r,) = js(f"{res}/{n}.srv")["results"]
    row = pt_row(f"{res}/{n}.cli")
    out.append(f"{n} {r.get('atomic_added')}/{row[1]}")
    if r.get("atomic_added") != int(row[1]):
        bad.append(f"{n}: {r.get('atomic_added')} fetch-and-adds landed, perftest reports {row[1]}")
verdict(out, bad)
PY
	echo "# $output" >&3
	assert_success
}

@test "perftest: -D 2 both roles (bw WRITE and SEND, lat WRITE); -m 512 on perftest's side: both run at the smaller MTU" {
	boot_perftest
	run python3 - "$VM_DIR" "$LAB/results" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from pt_results import js, pt_row, to_gbps, verdict
res, bad, out = sys.argv[2], [], []
cases = (("deb_srv_bw_write_dur", "cli"), ("deb_cli_bw_write_dur", "srv"),
         ("deb_cli_bw_send_dur", "srv"), ("deb_srv_lat_write_dur", "cli"),
         ("deb_srv_bw_write_mtu", "cli"))
for n, mine in cases:
    rc = open(f"{res}/{n}.rc").read().split()
    if rc != ["0", "0"]:
        bad.append(f"{n}: exit {rc}"); continue
    d = js(f"{res}/{n}.{mine}")
    (r,) = d["results"]
    theirs = pt_row(f"{res}/{n}." + ("srv" if mine == "cli" else "cli"))
    if n.endswith("_mtu"):
        if d["params"]["mtu_bytes"] != 512:
            bad.append(f"{n}: mtu_bytes {d['params']['mtu_bytes']}, not perftest's 512")
        continue
    if d["params"].get("duration_s") != 2:
        bad.append(f"{n}: duration_s {d['params'].get('duration_s')}")
    if not r["iterations"] or not 1.5 <= r.get("seconds", 2) <= 2.6:
        bad.append(f"{n}: {r['iterations']} iterations in {r.get('seconds')} s")
    if "_bw_" in n:
        ratio = r["bw_avg_gbps"] / to_gbps(float(theirs[3]))
        out.append(f"{n} {ratio:.3f}")
        # Where both count the same messages (a WRITE target takes the
        # client's count), the figures agree; perftest's -D SEND client
        # counts fewer than arrive here, so that ratio is shown, not held.
        if n != "deb_cli_bw_send_dur" and not 0.9 <= ratio <= 1.1:
            bad.append(f"{n}: rdmakit {r['bw_avg_gbps']:.4f} Gb/s vs perftest's {theirs}")
verdict(out, bad)
PY
	echo "# $output" >&3
	assert_success
}

@test "perftest: -c UD and -c UC against Debian's perftest, both roles, bw (SEND and WRITE) and lat (UC: SEND and WRITE); a 6.29 client negotiates UD with a server not told" {
	boot_perftest
	run python3 - "$VM_DIR" "$LAB/results" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from pt_results import js, pt_row, verdict
res, bad, out = sys.argv[2], [], []
for n, mine, conn in (("deb_srv_bw_send_ud", "cli", "UD"), ("deb_cli_bw_send_ud", "srv", "UD"),
                      ("deb_srv_lat_send_ud", "cli", "UD"), ("deb_cli_lat_send_ud", "srv", "UD"),
                      ("deb_srv_bw_write_uc", "cli", "UC"), ("deb_cli_bw_send_uc", "srv", "UC"),
                      ("deb_srv_bw_send_uc", "cli", "UC"), ("deb_cli_bw_write_uc", "srv", "UC"),
                      ("deb_srv_lat_send_uc", "cli", "UC"), ("deb_cli_lat_send_uc", "srv", "UC"),
                      ("deb_srv_lat_write_uc", "cli", "UC"), ("deb_cli_lat_write_uc", "srv", "UC"),
                      ("up_cli29_bw_send_ud", "srv", "UD")):
    if n.startswith("up_") and not os.path.exists(f"{res}/{n}.rc"):
        continue
    rc = open(f"{res}/{n}.rc").read().split()
    if rc != ["0", "0"]:
        bad.append(f"{n}: exit {rc}"); continue
    d = js(f"{res}/{n}.{mine}")
    (r,) = d["results"] or [{}]
    theirs = pt_row(f"{res}/{n}." + ("srv" if mine == "cli" else "cli"))
    out.append(f"{n} {r.get('iterations')}/{theirs[1] if theirs else None}")
    if d["params"]["connection"] != conn or d["params"]["peer_protocol"] != "perftest":
        bad.append(f"{n}: {d['params']}")
    if "_bw_send_" in n and mine == "srv" and r.get("iterations") != 200:
        bad.append(f"{n}: {r.get('iterations')} messages arrived here of 200")
    # A perftest server says nothing of what arrived: not counted as lost.
    if "_bw_send_" in n and mine == "cli" and (r.get("received_msgs", 0) is not None or
                                               r.get("sent_msgs") != r.get("iterations")):
        bad.append(f"{n}: a perftest server's receipts claimed: {r}")
    # perftest's lockstep has no timeout, so nothing is counted lost: every
    # ping is answered (the side that answers times n-1 round trips).
    if "_lat_" in n and mine == "cli" and not 199 <= r.get("iterations", 0) <= 200:
        bad.append(f"{n}: {r.get('iterations')} round trips timed of 200")
verdict(out, bad)
PY
	echo "# $output" >&3
	assert_success
}

@test "perftest: a SEND test whose sides count different -n: one line naming -n on rdmakit's side, both ways; neither side hangs" {
	boot_perftest
	local n rc
	for n in deb_srv_bw_send_iters:cli deb_cli_bw_send_iters:srv; do
		rc=$(cat "$LAB/results/${n%%:*}.rc")
		# rdmakit exits 3; 124/143 would be the lab's timeout (a hang).
		case ${n##*:} in
		cli) [[ ${rc%% *} == 3 ]] || fail "${n%%:*}: exit $rc" ;;
		srv) [[ ${rc##* } == 3 ]] || fail "${n%%:*}: exit $rc" ;;
		esac
		[[ $rc != *124* && $rc != *143* ]] || fail "${n%%:*}: exit $rc (a hang)"
		run grep -c '^rdmakit bw: .*the same -n' "$LAB/results/${n%%:*}.${n##*:}"
		assert_output 1
	done
}

@test "perftest: the soft engine on the host against perftest on the guest's rxe0: write, read, send, bw and lat, both roles" {
	boot_perftest
	local kind op side f failed=()
	for side in cli srv; do
		for kind in bw lat; do
			for op in write read send; do
				for f in "$LAB/results/soft_${side}_${kind}_$op".*rc; do
					[[ $(cat "$f") == 0 ]] || failed+=("${f##*/}: $(cat "$f"): $(tail -c 300 "${f%rc}" 2>/dev/null)")
				done
			done
		done
	done
	((${#failed[@]} == 0)) || fail "$(printf '%s\n' "${failed[@]}")"
	run python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from pt_results import js
d = js(sys.argv[2])
assert d["params"]["engine"] == "soft" and d["params"]["peer_protocol"] == "perftest", d["params"]
print("ok")' "$VM_DIR" "$LAB/results/soft_cli_bw_write.cli"
	assert_output ok
}

@test "perftest: a soft-engine WRITE to perftest on rxe, captured: tshark decodes it as rdmakit does, every ICRC ok" {
	boot_perftest
	capture_json "$LAB/perftest-soft.pcap"
	run cap_eval "$ICRC_ALL_OK"'
ops = {p["opcode"] for p in pkts}
assert {6, 7, 8, 17} <= ops, ops   # WRITE First/Middle/Last from the soft engine, ACKs from rxe
print(len(pkts))'
	assert_success
	run -0 "$VM_DIR/icrc-check" "$LAB/perftest-soft.pcap"
	require_tool tshark "the reference InfiniBand decode"
	tshark_agrees "$LAB/perftest-soft.pcap"
}

# ---------------------------------------------------------------------------------
# anchor: perftest, rdmakit --engine verbs and --engine soft in one guest

@test "interop: 3% loss each way in the kernel datapath: both stacks retransmit and recover, --verify" {
	require_verbs_engine
	require_root "a network namespace with a bridge and a tap"
	lab_boot interop --net tap --host "$VM_DIR/scripts/interop-host.sh" \
		"$VM_DIR/scripts/interop-guest.sh" verbs
	# host_lossy_*: soft requester -> rxe responder; guest_lossy_*: the reverse.
	local name
	for name in host_lossy_bw_write host_lossy_bw_read guest_lossy_bw_write guest_lossy_bw_read; do
		result "$name"
		[[ $status -eq 0 ]] || fail "$name exited $status: $(tail -c 400 <<<"$output")"
		run json_eval '(r,) = d["results"]
assert not d["errors"] and d["params"]["verify"] is True and r["iterations"] == 200, d
print("ok")'
		assert_output ok
	done
	# The loss really happened, in both directions.
	result lossy_nft
	run python3 -c '
import re, sys
drops = [int(n) for n in re.findall(r"counter packets (\d+)", sys.argv[1])]
assert len(drops) == 2 and min(drops) > 0, drops
print("ok")' "$output"
	assert_output ok
	# On the wire: every ICRC ok, and each side retransmitted.
	capture_json "$LAB/interop-lossy.pcap"
	run cap_eval "$ICRC_ALL_OK"'
retx = {}
for f in summary["flows"]:
    retx[f["src"]] = retx.get(f["src"], 0) + f["retransmits"]
assert retx.get("198.18.0.1", 0) > 0 and retx.get("198.18.0.2", 0) > 0, retx
print("ok")'
	assert_output ok
}

@test "interop: -c UD and -c UC between the soft engine and rxe, both directions: bw and lat run, --verify holds, tshark agrees on every packet" {
	require_verbs_engine
	require_root "a network namespace with a bridge and a tap"
	lab_boot interop --net tap --host "$VM_DIR/scripts/interop-host.sh" \
		"$VM_DIR/scripts/interop-guest.sh" verbs
	# host_*: the soft engine sends to rxe; guest_*: rxe sends to the soft engine.
	local side c
	for side in host guest; do
		for c in ud_bw ud_lat uc_bw_send uc_bw_write uc_lat_send uc_lat_write; do
			result "${side}_$c"
			[[ $status -eq 0 ]] || fail "${side}_$c exited $status: $(tail -c 600 <<<"$output")"
			run json_eval '
p, (r,) = d["params"], d["results"]
name = sys.argv[2]
assert not d["errors"] and p["verify"] is True and p["connection"] == name[:2].upper(), d
if "_bw_send" in name or name == "ud_bw":
    # What arrived was verified; what did not is accounted as lost.
    assert r["received_msgs"] > 0 and r["received_msgs"] + r["lost_msgs"] == r["sent_msgs"], r
if "_lat" in name:
    assert r["iterations"] + r["lost_msgs"] == 200 and r["iterations"] > 100, r
print(name, r.get("lost_msgs", 0))' "$c"
			assert_success
		done
	done
	capture_json "$LAB/interop-unrel.pcap"
	run cap_eval "$ICRC_ALL_OK"'
ops = {p["opcode"] for p in pkts}
# UD SEND Only, UC SEND First/Middle/Last and WRITE First/Middle/Last: both ways.
assert {0x64, 0x20, 0x21, 0x22, 0x26, 0x27, 0x28} <= ops, sorted(ops)
assert not {0x11} & ops, "ACKs on UC/UD"
print(len(pkts))'
	assert_success
	require_tool tshark "the reference InfiniBand decode"
	tshark_agrees "$LAB/interop-unrel.pcap"
}

@test "interop: incast -c UD and -c UC between the soft engine and rxe, each as coordinator: every flow's sent = received + lost, --verify holds" {
	require_verbs_engine
	require_root "a network namespace with a bridge and a tap"
	lab_boot interop --net tap --host "$VM_DIR/scripts/interop-host.sh" \
		"$VM_DIR/scripts/interop-guest.sh" verbs
	# host_incast_*: the soft engine coordinates, rxe's two senders send;
	# guest_incast_*: rxe coordinates, the soft engine's two send.
	local co c
	for co in host guest; do
		for c in ud uc; do
			result "${co}_incast_${c}_senders"
			[[ $status -eq 0 ]] || fail "${co}_incast_${c}_senders exited $status: $(tail -c 600 <<<"$output")"
			result "${co}_incast_$c"
			[[ $status -eq 0 ]] || fail "${co}_incast_$c exited $status: $(tail -c 600 <<<"$output")"
			run json_eval '
p, r = d["params"], d["results"]
name, engine = sys.argv[2], {"host": "soft", "guest": "verbs"}[sys.argv[2].split("_")[0]]
assert not d["errors"] and p["verify"] is True and p["engine"] == engine, d
assert p["connection"] == name[-2:].upper() and p["op"] == "send" and p["size_bytes"] == 1024, p
f, l = r["flows"], r["loss"]
assert len(f) == 2 and all(x["status"] == "ok" for x in f), f
# Nothing paces UC and UD: rxe in a TCG guest took in 60-65% of what the
# soft engine sent it (lab of 2026-12-05); all that counts is the sum.
for x in f:
    assert x["sent_msgs"] == 1024 and x["messages"] + x["lost_msgs"] == 1024, x
    assert x["messages"] > 0 and x["bytes"] == 1024 * x["messages"], x
assert l["sent_msgs"] == 2048 and l["received_msgs"] + l["lost_msgs"] == 2048, l
print(name, [x["lost_msgs"] for x in f])' "${co}_incast_$c"
			assert_success
			echo "# $output" >&3
		done
	done
}

@test "interop: rdmakit probe against probe --serve --engine verbs on rxe0: retry_cnt 7 the one deviation (accepted), no ECN or CNP, IPv4 IDs informational, every other test passes; -w agrees with both decoders" {
	require_verbs_engine
	require_root "a network namespace with a bridge and a tap"
	lab_boot interop --net tap --host "$VM_DIR/scripts/interop-host.sh" \
		"$VM_DIR/scripts/interop-guest.sh" verbs
	result host_probe
	# --accept lists retry_count_7: the run exits 0 with it a deviation.
	# Otherwise name what was off, short enough to survive a CI log's tail.
	if [[ $status -ne 0 ]]; then
		local off
		off=$(json_eval '
for x in d["results"]:
    if x["verdict"] not in ("pass", "informational", "not implemented") and not x.get("accepted"):
        print("%s=%s: %s" % (x["test"], x["verdict"], x["observed"][:300]))' 2>&1 | head -c 1500)
		fail "host_probe exited $status; ${off:-$(tail -c 600 <<<"$output")}"
	fi
	run json_eval '
r = d["results"]
assert d["params"]["remote_engine"] == "verbs" and d["params"]["remote_device"].startswith("rxe0"), d["params"]
assert len(r) >= 19, r
verdicts = dict((x["test"], x["verdict"]) for x in r)
# rxe (drivers/infiniband/sw/rxe/) does as the IBTA says: as responder its
# access checks (check_rkey), the zero-length exemption, the RNR NAK, one
# sequence NAK per episode (sent_psn_nak), the re-ACK of a duplicate SEND,
# the invalid request for a Middle without a First and the silent ICRC drop
# (rxe_rcv); as requester its ACK timer, retry_cnt 3, go-back-N from the
# NAKed PSN and the RNR wait; its packets carry the traffic class as DSCP,
# one UDP source port per QP and MSNs that count messages.  But rxe_comp.c
# never counts retry_cnt 7 down: it retries forever, a meaning the IBTA
# gives only to rnr_retry 7.  And rxe sends no ECN-capable packets, no
# CNP for CE-marked ones, and does not slow down for CNPs (no DCQCN): not
# implemented.  Its IPv4 IDs count up under DF
# (prepare_ipv4_hdr): allowed, so informational; its DF and ICRC hold.
x7 = [x for x in r if x["test"] == "retry_count_7"][0]
assert x7["verdict"] == "deviation" and x7["accepted"], x7
assert verdicts["ect_data"] == "not implemented", verdicts
assert verdicts["ce_cnp"] == verdicts["cnp_reaction"] == "not implemented", verdicts
ip = [x for x in r if x["test"] == "ipv4_header"][0]
assert ip["verdict"] == "informational" and "DF set, ICRC valid" in ip["observed"], ip
# Informational by nature: past the READ limit, and the credits an ACK carries.
assert verdicts["outstanding_reads"] == verdicts["aeth_credits"] == "informational", verdicts
bad = [(x["test"], x["verdict"], x["observed"]) for x in r if x["verdict"] != "pass" and x["test"] not in ("retry_count_7", "ect_data", "ce_cnp", "cnp_reaction", "ipv4_header", "outstanding_reads", "aeth_credits")]
assert not bad, bad
assert d["summary"]["deviation_unaccepted"] == 0, d["summary"]
for x in r:
    assert x["evidence"] and any(e["direction"] == "received" for e in x["evidence"]), x
print(" ".join("%s=%s" % kv for kv in verdicts.items()))'
	assert_success
	echo "# $output" >&3
	result guest_probe_serve
	assert_output --partial ": done"
	# -w: the run as a capture.  rxe's packets with their headers rebuilt
	# (its counting IPv4 IDs solved from the ICRC): every ICRC holds but the
	# one corrupted on purpose, every verdict's frame is the packet it names,
	# and Wireshark's dissector reads every frame as rdmakit does.
	result host_probe
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/probe.json"
	capture_json "$LAB/probe.pcap"
	run cap_eval '
d = json.load(open(sys.argv[2]))
corrupt = [e["frame"] for r in d["results"] for e in r["evidence"] if e.get("icrc_corrupt")]
bad = [p["frame"] for p in pkts if p.get("icrc") != "ok"]
assert bad == corrupt and len(bad) == 1, (bad, corrupt)
assert [p["frame"] for p in pkts] == list(range(1, len(pkts) + 1)), "frames missing"
byframe = {p["frame"]: p for p in pkts}
for r in d["results"]:
    for e in r["evidence"]:
        p = byframe[e["frame"]]
        assert (p["psn"], p["opcode_name"]) == (e["psn"], e["opcode"]), (r["test"], e, p)
print(len(pkts))' "$BATS_TEST_TMPDIR/probe.json"
	assert_success
	require_tool tshark "the reference InfiniBand decode"
	tshark_agrees "$LAB/probe.pcap"
}

@test "anchor: perftest vs rdmakit verbs vs soft in one guest, medians of 3; verbs/perftest bandwidth within 0.5-2" {
	require_verbs_engine
	lab_boot anchor "$VM_DIR/scripts/anchor.sh"
	run python3 - "$LAB/anchor.txt" <<'PY'
import sys
f = dict((l.split()[0], float(l.split()[1])) for l in open(sys.argv[1]) if l.strip())
need = ["perftest_write_bw", "verbs_write_bw", "soft_write_bw",
        "perftest_send_lat", "verbs_send_lat", "soft_send_lat"]
assert all(k in f and f[k] > 0 for k in need), f
bw, lat = f["verbs_write_bw"] / f["perftest_write_bw"], f["verbs_send_lat"] / f["perftest_send_lat"]
print("write bw 64 KiB: perftest %.3f, verbs %.3f, soft %.3f Gb/s; verbs/perftest %.2f, soft/rxe %.2f"
      % (f["perftest_write_bw"], f["verbs_write_bw"], f["soft_write_bw"], bw,
         f["soft_write_bw"] / f["perftest_write_bw"]))
print("send lat 2 B: perftest %.2f, verbs %.2f, soft %.2f usec; verbs/perftest %.2f, soft/rxe %.2f"
      % (f["perftest_send_lat"], f["verbs_send_lat"], f["soft_send_lat"], lat,
         f["soft_send_lat"] / f["perftest_send_lat"]))
# The figures are reported; what is held is only that the verbs path
# neither halves nor doubles what the device does.  Under TCG on a loaded
# 2-core CI machine the ratio swung from 0.9 to 1.48 between runs of the
# same code (perftest 0.21 Gb/s against 0.31 in one run), and the latency
# ratio, two busy-polling processes on two emulated CPUs, swings more.
# Performance proper is bench/'s job, side by side on an idle machine.
assert 0.5 <= bw <= 2.0, "verbs/perftest bandwidth ratio %.2f" % bw
PY
	echo "$output" | sed 's/^/# /' >&3
	assert_success
}

# ---------------------------------------------------------------------------------
# harness: tests/vm/run itself

# vm_script BODY: a guest script in $BATS_TEST_TMPDIR/guest.sh.
vm_script() {
	printf '#!/bin/sh\n%s\n' "$1" >"$BATS_TEST_TMPDIR/guest.sh"
}

@test "harness: run passes the guest script's output and exit status back" {
	vm_script 'echo "hello from $(uname -r) on $VM_NETDEV"; exit 7'
	run -7 "$VM_DIR/run" "$BATS_TEST_TMPDIR/guest.sh"
	assert_line --regexp '^hello from [0-9.]+-[0-9]+-amd64 on dummy0$'
	assert_line --partial 'vm: guest script exited with status 7'
	refute_output --partial RDMAKIT-VM-EXIT
}

@test "harness: a guest kernel panic fails the run with a clear message" {
	vm_script 'echo c >/proc/sysrq-trigger; sleep 60'
	run -125 "$VM_DIR/run" --timeout 120 "$BATS_TEST_TMPDIR/guest.sh"
	assert_line --partial 'vm: the guest kernel panicked'
}

@test "harness: a guest that hangs is stopped at --timeout (exit 124)" {
	vm_script 'echo sleeping; sleep 600'
	run -124 "$VM_DIR/run" --timeout 30 "$BATS_TEST_TMPDIR/guest.sh"
	assert_line sleeping
	assert_line --partial 'vm: the guest did not finish within 30 s'
}

@test "harness: Ctrl-C removes qemu, the network namespace and its tap" {
	require_root "a network namespace with a bridge and a tap"
	local share=$BATS_TEST_TMPDIR/share pid i
	# Background jobs of a script ignore SIGINT: python gives run the default
	# disposition back, so that its trap sees the signal as a terminal would.
	mkdir -p "$share"
	vm_script ': >"$VM_SHARE/up"; sleep 600'
	python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$VM_DIR/run" --net tap --share "$share" --timeout 120 \
		"$BATS_TEST_TMPDIR/guest.sh" >"$BATS_TEST_TMPDIR/run.log" 2>&1 &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		[[ -e $share/up ]] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	[[ -e $share/up ]] || fail "the guest did not start: $(cat "$BATS_TEST_TMPDIR/run.log")"
	run ip netns list
	assert_output --partial "rdmakit-vm-$pid"
	run -0 pgrep -f -- "path=$share,"
	kill -INT "$pid"
	local rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 130
	run -1 pgrep -f -- "path=$share,"
	run ip netns list
	refute_output --partial "rdmakit-vm-$pid"
	run cat "$BATS_TEST_TMPDIR/run.log"
	assert_line --partial 'vm: interrupted'
}
