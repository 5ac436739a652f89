#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Fuzz smoke (fuzz/, docs/hardening.md): builds the libFuzzer targets with
# clang into build-fuzz/, runs each for FUZZ_SMOKE_SECONDS (12) from its
# seeds in a scratch corpus, failing on any crash or oracle failure, and
# replays every regression input in fuzz/regress/TARGET/.
# Without clang, or with a clang that has no libFuzzer, the tests skip with
# the reason (in CI, where make deps installs clang, they fail instead).

load test_helper

TARGETS=(decode pcap soft oob opts)

setup_file() {
	cd "$BATS_TEST_DIRNAME/.." || return 1
	export FUZZ_MISSING="" FUZZ_BUILD_LOG="$BATS_FILE_TMPDIR/build.log"
	if ! command -v clang >/dev/null 2>&1; then
		FUZZ_MISSING="clang not installed (make deps installs it)"
		return 0
	fi
	printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
		>"$BATS_FILE_TMPDIR/probe.c"
	if ! clang -fsanitize=fuzzer -o "$BATS_FILE_TMPDIR/probe" "$BATS_FILE_TMPDIR/probe.c" \
		>/dev/null 2>&1; then
		FUZZ_MISSING="clang cannot link -fsanitize=fuzzer (no libFuzzer runtime)"
		return 0
	fi
	make -j2 fuzz-build >"$FUZZ_BUILD_LOG" 2>&1 || echo failed >"$BATS_FILE_TMPDIR/build.failed"
}

setup() {
	cd "$BATS_TEST_DIRNAME/.." || return 1
	bats_load_library bats-support
	bats_load_library bats-assert
	if [[ -n $FUZZ_MISSING ]]; then
		_require_missing "$FUZZ_MISSING in CI; make deps should have installed it" "$FUZZ_MISSING"
		return
	fi
	if [[ -f $BATS_FILE_TMPDIR/build.failed ]]; then
		tail -20 "$FUZZ_BUILD_LOG"
		fail "make fuzz-build failed (log above)"
	fi
}

# smoke TARGET: runs it from its seeds in a scratch corpus.
smoke() {
	FUZZ_WORK=$BATS_TEST_TMPDIR run fuzz/run-target "$1" "${FUZZ_SMOKE_SECONDS:-12}"
	echo "$output"
	[[ $status -eq 0 ]] || tail -40 "$BATS_TEST_TMPDIR/logs/$1.log"
	assert_success
	assert_output --regexp "^fuzz $1 +[1-9][0-9]* executions in [0-9]+s, corpus [1-9][0-9]* inputs, coverage [1-9][0-9]*, crashes 0$"
}

@test "fuzz: every target and the seed corpora build" {
	for t in "${TARGETS[@]}"; do
		[[ -x build-fuzz/fuzz_$t ]] || fail "build-fuzz/fuzz_$t was not built"
		[[ -n $(ls -A "build-fuzz/seeds/$t") ]] || fail "no seeds for $t"
	done
}

@test "fuzz smoke: decode (every link type through the capture pipeline)" {
	smoke decode
}

@test "fuzz smoke: pcap (pcap/pcapng files through source_open and the pipeline)" {
	smoke pcap
}

@test "fuzz smoke: soft (the soft engine's responder and requester, guarded memory)" {
	smoke soft
}

@test "fuzz smoke: oob (control-channel sessions, QP info codec, the server's PARAMS parser)" {
	smoke oob
}

@test "fuzz smoke: opts (option parsing of every command)" {
	smoke opts
}

@test "fuzz: the soft seeds reach both QPs and complete work (the fixture is live)" {
	# If the fixture's PSNs, keys or addresses drifted from the seeds', the
	# requester would complete nothing and the responder NAK nothing.
	run build-fuzz/soft-replay build-fuzz/seeds/soft/req-all-complete \
		build-fuzz/seeds/soft/resp-sends build-fuzz/seeds/soft/resp-write-ro
	assert_success
	assert_line "req-all-complete completions 5 failed 0 resp_rx 0 resp_naks 0 req_rx 6 req_done 6"
	assert_line --regexp "^resp-sends completions 3 failed 0 resp_rx 4 "
	assert_line --regexp "^resp-write-ro completions [1-9][0-9]* failed [1-9][0-9]* resp_rx 1 resp_naks 1 "
}

@test "fuzz: every regression input replays without a crash" {
	local n=0 t f
	for t in "${TARGETS[@]}"; do
		for f in fuzz/regress/"$t"/*; do
			[[ -f $f ]] || continue
			run build-fuzz/fuzz_"$t" "$f"
			[[ $status -eq 0 ]] || { echo "$output" | tail -30; fail "$f crashes fuzz_$t"; }
			n=$((n + 1))
		done
	done
	(( n > 0 )) || fail "no regression inputs found under fuzz/regress/"
}
