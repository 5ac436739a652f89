#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-link counters of a fabric built by fabric.sh (called by 'fabric.sh stats').

One row per interface of every node: packets and bytes each way (the veth's
own counters, Ethernet header included), packets the interface's tbf dropped
(tail drop), and, on leaf downlinks with the ECN marker, the packets it set
to CE (read from the marker's BPF map with bpftool).

    node iface peer rx_packets rx_bytes tx_packets tx_bytes drops ce_marks

ce_marks is '-' where no marker is attached.  --json prints a list of
objects with the same keys plus the marker's other counters (ect,
over_limit, max_backlog) where there is one.
"""
import argparse
import json
import subprocess
import sys


def run_json(argv):
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else []


def links(prefix, spines, leaves, hosts):
    """(node, namespace, iface, peer) for every interface of the fabric."""
    for s in range(1, spines + 1):
        for l in range(1, leaves + 1):
            yield f"s{s}", f"{prefix}s{s}", f"l{l}", f"l{l}"
    for l in range(1, leaves + 1):
        for h in range(1, hosts + 1):
            yield f"l{l}", f"{prefix}l{l}", f"h{h}", f"h{l}_{h}"
        for s in range(1, spines + 1):
            yield f"l{l}", f"{prefix}l{l}", f"s{s}", f"s{s}"
    for l in range(1, leaves + 1):
        for h in range(1, hosts + 1):
            yield f"h{l}_{h}", f"{prefix}h{l}_{h}", "eth0", f"l{l}"


def marker_counters(ns, dev):
    """The ECN marker's counters on ns/dev's egress, or None without one."""
    try:
        filters = run_json(["tc", "-n", ns, "-j", "filter", "show", "dev", dev, "egress"])
    except subprocess.CalledProcessError:
        return None  # no clsact qdisc: no marker
    for f in filters:
        prog = f.get("options", {}).get("prog", {})
        if prog.get("name") != "ecn_marker":
            continue
        info = run_json(["bpftool", "-j", "prog", "show", "id", str(prog["id"])])
        for map_id in info.get("map_ids", []):
            m = run_json(["bpftool", "-j", "map", "show", "id", str(map_id)])
            if m.get("name") == "counters":
                entry = run_json(["bpftool", "-j", "map", "lookup", "id", str(map_id),
                                  "key", "0", "0", "0", "0"])
                return entry["formatted"]["value"]
    return None


def collect(args, have_bpftool):
    rows = []
    for node, ns, dev, peer in links(args.prefix, args.spines, args.leaves, args.hosts):
        link = run_json(["ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev])[0]["stats64"]
        drops = sum(q.get("drops", 0)
                    for q in run_json(["tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", dev])
                    if q.get("kind") == "tbf")
        row = {"node": node, "iface": dev, "peer": peer,
               "rx_packets": link["rx"]["packets"], "rx_bytes": link["rx"]["bytes"],
               "tx_packets": link["tx"]["packets"], "tx_bytes": link["tx"]["bytes"],
               "drops": drops, "ce_marks": None}
        if have_bpftool and node.startswith("l") and dev.startswith("h"):
            counters = marker_counters(ns, dev)
            if counters is not None:
                row["ce_marks"] = counters["marked"]
                row["marker"] = counters
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--spines", type=int, required=True)
    ap.add_argument("--leaves", type=int, required=True)
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args()
    have_bpftool = subprocess.run(["sh", "-c", "command -v bpftool"],
                                  capture_output=True).returncode == 0
    try:
        rows = collect(args, have_bpftool)
    except (subprocess.CalledProcessError, OSError, ValueError, KeyError, IndexError) as e:
        print(f"fabric.sh: reading counters failed ({e}); is the fabric still up?", file=sys.stderr)
        return 3
    if not have_bpftool:
        print("fabric.sh: bpftool is missing, so CE marks are not shown; "
              "tests/install-deps installs it", file=sys.stderr)
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return 0
    cols = ["node", "iface", "peer", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
            "drops", "ce_marks"]
    print(" ".join(cols))
    for r in rows:
        print(" ".join("-" if r[c] is None else str(r[c]) for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
