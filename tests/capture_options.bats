#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit capture: the JSON stream, the options (-c, -v, --no-icrc,
# --udp-port, BPF filters, -w, -C/-W), errors and exit codes.  Fixtures and
# helpers: capture_helper.bash.

bats_require_minimum_version 1.5.0

load capture_helper

# --- JSON ---------------------------------------------------------------------------

@test "--json: NDJSON, the documented keys with JSON types, the summary last" {
	all=
	for f in opcodes-ipv4 opcodes-ipv6-vlan ib-erf retransmit gso snaplen icrc-bad mixed; do
		cap -r "$FX/$f.pcap" --json
		assert_success
		all+=$output$'\n'
	done
	output=${all%$'\n'}
	run ndjson '
import numbers
def num(x): return type(x) is int
def real(x): return isinstance(x, numbers.Real) and type(x) is not bool
obj_keys = {"reth": ("va", "rkey", "dma_len"), "aeth": ("syndrome", "code", "msn"),
            "atomic": ("va", "rkey", "swap_add", "compare"), "atomic_ack": ("orig",),
            "deth": ("qkey", "src_qp")}
seen, n, summaries = set(), 0, 0
for i, p in enumerate(lines):
    if "summary" in p:
        # The summary ends each file: the next line is a new file (frame 1) or the end.
        assert list(p) == ["summary"], p
        assert i + 1 == len(lines) or "frame" in lines[i + 1], lines[i + 1]
        s = p["summary"]
        for k in ("packets", "bytes", "non_rdma", "malformed", "icrc_bad", "icrc_unchecked"):
            assert num(s[k]), k
        assert real(s["duration_s"]), s
        assert type(s["flows"]) is list and type(s["problems"]) is list
        summaries += 1
        continue
    n += 1
    for k in ("frame", "dest_qp", "psn", "opcode", "payload_len"):
        assert num(p[k]), (k, p)
    assert real(p["time"]) and num(p["time_ns"]), p
    assert type(p["ack_req"]) is bool, p
    assert type(p["opcode_name"]) is str, p
    assert p["icrc"] in ("ok", "bad", "unchecked"), p
    assert type(p["src"]) is str and type(p["dst"]) is str, p
    if p["encap"] == "rocev2":
        assert p["ecn"] in ("not-ect", "ect0", "ect1", "ce"), p
        assert num(p["src_port"]) and num(p["dst_port"]), p
    for k, sub in obj_keys.items():
        if k in p:
            seen.add(k)
            for s in sub:
                assert num(p[k][s]), (k, s, p)
    if "aeth" in p:
        assert p["aeth"]["kind"] in ("ack", "rnr_nak", "nak", "reserved"), p
    for k in ("immdt", "ieth"):
        if k in p:
            seen.add(k)
            assert num(p[k]), (k, p)
assert "summary" in lines[-1]
print(summaries, n, " ".join(sorted(seen)))'
	assert_success
	assert_output "8 211 aeth atomic atomic_ack deth ieth immdt reth"
}

@test "every JSON key rdmakit prints is documented in man/rdmakit-capture.1" {
	require_tool groff "reading the man page"
	all=
	for f in opcodes-ipv4 opcodes-ipv6-vlan ib-erf truncated-header gso congestion; do
		for v in "" -v; do
			cap -r "$FX/$f.pcap" --json $v
			assert_success
			all+=$output$'\n'
		done
	done
	output=${all%$'\n'}
	run ndjson '
keys = set()
def walk(o, skip_children=False):
    for k, v in o.items():
        keys.add(k)
        if isinstance(v, dict) and k != "opcodes":    # "opcodes" maps opcode names
            walk(v)
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, dict):
                    walk(x)
for o in lines:
    walk(o)
print("\n".join(sorted(keys)))'
	assert_success
	keys=$output
	text=$(man_text "$RDMAKIT_ROOT/man/rdmakit-capture.1")
	missing=
	for k in $keys; do
		has_word "$text" "$k" || missing+=" $k"
	done
	[[ -z $missing ]] || fail "keys not in man/rdmakit-capture.1:$missing"
}

@test "--summary --json prints only the summary line; --summary prints no packets" {
	cap -r "$FX/retransmit.pcap" --summary --json
	assert_success
	assert_equal "${#lines[@]}" 1
	run ndjson 'print(len(pkts), summary["packets"], len(summary["flows"]))'
	assert_output "0 13 2"
	cap -r "$FX/retransmit.pcap" --json
	assert_equal "${#lines[@]}" 14
	assert_line --index 13 --regexp '^\{"summary": ?\{'
	# Without --summary a file read prints packets only; with it, only the diagnosis.
	cap -r "$FX/retransmit.pcap"
	assert_equal "${#lines[@]}" 13
	refute_output --partial "RDMA packets"
	cap -r "$FX/retransmit.pcap" --summary
	refute_output --partial "RC RDMA Write"
	assert_line --regexp '^13 RDMA packets, 8014 bytes in 0\.000018 s; 2 flows; 0 other, 0 malformed; ICRC 0 bad, 0 unchecked$'
	assert_line --regexp '^flow +packets +bytes +Gb/s +retx +gaps +NAK +RNR +dupACK +CNP +CE +ICRC! +ack p50us +ack p99us$'
}

@test "-v prints every header field (text and JSON)" {
	cap -r "$FX/opcodes-ipv4.pcap" -v -c 1
	assert_success
	assert_output --partial " eth 02:00:c6:12:00:02 > 02:00:c6:12:00:03 ip dscp 26 ttl 64 id 0x0001 DF len 52 udp len 32 csum 0x0000 pkey 0xffff se 0 m 0 pad 0 tver 0 fecn 0 becn 0 payload 8 ICRC ok"
	cap -r "$FX/opcodes-ipv6-vlan.pcap" -v -c 2
	assert_line --index 1 --partial " vlan 100 pcp 3 ip6 dscp 26 flow 0x12345 hlim 64 len 36 udp len 36 csum 0x0000 pkey 0xffff se 0 m 0 pad 3 tver 0 fecn 0 becn 0 "
	cap -r "$FX/ib-erf.pcap" -v -c 2
	assert_line --index 0 --partial " lrh vl 0 sl 0 lnh 2 pktlen 14 pkey 0xffff "
	assert_line --index 1 --partial " lrh vl 0 sl 0 lnh 3 pktlen 29 grh tclass 0x00 flow 0x00000 paylen 68 hoplmt 255 pkey 0xffff se 0 m 0 pad 3 "
	cap -r "$FX/rocev1.pcap" -v -c 2
	assert_line --index 1 --partial " eth 02:00:c6:12:00:02 > 02:00:c6:12:00:03 vlan 200 pcp 5 grh tclass 0x00 flow 0x00000 paylen 100 hoplmt 1 "
	cap -r "$FX/opcodes-ipv4.pcap" -v --json -c 3
	run ndjson '
p = pkts[2]
print(p["se"], p["mig_req"], p["pad_count"], p["tver"], p["pkey"], p["fecn"], p["becn"], p["dscp"], p["ttl"], p["ip_id"], p["frame_len"])'
	assert_output "True False 2 0 65535 False False 26 64 3 70"
	cap -r "$FX/opcodes-ipv6-vlan.pcap" -v --json -c 1
	run ndjson 'p = pkts[0]; print(p["flow_label"], p["hop_limit"], p["dscp"], p["ecn"])'
	assert_output "74565 64 26 ect1"
}

# --- options ------------------------------------------------------------------------

@test "-c COUNT stops after COUNT RDMA packets; other records do not count" {
	cap -r "$FX/mixed.pcap" -c 3 --json
	assert_success
	run ndjson 'print([p["frame"] for p in pkts], summary["packets"], summary["non_rdma"])'
	assert_output "[2, 4, 5] 3 2"
	cap -r "$FX/mixed.pcap" -c 3
	assert_equal "${#lines[@]}" 3
	cap -r "$FX/mixed.pcap" --json
	run ndjson 'print([p["frame"] for p in pkts], summary["non_rdma"])'
	assert_output "[2, 4, 5, 7, 9, 10, 12, 13] 5"
	# A COUNT beyond the end reads the whole file.
	cap -r "$FX/mixed.pcap" -c 1000
	assert_success
	assert_equal "${#lines[@]}" 8
}

@test "--udp-port decodes RoCEv2 sent to another UDP port; the default port does not" {
	cap -r "$FX/udp-port-9999.pcap" --json
	assert_success
	run ndjson 'print(len(pkts), summary["non_rdma"])'
	assert_output "0 2"
	cap -r "$FX/udp-port-9999.pcap" --udp-port 9999
	assert_success
	run field_lines
	assert_line --index 0 "198.18.0.2:49154 > 198.18.0.3:9999 ECT0 RC Send Only qp 0x000012 psn 1792 A payload 48 ICRC ok"
	assert_line --index 1 "198.18.0.3:49155 > 198.18.0.2:9999 RC Acknowledge qp 0x000011 psn 1792 aeth ACK credits invalid msn 1 ICRC ok"
}

@test "-r - reads the capture from standard input" {
	run --separate-stderr bash -c '"$1" capture -r - --json <"$2"' _ "$RDMAKIT" "$FX/retransmit.pcap"
	assert_success
	from_stdin=$output
	cap -r "$FX/retransmit.pcap" --json
	assert_equal "$from_stdin" "$output"
}

@test "a BPF filter with -r keeps the frame numbers tshark gives" {
	require_tool tshark "frame numbers to compare with"
	cap -r "$FX/mixed.pcap" --json ip src host 198.18.0.3
	assert_success
	run ndjson 'print(" ".join(str(p["frame"]) for p in pkts))'
	assert_output "4 7 10 13"
	ours=$output
	run --separate-stderr tshark -n -r "$FX/mixed.pcap" -Y 'ip.src == 198.18.0.3 && infiniband' -T fields -e frame.number
	assert_success
	assert_equal "$(echo $output)" "$ours"
	# The public capture: 37 RoCE frames sent from UDP port 69, among TCP, ICMPv6 and ARP.
	require_captures
	cap -r "$CAPS/oferby-proxy_roce.pcap" --json udp src port 69
	run ndjson 'print(" ".join(str(p["frame"]) for p in pkts))'
	ours=$output
	assert_equal "$(wc -w <<<"$ours")" 37
	run --separate-stderr tshark -n -r "$CAPS/oferby-proxy_roce.pcap" -Y 'udp.srcport == 69' -T fields -e frame.number
	assert_success
	assert_equal "$(echo $output)" "$ours"
}

@test "-w saves what was read (also while printing); rdmakit, tshark and tcpdump read it back" {
	out=$BATS_TEST_TMPDIR/w.pcap
	cap -r "$FX/opcodes-ipv4.pcap" -w "$out"
	assert_success
	assert_equal "${#lines[@]}" 87
	cap -r "$FX/opcodes-ipv4.pcap" --json
	want=$output
	cap -r "$out" --json
	assert_success
	assert_equal "$output" "$want"
	require_tool tshark "reading the -w file"
	run --separate-stderr tshark -n -r "$FX/opcodes-ipv4.pcap" -T fields -e frame.time_epoch -e frame.len -e infiniband.bth.opcode
	tshark_want=$output
	run --separate-stderr tshark -n -r "$out" -T fields -e frame.time_epoch -e frame.len -e infiniband.bth.opcode
	assert_success
	assert_equal "${#lines[@]}" 87
	assert_equal "$output" "$tshark_want"
	# With a filter, -w keeps the matching records (RDMA or not), as tcpdump does.
	require_tool tcpdump "the reference for a filtered -w"
	cap -r "$FX/mixed.pcap" -w "$out" ip src host 198.18.0.2
	assert_success
	run --separate-stderr tcpdump --time-stamp-precision=nano -nn -tt -r "$out"
	assert_success
	got=$output
	run --separate-stderr tcpdump --time-stamp-precision=nano -nn -tt -r "$FX/mixed.pcap" ip src host 198.18.0.2
	assert_equal "$got" "$output"
	assert_equal "${#lines[@]}" 5
}

@test "-w - writes the capture to standard output and nothing else" {
	run bash -c '"$1" capture -r "$2" -w - | "$1" capture -r - --json' _ "$RDMAKIT" "$FX/retransmit.pcap"
	assert_success
	piped=$output
	cap -r "$FX/retransmit.pcap" --json
	assert_equal "$piped" "$output"
	run bash -c '"$1" capture -r "$2" -w - --json | head -c 4 | od -An -tx1' _ "$RDMAKIT" "$FX/retransmit.pcap"
	assert_output --regexp '^ *(4d 3c b2 a1|d4 c3 b2 a1|a1 b2 3c 4d|a1 b2 c3 d4)$'
}

# rotation NAME ARGS...: runs rdmakit -w DIR/NAME/t ARGS and tcpdump -w with
# the same -C/-W into DIR/NAME-tcpdump/t; sets rk_files and td_files to the
# file names each made, one line each, sorted.
rotation() {
	local name=$1 d=$BATS_TEST_TMPDIR
	shift
	mkdir -p "$d/$name" "$d/$name-tcpdump"
	"$RDMAKIT" capture -r "$FX/bulk.pcap" -w "$d/$name/t" "$@" >"$d/$name.out" ||
		fail "rdmakit capture -w ... $* exited with $?"
	assert_equal "$(wc -l <"$d/$name.out")" 2500
	tcpdump -Z "$(id -un)" -r "$FX/bulk.pcap" -w "$d/$name-tcpdump/t" "$@" 2>/dev/null
	rk_files=$(ls "$d/$name")
	td_files=$(ls "$d/$name-tcpdump")
}

@test "-C rotates the -w file with tcpdump's names; every file is readable" {
	require_tool tcpdump "the reference for file names"
	rotation plain -C 1
	assert_equal "$rk_files" "$td_files"
	assert_equal "$(echo $rk_files)" "t t1 t2"
	total=0
	for f in t t1 t2; do
		path=$BATS_TEST_TMPDIR/plain/$f
		size=$(stat -c %s "$path")
		(( size <= 1000000 )) || fail "$f is $size bytes, over -C 1 (1,000,000 bytes)"
		n=$("$RDMAKIT" capture -r "$path" | grep -c ' ICRC ok$') || fail "rdmakit cannot read $f"
		[[ $(tcpdump -nn -r "$path" 2>/dev/null | wc -l) == "$n" ]] || fail "tcpdump reads $f differently"
		total=$((total + n))
	done
	assert_equal "$total" 2500
}

@test "-C with -W keeps a ring of N files named as tcpdump names them" {
	require_tool tcpdump "the reference for file names"
	rotation ring2 -C 1 -W 2
	assert_equal "$rk_files" "$td_files"
	assert_equal "$(echo $rk_files)" "t0 t1"
	# The third file overwrote t0: it ends the stream (PSN 0x1000 + 2499).
	cap -r "$BATS_TEST_TMPDIR/ring2/t0" --json
	assert_success
	run ndjson 'print(pkts[-1]["psn"])'
	assert_output $((0x1000 + 2499))
	cap -r "$BATS_TEST_TMPDIR/ring2/t1" --summary --json
	assert_success
	rotation ring11 -C 1 -W 11
	assert_equal "$rk_files" "$td_files"
	assert_equal "$(echo $rk_files)" "t00 t01 t02"
}

# Regression test for a fixed defect (lib/capture/source.c sink_name): with -W 1 tcpdump needs no digits
# (the number of digits is that of N-1) and writes its one file as FILE;
# rdmakit's width starts at 1 and writes FILE0.
@test "-C with -W 1 names its one file as tcpdump does" {
	require_tool tcpdump "the reference for file names"
	rotation ring1 -C 1 -W 1
	assert_equal "$(echo $td_files)" "t"
	assert_equal "$rk_files" "$td_files"
}

@test "-D lists the interfaces" {
	cap -D
	assert_success
	assert_line --regexp '^[0-9]+\.lo( |$)'
}

# --- errors and exit codes ------------------------------------------------------

@test "a file that is not a capture: one line, exit 3" {
	cap -r "$FX/not-a-capture.pcap"
	assert_one_line_error 3 "not a pcap or pcapng capture"
	assert_equal "$stderr" "rdmakit capture: '$FX/not-a-capture.pcap' is not a pcap or pcapng capture (unknown file format)"
}

@test "a missing file: one line, exit 3" {
	cap -r "$BATS_TEST_TMPDIR/nothing-here.pcap"
	assert_one_line_error 3 "no such file"
}

@test "a capture truncated mid-record: prints what was readable, then one line, exit 3" {
	cap -r "$FX/truncated-file.pcap"
	assert_equal "$status" 3
	assert_equal "${#lines[@]}" 3
	assert_line --index 2 --partial "RC RDMA Write Last qp 0x000012 psn 103 A payload 1024 ICRC ok"
	[[ -n $stderr && $stderr != *$'\n'* ]] || fail "expected one line on stderr: $stderr"
	assert_equal "$stderr" "rdmakit capture: $FX/truncated-file.pcap after 3 records: truncated dump file; tried to read 62 captured bytes, only got 20"
	cap -r "$FX/truncated-file.pcap" --json
	assert_equal "$status" 3
	run ndjson 'print([p["psn"] for p in pkts], summary["packets"])'
	assert_output "[100, 102, 103] 3"
}

@test "usage errors exit 2 with one line: -i with -r, no source, -C/-W without -w or -C" {
	cap -i lo -r "$FX/mixed.pcap"
	assert_one_line_error 2 "-i and -r exclude each other"
	cap
	assert_one_line_error 2 "nothing to capture"
	cap -r "$FX/mixed.pcap" -C 1
	assert_one_line_error 2 "add -w FILE"
	cap -r "$FX/mixed.pcap" -w "$BATS_TEST_TMPDIR/x" -W 2
	assert_one_line_error 2 "-W needs -C"
	cap -r "$FX/mixed.pcap" --no-such-option
	assert_one_line_error 2
}

@test "bad numbers exit 2 with one line naming the option" {
	while read -r opt value; do
		cap -r "$FX/mixed.pcap" -w "$BATS_TEST_TMPDIR/x" "$opt" "$value"
		assert_one_line_error 2 "$opt"
	done <<-EOF
		-c 0
		-c abc
		-c -1
		-c 12x
		-s 999999
		-s x
		-B 0
		-C 0
		-W 0
		--udp-port 0
		--udp-port 65536
		--udp-port 47x91
	EOF
}

@test "an invalid BPF filter: one line naming the filter, and no packets" {
	cap -r "$FX/mixed.pcap" 'udp port' and
	assert_failure
	assert_equal "$output" ""
	[[ -n $stderr && $stderr != *$'\n'* ]] || fail "expected one line on stderr: $stderr"
	[[ $stderr == *"invalid filter 'udp port and'"* ]] || fail "the error does not name the filter: $stderr"
}
