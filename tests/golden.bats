#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Golden outputs: every command's text and JSON on fixed inputs (captures,
# pcapgen fixtures, the top fixture trees, loopback bw/lat with figures
# masked, every --help) must stay byte for byte what tests/golden/expected
# holds.  They guard the output refactor (one output layer): a renderer
# change that alters a byte fails here with the diff.  After an intended
# change: tests/golden/run tests/golden/expected, and commit the diff.

bats_require_minimum_version 1.5.0

load test_helper

setup() {
	setup_rdmakit
}

@test "golden: every command's text and JSON on fixed inputs is byte for byte as recorded" {
	[[ -x $RDMAKIT_ROOT/build/tests/tools/pcapgen ]] ||
		_require_missing "build/tests/tools/pcapgen is not built in CI: make check builds it" \
			"build/tests/tools/pcapgen is not built: run make unit-bins"
	RDMAKIT=$RDMAKIT PCAPGEN=$RDMAKIT_ROOT/build/tests/tools/pcapgen \
		run -0 "$RDMAKIT_ROOT/tests/golden/run" "$BATS_TEST_TMPDIR/now"
	run diff -ru "$RDMAKIT_ROOT/tests/golden/expected" "$BATS_TEST_TMPDIR/now"
	[[ $status -eq 0 ]] || fail "outputs differ from tests/golden/expected:
$(head -c 6000 <<<"$output")"
}

@test "golden: the recorded set covers every command" {
	local c
	for c in $(rdmakit_commands); do
		[[ -f $RDMAKIT_ROOT/tests/golden/expected/help-$c.txt ]] || fail "no golden output for $c"
	done
	ls "$RDMAKIT_ROOT"/tests/golden/expected/capture-*.json >/dev/null
	ls "$RDMAKIT_ROOT"/tests/golden/expected/top-*.json >/dev/null
	ls "$RDMAKIT_ROOT"/tests/golden/expected/bw-*.json >/dev/null
	ls "$RDMAKIT_ROOT"/tests/golden/expected/incast-*.json >/dev/null
	ls "$RDMAKIT_ROOT"/tests/golden/expected/devices-*.json >/dev/null
	ls "$RDMAKIT_ROOT"/tests/golden/expected/probe-*.json >/dev/null
}
