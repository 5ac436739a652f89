#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit capture, from files: decoding of every opcode and encapsulation,
# ICRC/VCRC verdicts, GSO aggregates, malformed input, the JSON stream, the
# options (-c, -v, --no-icrc, --udp-port, BPF filters, -w, -C/-W), errors and
# exit codes, the per-flow diagnosis, and field-for-field agreement with
# tshark's InfiniBand dissector on every real and generated capture.
#
# Fixtures come from build/tests/tools/pcapgen (tests/tools/pcapgen.c: every
# frame built by the wire codec), written once per run into a temporary
# directory, with a manifest of what each packet holds.  Real captures are in
# ../shared/captures (RDMAKIT_CAPTURES overrides).
#
# Some tests below were written against defects found while writing this file
# (now fixed); the comment above each says what was wrong.

bats_require_minimum_version 1.5.0

load test_helper

# --- fixtures and helpers -----------------------------------------------------

setup_file() {
	local root pcapgen
	root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	pcapgen=${PCAPGEN:-}
	if [[ -z $pcapgen ]]; then
		for pcapgen in "$root/build/tests/tools/pcapgen" "$root/build-san/tests/tools/pcapgen"; do
			[[ -x $pcapgen ]] && break
		done
	fi
	if [[ ! -x $pcapgen ]]; then
		echo "# $pcapgen is not built: run 'make unit-bins'" >&3
		return 1
	fi
	export FX=$BATS_FILE_TMPDIR/fx PCAPGEN=$pcapgen
	"$pcapgen" "$FX" || return 1
	write_scripts "$BATS_FILE_TMPDIR"
	export SCRIPTS=$BATS_FILE_TMPDIR
}

setup() {
	setup_rdmakit
	CAPS=${RDMAKIT_CAPTURES:-$RDMAKIT_ROOT/../shared/captures}
}

# require_captures: the real captures must be there (CI), or the test skips.
require_captures() {
	require_file "$CAPS/rxe/roce-write_bw.pcap" "the shared captures" \
		"real RoCEv2/IB captures; set RDMAKIT_CAPTURES"
}

# cap ARGS...: 'rdmakit capture ARGS...' under run, stderr apart.
cap() {
	run --separate-stderr "$RDMAKIT" capture "$@"
}

# ndjson CODE: runs Python CODE with lines = every line of $output parsed as
# JSON (a line that does not parse fails), pkts = the packet objects and
# summary = the last line's "summary" object.  CODE prints, or raises.
ndjson() {
	python3 -c "
import json, sys
lines = [json.loads(l) for l in sys.stdin.read()[:-1].split('\n') if l != '' or sys.exit('empty line in the output')]
pkts = [o for o in lines if 'summary' not in o]
summary = lines[-1].get('summary') if lines else None
def flow(src, dst, qp):
    found = [f for f in summary['flows'] if (f['src'], f['dst'], f['dest_qp']) == (src, dst, qp)]
    assert len(found) == 1, 'no single flow %s > %s qp %#x in %s' % (src, dst, qp, summary['flows'])
    return found[0]
$1" <<<"$output"
}

# field_lines: the packet lines of $output without their time of day.
field_lines() {
	sed -E 's/^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9} //' <<<"$output"
}

# The Python helpers: manifest_check.py compares rdmakit --json with what
# pcapgen built; truth.py compares it with tshark.
write_scripts() {
	cat >"$1/manifest_check.py" <<'PY'
# usage: manifest_check.py RDMAKIT FXDIR [--skip F,...] [FILE...]
# For every fixture in the manifest (or the FILEs given), every packet rdmakit
# prints must carry each key and value pcapgen recorded, nested objects as a
# subset ("aeth" also has "text"), and no extended header pcapgen did not put
# in; and rdmakit must print exactly the packets the manifest lists.
import json, os, subprocess, sys
rdmakit, fx = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
skip = set()
if args[:1] == ["--skip"]:
    skip, args = set(args[1].split(",")), args[2:]
want = {}
for line in open(os.path.join(fx, "manifest.jsonl")):
    m = json.loads(line)
    want.setdefault(m.pop("file"), []).append(m)
files = args or sorted(f for f in want if f not in skip)
EXT = ("reth", "aeth", "atomic", "atomic_ack", "immdt", "ieth", "deth")
errors = 0
def err(msg):
    global errors
    errors += 1
    if errors <= 40:
        print("MISMATCH " + msg)
for name in files:
    extra = ["--udp-port", "9999"] if name.startswith("udp-port-9999") else []
    out = subprocess.run([rdmakit, "capture", "-r", os.path.join(fx, name), "--json"] + extra,
                         capture_output=True, text=True)
    if out.returncode != 0:
        err(f"{name}: exit {out.returncode}: {out.stderr.strip()}")
    got = {}
    for p in map(json.loads, out.stdout.splitlines()):
        if "summary" in p:
            continue
        key = (p["frame"], p.get("gso", {}).get("segment"))
        if key in got:
            err(f"{name}: frame {key} printed twice")
        got[key] = p
    exp = {(m["frame"], m.get("gso_segment")): m for m in want[name]}
    for key in sorted(set(got) - set(exp), key=str):
        err(f"{name} frame {key}: printed, but pcapgen wrote no such RDMA packet: {got[key]}")
    for key, m in sorted(exp.items(), key=lambda kv: str(kv[0])):
        p = got.get(key)
        where = f"{name} frame {key[0]}" + (f" segment {key[1]}" if key[1] else "")
        if p is None:
            err(f"{where}: not printed (pcapgen wrote {m})")
            continue
        for k, v in m.items():
            if k in ("frame", "gso_segment"):
                continue
            if k == "gso_segments":
                k, pv = "gso.segments", p.get("gso", {}).get("segments")
            else:
                pv = p.get(k, "<missing>")
            if isinstance(v, dict) and isinstance(pv, dict):
                for kk, vv in v.items():
                    if pv.get(kk, "<missing>") != vv:
                        err(f"{where}: {k}.{kk}: rdmakit {pv.get(kk, '<missing>')!r}, pcapgen {vv!r}")
            elif pv != v or type(pv) != type(v):
                err(f"{where}: {k}: rdmakit {pv!r}, pcapgen {v!r}")
        if "opcode" in m and "status" not in m:
            for k in EXT:
                if k in p and k not in m:
                    err(f"{where}: rdmakit shows {k} {p[k]}, which the opcode does not carry")
    print(f"# {name}: {len(exp)} packets expected, {len(got)} printed")
if errors > 40:
    print(f"MISMATCH ... {errors - 40} more")
sys.exit(1 if errors else 0)
PY
	cat >"$1/truth.py" <<'PY'
# usage: truth.py RDMAKIT TMPDIR FILE[;rdmakit args]...
# The files are joined with mergecap -a (pcapng: link types may differ) so
# that tshark starts once; rdmakit reads each file, and its frame numbers are
# mapped onto the joined file's.
# For every packet rdmakit prints, tshark must have decoded the same frame as
# InfiniBand with the same opcode, dest QP, PSN and A bit and, where tshark
# 4.0.17 decodes them, the same RETH (va, rkey, dma_len), AETH (syndrome, msn),
# AtomicETH (va, rkey, swap/add, compare), AtomicAckETH, DETH and payload
# length; and every frame tshark decodes as InfiniBand must be printed.
# tshark 4.0.17 shows CNP, XRC, FLUSH and ATOMIC WRITE as unknown opcodes and
# misaligns everything after the BTH of RD opcodes (tests/unit/test_tshark.c):
# those, undefined opcodes and flagged (truncated) packets are compared on the
# BTH only.  tshark decodes UDP source port 69 as TFTP: "-d udp.port==69,
# infiniband" makes it try InfiniBand (RRoCE) there; no fixture uses port 69
# for anything else.
import json, os, struct, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
rdmakit, tmpdir = sys.argv[1], sys.argv[2]
inputs = []
for a in sys.argv[3:]:
    f, _, extra = a.partition(";")
    inputs.append((f, extra.split()))
FIELDS = ["frame.number", "frame.protocols", "frame.cap_len", "frame.len",
          "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
          "infiniband.bth.a", "infiniband.bth.padcnt",
          "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
          "infiniband.aeth.syndrome", "infiniband.aeth.msn",
          "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
          "infiniband.atomicacketh.origremdt",
          "infiniband.deth.q_key", "infiniband.deth.srcqp",
          "infiniband.payload", "data.len"]
# Payload sub-dissectors that would otherwise claim payload bytes.
DISABLED = ["rpcordma", "smb_direct", "smc", "nvme-rdma", "lnet", "iser",
            "infiniband_sdp", "fcoib", "infiniband.eoib", "drbd"]

def records(path):
    d = open(path, "rb").read()
    e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, n = 24, 0
    while off + 16 <= len(d):
        off += 16 + struct.unpack(e + "I", d[off + 8:off + 12])[0]
        n += 1
    return n

def tshark(path):
    cmd = ["tshark", "-n", "-r", path, "-d", "udp.port==69,infiniband",
           "-d", "udp.port==9999,infiniband", "--disable-heuristic", "eth_over_ib",
           "-T", "fields", "-E", "occurrence=f", "-E", "header=n"]
    for p in DISABLED:
        cmd += ["--disable-protocol", p]
    for f in FIELDS:
        cmd += ["-e", f]
    env = dict(os.environ, WIRESHARK_CONFIG_DIR=os.path.join(tmpdir, "no-wireshark-profile"))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    rows = {}
    for line in out.stdout.splitlines():
        cols = line.split("\t")
        cols += [""] * (len(FIELDS) - len(cols))
        r = dict(zip(FIELDS, cols))
        rows[int(r["frame.number"])] = r
    return out.returncode, rows, out.stderr

def rdm(inp):
    f, extra = inp
    out = subprocess.run([rdmakit, "capture", "-r", f, "--json"] + extra,
                         capture_output=True, text=True)
    return out.returncode, out.stderr, [p for p in map(json.loads, out.stdout.splitlines())
                                        if "summary" not in p]

def num(v):
    v = v.strip()
    return int(v, 16) if v.lower().startswith("0x") else int(v)

def bth_only(op, name):
    return (name is None or op == 0x81 or 0xA0 <= op <= 0xBF or op in (0x1C, 0x1D)
            or 0x40 <= op <= 0x5F)

files = [f for f, _ in inputs]
path = files[0]
if len(files) > 1:
    path = os.path.join(tmpdir, "truth.pcapng")
    subprocess.run(["mergecap", "-a", "-F", "pcapng", "-w", path] + files, check=True)
with ThreadPoolExecutor(max_workers=4) as ex:
    tsh = ex.submit(tshark, path)
    ours = list(ex.map(rdm, inputs))
    trc, rows, terr = tsh.result()
errs, st = [], {"packets": 0, "compared": 0, "bth_only": 0, "payload": 0}
if trc != 0:
    errs.append(f"tshark exit {trc}: {terr.strip()[:300]}")
where_of, seen, base = {}, set(), 0
for (f, extra), (rc, err, pkts) in zip(inputs, ours):
    name = os.path.basename(f)
    n = records(f)
    for j in range(1, n + 1):
        where_of[base + j] = f"{name} frame {j}"
    if rc != 0:
        errs.append(f"{name}: rdmakit exit {rc}: {err.strip()}")
    st["packets"] += len(pkts)
    for p in pkts:
        fr = base + p["frame"]
        where = where_of.get(fr, f"{name} frame {p['frame']}")
        if fr in seen:      # a later segment of a GSO aggregate: tshark shows the first
            continue
        seen.add(fr)
        if "opcode" not in p:
            continue        # flagged before its BTH: nothing to compare
        t = rows.get(fr)
        if t is None or t["infiniband.bth.opcode"] == "":
            errs.append(f"{where}: rdmakit decoded opcode {p['opcode']}, tshark did not decode "
                        f"it as InfiniBand ({t and t['frame.protocols']})")
            continue
        def cmp(key, ours, theirs):
            if ours != theirs:
                errs.append(f"{where}: {key}: rdmakit {ours!r}, tshark {theirs!r}")
        def tv(field):
            return num(t[field]) if t[field] else None
        st["compared"] += 1
        cmp("opcode", p["opcode"], tv("infiniband.bth.opcode"))
        cmp("dest_qp", p["dest_qp"], tv("infiniband.bth.destqp"))
        cmp("psn", p["psn"], tv("infiniband.bth.psn"))
        cmp("ack_req", p["ack_req"], t["infiniband.bth.a"] in ("1", "True"))
        if p.get("status") or bth_only(p["opcode"], p.get("opcode_name")):
            st["bth_only"] += 1
            continue
        reth, atomic = p.get("reth"), p.get("atomic")
        if atomic:
            # tshark shows AtomicETH's VA and R_Key in its RETH fields.
            cmp("atomic.va", atomic["va"], tv("infiniband.reth.va"))
            cmp("atomic.rkey", atomic["rkey"], tv("infiniband.reth.r_key"))
            cmp("atomic.swap_add", atomic["swap_add"], tv("infiniband.atomiceth.swapdt"))
            cmp("atomic.compare", atomic["compare"], tv("infiniband.atomiceth.cmpdt"))
        else:
            cmp("reth [va, rkey, dma_len]", reth and [reth["va"], reth["rkey"], reth["dma_len"]],
                [tv("infiniband.reth.va"), tv("infiniband.reth.r_key"),
                 tv("infiniband.reth.dmalen")] if t["infiniband.reth.va"] else None)
        aeth = p.get("aeth")
        cmp("aeth [syndrome, msn]", aeth and [aeth["syndrome"], aeth["msn"]],
            [tv("infiniband.aeth.syndrome"), tv("infiniband.aeth.msn")]
            if t["infiniband.aeth.syndrome"] else None)
        aack = p.get("atomic_ack")
        cmp("atomic_ack.orig", aack and aack["orig"], tv("infiniband.atomicacketh.origremdt"))
        deth = p.get("deth")
        cmp("deth [qkey, src_qp]", deth and [deth["qkey"], deth["src_qp"]],
            [tv("infiniband.deth.q_key"), tv("infiniband.deth.srcqp")]
            if t["infiniband.deth.q_key"] else None)
        # Payload length, where tshark shows the payload: its bytes include the pad.
        if p.get("gso") or tv("frame.cap_len") < tv("frame.len"):
            continue
        protos = t["frame.protocols"].split(":")
        i = protos.index("infiniband") if "infiniband" in protos else -1
        tl = None
        if t["infiniband.payload"]:
            tl = len(t["infiniband.payload"].replace(":", "")) // 2
        elif 0 <= i < len(protos) - 1 and protos[i + 1] == "data" and t["data.len"]:
            tl = tv("data.len")
        if tl is not None:
            st["payload"] += 1
            cmp("payload_len", p["payload_len"], tl - (tv("infiniband.bth.padcnt") or 0))
    base += n
if base != len(rows):
    errs.append(f"tshark read {len(rows)} frames, the files hold {base}")
for fr, t in sorted(rows.items()):
    if t["infiniband.bth.opcode"] and fr not in seen:
        errs.append(f"{where_of.get(fr, fr)}: tshark decoded opcode "
                    f"{t['infiniband.bth.opcode']}, rdmakit printed nothing for it")
print(f"# {len(files)} files, {base} frames: rdmakit printed {st['packets']} packets, "
      f"{st['compared']} compared with tshark ({st['bth_only']} on the BTH only, "
      f"{st['payload']} with the payload length)")
for e in errs[:40]:
    print("MISMATCH " + e)
if len(errs) > 40:
    print(f"MISMATCH ... and {len(errs) - 40} more")
if st["compared"] == 0:
    print("MISMATCH no packet compared")
sys.exit(1 if errs or st["compared"] == 0 else 0)
PY
}

# --- the fixtures themselves ------------------------------------------------

@test "pcapgen writes every fixture, and a manifest of its RDMA packets" {
	for f in opcodes-ipv4 opcodes-ipv6-vlan rocev1 ib ib-erf sll sll2 raw-ip snaplen \
		cut-in-reth icrc-bad truncated-header unknown-opcode retransmit rnr-nak \
		access-error dup-ack congestion gso gso-ipv6 udp-port-9999 mixed big-values \
		bulk truncated-file not-a-capture; do
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
	run python3 "$SCRIPTS/manifest_check.py" "$RDMAKIT" "$FX" --skip cut-in-reth.pcap,big-values.pcap
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
	run python3 "$SCRIPTS/manifest_check.py" "$RDMAKIT" "$FX" big-values.pcap
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
	run python3 "$SCRIPTS/truth.py" "$RDMAKIT" "$BATS_TEST_TMPDIR" "${files[@]}"
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
		access-error dup-ack congestion gso gso-ipv6 mixed big-values; do
		files+=("$FX/$f.pcap")
	done
	run python3 "$SCRIPTS/truth.py" "$RDMAKIT" "$BATS_TEST_TMPDIR" "${files[@]}" \
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
