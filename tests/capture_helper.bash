# SPDX-License-Identifier: MIT
# Shared by the capture suites (capture.bats, capture_options.bats,
# capture_summary.bats): the pcapgen fixtures, written once per file into a
# temporary directory with a manifest of what each packet holds, the real
# captures in ../shared/captures (RDMAKIT_CAPTURES overrides), and helpers.
# tests/tools/capture_manifest_check.py compares rdmakit --json with what
# pcapgen built; tests/tools/capture_truth.py compares it with tshark.

load test_helper

setup_file() {
	export FX=$BATS_FILE_TMPDIR/fx SCRIPTS
	SCRIPTS=$(cd "$BATS_TEST_DIRNAME" && pwd)/tools
	pcapgen_fixtures "$FX"
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
    found = [f for f in summary['flows'] if (f['src'], f.get('dst'), f.get('dest_qp')) == (src, dst, qp)]
    assert len(found) == 1, 'no single flow %s > %s qp %#x in %s' % (src, dst, qp, summary['flows'])
    return found[0]
$1" <<<"$output"
}

# field_lines: the packet lines of $output without their time of day.
field_lines() {
	sed -E 's/^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9} //' <<<"$output"
}
