#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit top as a Prometheus exporter, checked by the Prometheus tools
# themselves: promtool on the 0.0.4 exposition, Debian's python3 client's
# OpenMetrics parser, node_exporter's textfile collector, and a real
# Prometheus scraping a fixture tree whose counter moves at a known rate.
# All on loopback.  Needs prometheus, prometheus-node-exporter, promtool
# and python3-prometheus-client (make deps); skipped without them, failed
# under CI=true.

bats_require_minimum_version 1.5.0

load test_helper
load perf_helper

setup() {
	setup_perf
	FX=$RDMAKIT_ROOT/tests/fixtures/top
	S1=(--sysfs-root "$FX/sample1/sys" --proc-root "$FX/sample1/proc")
	# Debian's prometheus_client is for Debian's python3.
	PY=/usr/bin/python3
}

teardown() {
	kill_bg
}

# serve ARGS...: rdmakit top --listen 127.0.0.1:PORT ARGS... in the
# background; sets PORT once it listens.
serve() {
	PORT=$(free_port)
	bg "$BATS_TEST_TMPDIR/top.out" "$BATS_TEST_TMPDIR/top.err" "$RDMAKIT" top --listen "127.0.0.1:$PORT" "$@"
	wait_listen "$PORT" || fail "rdmakit top --listen did not listen on $PORT"
}

# get URL [ACCEPT]: the body in $output, the Content-Type in $ctype.
get() {
	local out
	out=$($PY - "$1" "${2:-}" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1])
if sys.argv[2]:
    req.add_header("Accept", sys.argv[2])
try:
    r = urllib.request.urlopen(req, timeout=10)
except urllib.error.HTTPError as e:
    r = e
print(r.status)
print(r.headers.get("Content-Type"))
sys.stdout.write(r.read().decode())
PY
	) || fail "GET $1 failed"
	status=$(sed -n 1p <<<"$out")
	ctype=$(sed -n 2p <<<"$out")
	output=$(sed 1,2d <<<"$out")
	mapfile -t lines <<<"$output"
}

@test "exporter: /metrics in the 0.0.4 text format passes promtool check metrics, values as the fixture holds them" {
	require_tool promtool "checking the exposition"
	# With the fixture's RDMA netlink answers: mlx5_0's driver counters,
	# optional ones and QP counters come from there.
	export RDMAKIT_NETLINK_REPLAY=$FX/sample1/netlink
	serve "${S1[@]}"
	get "http://127.0.0.1:$PORT/metrics"
	[[ $status == 200 ]] || fail "status $status"
	[[ $ctype == "text/plain; version=0.0.4; charset=utf-8" ]] || fail "Content-Type $ctype"
	run promtool check metrics <<<"$output"
	assert_success
	# port_xmit_data counts 4-byte words: bytes are 4x the file.
	words=$(cat "$FX/sample1/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data")
	get "http://127.0.0.1:$PORT/metrics"
	assert_line "rdma_port_transmit_bytes_total{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\"} $((words * 4))"
	assert_line "rdma_port_stat{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\",source=\"counters\",counter=\"port_xmit_data\"} $words"
	assert_line 'rdma_port_up{device="mlx5_1",port="1",netdev="ens1f1np1"} 0'
	assert_line 'rdma_port_speed_bytes{device="mlx5_0",port="1",netdev="ens1f0np0"} 12500000000'
	assert_line --regexp '^rdma_host_ecn_received_packets_total\{codepoint="ce"\} [0-9]+$'
	assert_line --regexp '^rdmakit_scrape_duration_seconds [0-9.e-]+$'
	assert_line 'rdmakit_scrape_success 1'
	# irdma's counter names have spaces: label values, never metric names.
	assert_line --regexp '^rdma_port_stat\{device="irdma0",.*counter="[^"]* [^"]*"\} [0-9]+$'
	# The RDMA netlink wins over sysfs hw_counters, never both; QP counters
	# in their own families.
	assert_line 'rdma_port_stat{device="mlx5_0",port="1",netdev="ens1f0np0",source="netlink",counter="rx_write_requests"} 88124456'
	refute_line --partial 'device="mlx5_0",port="1",netdev="ens1f0np0",source="hw_counters"'
	assert_line 'rdma_port_stat{device="mlx5_0",port="1",netdev="ens1f0np0",source="netlink optional",counter="cc_rx_ce_pkts"} 91000'
	assert_line 'rdma_port_qp_stat{device="mlx5_0",port="1",netdev="ens1f0np0",counter_id="3",counter="rx_write_requests"} 60000000'
	assert_line 'rdma_port_qp_stat_qps{device="mlx5_0",port="1",netdev="ens1f0np0",counter_id="4",mode="auto"} 1'
	assert_line 'rdma_port_qp_stat_not_exported{device="mlx5_0",port="1",netdev="ens1f0np0"} 0'
	# ECN marked is np_ecn_marked_roce_packets alone, not plus cc_rx_ce_pkts.
	assert_line 'rdma_port_ecn_marked_packets_total{device="mlx5_0",port="1",netdev="ens1f0np0"} 91234'
	# Counters are counters: no rates, no timestamps.
	refute_line --regexp '^[a-z_]*(rate|per_second)[a-z_]*[{ ]'
	refute_line --regexp '^[a-z_]+(\{[^}]*\})? [^ ]+ [0-9]+$'
}

@test "exporter: OpenMetrics 1.0 when the scraper asks for it, read by the Prometheus client's parser" {
	[[ -x $PY ]] && $PY -c 'import prometheus_client' 2>/dev/null ||
		_require_missing "python3-prometheus-client is not installed: make deps installs it" \
			"python3-prometheus-client is not installed: run 'make deps' as root"
	export RDMAKIT_NETLINK_REPLAY=$FX/sample1/netlink
	serve "${S1[@]}"
	get "http://127.0.0.1:$PORT/metrics" \
		'application/openmetrics-text;version=1.0.0;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
	[[ $ctype == "application/openmetrics-text; version=1.0.0; charset=utf-8" ]] || fail "Content-Type $ctype"
	[[ ${lines[-1]} == "# EOF" ]] || fail "no # EOF at the end"
	assert_line '# TYPE rdma_port_transmit_bytes counter'
	assert_line '# TYPE rdma_port info'
	run $PY -c '
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(sys.stdin.read()))
by = {f.name: f for f in fams}
assert by["rdma_port_transmit_bytes"].type == "counter", by["rdma_port_transmit_bytes"].type
assert by["rdma_port"].type == "info"
assert by["rdma_port_qp_stat"].type == "unknown" and len(by["rdma_port_qp_stat"].samples) == 6
print(sum(len(f.samples) for f in fams), "samples in", len(fams), "families")' <<<"$output"
	assert_success
	assert_output --regexp '^[0-9]+ samples in [0-9]+ families$'
}

@test "exporter: / says what it is, other paths are 404, and the default address is loopback" {
	serve "${S1[@]}"
	get "http://127.0.0.1:$PORT/"
	[[ $status == 200 ]] || fail "status $status"
	assert_output --partial '<a href="/metrics">'
	get "http://127.0.0.1:$PORT/nothing"
	[[ $status == 404 ]] || fail "status $status"
	# Without an address: 127.0.0.1 only.
	local port2
	port2=$(free_port)
	bg /dev/null /dev/null "$RDMAKIT" top --listen ":$port2" "${S1[@]}"
	wait_listen "$port2" || fail "no listener on :$port2"
	run ss -Htln "sport = :$port2"
	assert_output --partial "127.0.0.1:$port2"
	refute_output --partial "0.0.0.0:$port2"
}

@test "exporter: --textfile writes atomically, and node_exporter's textfile collector serves it" {
	require_tool prometheus-node-exporter "reading the textfile"
	local dir=$BATS_TEST_TMPDIR/textfile nport
	mkdir -p "$dir"
	run "$RDMAKIT" top --textfile "$dir/rdmakit.prom" -n 2 -d 0.2 "${S1[@]}"
	assert_success
	[[ -s $dir/rdmakit.prom ]] || fail "no $dir/rdmakit.prom"
	run ls "$dir"
	assert_output "rdmakit.prom"	# no temporary file left behind
	nport=$(free_port)
	bg /dev/null "$BATS_TEST_TMPDIR/ne.err" prometheus-node-exporter --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$dir" --web.listen-address="127.0.0.1:$nport"
	wait_listen "$nport" || fail "node_exporter did not listen"
	get "http://127.0.0.1:$nport/metrics"
	assert_line 'rdma_port_up{device="mlx5_1",netdev="ens1f1np1",port="1"} 0'
	assert_line --regexp '^node_textfile_scrape_error 0$'
}

@test "exporter: a real Prometheus scrapes it every second and finds the fixture's rate within 10%" {
	require_tool prometheus "scraping the exporter"
	local tree=$BATS_TEST_TMPDIR/tree f pport prom
	cp -r "$FX/sample1" "$tree"
	f=$tree/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data
	# The counter follows the clock, 2.5 M words (10 MB) a second, however
	# often this loop gets to run.
	(
		t0=${EPOCHREALTIME/./}
		while :; do
			now=${EPOCHREALTIME/./}
			echo $((1000000 + (now - t0) * 5 / 2)) >"$f.new" && mv "$f.new" "$f"
			sleep 0.05
		done
	) 3>&- &
	BG_PIDS+=($!)
	serve --sysfs-root "$tree/sys" --proc-root "$tree/proc"
	pport=$(free_port)
	prom=$BATS_TEST_TMPDIR/prom
	mkdir -p "$prom"
	cat >"$prom/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		  evaluation_interval: 1s
		scrape_configs:
		  - job_name: rdmakit
		    static_configs:
		      - targets: ['127.0.0.1:$PORT']
	EOF
	bg /dev/null "$BATS_TEST_TMPDIR/prom.err" prometheus --config.file="$prom/prometheus.yml" --storage.tsdb.path="$prom/data" \
		--web.listen-address="127.0.0.1:$pport"
	wait_listen "$pport" || fail "prometheus did not listen"
	run $PY - "http://127.0.0.1:$pport" <<'PY'
import json, sys, time, urllib.parse, urllib.request
base = sys.argv[1]
def q(expr):
    u = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    r = json.load(urllib.request.urlopen(u, timeout=10))
    assert r["status"] == "success", r
    return r["data"]["result"]
# rate() over a window the series does not fill yet extrapolates short:
# wait until the last 6 s hold 6 scrapes (Prometheus starts scraping late).
series = 'rdma_port_transmit_bytes_total{device="mlx5_0"}'
deadline = time.time() + 40
while time.time() < deadline:
    n = q("count_over_time(%s[6s])" % series)
    if n and float(n[0]["value"][1]) >= 6:
        break
    time.sleep(0.5)
else:
    sys.exit("fewer than 6 scrapes in 6 s after 40 s")
up = q('up{job="rdmakit"}')
assert up and up[0]["value"][1] == "1", up
rate = q("rate(%s[5s])" % series)
assert rate, "no rate series"
v = float(rate[0]["value"][1])
want = 250000 * 4 * 10
print("rate %.0f B/s, want %d" % (v, want))
assert abs(v - want) <= 0.10 * want, (v, want)
PY
	assert_success
}

@test "exporter: bad --listen is exit 2, a port in use exit 3, --textfile must end in .prom: one line each" {
	run --separate-stderr "$RDMAKIT" top --listen 300.1.2.3:9000 "${S1[@]}"
	assert_one_line_error 2 "invalid address in --listen '300.1.2.3:9000'"
	run --separate-stderr "$RDMAKIT" top --listen 127.0.0.1:70000 "${S1[@]}"
	assert_one_line_error 2 "invalid port in --listen '127.0.0.1:70000'"
	run --separate-stderr "$RDMAKIT" top --textfile "$BATS_TEST_TMPDIR/x.txt" "${S1[@]}"
	assert_one_line_error 2 "--textfile '$BATS_TEST_TMPDIR/x.txt': the name must end in .prom"
	run --separate-stderr "$RDMAKIT" top --listen :1 -b "${S1[@]}"
	assert_one_line_error 2 "--listen and --textfile run headless"
	# The same interface twice would be every series twice.
	run --separate-stderr "$RDMAKIT" top --listen :1 -i lo -i lo "${S1[@]}"
	assert_one_line_error 2 "-i lo given twice"
	serve "${S1[@]}"
	run --separate-stderr "$RDMAKIT" top --listen "127.0.0.1:$PORT" "${S1[@]}"
	assert_one_line_error 3 "--listen 127.0.0.1:$PORT: Address already in use"
}
