#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# usage: capture_truth.py RDMAKIT TMPDIR FILE[;rdmakit args]...
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
