#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Builds a large benchmark capture out of real RoCEv2 packets.

    mkbig.py OUT.pcap PACKETS SRC.pcap [SRC.pcap ...]

Reads every record of the source captures (classic pcap, either byte order,
micro- or nanosecond magic, all of one link type), and writes PACKETS records
to OUT.pcap by repeating them in order, cycle after cycle, with strictly
increasing timestamps.  The packet bytes are copied unchanged, so every ICRC
that was valid in the sources stays valid.  The output is a little-endian
nanosecond pcap (magic 0xa1b23c4d) so that nanosecond timestamps survive.

Timestamps: inside one source file the original gaps are kept (capped at
MAX_GAP_NS, so the idle seconds between test programs do not stretch the
file over days); between files and between cycles there is a GAP_NS pause.
The file is written to OUT.pcap.tmp and renamed, so an interrupted run never
leaves a short file behind under the final name.
"""
import os
import struct
import sys

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D
GAP_NS = 10_000            # between source files and between cycles
MAX_GAP_NS = 1_000_000     # longest gap kept from the sources (1 ms)
BASE_NS = 1_796_205_900 * 10**9  # start of the output (2026-12-02, like the sources)


def read_pcap(path):
    """Returns (linktype, snaplen, [(ts_ns, orig_len, data), ...])."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 24:
        sys.exit(f"mkbig: {path}: too short for a pcap header")
    for endian in ("<", ">"):
        (magic,) = struct.unpack_from(endian + "I", buf, 0)
        if magic in (MAGIC_US, MAGIC_NS):
            break
    else:
        sys.exit(f"mkbig: {path}: not a classic pcap file (pcapng is not supported here)")
    scale = 1 if magic == MAGIC_NS else 1000
    _, _, _, _, snaplen, linktype = struct.unpack_from(endian + "HHiIII", buf, 4)
    recs, off = [], 24
    hdr = struct.Struct(endian + "IIII")
    while off < len(buf):
        if off + 16 > len(buf):
            sys.exit(f"mkbig: {path}: truncated record header at offset {off}")
        sec, frac, caplen, wirelen = hdr.unpack_from(buf, off)
        off += 16
        if off + caplen > len(buf):
            sys.exit(f"mkbig: {path}: truncated record at offset {off}")
        recs.append((sec * 10**9 + frac * scale, wirelen, buf[off:off + caplen]))
        off += caplen
    return linktype & 0x0FFFFFFF, snaplen, recs


def main(argv):
    if len(argv) < 4:
        sys.exit("usage: mkbig.py OUT.pcap PACKETS SRC.pcap [SRC.pcap ...]")
    out, total, srcs = argv[1], int(argv[2]), argv[3:]
    if total < 1:
        sys.exit("mkbig: PACKETS must be at least 1")

    # One cycle: every source record, with its offset from the cycle start.
    cycle, t, linktype, snaplen = [], 0, None, 0
    for path in srcs:
        lt, sl, recs = read_pcap(path)
        if linktype is None:
            linktype = lt
        elif lt != linktype:
            sys.exit(f"mkbig: {path}: link type {lt} differs from {linktype}")
        snaplen = max(snaplen, sl)
        prev = None
        for ts, wirelen, data in recs:
            if prev is not None:
                t += min(max(ts - prev, 1), MAX_GAP_NS)
            prev = ts
            cycle.append((t, wirelen, data))
        t += GAP_NS
    if not cycle:
        sys.exit("mkbig: the sources hold no packets")
    period = t  # cycle length in ns; offsets inside a cycle are < period

    # A template of one cycle's bytes; per cycle only the timestamps change.
    tmpl = bytearray()
    ts_at = []  # (offset of the record header in tmpl, ns offset in cycle)
    for off_ns, wirelen, data in cycle:
        ts_at.append((len(tmpl), off_ns))
        tmpl += struct.pack("<IIII", 0, 0, len(data), wirelen)
        tmpl += data
    tshdr = struct.Struct("<II")

    tmp = out + ".tmp"
    with open(tmp, "wb", buffering=1 << 22) as f:
        f.write(struct.pack("<IHHiIII", MAGIC_NS, 2, 4, 0, 0, max(snaplen, 65535), linktype))
        done, k = 0, 0
        while done < total:
            start = BASE_NS + k * period
            n = min(len(cycle), total - done)
            for i in range(n):
                pos, off_ns = ts_at[i]
                ts = start + off_ns
                tshdr.pack_into(tmpl, pos, ts // 10**9, ts % 10**9)
            if n == len(cycle):
                f.write(tmpl)
            else:
                end = ts_at[n][0]
                f.write(memoryview(tmpl)[:end])
            done += n
            k += 1
    os.replace(tmp, out)
    size = os.path.getsize(out)
    print(f"mkbig: wrote {out}: {total} packets ({len(cycle)} real packets x {k} cycles), "
          f"{size / 1e6:.0f} MB", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
