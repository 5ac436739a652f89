#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit capture, from files: decoding of every opcode and encapsulation,
# ICRC/VCRC verdicts, GSO aggregates and malformed input.  Fixtures and
# helpers: capture_helper.bash.  The JSON stream and the options are in
# capture_options.bats, the per-flow diagnosis and the agreement with
# tshark in capture_summary.bats.
#
# Some tests below were written against defects found while writing them
# (now fixed); the comment above each says what was wrong.

bats_require_minimum_version 1.5.0

load capture_helper

# --- the fixtures themselves ------------------------------------------------

@test "pcapgen writes every fixture, and a manifest of its RDMA packets" {
	for f in opcodes-ipv4 opcodes-ipv6-vlan rocev1 ib ib-erf sll sll2 raw-ip snaplen \
		cut-in-reth icrc-bad truncated-header unknown-opcode retransmit rnr-nak \
		access-error dup-ack congestion gso gso-ipv6 gso-acks udp-port-9999 mixed big-values \
		bulk truncated-file not-a-capture cut-in-deth; do
		[[ -s $FX/$f.pcap ]] || fail "$FX/$f.pcap was not written"
	done
	run python3 -c '
import json, sys, collections
n = collections.Counter(json.loads(l)["file"] for l in open(sys.argv[1]))
print(n["opcodes-ipv4.pcap"], n["opcodes-ipv6-vlan.pcap"], n["gso.pcap"], n["ib-erf.pcap"])
' "$FX/manifest.jsonl"
	assert_output "87 87 4 8"
	# Deterministic: a second run writes the very same bytes.
	"$PCAPGEN" "$BATS_TEST_TMPDIR/again"
	run diff -r "$FX" "$BATS_TEST_TMPDIR/again"
	assert_success
}

# --- decoding -------------------------------------------------------------------

@test "every generated packet decodes to exactly what the codec built (--json vs the manifest)" {
	# cut-in-reth.pcap and big-values.pcap have BUG tests of their own below.
	run python3 "$SCRIPTS/capture_manifest_check.py" "$RDMAKIT" "$FX" --skip cut-in-reth.pcap,big-values.pcap
	echo "$output"
	assert_success
}

@test "every defined opcode is named as the IBTA and Wireshark spell it" {
	cap -r "$FX/opcodes-ipv4.pcap" --json
	assert_success
	run ndjson '
names = [p["opcode_name"] for p in pkts]
assert len(pkts) == 87 and len(set(names)) == 87, (len(pkts), len(set(names)))
print(len([n for n in names if n.startswith("RC ")]), len([n for n in names if n.startswith("UC ")]),
      len([n for n in names if n.startswith("RD ")]), len([n for n in names if n.startswith("UD ")]),
      len([n for n in names if n.startswith("XRC ")]), names.count("CNP"))'
	assert_success
	assert_output "25 12 22 2 25 1"
	cap -r "$FX/opcodes-ipv4.pcap"
	assert_success
	assert_equal "${#lines[@]}" 87
	for name in "RC Send First" "RC Send Last Immediate" "RC RDMA Write Middle" \
		"RC RDMA Write Only Immediate" "RC RDMA Read Request" "RC RDMA Read Response First" \
		"RC Acknowledge" "RC Atomic Acknowledge" "RC Compare Swap" "RC Fetch Add" \
		"RC Send Last Invalidate" "RC Send Only Invalidate" "RC Flush" "RC Atomic Write" \
		"UC Send Only" "UC RDMA Write Last Immediate" "RD Send Only" "RD RESYNC" \
		"UD Send Only" "UD Send Only Immediate" "CNP" "XRC Send Only" "XRC RDMA Read Request"; do
		assert_line --partial " ECT0 $name qp 0x"
	done
}

@test "text lines: QP, PSN, A bit, RETH, AETH, atomics, immediate, IETH, DETH, payload, ICRC" {
	cap -r "$FX/opcodes-ipv4.pcap" --utc
	assert_success
	p='198.18.0.2:49154 > 198.18.0.3:4791 ECT0'
	assert_line --index 0 "00:00:00.000001500 $p RC Send First qp 0x000100 psn 65536 payload 8 ICRC ok"
	assert_line --index 11 "00:00:00.000018000 $p RC RDMA Write Only Immediate qp 0x00010b psn 65569 A reth va 0x7f000000b000 rkey 0x00abc00b len 4107 imm 0xdead000b payload 11 ICRC ok"
	assert_line --index 12 --partial "$p RC RDMA Read Request qp 0x00010c psn 65572 reth va 0x7f000000c000 rkey 0x00abc00c len 4108 ICRC ok"
	assert_line --index 16 --partial "$p RC RDMA Read Response Only qp 0x000110 psn 65584 aeth ACK credits invalid msn 32 payload 8 ICRC ok"
	assert_line --index 17 --partial "$p RC Acknowledge qp 0x000111 psn 65587 A aeth ACK credits invalid msn 33 ICRC ok"
	assert_line --index 18 --partial "$p RC Atomic Acknowledge qp 0x000112 psn 65590 aeth ACK credits invalid msn 34 orig 0xfeedfacecb10 ICRC ok"
	assert_line --index 19 --partial "$p RC Compare Swap qp 0x000113 psn 65593 A atomic va 0x7f1000000098 rkey 0x00a70013 swap_add 0x123456789abce02 compare 0xfedcba987654334 ICRC ok"
	assert_line --index 22 --partial "$p RC Send Only Invalidate qp 0x000117 psn 65605 A inv_rkey 0x1e700017 payload 11 ICRC ok"
	assert_line --index 59 --partial "$p UD Send Only qp 0x000164 psn 65836 deth qkey 0x11110064 src_qp 0x000264 payload 8 ICRC ok"
	assert_line --index 61 --partial "$p CNP qp 0x000181 psn 65923 A BECN ICRC ok"
	# AETH kinds in words.
	cap -r "$FX/retransmit.pcap"
	assert_line --index 3 --partial "198.18.0.3:49155 > 198.18.0.2:4791 RC Acknowledge qp 0x000011 psn 101 aeth NAK PSN sequence error msn 0 ICRC ok"
	cap -r "$FX/rnr-nak.pcap"
	assert_line --index 1 --partial "RC Acknowledge qp 0x000011 psn 200 aeth RNR NAK 1.28 ms msn 0 ICRC ok"
	cap -r "$FX/access-error.pcap"
	assert_line --index 1 --partial "RC Acknowledge qp 0x000011 psn 300 aeth NAK remote access error msn 0 ICRC ok"
}

@test "timestamps keep their nanoseconds (text and time_ns)" {
	cap -r "$FX/opcodes-ipv4.pcap" --utc -c 2
	assert_line --index 1 --regexp '^00:00:00\.000003000 '
	cap -r "$FX/opcodes-ipv4.pcap" --json -c 2
	run ndjson 'print([p["time_ns"] for p in pkts], type(pkts[0]["time"]).__name__)'
	assert_output "[1767225600000001500, 1767225600000003000] float"
}

@test "IPv6 with a VLAN tag; ECN: ECT0, ECT1, and CE standing out" {
	cap -r "$FX/opcodes-ipv6-vlan.pcap"
	assert_success
	assert_equal "${#lines[@]}" 87
	assert_line --index 0 --partial " [2001:2::2]:53250 > [2001:2::3]:4791 vlan 100 ECT1 RC Send First qp 0x000100 psn 65536 payload 8 ICRC ok"
	run grep -c ' vlan 100 ECT1 .* ICRC ok$' <<<"$output"
	assert_output 87
	cap -r "$FX/congestion.pcap"
	assert_line --index 2 --partial " 198.18.0.2:49154 > 198.18.0.3:4791 CE! RC RDMA Write Only qp 0x000012 psn 502 "
	run grep -c ' CE! ' <<<"$output"
	assert_output 3
	# Not-ECT is not shown at all.
	cap -r "$FX/retransmit.pcap"
	assert_line --index 3 --partial "198.18.0.3:49155 > 198.18.0.2:4791 RC Acknowledge"
}

@test "RoCEv1 by Ethertype 0x8915, with and without a VLAN tag" {
	cap -r "$FX/rocev1.pcap"
	assert_success
	run field_lines
	assert_line --index 0 "fe80::2:c903:0:2 > fe80::2:c903:0:3 RoCEv1 RC Send Only qp 0x000012 psn 32 A payload 64 ICRC ok"
	assert_line --index 1 "fe80::2:c903:0:2 > fe80::2:c903:0:3 RoCEv1 vlan 200 RC RDMA Write Only qp 0x000012 psn 33 A reth va 0x7f000000a000 rkey 0x00abc00a len 4106 payload 65 ICRC ok"
	assert_line --index 3 "fe80::2:c903:0:3 > fe80::2:c903:0:2 RoCEv1 RC Acknowledge qp 0x000011 psn 35 aeth ACK credits invalid msn 33 ICRC ok"
}

@test "native InfiniBand (LINKTYPE_INFINIBAND and ERF): LIDs, GRH GIDs, ICRC and VCRC" {
	cap -r "$FX/ib.pcap"
	assert_success
	run field_lines
	assert_line --index 0 "lid 0x0001 > lid 0x0004 RC Send Only qp 0x870400 psn 1280 A payload 32 ICRC ok VCRC ok"
	assert_line --index 1 "fe80::2:c903:0:2 > fe80::2:c903:0:3 RC RDMA Write First qp 0x870401 psn 1281 reth va 0x7f0000006000 rkey 0x00abc006 len 4102 payload 33 ICRC ok VCRC ok"
	assert_line --index 2 "lid 0x0001 > lid 0x0004 RC Acknowledge qp 0x870402 psn 1282 aeth ACK credits 32 msn 33 ICRC ok VCRC ok"
	assert_line --index 3 "fe80::2:c903:0:2 > fe80::2:c903:0:3 UD Send Only qp 0x870403 psn 1283 A deth qkey 0x11110064 src_qp 0x000264 payload 35 ICRC ok VCRC ok"
	# The same packets in ERF records decode the same (times included).
	ib=$output
	cap -r "$FX/ib-erf.pcap"
	run field_lines
	assert_equal "$output" "$ib"
	cap -r "$FX/ib.pcap" --json
	run ndjson 'print(sorted({(p["encap"], p["slid"], p["dlid"], p["icrc"], p["vcrc"]) for p in pkts}))'
	assert_output "[('ib', 1, 4, 'ok', 'ok'), ('ib', 2, 3, 'ok', 'ok')]"
}

@test "the real ERF capture: all 43 native IB packets, every ICRC and VCRC ok" {
	require_captures
	cap -r "$CAPS/srinivaskoritala-rdma-softroce-demo_infiniband.pcap" --json
	assert_success
	run ndjson '
print(len(pkts), sum(p.get("icrc") == "ok" for p in pkts), sum(p.get("vcrc") == "ok" for p in pkts))
ops = {}
for p in pkts:
    ops[p["opcode_name"]] = ops.get(p["opcode_name"], 0) + 1
print(sorted(ops.items()))'
	assert_line --index 0 "43 43 43"
	assert_line --index 1 "[('RC Acknowledge', 9), ('RC Send Only', 10), ('UD Send Only', 24)]"
}

@test "RoCEv2 with UDP source port 69 is RoCE, not TFTP; every ICRC of the public capture ok" {
	require_captures
	cap -r "$CAPS/oferby-proxy_roce.pcap" --json
	assert_success
	run ndjson '
print(len(pkts), sum(p["icrc"] == "ok" for p in pkts), sum(p["src_port"] == 69 for p in pkts))
print(summary["non_rdma"])'
	assert_line --index 0 "105 105 37"
	assert_line --index 1 18
}

@test "Linux cooked captures (SLL and SLL2) and raw IP decode like Ethernet" {
	cap -r "$FX/sll.pcap"
	assert_success
	run field_lines
	assert_line --index 0 "198.18.0.2:49154 > 198.18.0.3:4791 ECT0 RC Send Only qp 0x000012 psn 64 A payload 100 ICRC ok"
	assert_line --index 2 "[2001:2::2]:53250 > [2001:2::3]:4791 ECT0 RC Send Only qp 0x000012 psn 66 A payload 100 ICRC ok"
	sll=$output
	cap -r "$FX/sll2.pcap"
	run field_lines
	assert_equal "$output" "$sll"
	cap -r "$FX/raw-ip.pcap"
	run field_lines
	assert_line --index 0 "198.18.0.2:49154 > 198.18.0.3:4791 ECT0 RC RDMA Write Only Immediate qp 0x000012 psn 96 A reth va 0x7f000000b000 rkey 0x00abc00b len 4107 imm 0xdead000b payload 40 ICRC ok"
	assert_line --index 1 --partial "[2001:2::2]:53250 > [2001:2::3]:4791 ECT0 RC RDMA Write Only Immediate qp 0x000012 psn 97 A"
}

@test "pcapng reads the same as pcap" {
	require_tool editcap "converting a fixture to pcapng"
	cap -r "$FX/opcodes-ipv6-vlan.pcap" --json
	want=$output
	editcap -F pcapng "$FX/opcodes-ipv6-vlan.pcap" "$BATS_TEST_TMPDIR/o.pcapng"
	cap -r "$BATS_TEST_TMPDIR/o.pcapng" --json
	assert_success
	assert_equal "$output" "$want"
}

# --- ICRC verdicts, malformed input ---------------------------------------------

@test "a frame cut by the snap length is ICRC unchecked, never BAD" {
	cap -r "$FX/snaplen.pcap"
	assert_success
	assert_line --index 0 --partial "RC RDMA Write Only qp 0x000012 psn 112 A reth va 0x7f000000a000 rkey 0x00abc00a len 4106 payload 1024 ICRC unchecked"
	assert_line --index 1 --partial "RC Acknowledge qp 0x000011 psn 112 aeth ACK credits invalid msn 1 ICRC ok"
	refute_output --partial BAD
	cap -r "$FX/snaplen.pcap" --summary --json
	run ndjson 'print(summary["icrc_unchecked"], summary["icrc_bad"], summary["malformed"])'
	assert_output "1 0 0"
}

# Regression test for a fixed defect (lib/transport/wire.c decode_transport + cmd/capture.c handle_record):
# a frame that the snap length cuts inside its extended headers (here 8 bytes
# into the RETH of an RDMA WRITE Only: UDP length 552, 62 of 586 bytes captured)
# is decoded with status "truncated", so handle_record never calls
# icrc_verify: the line shows no ICRC verdict at all (JSON: no "icrc" key),
# where the issue says a frame cut short by the snap length is "unchecked";
# and payload_off/payload_len are never set, so it claims "payload 0" (JSON
# payload_len 0) for a packet whose length fields say 512 payload bytes.
@test "a frame cut inside its RETH is flagged, ICRC unchecked, and claims no payload size it does not know" {
	cap -r "$FX/cut-in-reth.pcap"
	assert_success
	assert_line --index 0 --partial "RC RDMA Write Only qp 0x000012 psn 120 A"
	assert_line --index 0 --partial "[truncated]"
	assert_line --index 0 --partial "ICRC unchecked"
	refute_line --index 0 --partial "payload 0 "
	cap -r "$FX/cut-in-reth.pcap" --json
	run ndjson 'print(pkts[0]["status"], pkts[0].get("icrc"), pkts[0].get("payload_len", "absent"))'
	assert_output --regexp '^truncated unchecked (512|absent)$'
}

@test "a corrupted payload byte is ICRC BAD, and the summary flags the failure" {
	cap -r "$FX/icrc-bad.pcap"
	assert_success
	assert_line --index 0 --partial "RC Send Only qp 0x000012 psn 128 A payload 64 ICRC ok"
	assert_line --index 1 --partial "RC Send Only qp 0x000012 psn 129 A payload 64 ICRC BAD"
	cap -r "$FX/icrc-bad.pcap" --summary
	assert_success
	assert_line --regexp '^2 RDMA packets, 244 bytes in .*ICRC 1 bad, 0 unchecked$'
	assert_line "  flow 198.18.0.2 > 198.18.0.3 qp 0x000012: 1 ICRC failures: corrupted on the way, or not a RoCE sender"
	cap -r "$FX/icrc-bad.pcap" --json
	run ndjson 'print([p["icrc"] for p in pkts], summary["icrc_bad"], summary["flows"][0]["icrc_bad"])'
	assert_output "['ok', 'bad'] 1 1"
}

@test "--no-icrc skips the ICRC and VCRC checks" {
	cap -r "$FX/icrc-bad.pcap" --no-icrc
	assert_success
	assert_equal "${#lines[@]}" 2
	refute_output --partial ICRC
	cap -r "$FX/ib.pcap" --no-icrc
	refute_output --partial CRC
	cap -r "$FX/icrc-bad.pcap" --no-icrc --json
	run ndjson 'print(["icrc" in p for p in pkts], summary["icrc_bad"])'
	assert_output "[False, False] 0"
}

@test "truncated and malformed headers are printed as far as they go, flagged, never a crash" {
	cap -r "$FX/truncated-header.pcap"
	assert_success
	assert_equal "$stderr" ""
	run field_lines
	assert_line --index 0 "198.18.0.2:49154 > 198.18.0.3:4791 ECT0 [truncated]"
	assert_line --index 1 "198.18.0.2:49154 > 198.18.0.3:4791 ECT0 [malformed]"
	cap -r "$FX/truncated-header.pcap" --json
	run ndjson 'print([(p["status"], "opcode" in p) for p in pkts], summary["malformed"], summary["packets"])'
	assert_output "[('truncated', False), ('malformed', False)] 2 0"
}

@test "undefined opcodes are flagged with their number, the BTH still decoded, ICRC checked" {
	cap -r "$FX/unknown-opcode.pcap"
	assert_success
	run field_lines
	assert_line --index 0 "198.18.0.2:49154 > 198.18.0.3:4791 ECT0 [unknown opcode 0x1f] qp 0x000012 psn 160 A ICRC ok"
	assert_line --index 1 "198.18.0.2:49154 > 198.18.0.3:4791 ECT0 [unknown opcode 0xc0] qp 0x000012 psn 161 A ICRC ok"
	cap -r "$FX/unknown-opcode.pcap" --summary --json
	run ndjson 'print(summary["flows"][0]["opcodes"])'
	assert_output "{'0x1f': 1, '0xc0': 1}"
}

@test "a UDP GSO aggregate is split into its 4 packets, each ICRC ok, never ICRC BAD" {
	cap -r "$FX/gso.pcap"
	assert_success
	refute_output --partial "ICRC BAD"
	run field_lines
	p='198.18.0.2:49154 > 198.18.0.3:4791 ECT0'
	assert_line --index 0 "$p RC RDMA Write First qp 0x000012 psn 1536 reth va 0x7f0000200000 rkey 0x00004321 len 3556 payload 1008 [GSO 1/4] ICRC ok"
	assert_line --index 1 "$p RC RDMA Write Middle qp 0x000012 psn 1537 payload 1024 [GSO 2/4] ICRC ok"
	assert_line --index 2 "$p RC RDMA Write Middle qp 0x000012 psn 1538 payload 1024 [GSO 3/4] ICRC ok"
	assert_line --index 3 "$p RC RDMA Write Last qp 0x000012 psn 1539 A payload 500 [GSO 4/4] ICRC ok"
	assert_equal "${#lines[@]}" 4
	cap -r "$FX/gso.pcap" --json
	run ndjson '
print([(p["frame"], p["gso"]["segment"], p["gso"]["segments"], p["icrc"]) for p in pkts])
f = summary["flows"][0]
print(summary["packets"], summary["icrc_bad"], f["retransmits"], f["psn_gaps"], f["gso_segments"])'
	assert_line --index 0 "[(1, 1, 4, 'ok'), (1, 2, 4, 'ok'), (1, 3, 4, 'ok'), (1, 4, 4, 'ok')]"
	assert_line --index 1 "4 0 0 0 4"
	# Over IPv6 (no IP ID) with a VLAN tag: 3 segments.
	cap -r "$FX/gso-ipv6.pcap"
	refute_output --partial "ICRC BAD"
	assert_line --index 2 --partial "vlan 100 ECT0 RC RDMA Write Last qp 0x000012 psn 1538 A payload 500 [GSO 3/3] ICRC ok"
}

@test "a GSO aggregate of ACKs and a NAK, whose PSNs do not count up by one, is split too" {
	# What a soft-engine responder sends on lo under loss: these were one
	# 'ACK ... ICRC BAD' with 40 bytes of payload before.
	cap -r "$FX/gso-acks.pcap"
	assert_success
	refute_output --partial "ICRC BAD"
	run field_lines
	p='198.18.0.2:49154 > 198.18.0.3:4791 RC Acknowledge qp 0x000012'
	assert_line --index 0 "$p psn 1792 aeth ACK credits invalid msn 7 [GSO 1/3] ICRC ok"
	assert_line --index 1 "$p psn 1795 aeth NAK PSN sequence error msn 8 [GSO 2/3] ICRC ok"
	assert_line --index 2 "$p psn 1798 aeth ACK credits invalid msn 9 [GSO 3/3] ICRC ok"
	assert_equal "${#lines[@]}" 3
	cap -r "$FX/gso-acks.pcap" --json
	run ndjson 'f = summary["flows"][0]; print(summary["icrc_bad"], f["packets"], f["naks"]["psn_seq_err"])'
	assert_output "0 3 1"
}
