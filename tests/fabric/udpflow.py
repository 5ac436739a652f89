#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""UDP traffic for the fabric's own tests, independent of rdmakit.

  udpflow.py send --dst IP [--port 4791] [--sports A-B] [--size 1024]
                  [--count N | --seconds S] [--rate BITS] [--tos T] [--gso K]
  udpflow.py sink [--port 4791] --seconds S

send: datagrams of --size payload bytes to IP:port, round-robin over one
socket per source port in --sports (ECMP entropy, like RoCEv2's source
port), with IP TOS --tos (2 = ECT(0)).  --rate paces to that many bits per
second counted on the wire (payload + 42 bytes of UDP, IPv4 and Ethernet
headers); without it the sender goes as fast as the socket lets it (a
sender's own tbf slows it through the socket buffer).  --gso K sends K
datagrams per sendto as one UDP GSO burst (UDP_SEGMENT), as the soft
engine does.  Prints one JSON line: datagrams and bytes sent, seconds.

sink: binds the port and reads and discards for S seconds, so no ICMP
port-unreachable comes back; prints one JSON line: datagrams, bytes.
"""
import argparse
import errno
import json
import socket
import sys
import time

UDP_SEGMENT = 103  # linux/udp.h; not exported by every Python
SO_SNDBUFFORCE = 32  # asm-generic/socket.h
SEND_BUFFER = 4 << 20
WIRE_OVERHEAD = 8 + 20 + 14


def port_range(text):
    lo, _, hi = text.partition("-")
    lo, hi = int(lo), int(hi or lo)
    if not 1 <= lo <= hi <= 65535:
        raise argparse.ArgumentTypeError(f"'{text}' is not a port range A-B within 1-65535")
    return range(lo, hi + 1)


def send(args):
    socks = []
    for sport in args.sports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, args.tos)
        # A deep send buffer keeps the sender's own link busy through a
        # scheduling stall of this process (root may exceed wmem_max).
        try:
            s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, SEND_BUFFER)
        except PermissionError:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        s.bind(("0.0.0.0", sport))
        if args.gso > 1:
            s.setsockopt(socket.SOL_UDP, UDP_SEGMENT, args.size)
        s.connect((args.dst, args.port))
        socks.append(s)
    burst = max(args.gso, 1)
    payload = bytes(args.size * burst)
    wire_bits = (args.size + WIRE_OVERHEAD) * 8 * burst
    sent = errors = 0
    start = time.monotonic()
    deadline = start + args.seconds if args.seconds else None
    due = start
    i = 0
    while True:
        if args.count and sent >= args.count:
            break
        now = time.monotonic()
        if deadline and now >= deadline:
            break
        if args.rate:
            if due > now:
                time.sleep(due - now)
            due += wire_bits / args.rate
        try:
            socks[i % len(socks)].send(payload)
            sent += burst
        except OSError as e:
            # A full queue, or an ICMP error from before the receiver was
            # listening: count it and go on.  Anything else is a real error.
            if e.errno not in (errno.ENOBUFS, errno.ECONNREFUSED):
                raise
            errors += 1
        i += 1
    elapsed = time.monotonic() - start
    print(json.dumps({"datagrams": sent, "bytes": sent * args.size, "errors": errors,
                      "seconds": round(elapsed, 3)}))
    return 0


def sink(args):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", args.port))
    s.settimeout(0.2)
    buf = bytearray(65536)
    datagrams = nbytes = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        try:
            n = s.recv_into(buf)
        except socket.timeout:
            continue
        datagrams += 1
        nbytes += n
    print(json.dumps({"datagrams": datagrams, "bytes": nbytes}))
    return 0


def main():
    ap = argparse.ArgumentParser(description="UDP traffic for the fabric tests")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("send")
    sp.add_argument("--dst", required=True)
    sp.add_argument("--port", type=int, default=4791)
    sp.add_argument("--sports", type=port_range, default=port_range("49152"))
    sp.add_argument("--size", type=int, default=1024)
    sp.add_argument("--count", type=int, default=0)
    sp.add_argument("--seconds", type=float, default=0)
    sp.add_argument("--rate", type=float, default=0, help="bits per second on the wire")
    sp.add_argument("--tos", type=int, default=0)
    sp.add_argument("--gso", type=int, default=1, help="datagrams per sendto (UDP GSO)")
    kp = sub.add_parser("sink")
    kp.add_argument("--port", type=int, default=4791)
    kp.add_argument("--seconds", type=float, required=True)
    args = ap.parse_args()
    if args.cmd == "send":
        if not args.count and not args.seconds:
            ap.error("send needs --count or --seconds")
        if not 1 <= args.size <= 1472:
            ap.error("--size must be 1 to 1472 bytes, so a datagram fits a 1500-byte MTU")
        if args.gso < 1 or args.size * args.gso > 65507:
            ap.error("--gso must be at least 1 and --size times --gso at most 65507 bytes")
        try:
            return send(args)
        except OSError as e:
            print(f"udpflow.py: send to {args.dst}:{args.port} failed: {e}", file=sys.stderr)
            return 1
    return sink(args)


if __name__ == "__main__":
    sys.exit(main())
