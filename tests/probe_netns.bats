#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit probe between two network namespaces: probe --serve on the soft
# engine in one, the probe in the other on UDP 4791 of its own address,
# over a veth pair.  Needs root and ip; skipped without them (failed
# under CI=true).

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper
load netns_helper

setup() {
	setup_rdmakit
	netns_pair rkp
}

teardown() {
	netns_pair_down
}

@test "probe across namespaces: every test passes against the soft engine (the IPv4 ID is informational), the probe on UDP 4791" {
	bg_ns "$BATS_TEST_TMPDIR/serve.out" "$BATS_TEST_TMPDIR/serve.err" "$NS_R" \
		timeout -k 5 60 "$RDMAKIT" probe --serve --engine soft
	local srv=$BG
	wait_listen_ns "$NS_R" 18515
	run -0 timeout 60 ip netns exec "$NS_S" "$RDMAKIT" -j probe "$IP_R"
	run json_eval '
r = d["results"]
assert d["params"]["local"] == sys.argv[2] + ":4791", d["params"]
assert d["params"]["remote_device"] == sys.argv[3], d["params"]
# GSO segments from the soft engine may carry IPv4 IDs 0, 1, ...: any ID is
# allowed under DF, so that one may be informational; what a QP does past
# its READ limit and the credits it keeps are informational by nature;
# everything else passes.
info = {"ipv4_header", "outstanding_reads", "aeth_credits"}
ok = lambda x: x["verdict"] == "pass" or (x["test"] in info and x["verdict"] == "informational")
assert len(r) >= 10 and all(ok(x) for x in r), [(x["test"], x["verdict"], x["observed"]) for x in r]
print(len(r))' "$IP_S" "$IP_R"
	assert_success
	wait_pid "$srv" 10
	assert_equal "$WAIT_RC" 0
}

@test "probe across namespaces: a remote that drops every RoCEv2 packet fails each test in bounded time, the rest go on" {
	require_tool nft "drops in the kernel datapath"
	ip netns exec "$NS_R" nft -f - <<-EOF2
		table ip rkprobe {
			chain pre {
				type filter hook prerouting priority 0;
				udp dport 4791 drop
			}
		}
	EOF2
	bg_ns "$BATS_TEST_TMPDIR/serve.out" "$BATS_TEST_TMPDIR/serve.err" "$NS_R" \
		timeout -k 5 90 "$RDMAKIT" probe --serve --engine soft
	wait_listen_ns "$NS_R" 18515
	run timeout 80 ip netns exec "$NS_S" "$RDMAKIT" -j probe --test write_invalid_rkey,duplicate_send,bad_icrc "$IP_R"
	assert_equal "$status" 1
	run json_eval '
r = d["results"]
assert [x["test"] for x in r] == ["write_invalid_rkey", "duplicate_send", "bad_icrc"], r
v = dict((x["test"], x["verdict"]) for x in r)
# Silence where an answer is required, and then none to a zero-length WRITE
# either, is a remote that stopped answering; silence where it is required
# and then no ACK for the good packet is no verdict: each fails.
assert v == {"write_invalid_rkey": "fail", "duplicate_send": "fail", "bad_icrc": "fail"}, v
assert all("stopped answering" in x["observed"] for x in r[:2]), r
print(v)'
	assert_success
}
