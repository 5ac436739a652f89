#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The error paths of every command that the per-command files leave out
# (docs/errors.md lists them all): each exits with the documented code
# (2 usage, 3 runtime) and says, in one line, what is wrong and what to do.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_rdmakit
	PCAP=$RDMAKIT_ROOT/tests/captures/rxe-soft-interop.pcap
	# shellcheck disable=SC2034  # kill_bg (perf_helper) reads it
	BG_PIDS=()
}

teardown() {
	kill_bg
}

# check_table CMD: runs `rdmakit CMD ARGS` for each "CODE|ARGS|WANT" line on
# stdin; each must exit CODE with one line on stderr, prefixed with the
# command and containing WANT, and nothing on stdout.
check_table() {
	local cmd=$1 code args want
	while IFS='|' read -r code args want; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RDMAKIT" "$cmd" $args
		assert_one_line_error "$code" "$want"
		[[ $stderr == "rdmakit $cmd: "* ]] || fail "not prefixed 'rdmakit $cmd: ': $stderr"
	done
}

@test "global: stray words after --version, and no command with --json" {
	run --separate-stderr "$RDMAKIT" --version extra
	assert_one_line_error 2 "unexpected argument 'extra' after --version"
	run --separate-stderr "$RDMAKIT" version --bogus
	assert_one_line_error 2 "unknown option '--bogus'; see 'rdmakit version --help'"
	# --json: the line on stderr and the same error in the JSON document.
	run --separate-stderr "$RDMAKIT" --json
	assert_equal "$status" 2
	assert_equal "$stderr" "rdmakit help: no command given; 'rdmakit help' lists them"
	json_eval 'assert d["errors"] == ["no command given; '"'"'rdmakit help'"'"' lists them"], d'
}

@test "bw and lat: NaN, infinite, negative and huge numbers, and an empty HOST, are usage errors" {
	check_table bw <<-'EOF'
	2|-s -5|invalid value '-5' for -s/--size: expected a number of bytes
	2|-s nan|invalid value 'nan' for -s/--size
	2|-s 1e9|invalid value '1e9' for -s/--size
	2|-s 9g|value '9g' for -s/--size is out of range: expected 1..8388608
	2|-n 99999999999|value '99999999999' for -n/--iters is out of range
	2|-D nan|invalid value 'nan' for -D/--duration: expected a number
	2|-D 1e300|value '1e300' for -D/--duration is out of range
	2|-D -1|value '-1' for -D/--duration is out of range
	2|--timeout inf|invalid value 'inf' for --timeout: expected a whole number
	2|-p 70000|value '70000' for -p/--port is out of range: expected 1..65535
	2|--udp-port 99999|value '99999' for --udp-port is out of range
	2|--expect-gbps -1|value '-1' for --expect-gbps is out of range
	2|--interval nan|invalid value 'nan' for --interval
	2|-x 999|value '999' for -x/--gid-index is out of range: expected 0..255
	EOF
	run --separate-stderr "$RDMAKIT" bw ''
	assert_one_line_error 2 "empty HOST: give the server's name or address"
	run --separate-stderr "$RDMAKIT" lat ''
	assert_one_line_error 2 "empty HOST: give the server's name or address"
	check_table lat <<-'EOF'
	2|-s nan|invalid value 'nan' for -s/--size
	2|--expect-p99-us nan|invalid value 'nan' for --expect-p99-us
	2|-q 2|latency is measured on one QP: drop -q/--qp
	EOF
}

@test "bw and lat: unresolvable host, --bind not on this host or not an address, exit 3" {
	check_table bw <<-'EOF'
	3|--engine soft --timeout 2 nosuch.invalid|cannot resolve nosuch.invalid
	3|--engine soft --loopback -n 5 --bind 198.51.100.7|198.51.100.7 is not an address of this host: give one of the addresses 'rdmakit devices' lists to --bind
	3|--engine soft --loopback -n 5 --bind notanaddr|invalid address 'notanaddr' for the soft engine: give a local IPv4 or IPv6 address
	EOF
	check_table lat <<-'EOF'
	3|--engine soft --timeout 2 nosuch.invalid|check the host name or give an IP address
	EOF
	# A server checks --bind before it waits for a client: it fails at once.
	local port
	port=$(free_port)
	for cmd in bw lat; do
		run --separate-stderr timeout 10 "$RDMAKIT" "$cmd" --engine soft -p "$port" --bind 198.51.100.7
		assert_equal "$status" 3
		assert_equal "$stderr" "rdmakit $cmd: 198.51.100.7 is not an address of this host: give one of the addresses 'rdmakit devices' lists to --bind"
	done
	run --separate-stderr timeout 10 "$RDMAKIT" bw --engine soft -p "$port" --bind notanaddr
	assert_equal "$status" 3
	assert_equal "$stderr" "rdmakit bw: invalid address 'notanaddr' for --bind: give a local IPv4 or IPv6 address"
}

@test "bw: the control port or the UDP port in use, and Ctrl-C while waiting, exit 3 naming the fix" {
	local port uport
	port=$(free_port)
	bg /dev/null /dev/null "$RDMAKIT" bw --engine soft -p "$port"
	wait_listen "$port"
	run --separate-stderr timeout 10 "$RDMAKIT" bw --engine soft -p "$port"
	assert_equal "$status" 3
	assert_equal "$stderr" "rdmakit bw: control port $port is already in use on all addresses (another rdmakit server?); stop it or pick another -p/--port"

	uport=$(free_port)
	bg /dev/null /dev/null python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
time.sleep(30)' "$uport"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		ss -Hunl "sport = :$uport" 2>/dev/null | grep -q . && break
		sleep 0.1
	done
	run --separate-stderr "$RDMAKIT" bw --engine soft --loopback -n 5 --bind 127.0.0.1 --udp-port "$uport"
	assert_one_line_error 3 "UDP port $uport on 127.0.0.1 is in use (another rdmakit, or a kernel RoCE stack, owns it): pick another --udp-port, or bind another local address with --bind"

	# Ctrl-C while a server waits: one line saying so, not "Interrupted system call".
	port=$(free_port)
	bg /dev/null "$BATS_TEST_TMPDIR/err" "$RDMAKIT" lat --engine soft -p "$port"
	wait_listen "$port"
	kill -INT "$BG"
	wait_pid "$BG" 5
	assert_equal "$WAIT_RC" 3
	assert_equal "$(cat "$BATS_TEST_TMPDIR/err")" "rdmakit lat: interrupted while waiting for a client"
}

@test "lat: --hgrm into a directory is exit 3; a threshold is printed as given" {
	run --separate-stderr "$RDMAKIT" lat --engine soft --loopback -n 10 --hgrm "$BATS_TEST_TMPDIR"
	assert_equal "$status" 3
	assert_equal "$stderr" "rdmakit lat: cannot write --hgrm file '$BATS_TEST_TMPDIR': Is a directory"
	run --separate-stderr "$RDMAKIT" lat --engine soft --loopback -n 10 --expect-p99-us 0.000001
	assert_equal "$status" 1
	[[ $stderr == "rdmakit lat: 99th percentile "*" us exceeds --expect-p99-us 1e-06" ]] ||
		fail "unexpected message: $stderr"
}

@test "incast: bad numbers are exit 2; a coordinator with a wrong --bind fails at once, exit 3" {
	check_table incast <<-'EOF'
	2|-D nan h|invalid value 'nan' for -D/--duration
	2|-D 1 --expect-fairness 2 h|value '2' for --expect-fairness is out of range: expected 0..1
	2|--bytes 0 h|value '0' for --bytes is out of range
	2|-D 1 -s 0 h|value '0' for -s/--size is out of range
	2|-D 1 --senders 0 --serve|value '0' for --senders is out of range
	2|-D 1 --world-size 2 --rank 0 --coordinator 127.0.0.1:0|value '0' for --coordinator port is out of range
	3|-D 1 --engine soft --timeout 2 nosuch.invalid|cannot resolve nosuch.invalid
	EOF
	run --separate-stderr "$RDMAKIT" incast -D 1 ''
	assert_one_line_error 2 "empty HOST: give the coordinator's name or address"
	local port
	port=$(free_port)
	run --separate-stderr timeout 10 "$RDMAKIT" incast -D 1 --serve --senders 1 --engine soft \
		-p "$port" --bind 198.51.100.7
	assert_equal "$status" 3
	assert_equal "$stderr" "rdmakit incast: 198.51.100.7 is not an address of this host: give one of the addresses 'rdmakit devices' lists to --bind"
}

@test "capture: empty, directory and unwritable files are exit 3 with the fix; a bad filter names it" {
	: >"$BATS_TEST_TMPDIR/empty.pcap"
	check_table capture <<-EOF
	3|-r $BATS_TEST_TMPDIR/empty.pcap|'$BATS_TEST_TMPDIR/empty.pcap' is not a pcap or pcapng capture (empty, or cut short inside the file header)
	3|-r $BATS_TEST_TMPDIR|cannot read '$BATS_TEST_TMPDIR': it is a directory; give a pcap or pcapng file
	3|-r $BATS_TEST_TMPDIR/none.pcap|cannot read '$BATS_TEST_TMPDIR/none.pcap': no such file; check the path
	3|-r $PCAP -w $BATS_TEST_TMPDIR/no/dir/x.pcap|cannot write '$BATS_TEST_TMPDIR/no/dir/x.pcap': No such file or directory; check the -w path
	3|-r $PCAP -w $BATS_TEST_TMPDIR|cannot write '$BATS_TEST_TMPDIR': Is a directory; check the -w path
	2|-s nan -r $PCAP|invalid value 'nan' for -s/--snaplen
	2|-c 99999999999999999999 -r $PCAP|invalid value '99999999999999999999' for -c/--count
	EOF
	# An empty standard input is not a capture either.
	run --separate-stderr "$RDMAKIT" capture -r - </dev/null
	assert_one_line_error 3 "'-' is not a pcap or pcapng capture (empty, or cut short inside the file header)"
	run --separate-stderr "$RDMAKIT" capture -r "$PCAP" 'udp port ('
	assert_one_line_error 3 "invalid filter 'udp port ('"
}

@test "capture -i: an empty name is a usage error; one this host does not have names -D as the fix" {
	run --separate-stderr "$RDMAKIT" capture -i ''
	assert_one_line_error 2 "empty interface name for -i/--interface: 'rdmakit capture -D' lists them"
	require_root
	run --separate-stderr "$RDMAKIT" capture -i rdmakit-none0 -c 1
	assert_one_line_error 3 "no interface 'rdmakit-none0'; 'rdmakit capture -D' lists them"
}

@test "top: a wrong --sysfs-root or --proc-root names the default; a bad -i name, the form" {
	: >"$BATS_TEST_TMPDIR/file"
	check_table top <<-EOF
	3|-b -n 1 --sysfs-root $BATS_TEST_TMPDIR/none|--sysfs-root $BATS_TEST_TMPDIR/none: No such file or directory; give the directory it is mounted on (default /sys)
	3|-b -n 1 --sysfs-root $BATS_TEST_TMPDIR/file|not a directory; give the directory it is mounted on (default /sys)
	3|-b -n 1 --proc-root $BATS_TEST_TMPDIR/file|(default /proc)
	2|-i a/b|invalid interface name 'a/b' for -i/--interface: expected a name such as eth0 ('ip link' lists them)
	2|-b -d nan|invalid value 'nan' for -d/--delay
	2|-b -d -1|value '-1' for -d/--delay is out of range
	2|-b -n -1|invalid value '-1' for -n/--iterations
	EOF
}

@test "devices: an empty -d name is a usage error; a missing or path-like one, runtime" {
	check_table devices <<-'EOF'
	3|-d a/b|no RDMA device 'a/b'; 'rdmakit devices' lists them
	3|--verbs -d nosuch0|no RDMA device 'nosuch0'
	2|-i 1|unknown option '-i'; see 'rdmakit devices --help'
	EOF
	run --separate-stderr "$RDMAKIT" devices -d ''
	assert_one_line_error 2 "empty device name for -d/--ib-dev: 'rdmakit devices' lists them"
	run --separate-stderr "$RDMAKIT" devices --ib-dev=
	assert_one_line_error 2 "empty device name for -d/--ib-dev"
}
