#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# rdmakit plot on real runs (bw -a and lat on loopback) and captures (seq:
# pcapgen's laid-out flows, and a loopback run under 3% loss): the layout read
# back (--dump-layout: a point per result or histogram bucket, each where
# its value puts it, the axes' tick labels), the picture in each format
# (SVG parses as XML, PDF text read back with pdftotext, PNG of the asked
# size), overlays and labels; bad input exits 2, an unwritable output 3,
# one line each, and no file left behind.
#
# Axes, ranges and the PNG's ink: tests/unit/test_plot.c.

bats_require_minimum_version 1.5.0

load test_helper

setup_file() {
	setup_rdmakit
	# One bw sweep and one latency run, shared by the tests (seconds).
	"$RDMAKIT" -j bw --loopback -a -n 50 >"$BATS_FILE_TMPDIR/bw.json"
	"$RDMAKIT" -j bw --loopback -a -n 50 -m 4096 >"$BATS_FILE_TMPDIR/bw4096.json"
	"$RDMAKIT" -j lat --loopback -n 2000 -s 64 >"$BATS_FILE_TMPDIR/lat.json"
	"$RDMAKIT" -j lat --loopback -n 200 -a >"$BATS_FILE_TMPDIR/lat-a.json"
	# Captures laid out packet by packet (tests/tools/pcapgen).
	pcapgen_fixtures "$BATS_FILE_TMPDIR/fx" >/dev/null
}

setup() {
	setup_rdmakit
	D=$BATS_FILE_TMPDIR
}

# dump_layout FILE...: the layout of 'plot FILE...' into the file $LAYOUT.
dump_layout() {
	LAYOUT=$BATS_TEST_TMPDIR/layout.json
	"$RDMAKIT" plot --dump-layout "$@" >"$LAYOUT"
}

@test "plot bw: a point per result at the page position its size and bandwidth give, on log2 and linear axes" {
	dump_layout "$D/bw.json"
	run python3 - "$D/bw.json" "$LAYOUT" <<'PY'
import json, math, sys
lay = json.load(open(sys.argv[2]))
doc = json.load(open(sys.argv[1]))
res, start = doc["results"], doc["params"]["start_time"]
assert lay["kind"] == "bw" and lay["width"] == 1000 and lay["height"] == 640, lay["kind"]
# The run and when it began (a document without params.start_time: no date).
assert lay["title"] == "rdmakit bw: WRITE, soft engine, MTU 1024, 1 QP, %s %s UTC" % (start[:10], start[11:16]), lay["title"]
bw, rate = lay["panels"]
assert bw["x"]["scale"] == "log2" and bw["y"]["label"] == "bandwidth (Gb/s)"
assert rate["y"]["label"] == "message rate (Mpps)"
labels = [t["label"] for t in bw["x"]["ticks"]]
assert labels[0] == "2" and "8K" in labels and "2M" in labels, labels
(s,) = bw["series"]
assert len(s["points"]) == len(res) == 23, (len(s["points"]), len(res))
def frac_log2(a, v): return (math.log2(v) - math.log2(a["min"])) / (math.log2(a["max"]) - math.log2(a["min"]))
def frac_lin(a, v): return (v - a["min"]) / (a["max"] - a["min"])
for panel, key in ((bw, "bw_avg_gbps"), (rate, "msg_rate_mpps")):
    area = panel["area"]
    for p, r in zip(panel["series"][0]["points"], res):
        assert p["x"] == r["bytes"] and abs(p["y"] - r[key]) < 1e-9, (p, r)
        assert abs(p["px"] - (area["x"] + frac_log2(panel["x"], r["bytes"]) * area["w"])) < 1e-6
        assert abs(p["py"] - (area["y"] + area["h"] - frac_lin(panel["y"], r[key]) * area["h"])) < 1e-6
    assert panel["y"]["min"] == 0 and panel["y"]["max"] >= max(r[key] for r in res)
print("ok")
PY
	assert_success
	assert_output ok
}

@test "plot lat: the percentile curve on a nines axis and the histogram, a point per bucket" {
	dump_layout "$D/lat.json"
	run python3 - "$D/lat.json" "$LAYOUT" <<'PY'
import json, sys
lay = json.load(open(sys.argv[2]))
(r,) = json.load(open(sys.argv[1]))["results"]
pct, hist = lay["panels"]
assert pct["x"]["scale"] == "nines" and pct["y"]["scale"] == "log10", pct["x"]["scale"]
labels = [t["label"] for t in pct["x"]["ticks"]]
assert labels[:4] == ["0%", "90%", "99%", "99.9%"], labels
h = r["histogram"]
(curve,), (bars,) = pct["series"], hist["series"]
assert len(curve["points"]) == len(bars["points"]) == len(h)
total = sum(b["count"] for b in h)
cum = 0
for p, q, b in zip(curve["points"], bars["points"], h):
    cum += b["count"]
    assert abs(p["x"] - min(100.0 * cum / total, pct["x"]["max"])) < 1e-9 and p["y"] == b["to_us"], (p, b)
    assert q["y"] == b["count"] and abs(q["width"] - (b["to_us"] - b["from_us"])) < 1e-9
assert pct["y"]["min"] <= r["t_min_us"] and pct["y"]["max"] >= r["t_max_us"]
print("ok")
PY
	assert_success
	assert_output ok
	# lat -a: one line per message size, labelled by it (the title names the run).
	dump_layout "$D/lat-a.json"
	run python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["panels"][0]["series"]
assert len(s) == 23 and s[0]["label"] == "2 B" and s[10]["label"] == "2 KiB", [x["label"] for x in s][:11]
print("ok")' "$LAYOUT"
	assert_output ok
}

@test "plot: SVG parses as XML, PDF text reads back, PNG has the asked size" {
	require_tool pdftotext "reading the PDF's text back"
	run --separate-stderr "$RDMAKIT" plot -o "$D/bw.svg" "$D/bw.json"
	assert_success
	run python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); assert r.tag.endswith("svg"), r.tag; print(r.get("width"), r.get("height"))' "$D/bw.svg"
	assert_success
	assert_output "1000pt 640pt"
	run --separate-stderr "$RDMAKIT" plot -o "$D/lat.pdf" "$D/lat.json"
	assert_success
	run pdftotext -layout "$D/lat.pdf" -
	assert_success
	assert_output --partial "rdmakit lat: SEND, soft engine, MTU 1024, 1 QP"
	assert_output --partial "percentile"
	assert_output --partial "latency (us)"
	assert_output --partial "99.9%"
	run --separate-stderr "$RDMAKIT" plot --size 640x400 -o "$D/bw.png" "$D/bw.json"
	assert_success
	run python3 -c 'import struct, sys; b = open(sys.argv[1], "rb").read(24); assert b[:8] == b"\x89PNG\r\n\x1a\n"; print(*struct.unpack(">II", b[16:24]))' "$D/bw.png"
	assert_output "640 400"
	# The file gets what a new file gets under the umask.
	run stat -c %a "$D/bw.png"
	assert_output "$(printf '%o' $((0666 & ~$(umask))))"
}

@test "plot: two files overlay as two series, named by --label, and - reads standard input" {
	run --separate-stderr "$RDMAKIT" plot --dump-layout --label "MTU 1024" --label "MTU 4096" \
		"$D/bw.json" - <"$D/bw4096.json"
	assert_success
	run json_eval '
assert d["legend"] == ["MTU 1024", "MTU 4096"], d["legend"]
for panel in d["panels"]:
    assert [len(s["points"]) for s in panel["series"]] == [23, 23]
    assert [s["color"] for s in panel["series"]] == [0, 1]
print("ok")'
	assert_output ok
	run --separate-stderr "$RDMAKIT" plot --dump-layout "$D/bw.json" "$D/bw4096.json"
	assert_success
	run json_eval 'print(d["legend"])'
	assert_output "['WRITE, soft engine, MTU 1024, 1 QP', 'WRITE, soft engine, MTU 4096, 1 QP']"
}

@test "plot: bad input exits 2 and an unwritable output 3, one line each, no file left behind" {
	printf '' >"$D/empty.json"
	echo '{"a": 1}' >"$D/other.json"
	echo 'not json' >"$D/text.json"
	run --separate-stderr "$RDMAKIT" plot -o "$D/x.svg" "$D/empty.json"
	assert_one_line_error 2 'empty, not a JSON document'
	run --separate-stderr "$RDMAKIT" plot -o "$D/x.svg" "$D/other.json"
	assert_one_line_error 2 'not a JSON document rdmakit wrote'
	run --separate-stderr "$RDMAKIT" plot -o "$D/x.svg" "$D/text.json"
	assert_one_line_error 2 'not JSON ('
	run --separate-stderr "$RDMAKIT" plot --kind bw -o "$D/x.svg" "$D/lat.json"
	assert_one_line_error 2 'a lat run cannot be drawn as --kind bw'
	run --separate-stderr "$RDMAKIT" plot -o "$D/x.txt" "$D/bw.json"
	assert_one_line_error 2 'name the file .svg, .png or .pdf'
	run --separate-stderr "$RDMAKIT" plot "$D/bw.json"
	assert_one_line_error 2 'no -o FILE'
	run --separate-stderr "$RDMAKIT" plot --size 10x10 -o "$D/x.svg" "$D/bw.json"
	assert_one_line_error 2 '--size'
	run --separate-stderr "$RDMAKIT" plot -o "$D/x.svg" "$D/missing.json"
	assert_one_line_error 3 'missing.json: No such file or directory'
	[[ ! -e $D/x.svg && ! -e $D/x.txt ]] || fail "a picture was written for bad input"
	mkdir -p "$D/ro"
	chmod 0555 "$D/ro"
	if [[ $(id -u) -eq 0 ]]; then
		# root writes anywhere: a directory that does not exist instead.
		run --separate-stderr "$RDMAKIT" plot -o "$D/ro/no/such/x.svg" "$D/bw.json"
	else
		run --separate-stderr "$RDMAKIT" plot -o "$D/ro/x.svg" "$D/bw.json"
	fi
	assert_one_line_error 3 'choose a writable place with -o'
	run find "$D/ro" -type f
	assert_output ""
}

# seq_marks PCAP: the seq layout of the capture's JSON lines, as
# "label:count" per series, then each series' points "x,y" (x in us).
seq_marks() {
	"$RDMAKIT" -j capture -r "$1" >"$BATS_TEST_TMPDIR/cap.json"
	dump_layout "$BATS_TEST_TMPDIR/cap.json"
	python3 - "$LAYOUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
(p,) = d["panels"]
print(d["title"])
print(" ".join(f'{s["label"]}:{len(s["points"])}' for s in p["series"]))
for s in p["series"]:
    print(s["label"], s["marker"], " ".join(f'{round(q["x"] * 1e6, 1):g},{q["y"]:g}' for q in s["points"]))
PY
}

@test "plot seq: requests, the NAK and the retransmissions it caused, at their times and PSNs" {
	run seq_marks "$D/fx/retransmit.pcap"
	assert_success
	assert_line --index 0 "rdmakit seq: QP 18, 198.18.0.2 -> 198.18.0.3"
	# 101 was lost: its first copy is no retransmission (capture counts 2).
	assert_line --index 1 --partial "requests:"
	assert_line --index 1 --partial "NAK PSN sequence error:1"
	assert_line --index 1 --partial "retransmissions:2"
	assert_line --regexp '^NAK PSN sequence error cross 4.5,1$'
	assert_line --regexp '^retransmissions cross 7.5,2 9,3$'
	assert_line --regexp '^ACKs plus 10.5,3'
}

@test "plot seq: an RNR NAK, CNPs and CE marks are marks of their own" {
	run seq_marks "$D/fx/rnr-nak.pcap"
	assert_success
	assert_line --regexp '^RNR NAKs square 1.5,0$'
	assert_line --regexp '^retransmissions cross 3,0$'
	run seq_marks "$D/fx/congestion.pcap"
	assert_success
	assert_line --regexp '^CE-marked requests diamond 3,2 9,5 15,8$'
	assert_line --regexp '^CNPs triangle 6,3 12,6$'
	refute_line --partial "retransmissions"
}

@test "plot seq: a real run under 3% loss (nftables, a namespace): the marks are capture's retransmissions and NAKs" {
	require_root "a network namespace and nftables"
	require_tool nft "dropping packets in the kernel datapath"
	local ns=rkplot$$ cpid
	ip netns add "$ns"
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" nft -f - <<'NFT'
table ip rkplot {
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		udp dport 4791 numgen random mod 100 < 3 drop
	}
}
NFT
	ip netns exec "$ns" "$RDMAKIT" capture -i lo -w "$BATS_TEST_TMPDIR/loss.pcap" >/dev/null 2>&1 &
	cpid=$!
	sleep 0.5
	ip netns exec "$ns" "$RDMAKIT" bw --loopback -s 16k -n 300 >/dev/null 2>&1
	local brc=$?
	sleep 0.3
	kill -INT "$cpid"
	wait "$cpid"
	ip netns del "$ns"
	[[ $brc -eq 0 ]] || fail "bw under 3% loss exited $brc"
	"$RDMAKIT" -j capture -r "$BATS_TEST_TMPDIR/loss.pcap" >"$BATS_TEST_TMPDIR/cap.json"
	dump_layout "$BATS_TEST_TMPDIR/cap.json"
	run python3 - "$BATS_TEST_TMPDIR/cap.json" "$LAYOUT" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
summary = lines[-1]["summary"]
pkts = lines[:-1]
(p,) = json.load(open(sys.argv[2]))["panels"]
s = {x["label"]: x["points"] for x in p["series"]}
data = max(summary["flows"], key=lambda f: f["packets"])
back = [f for f in summary["flows"] if f is not data]
assert len(s["retransmissions"]) == data["retransmits"] > 0, (len(s["retransmissions"]), data["retransmits"])
naks = sum(f["naks"]["psn_seq_err"] for f in back)
assert len(s.get("NAK PSN sequence error", [])) == naks > 0, (s.keys(), naks)
# Each NAK mark sits at the time of a NAK packet capture decoded.
t0 = min(q["time_ns"] for q in pkts if q["dest_qp"] == data["dest_qp"])
nak_times = sorted(round((q["time_ns"] - t0) / 1e9, 9) for q in pkts
                   if q.get("aeth", {}).get("kind") == "nak" and q["icrc"] == "ok")
assert sorted(round(m["x"], 9) for m in s["NAK PSN sequence error"]) == nak_times, "NAK times"
print("ok", data["retransmits"], "retransmissions,", naks, "NAKs")
PY
	assert_success
	assert_line --partial ok
}

@test "plot incast: a bar per flow at its goodput, the FCT CDF, Jain's index in the legend; failed flows as crosses; goodput over time with --interval" {
	fx=$RDMAKIT_ROOT/tests/fixtures/plot
	dump_layout "$fx/incast.json"
	run python3 - "$fx/incast.json" "$LAYOUT" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
lay = json.load(open(sys.argv[2]))
flows = res["flows"]
bars_panel, cdf_panel = lay["panels"]
(bars,) = bars_panel["series"]
(cdf,) = cdf_panel["series"]
assert lay["kind"] == "incast" and bars["style"] == "bars" and cdf["style"] == "cdf"
assert bars["label"] == "Jain's index %.3f, aggregate %.2f Gb/s" % (res["fairness_jain"], res["aggregate"]["goodput_gbps"]), bars["label"]
def same(a, b): return all(abs(x - y) <= 1e-9 * max(1, abs(y)) for x, y in zip(a, b)) and len(a) == len(b)
# (--dump-layout writes 12 significant digits)
assert same([p["x"] for p in bars["points"]], [i + 1.0 for i in range(len(flows))])
assert same([p["y"] for p in bars["points"]], [f["goodput_gbps"] for f in flows])
fct = sorted(f["fct_us"] for f in flows)
assert same([p["x"] for p in cdf["points"]], fct)
assert same([p["y"] for p in cdf["points"]], [(i + 1) / len(flows) for i in range(len(fct))])
assert cdf_panel["y"]["max"] == 1
print("ok")
PY
	assert_success
	assert_output ok
	dump_layout "$fx/incast-failed.json"
	run python3 -c '
import json, sys
(bars, failed), (cdf,) = [p["series"] for p in json.load(open(sys.argv[1]))["panels"]]
assert failed["label"] == "failed flows" and failed["marker"] == "cross"
assert [(p["x"], p["y"]) for p in failed["points"]] == [(3.0, 0.0), (6.0, 0.0)], failed["points"]
assert bars["points"][2]["y"] == 0 and len(cdf["points"]) == 6 and cdf["points"][-1]["y"] == 0.75
print("ok")' "$LAYOUT"
	assert_output ok
	# With --interval (a real -D run of 4 flows): a line per flow over time,
	# a point per interval at its middle and the flow's goodput in it; the
	# per-flow bars move below (no completion times in a -D run).
	dump_layout "$fx/incast-interval.json"
	run python3 - "$fx/incast-interval.json" "$LAYOUT" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
lay = json.load(open(sys.argv[2]))
top, bottom = lay["panels"]
iv, flows = res["intervals"], res["flows"]
assert top["x"]["label"] == "time (s)" and top["y"]["label"] == "goodput (Gb/s)"
assert [s["label"] for s in top["series"]] == ["flow %d %s" % (f["flow"], f["sender"]) for f in flows]
for s, f in zip(top["series"], flows):
    assert s["style"] == "lines" and len(s["points"]) == len(iv)
    for p, x in zip(s["points"], iv):
        (g,) = [y["goodput_gbps"] for y in x["flows"] if y["flow"] == f["flow"]]
        assert abs(p["x"] - (x["start_s"] + x["end_s"]) / 2) < 1e-9 and abs(p["y"] - g) < 1e-9 * max(1, g)
# Page positions map back to the data on the linear axes.
a, p0 = top["x"], top["series"][0]["points"][2]
xs = [t for t in a["ticks"]]
px = xs[0]["page"] + (p0["x"] - xs[0]["value"]) * (xs[-1]["page"] - xs[0]["page"]) / (xs[-1]["value"] - xs[0]["value"])
assert abs(px - p0["px"]) < 0.01, (px, p0)
(bars,) = bottom["series"]
assert bottom["x"]["label"] == "flow" and bars["style"] == "bars" and len(bars["points"]) == len(flows)
print("ok")
PY
	assert_output ok
	# 18 flows of --bytes: the mean flow between the slowest and fastest, the FCT CDF below.
	dump_layout "$fx/incast-interval-many.json"
	run python3 - "$fx/incast-interval-many.json" "$LAYOUT" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
top, bottom = json.load(open(sys.argv[2]))["panels"]
iv = res["intervals"]
fast, mean, slow = top["series"]
assert (fast["label"], mean["label"], slow["label"]) == ("fastest flow", "mean of 18 flows", "slowest flow")
def same(a, b): return len(a) == len(b) and all(abs(x - y) <= 1e-9 * max(1, abs(y)) for x, y in zip(a, b))
# (--dump-layout writes 12 significant digits)
assert same([p["y"] for p in fast["points"]], [x["fastest_gbps"] for x in iv])
assert same([p["y"] for p in slow["points"]], [x["slowest_gbps"] for x in iv])
assert same([p["y"] for p in mean["points"]], [x["goodput_gbps"] / 18 for x in iv])
(cdf,) = bottom["series"]
assert cdf["style"] == "cdf" and len(cdf["points"]) == 18
print("ok")
PY
	assert_output ok
	# A sender's document has its own flows; a bw run is no incast.
	run --separate-stderr "$RDMAKIT" plot --kind incast -o "$D/x.svg" "$D/bw.json"
	assert_one_line_error 2 'a bw run cannot be drawn as --kind incast'
}

# same_pdf_text A B: the two PDFs read the same, but for their subtitles
# (a JSON file's name, or which run and when for --plot).
same_pdf_text() {
	local drop='/^drawn by rdmakit |\.json($|:)|^rdmakit capture -r /d'
	diff <(pdftotext "$1" - | sed -E "$drop") <(pdftotext "$2" - | sed -E "$drop")
}

@test "--plot on bw, lat and capture: the run's picture, as plot draws its JSON; text output unchanged" {
	require_tool pdftotext "reading the PDF's text back"
	T=$BATS_TEST_TMPDIR
	# -j and --plot: the document printed is the one drawn.
	"$RDMAKIT" -j bw --loopback -a -n 50 --plot "$T/bw-run.pdf" >"$T/bw-run.json"
	"$RDMAKIT" plot -o "$T/bw-plot.pdf" "$T/bw-run.json"
	run same_pdf_text "$T/bw-run.pdf" "$T/bw-plot.pdf"
	assert_success
	# The title ends with when the run began (params.start_time).
	run pdftotext "$T/bw-run.pdf" -
	start=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["params"]["start_time"])' "$T/bw-run.json")
	assert_line "rdmakit bw: WRITE, soft engine, MTU 1024, 1 QP, ${start:0:10} ${start:11:5} UTC"
	assert_line "drawn by rdmakit bw --plot"
	# No start_time (an older rdmakit's document), or a malformed one: no date.
	for t in '' '"start_time": "2026-13-04T20:12:33Z", ' '"start_time": "yesterday", '; do
		sed "s/\"params\": *{/\"params\": {$t/; s/\"start_time\":\"[^\"]*\",//" "$T/bw-run.json" >"$T/edited.json"
		run -0 "$RDMAKIT" plot --dump-layout "$T/edited.json"
		[[ $output == *'"title":"rdmakit bw: WRITE, soft engine, MTU 1024, 1 QP"'* ]] || fail "with '$t': ${output:0:200}"
	done
	# Text and --plot: the text as always (no JSON on stdout), the picture beside it.
	run -0 "$RDMAKIT" lat --loopback -n 300 -s 64 --plot "$T/lat.png"
	assert_line --regexp '^ #bytes +#iterations +t_min'
	refute_output --partial '{'
	run python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read(24)
assert b[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", b[16:24]) == (1000, 640)
print("ok")' "$T/lat.png"
	assert_output ok
	run -0 "$RDMAKIT" bw --loopback -s 4096 -n 200 --interval 0.01 --plot "$T/bw.svg"
	assert_line --regexp '^ 4096 +200 '
	refute_output --partial '{'
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$T/bw.svg"
	# A capture: its busiest QP's sequence graph, as from its JSON lines.
	fx=$D/fx
	run -0 "$RDMAKIT" capture -r "$fx/retransmit.pcap" --plot "$T/seq-run.pdf"
	assert_line --partial 'RC RDMA Write Only qp 0x000012 psn 106'
	"$RDMAKIT" -j capture -r "$fx/retransmit.pcap" >"$T/seq.json"
	"$RDMAKIT" plot -o "$T/seq-plot.pdf" "$T/seq.json"
	run same_pdf_text "$T/seq-run.pdf" "$T/seq-plot.pdf"
	assert_success
	run -0 "$RDMAKIT" capture -r "$fx/retransmit.pcap" --summary --plot "$T/seq-sum.pdf"
	run same_pdf_text "$T/seq-sum.pdf" "$T/seq-plot.pdf"
	assert_success
}

@test "--plot on incast: the coordinator draws goodput over time" {
	require_tool pdftotext "reading the PDF's text back"
	load perf_helper
	T=$BATS_TEST_TMPDIR
	port=$(free_port)
	"$RDMAKIT" incast --serve --senders 2 -p "$port" --bind 127.0.0.1 -D 1 --interval 0.1 \
		--plot "$T/incast.pdf" >"$T/co.txt" 2>&1 &
	co=$!
	wait_listen "$port"
	run -0 timeout 30 "$RDMAKIT" incast --local 2 -p "$port" --bind 127.0.0.2 127.0.0.1
	wait "$co"
	run pdftotext -layout "$T/incast.pdf" -
	assert_line --regexp '^ *rdmakit incast: WRITE, soft engine'
	assert_output --partial 'time (s)'
	assert_output --partial 'flow 1 127.0.0.2#1'
	grep -q '^ Intervals' "$T/co.txt"
}

@test "--plot: a name plot cannot draw is a usage error; a server has nothing to draw; an unwritable FILE fails after the run" {
	run --separate-stderr "$RDMAKIT" bw --loopback --plot "$D/x.txt"
	assert_one_line_error 2 "--plot '$D/x.txt': name the picture .svg, .png or .pdf"
	run --separate-stderr "$RDMAKIT" capture -r "$D/fx/retransmit.pcap" --plot x.gif
	assert_one_line_error 2 "name the picture .svg, .png or .pdf"
	run --separate-stderr "$RDMAKIT" bw --plot "$D/x.png"
	assert_one_line_error 2 "--plot draws the client's run: give it to the client, or drop it"
	# The run's report stands; the picture's failure is one line and exit 3.
	run --separate-stderr "$RDMAKIT" bw --loopback -n 100 --plot "$BATS_TEST_TMPDIR/no/such/dir/x.png"
	[ "$status" -eq 3 ]
	[[ $output == *"#bytes"* ]]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	[[ $stderr == "rdmakit bw: --plot: "*"No such file or directory"* ]] || fail "stderr: $stderr"
	[ ! -e "$BATS_TEST_TMPDIR/no" ]
}
