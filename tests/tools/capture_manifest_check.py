#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# usage: capture_manifest_check.py RDMAKIT FXDIR [--skip F,...] [FILE...]
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
