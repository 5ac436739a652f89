# SPDX-License-Identifier: MIT
"""Reading the perftest lab's records (tests/vm/scripts/perftest-guest.sh):
rdmakit's JSON document and perftest's result row, for vm.bats."""
import json


def js(path):
    """rdmakit's JSON document in a record (the last line that is one)."""
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"no JSON document in {path}")


def pt_row(path):
    """perftest's first result row (the fields after its '#bytes' heading)."""
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and i + 1 < len(lines) and lines[i + 1].split():
            return lines[i + 1].split()
    return None


def to_gbps(mib_per_s):
    """perftest's MB/sec (2^20 bytes/s) in rdmakit's Gb/s (10^9 bits/s)."""
    return mib_per_s * 1048576 * 8 / 1e9


def verdict(out, bad):
    """Prints the figures for the log, then fails with every problem found."""
    print(" ".join(out))
    assert not bad, "\n".join(bad)
