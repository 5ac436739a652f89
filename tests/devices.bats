#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit devices: the human listing and the JSON document, checked against
# what the host itself says (ip addr, /sys/class/net/IF/mtu); the no-RDMA
# message on a kernel without RDMA; the soft engine's addresses, RoCE MTUs
# and UDP port 4791 probe inside network namespaces the tests create (veth
# MTUs, link-local-only interfaces, a port held by another process); option
# errors (exit 2) and an unknown -d device (exit 3).
#
# The GID index picking and the sysfs GID attributes are covered by
# tests/unit/test_devinfo.c on the fixture tree tests/fixtures/devices/sys.

bats_require_minimum_version 1.5.0

load test_helper

setup() {
	setup_rdmakit
}

# Does this host have kernel RDMA devices?
host_has_rdma() {
	compgen -G '/sys/class/infiniband/*' >/dev/null
}

# The RoCE MTU as the man page defines it, computed independently.
# Python: roce_mtu(if_mtu, family) is in ROCE_MTU_PY.
ROCE_MTU_PY='
def roce_mtu(if_mtu, family):
    over = (20 if family == "ipv4" else 40) + 8 + 12 + 16 + 4
    fit = [m for m in (256, 512, 1024, 2048, 4096) if m + over <= if_mtu]
    return fit[-1] if fit else None
'

# in_netns SCRIPT: runs bash SCRIPT in a new network namespace (lo down,
# IPv6 DAD off so addresses are usable at once), with $RDMAKIT exported.
in_netns() {
	require_root "creating network namespaces"
	require_tool unshare "creating network namespaces"
	require_tool ip "configuring interfaces in a namespace"
	unshare -n bash -c '
		sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 || exit 20
		'"$1"
}

# --- human output ---------------------------------------------------------------

@test "devices: without RDMA devices it says so, then lists the soft engine's addresses" {
	host_has_rdma && skip "this host has RDMA devices"
	run --separate-stderr "$RDMAKIT" devices
	assert_success
	assert_equal "$stderr" ""
	assert_line --index 0 "no RDMA devices found (the kernel has no RDMA driver loaded); the soft engine can use:"
	assert_line --index 1 --regexp '^-{87}$'
	assert_line --index 2 --regexp '^ interface +address +family +loopback +MTU +RoCE MTU +UDP 4791 *$'
	assert_line --regexp '^ lo +127\.0\.0\.1 +IPv4 +yes +[0-9]+ +[0-9]+ +(free|in use) *$'
	assert_line --index $((${#lines[@]} - 1)) --regexp '^-{87}$'
}

@test "devices: columns line up (each column as wide as its widest cell)" {
	run --separate-stderr "$RDMAKIT" devices --soft
	assert_success
	# The start of the "address" column is the same on every table line.
	run python3 -c '
import sys
lines = [l for l in sys.stdin.read().splitlines()[1:] if not l.startswith("-")]
head = lines[0]
col = head.index("address")
for l in lines[1:]:
    assert l[col - 1] == " " and l[col] != " ", (col, l)
print(len(lines) - 1)
' <<<"$output"
	assert_success
	[[ $output -ge 1 ]]
}

@test "devices --verbs: only the RDMA section; without devices one line pointing to --soft" {
	host_has_rdma && skip "this host has RDMA devices"
	run --separate-stderr "$RDMAKIT" devices --verbs
	assert_success
	assert_equal "$stderr" ""
	assert_output "no RDMA devices found (the kernel has no RDMA driver loaded); 'rdmakit devices --soft' lists what the soft engine can use"
}

@test "devices --soft: only the soft engine's addresses" {
	run --separate-stderr "$RDMAKIT" devices --soft
	assert_success
	assert_equal "$stderr" ""
	assert_line --index 0 "The soft engine (--engine soft) can use:"
	refute_line --partial 'RDMA devices'
	assert_line --regexp '^ lo +127\.0\.0\.1 +IPv4 +yes '
	# --verbs --soft is everything, as no option is.
	run --separate-stderr "$RDMAKIT" devices --verbs --soft
	assert_success
	all=$output
	run --separate-stderr "$RDMAKIT" devices
	assert_equal "$output" "$all"
}

# --- JSON -----------------------------------------------------------------------

@test "devices -j: the envelope, params, and one result per soft address with exactly its keys" {
	run --separate-stderr "$RDMAKIT" devices -j
	assert_success
	assert_equal "$stderr" ""
	assert_equal "${#lines[@]}" 1
	run json_eval "$ROCE_MTU_PY"'
assert set(d) == {"rdmakit", "command", "params", "results", "errors"}, sorted(d)
assert d["command"] == "devices" and d["errors"] == []
assert d["params"] == {"ib_dev": None, "verbs": True, "soft": True,
                       "verbs_devices": d["params"]["verbs_devices"]}, d["params"]
soft = [r for r in d["results"] if r["engine"] == "soft"]
verbs = [r for r in d["results"] if r["engine"] == "verbs"]
assert len(soft) + len(verbs) == len(d["results"])
assert d["results"] == verbs + soft, "verbs ports come first"
keys = {"engine", "interface", "address", "family", "loopback", "if_mtu", "roce_mtu", "port_4791"}
for r in soft:
    assert set(r) == keys, sorted(r)
    assert r["family"] in ("ipv4", "ipv6"), r
    assert isinstance(r["loopback"], bool), r
    assert isinstance(r["if_mtu"], int) and r["if_mtu"] > 0, r
    assert r["roce_mtu"] == roce_mtu(r["if_mtu"], r["family"]), r
    assert r["port_4791"] in ("free", "in use"), r
lo = [r for r in soft if r["address"] == "127.0.0.1"]
assert lo and lo[0]["interface"] == "lo" and lo[0]["loopback"] is True and lo[0]["family"] == "ipv4", lo
print(len(verbs))
'
	assert_success
	host_has_rdma || assert_output 0
}

@test "devices -j: every verbs port has its documented keys (when this host has RDMA devices)" {
	host_has_rdma || skip "no RDMA devices on this host: covered by tests/unit/test_devinfo.c"
	run --separate-stderr "$RDMAKIT" devices --verbs -j
	run json_eval '
keys = {"engine", "device", "node_guid", "transport", "port", "state", "link_layer",
        "mtu_bytes", "rate_gbps", "netdev", "gids", "default_gid_index"}
assert d["results"], "no ports"
for r in d["results"]:
    assert set(r) == keys, sorted(r)
    assert r["link_layer"] in ("IB", "Ethernet"), r
    for g in r["gids"]:
        assert set(g) == {"index", "gid", "type", "netdev"}, g
'
	assert_success
}

@test "devices -j: the soft addresses are exactly the UP interfaces' addresses that ip lists" {
	require_tool ip "listing addresses independently"
	run --separate-stderr "$RDMAKIT" devices --soft -j
	assert_success
	mine=$(json_eval '
for r in d["results"]:
    print(r["interface"], r["address"].split("%")[0], r["if_mtu"])
' | sort)
	# ip -o addr: "2: eth0    inet 192.0.2.2/24 ..."; UP interfaces only.
	up=$(ip -o link show up | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }')
	theirs=$(ip -o addr show up | awk '{ split($4, a, "/"); print $2, $3, a[1] }' |
		while read -r ifname fam addr; do
			grep -qx -- "$ifname" <<<"$up" || continue
			# link-local IPv6 only on an interface without other addresses
			if [[ $fam == inet6 && $addr == fe80:* ]] &&
				ip -o addr show dev "$ifname" | awk '{ print $4 }' | grep -qv '^fe80:'; then
				continue
			fi
			echo "$ifname $addr $(cat "/sys/class/net/$ifname/mtu")"
		done | sort)
	assert_equal "$mine" "$theirs"
}

@test "devices --pretty: the same document, indented" {
	run --separate-stderr "$RDMAKIT" devices --soft -j
	compact=$(json_eval 'print(json.dumps(d, sort_keys=True))')
	run --separate-stderr "$RDMAKIT" devices --soft --pretty
	assert_success
	[[ ${#lines[@]} -gt 5 ]]
	assert_line --index 1 '  "rdmakit": "'"$(makefile_version)"'",'
	assert_equal "$(json_eval 'print(json.dumps(d, sort_keys=True))')" "$compact"
}

@test "devices --verbs -j and --soft -j: only their section, and say which in params" {
	run --separate-stderr "$RDMAKIT" devices --verbs -j
	assert_success
	run json_eval '
assert d["params"]["verbs"] is True and d["params"]["soft"] is False, d["params"]
assert all(r["engine"] == "verbs" for r in d["results"]), d["results"]
assert d["params"]["verbs_devices"] == len({r["device"] for r in d["results"]})
'
	assert_success
	run --separate-stderr "$RDMAKIT" devices --soft -j
	assert_success
	run json_eval '
assert d["params"]["verbs"] is False and d["params"]["soft"] is True, d["params"]
assert d["results"] and all(r["engine"] == "soft" for r in d["results"]), d["results"]
'
	assert_success
}

# --- namespaces: MTUs, link-local, port 4791 ----------------------------------------

@test "devices in a namespace: lo down means nothing to bind, said plainly" {
	run --separate-stderr in_netns '"$RDMAKIT" devices --soft'
	assert_success
	assert_line --index 0 "The soft engine (--engine soft) can use:"
	assert_line --index 1 --partial "no UP interface has an address"
	run --separate-stderr in_netns '"$RDMAKIT" devices --soft -j'
	assert_success
	run json_eval 'assert d["results"] == [], d["results"]'
	assert_success
}

@test "devices in a namespace: RoCE MTU per interface MTU and family, link-local only when alone" {
	run --separate-stderr in_netns '
		ip link set lo up
		ip link add dv0 type veth peer name dv1 || exit 21
		ip link add dv2 type veth peer name dv3 || exit 21
		ip link set dv0 mtu 576 up && ip link set dv1 mtu 1280 up || exit 22
		ip link set dv2 mtu 9000 up && ip link set dv3 up || exit 22
		ip addr add 198.18.0.1/24 dev dv0 && ip addr add 198.18.0.2/24 dev dv1 || exit 23
		# (IPv6 needs an MTU of 1280 or more: dv0 has none)
		ip addr add 2001:db8::2/64 dev dv1 nodad || exit 23
		# dv2 and dv3: link-local IPv6 only; wait for the kernel to add it
		for i in $(seq 50); do
			ip -6 -o addr show dev dv3 scope link | grep -q fe80 &&
				ip -6 -o addr show dev dv2 scope link | grep -q fe80 && break
			sleep 0.1
		done
		"$RDMAKIT" devices --soft -j'
	assert_success
	run json_eval '
got = {(r["interface"], r["family"], r["address"].startswith("fe80:")): (r["if_mtu"], r["roce_mtu"])
       for r in d["results"]}
want = {
    ("lo", "ipv4", False): (65536, 4096), ("lo", "ipv6", False): (65536, 4096),
    ("dv0", "ipv4", False): (576, 512),
    ("dv1", "ipv4", False): (1280, 1024), ("dv1", "ipv6", False): (1280, 1024),
    ("dv2", "ipv6", True): (9000, 4096), ("dv3", "ipv6", True): (1500, 1024),
}
assert got == want, (got, want)
for r in d["results"]:
    if r["address"].startswith("fe80:"):
        assert r["address"].endswith("%" + r["interface"]), r
    assert r["port_4791"] == "free", r
# Grouped by interface, IPv4 first.
names = [r["interface"] for r in d["results"]]
assert names == sorted(names, key=names.index), names
'
	assert_success
}

@test "devices in a namespace: UDP 4791 held by another process is 'in use' on that address only" {
	run --separate-stderr in_netns '
		ip link set lo up
		python3 -c "
import socket, subprocess, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((\"127.0.0.1\", 4791))
sys.exit(subprocess.call(sys.argv[1:]))
" "$RDMAKIT" devices --soft -j'
	assert_success
	run json_eval '
state = {r["address"]: r["port_4791"] for r in d["results"]}
assert state == {"127.0.0.1": "in use", "::1": "free"}, state
'
	assert_success
	run --separate-stderr in_netns '
		ip link set lo up
		python3 -c "
import socket, subprocess, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind((\"::\", 4791))
sys.exit(subprocess.call(sys.argv[1:]))
" "$RDMAKIT" devices --soft'
	assert_success
	# A wildcard IPv6 socket holds ::1 (and, dual-stack, 127.0.0.1).
	assert_line --regexp '^ lo +::1 +IPv6 +yes +65536 +4096 +in use *$'
}

# --- errors ---------------------------------------------------------------------

@test "devices -d with a device this host does not have: exit 3 with the exact message" {
	run --separate-stderr "$RDMAKIT" devices -d nosuch0
	assert_one_line_error 3
	assert_equal "$stderr" "rdmakit devices: no RDMA device 'nosuch0'; 'rdmakit devices' lists them"
	for args in "devices --ib-dev nosuch0" "devices -j -d nosuch0" "-j devices --ib-dev=nosuch0" \
		"devices --verbs -d nosuch0"; do
		run --separate-stderr "$RDMAKIT" $args
		assert_one_line_error 3 "no RDMA device 'nosuch0'"
	done
}

@test "devices -d NAME lists that device alone (when this host has RDMA devices)" {
	host_has_rdma || skip "no RDMA devices on this host"
	dev=$(basename "$(compgen -G '/sys/class/infiniband/*' | head -n 1)")
	run --separate-stderr "$RDMAKIT" devices -d "$dev" -j
	assert_success
	run json_eval '
assert d["results"] and all(r["device"] == sys.argv[2] for r in d["results"]), d["results"]
assert d["params"]["ib_dev"] == sys.argv[2] and d["params"]["soft"] is False
' "$dev"
	assert_success
}

@test "devices option errors exit 2 with one line naming the problem" {
	run --separate-stderr "$RDMAKIT" devices --bogus
	assert_one_line_error 2 "unknown option '--bogus'"
	run --separate-stderr "$RDMAKIT" devices -Z
	assert_one_line_error 2 "unknown option '-Z'"
	run --separate-stderr "$RDMAKIT" devices -d
	assert_one_line_error 2 "option '-d' needs a value: -d/--ib-dev NAME"
	run --separate-stderr "$RDMAKIT" devices --ib-dev
	assert_one_line_error 2 "'--ib-dev' needs a value"
	run --separate-stderr "$RDMAKIT" devices mlx5_0
	assert_one_line_error 2 "unexpected argument 'mlx5_0'; to select a device use -d NAME"
	run --separate-stderr "$RDMAKIT" devices -d mlx5_0 --soft
	assert_one_line_error 2 "-d/--ib-dev selects an RDMA device and --soft lists only soft-engine addresses"
	run --separate-stderr "$RDMAKIT" devices --soft=yes
	assert_one_line_error 2 "'--soft=yes'"
}

@test "devices --help: usage, every option, exit 0" {
	run --separate-stderr "$RDMAKIT" devices --help
	assert_success
	assert_equal "$stderr" ""
	assert_line --index 0 'Usage: rdmakit devices [-d NAME] [--verbs | --soft] [--json]'
	assert_line --regexp '^  -d, --ib-dev NAME +'
	assert_line --regexp '^      --verbs +'
	assert_line --regexp '^      --soft +'
}

@test "bash completion: rdmakit devices offers its options, -d offers this host's RDMA devices" {
	run --separate-stderr complete_bash 'rdmakit devices --'
	assert_success
	assert_equal "$(sort <<<"$output")" "$(printf '%s\n' --help --ib-dev --json --pretty --soft --verbs)"
	run --separate-stderr complete_bash 'rdmakit devices '
	assert_success
	assert_line -- '--soft'
	run --separate-stderr complete_bash 'rdmakit devices -d '
	assert_success
	assert_equal "$output" "$(ls /sys/class/infiniband 2>/dev/null)"
}
