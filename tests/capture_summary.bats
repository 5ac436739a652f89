#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit capture: the per-flow diagnosis (--summary), exact 64-bit values,
# field-for-field agreement with tshark's InfiniBand dissector on every real
# and generated capture, and the flow table's memory bound.  Fixtures and
# helpers: capture_helper.bash.

bats_require_minimum_version 1.5.0

load capture_helper

# --- the diagnosis --------------------------------------------------------------

@test "summary: go-back-N after a PSN gap shows retransmits, the gap and the NAK, in plain words" {
	cap -r "$FX/retransmit.pcap" --summary --json
	assert_success
	run ndjson '
a = flow("198.18.0.2", "198.18.0.3", 0x12)
b = flow("198.18.0.3", "198.18.0.2", 0x11)
print(a["packets"], a["retransmits"], a["psn_gaps"], a["out_of_order"], a["naks"]["psn_seq_err"])
print(b["packets"], b["naks"]["psn_seq_err"], b["retransmits"], b["dup_acks"])
print(a["opcodes"])
print(a["ack_delay_us"]["count"] > 0)
for p in summary["problems"]: print(p)'
	assert_line --index 0 "10 2 1 1 0"
	assert_line --index 1 "3 1 0 0"
	assert_line --index 2 "{'RC RDMA Write First': 1, 'RC RDMA Write Middle': 3, 'RC RDMA Write Last': 2, 'RC RDMA Write Only': 4}"
	assert_line --index 3 "True"
	assert_line "flow 198.18.0.2 > 198.18.0.3 qp 0x000012: 2 retransmissions after 1 NAK(PSN sequence error)"
	assert_line "flow 198.18.0.2 > 198.18.0.3 qp 0x000012: 1 PSNs missing (lost before the capture point)"
	assert_line "flow 198.18.0.3 > 198.18.0.2 qp 0x000011: 1 NAK(PSN sequence error)"
	cap -r "$FX/retransmit.pcap" --summary
	assert_line --regexp '^198\.18\.0\.2 > 198\.18\.0\.3 qp 0x000012 +10 +7828 +[0-9.]+ +2 +1 +0 +0 +0 +0 +0 +0 '
	assert_line --regexp '^198\.18\.0\.3 > 198\.18\.0\.2 qp 0x000011 +3 +186 +[0-9.]+ +0 +0 +1 +0 +0 +0 +0 +0 '
	assert_line "  flow 198.18.0.2 > 198.18.0.3 qp 0x000012: 2 retransmissions after 1 NAK(PSN sequence error)"
}

# Regression test for a fixed defect (lib/capture/flows.c account_response): a NAK returns before
# find_peer(), so the requester flow is linked to its responder only by a
# later positive ACK.  When the capture ends (or -c stops) after the
# go-back-N resend but before that ACK, the NAK is in the capture and in the
# responder's counts, yet the problem line says "2 retransmissions (no NAK
# seen: ACK timeouts, or loss of the NAK)".  Input: retransmit.pcap -c 7
# (frames 1-7: WRITE 100, 102, 103, NAK(PSN seq err) 101, resend 101-103).
@test "retransmissions are tied to the NAK even when the capture ends before the next ACK" {
	cap -r "$FX/retransmit.pcap" --summary --json -c 7
	assert_success
	run ndjson '
print(flow("198.18.0.3", "198.18.0.2", 0x11)["naks"]["psn_seq_err"])
for p in summary["problems"]: print(p)'
	assert_line --index 0 1
	assert_line "flow 198.18.0.2 > 198.18.0.3 qp 0x000012: 2 retransmissions after 1 NAK(PSN sequence error)"
}

@test "summary: an RNR NAK is counted and explained" {
	cap -r "$FX/rnr-nak.pcap" --summary --json
	assert_success
	run ndjson '
a = flow("198.18.0.2", "198.18.0.3", 0x12)
b = flow("198.18.0.3", "198.18.0.2", 0x11)
print(b["rnr_naks"], sum(b["naks"].values()), a["retransmits"])
for p in summary["problems"]: print(p)'
	assert_line --index 0 "1 0 1"
	assert_line "flow 198.18.0.3 > 198.18.0.2 qp 0x000011: 1 RNR NAKs: the receiver had no RECV posted"
}

# Regression test for a fixed defect (lib/capture/summary.c flow_problems): a retransmission that follows an
# RNR NAK (the requester resends after the RNR timer, as the IBTA requires)
# is reported as "1 retransmissions (no NAK seen: ACK timeouts, or loss of
# the NAK)": only PSN-sequence-error NAKs are looked for, so the line states
# that no NAK was seen and blames timeouts, while the capture holds the RNR
# NAK that caused it.  Input: rnr-nak.pcap (SEND 200, RNR NAK, SEND 200, ACK).
@test "a resend after an RNR NAK is not blamed on ACK timeouts or a lost NAK" {
	cap -r "$FX/rnr-nak.pcap" --summary --json
	assert_success
	run ndjson 'print("\n".join(summary["problems"]))'
	assert_line --partial "flow 198.18.0.2 > 198.18.0.3 qp 0x000012: 1 retransmissions"
	refute_output --partial "no NAK seen"
}

@test "summary: a remote access error NAK is counted and explained" {
	cap -r "$FX/access-error.pcap" --summary --json
	assert_success
	run ndjson '
b = flow("198.18.0.3", "198.18.0.2", 0x11)
print(b["naks"])
for p in summary["problems"]: print(p)'
	assert_line --index 0 "{'psn_seq_err': 0, 'invalid_req': 0, 'remote_access_err': 1, 'remote_op_err': 0, 'invalid_rd_req': 0, 'other': 0}"
	assert_line "flow 198.18.0.3 > 198.18.0.2 qp 0x000011: 1 NAK(remote access error): wrong rkey, bounds or access rights"
	assert_equal "${#lines[@]}" 2
}

@test "summary: duplicate ACKs are counted" {
	cap -r "$FX/dup-ack.pcap" --summary --json
	assert_success
	run ndjson '
a = flow("198.18.0.2", "198.18.0.3", 0x12)
b = flow("198.18.0.3", "198.18.0.2", 0x11)
print(b["dup_acks"], a["dup_acks"], a["retransmits"], b["packets"])'
	assert_output "2 0 0 4"
	cap -r "$FX/dup-ack.pcap" --summary
	assert_line --regexp '^198\.18\.0\.3 > 198\.18\.0\.2 qp 0x000011 +4 +248 +[0-9.]+ +0 +0 +0 +0 +2 +0 +0 +0 '
}

@test "summary: CNPs to the sender's QP and CE-marked packets are counted and explained" {
	cap -r "$FX/congestion.pcap" --summary --json
	assert_success
	run ndjson '
a = flow("198.18.0.2", "198.18.0.3", 0x12)
b = flow("198.18.0.3", "198.18.0.2", 0x11)
print(a["ce_marked"], a["cnps"], b["cnps"], b["ce_marked"], b["opcodes"])
for p in summary["problems"]: print(p)'
	assert_line --index 0 "3 0 2 0 {'RC Acknowledge': 1, 'CNP': 2}"
	assert_line "flow 198.18.0.2 > 198.18.0.3 qp 0x000012: 3 packets CE-marked by the network"
	assert_line "flow 198.18.0.3 > 198.18.0.2 qp 0x000011: 2 CNPs: congestion notified to this QP"
	cap -r "$FX/congestion.pcap" --summary
	assert_line --regexp '^198\.18\.0\.2 > 198\.18\.0\.3 qp 0x000012 +10 +5860 +[0-9.]+ +0 +0 +0 +0 +0 +0 +3 +0 '
	assert_line --regexp '^198\.18\.0\.3 > 198\.18\.0\.2 qp 0x000011 +3 +210 +[0-9.]+ +0 +0 +0 +0 +0 +2 +0 +0 '
}

@test "summary of clean traffic: no problems, in words" {
	require_captures
	cap -r "$CAPS/rxe/roce-write_bw.pcap" --summary
	assert_success
	assert_line "No retransmissions, NAKs, CNPs, CE marks or ICRC failures seen."
	cap -r "$CAPS/rxe/roce-write_bw.pcap" --summary --json
	run ndjson '
print(summary["packets"], summary["problems"], [f["packets"] for f in summary["flows"]])
print(flow("198.18.0.3", "198.18.0.2", 0x11)["ack_delay_us"]["count"])'
	assert_line --index 0 "100 [] [80, 20]"
	assert_line --index 1 20
}

# --- 64-bit values ----------------------------------------------------------------

# Regression test for a fixed defect (lib/capture/render.c set_u64): 64-bit fields above INT64_MAX are
# written as 9223372036854775807 in JSON: RETH/AtomicETH VAs (kernel
# addresses such as 0xffff888012345000), atomic operands (compare
# 0xffffffffffffffff, swap 0x8000000000000000) and AtomicAckETH original
# values.  The text line shows them right.  Real traffic hits it:
# rxe/roce-atomic_fa.pcap has 10 ATOMIC ACKs whose original value is above
# 2^63 (frames 21, 23, 26, 27, 29, 31, 34, 35, 39, 40), and the tshark
# comparisons below fail on them for this reason alone.
@test "64-bit VAs and atomic operands above 2^63 are exact in JSON" {
	cap -r "$FX/big-values.pcap"
	assert_line --index 0 --partial "reth va 0xffff888012345000 rkey 0xfffffff0 len 4294967295"
	assert_line --index 1 --partial "atomic va 0xffffc90000001000 rkey 0x80000001 swap_add 0x8000000000000000 compare 0xffffffffffffffff"
	assert_line --index 2 --partial "orig 0xfedcba9876543210"
	run python3 "$SCRIPTS/capture_manifest_check.py" "$RDMAKIT" "$FX" big-values.pcap
	echo "$output"
	assert_success
}

# --- ground truth: tshark ---------------------------------------------------------

@test "TRUTH: every packet of the real captures agrees with tshark field for field" {
	require_tool tshark "the outside reference decoder"
	require_tool mergecap "joining captures for one tshark run"
	require_captures
	shopt -s nullglob
	local files=("$CAPS"/*.pcap "$CAPS"/*.pcapng "$CAPS"/rxe/*.pcap "$CAPS"/rxe/*.pcapng)
	(( ${#files[@]} >= 7 )) || fail "expected at least 7 captures in $CAPS, found: ${files[*]}"
	run python3 "$SCRIPTS/capture_truth.py" "$RDMAKIT" "$BATS_TEST_TMPDIR" "${files[@]}"
	echo "$output"
	assert_success
}

@test "TRUTH: every packet of every generated fixture agrees with tshark field for field" {
	require_tool tshark "the outside reference decoder"
	require_tool mergecap "joining captures for one tshark run"
	local files=() f
	# Not here: ib.pcap (tshark 4.0 cannot read LINKTYPE_INFINIBAND; ib-erf.pcap
	# holds the same packets), bulk.pcap (2500 copies of one packet layout),
	# and the files that are not whole captures.
	for f in opcodes-ipv4 opcodes-ipv6-vlan rocev1 ib-erf sll sll2 raw-ip snaplen \
		cut-in-reth icrc-bad truncated-header unknown-opcode retransmit rnr-nak \
		access-error dup-ack congestion gso gso-ipv6 gso-acks mixed big-values; do
		files+=("$FX/$f.pcap")
	done
	run python3 "$SCRIPTS/capture_truth.py" "$RDMAKIT" "$BATS_TEST_TMPDIR" "${files[@]}" \
		"$FX/udp-port-9999.pcap;--udp-port 9999"
	echo "$output"
	assert_success
}

@test "regression: rxe <-> soft engine interop frames decode as tshark decodes them, every ICRC ok" {
	local dir=$RDMAKIT_ROOT/tests/captures
	run -0 "$RDMAKIT" -j capture -r "$dir/rxe-soft-interop.pcap"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/interop.json"
	python3 - "$dir/rxe-soft-interop.tshark" "$BATS_TEST_TMPDIR/interop.json" <<'PY' || fail "decode differs"
import json, sys
ref = {}
for l in open(sys.argv[1]):
    f, op, qp, psn, src = l.split()
    ref[int(f)] = (int(op), int(qp, 16), int(psn), src)
pkts = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
pkts = [p for p in pkts if "frame" in p]
mine = {p["frame"]: (p["opcode"], p["dest_qp"], p["psn"], p["src"]) for p in pkts}
assert mine == ref, [(k, mine.get(k), ref.get(k)) for k in sorted(set(mine) | set(ref)) if mine.get(k) != ref.get(k)][:5]
assert all(p["icrc"] == "ok" for p in pkts), [p["frame"] for p in pkts if p["icrc"] != "ok"]
# Both stacks, as requester and as responder.
assert {p["src"] for p in pkts} == {"198.18.0.1", "198.18.0.2"}
assert len({p["opcode"] for p in pkts}) >= 16
PY
}

@test "--max-flows bounds the flow table: 200,000 distinct QPs cost at most the limit's memory; the rest are counted" {
	local f=$BATS_TEST_TMPDIR/many-flows.pcap rss
	require_tool /usr/bin/time "GNU time, for the peak RSS (Debian's time)"
	# 200,000 RC SEND Only packets, each to its own destination QP.
	python3 - "$f" <<'PY'
import struct, sys
out = open(sys.argv[1], "wb")
out.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
eth = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00"
for q in range(200000):
    bth = struct.pack(">BBHI I", 0x04, 0x40, 0xFFFF, q + 2, 0x80000000 | 1)
    payload = bth + b"\0" * 4
    udp = struct.pack(">HHHH", 49152, 4791, 8 + len(payload), 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(payload), 0, 0x4000, 64, 17, 0,
                     bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
    frame = eth + ip + udp + payload
    out.write(struct.pack("<IIII", 1, q, len(frame), len(frame)) + frame)
PY
	run --separate-stderr /usr/bin/time -f '%M' "$RDMAKIT" capture -r "$f" --summary --json --max-flows 1000
	assert_success
	rss=${stderr_lines[-1]}
	# 1000 flows of about 50 KB each, plus the program: well under 100 MB.
	(( rss < 100 * 1024 )) || fail "peak RSS $rss KiB"
	run ndjson 'print(summary["packets"], len(summary["flows"]), summary["untracked_packets"])'
	assert_output "200000 1000 199000"
	cap -r "$f" --summary --max-flows 1000
	assert_line "199000 packets in flows beyond the first 1000: counted, not diagnosed (raise --max-flows)"
	cap -r "$f" --max-flows 0
	assert_failure 2
}

@test "summary: UC and UD flows for what they are: gaps are loss, a repeat a duplicate, UD keyed by its source QP with its Q_Key, no ACKs looked for" {
	cap -r "$FX/unreliable.pcap" --summary --json
	assert_success
	run ndjson '
uc = flow("198.18.0.2", "198.18.0.3", 0x12)
(ud,) = [f for f in summary["flows"] if f["transport"] == "UD"]
print(uc["transport"], uc["packets"], uc["psn_gaps"], uc["retransmits"], uc["ack_delay_us"]["count"])
print(ud["src"], ud["src_qp"], hex(ud["qkey"]), ud["packets"], ud["psn_gaps"], "dst" in ud, "dest_qp" in ud)
for p in summary["problems"]: print(p)'
	assert_line --index 0 "UC 7 1 1 0"
	assert_line --index 1 "198.18.0.2 119 0x11111111 4 1 False False"
	assert_line "flow 198.18.0.2 > 198.18.0.3 UC qp 0x000012: 1 PSNs missing: packets lost before the capture point (UC resends nothing)"
	assert_line "flow 198.18.0.2 > 198.18.0.3 UC qp 0x000012: 1 packets seen twice: duplicated on the way (UC resends nothing)"
	assert_line "flow 198.18.0.2 UD src qp 0x000077: 1 PSNs missing: packets lost before the capture point (UD resends nothing)"
	refute_output --partial "ACK timeouts"
	refute_output --partial "retransmissions"
}

@test "summary: a UD packet cut before its DETH's source QP is kept apart (source QP and Q_Key null), out of every sender's PSN sequence, and named as a possible cause of that address's gaps" {
	cap -r "$FX/cut-in-deth.pcap" --summary --json
	assert_success
	run ndjson '
ud = sorted((f for f in summary["flows"] if f["transport"] == "UD"), key=lambda f: f["packets"])
print(len(summary["flows"]), summary["malformed"])
for f in ud: print(f["src"], f["src_qp"], f["qkey"], f["packets"], f["psn_gaps"], f["retransmits"], f["out_of_order"])
for p in summary["problems"]: print(p)'
	assert_line --index 0 "2 1"
	assert_line --index 1 "198.18.0.2 None None 1 0 0 0"
	assert_line --index 2 "198.18.0.2 119 286331153 2 1 0 0"
	assert_line "flow 198.18.0.2 UD src qp ? (cut before the DETH): 1 UD packets cut by the snap length before their source QP: a PSN missing from this address's UD flows may be one of them (capture with a larger -s)"
	cap -r "$FX/cut-in-deth.pcap"
	assert_line --index 1 --partial "UD Send Only qp 0x000021 psn 801"
	assert_line --index 1 --partial "[truncated] ICRC unchecked"
	refute_line --index 1 --partial "src_qp"
}
