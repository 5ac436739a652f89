// SPDX-License-Identifier: MIT
/*
 * rdmakit capture: decode RoCEv2, RoCEv1 and InfiniBand traffic live or
 * from files, one line (or JSON object) per packet, and a per-flow
 * diagnosis of retransmissions, NAKs, CNPs, CE marks and ICRC failures.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "flows.h"
#include "linktype.h"
#include "plot.h"
#include "record.h"
#include "render.h"
#include "report.h"
#include "source.h"

enum {
	OPT_UDP_PORT = OPT_LONG_ONLY + 1,
	OPT_SUMMARY,
	OPT_NO_ICRC,
	OPT_UTC,
	OPT_MAX_FLOWS,
	OPT_PLOT,
};

static const struct opt_spec capture_opts[] = {
	{ "interface", 'i', "IFACE", "capture live on IFACE (filter: RoCEv2 and RoCEv1)" },
	{ "read", 'r', "FILE", "read a pcap or pcapng FILE ('-': standard input)" },
	{ "write", 'w', "FILE", "also save the captured packets to FILE ('-': stdout)" },
	{ "file-size", 'C', "MB", "with -w: start a new file every MB million bytes" },
	{ "file-count", 'W', "N", "with -w -C: keep a ring of N files" },
	{ "count", 'c', "COUNT", "stop after COUNT packets" },
	{ "snaplen", 's', "BYTES", "capture at most BYTES of each packet (0: all)" },
	{ "buffer-size", 'B', "KIB", "kernel capture buffer size in KiB" },
	{ "packet-buffered", 'U', NULL, "write each packet to the -w file at once" },
	{ "line-buffered", 'l', NULL, "flush standard output after every line" },
	{ "list-interfaces", 'D', NULL, "list the interfaces one can capture on, and exit" },
	{ "udp-port", OPT_UDP_PORT, "PORT", "decode UDP PORT as RoCEv2 (default 4791)" },
	{ "verbose", 'v', NULL, "print every header field" },
	{ "summary", OPT_SUMMARY, NULL, "print only the per-flow diagnosis" },
	{ "no-icrc", OPT_NO_ICRC, NULL, "do not verify ICRC and VCRC" },
	{ "utc", OPT_UTC, NULL, "print times of day in UTC" },
	{ "max-flows", OPT_MAX_FLOWS, "N", "diagnose at most N flows, about 50 KB each; count the "
					"rest (default 10000)" },
	{ "plot", OPT_PLOT, "FILE", "also draw the busiest QP's sequence graph into FILE (.svg, "
				    ".png or .pdf), as rdmakit plot would" },
	OPTS_END,
};

static const struct cmd_usage capture_usage = {
	.cmd = "capture",
	.synopsis = "[-i IFACE | -r FILE] [-w FILE [-C MB] [-W N]] [-c COUNT] [-s SNAPLEN]\n"
		    "[-B KIB] [-U] [-l] [-D] [--udp-port N] [-v] [--summary] [--json]\n"
		    "[--no-icrc] [--max-flows N] [--plot FILE] [BPF FILTER ...]",
	.description = "Decode RoCEv2, RoCEv1 and native InfiniBand packets, live or from a capture\n"
		       "file: one line per packet with opcode, QP, PSN, extended headers and ICRC,\n"
		       "then (with --summary, or at the end of a live capture) a per-flow diagnosis:\n"
		       "retransmissions, PSN gaps, NAKs, RNR NAKs, CNPs, CE marks, ICRC failures and\n"
		       "request-to-ACK delays.",
	.opts = capture_opts,
};

struct capture_opts {
	struct source_opts src;
	const char *write;
	const char *plot;
	uint64_t file_mb, file_count, count, max_flows;
	bool packet_buffered, line_buffered, list, verbose, summary, no_icrc, utc;
	uint16_t port;
};

static int capture_opt(void *ctx, int key, const char *arg)
{
	struct capture_opts *o = ctx;
	uint64_t v;
	int rc = 0;

	switch (key) {
	case 'i':
		if (!*arg)
			return usage_error("capture", "empty interface name for -i/--interface: "
					   "'rdmakit capture -D' lists them");
		o->src.iface = arg;
		break;
	case 'r': o->src.file = arg; break;
	case 'w': o->write = arg; break;
	case 'C': rc = parse_u64("capture", "-C/--file-size", arg, 1, 1000000, false, &o->file_mb); break;
	case 'W': rc = parse_u64("capture", "-W/--file-count", arg, 1, 100000, false, &o->file_count); break;
	case 'c': rc = parse_u64("capture", "-c/--count", arg, 1, UINT64_MAX, false, &o->count); break;
	case 's':
		rc = parse_u64("capture", "-s/--snaplen", arg, 0, 262144, false, &v);
		o->src.snaplen = (int)v;
		break;
	case 'B':
		rc = parse_u64("capture", "-B/--buffer-size", arg, 1, 4194304, false, &v);
		o->src.buffer_kib = (int)v;
		break;
	case 'U': o->packet_buffered = true; break;
	case 'l': o->line_buffered = true; break;
	case 'D': o->list = true; break;
	case OPT_UDP_PORT:
		rc = parse_u64("capture", "--udp-port", arg, 1, 65535, false, &v);
		o->port = (uint16_t)v;
		break;
	case 'v': o->verbose = true; break;
	case OPT_SUMMARY: o->summary = true; break;
	case OPT_NO_ICRC: o->no_icrc = true; break;
	case OPT_UTC: o->utc = true; break;
	case OPT_MAX_FLOWS:
		rc = parse_u64("capture", "--max-flows", arg, 1, 10000000, false, &o->max_flows);
		break;
	case OPT_PLOT:
		if (plot_format_of(arg) == PLOT_FMT_NONE)
			return usage_error("capture", "--plot '%s': name the picture .svg, .png or .pdf",
					   arg);
		o->plot = arg;
		break;
	default: return EXIT_USAGE;
	}
	return rc;
}

static int list_interfaces(void)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_if_t *all, *d;
	int n = 0;

	if (pcap_findalldevs(&all, err) < 0)
		return runtime_error("capture", "cannot list interfaces: %s", err);
	for (d = all; d; d = d->next) {
		char rdma[64];

		printf("%d.%s", ++n, d->name);
		if (d->description)
			printf(" (%s)", d->description);
		printf(" [%s%s%s]", d->flags & PCAP_IF_UP ? "Up" : "Down",
		       d->flags & PCAP_IF_RUNNING ? ", Running" : "",
		       d->flags & PCAP_IF_LOOPBACK ? ", Loopback" : "");
		if (source_iface_rdma_dev(d->name, rdma, sizeof(rdma)))
			printf(" [RDMA %s: its RoCE traffic is offloaded]", rdma);
		putchar('\n');
	}
	pcap_freealldevs(all);
	return EXIT_OK;
}

/* The BPF filter from the operands, or the RoCE default for live captures. */
static char *build_filter(int argc, char **argv, const struct capture_opts *o)
{
	size_t len = 1;
	char *f;

	if (argc == 0) {
		if (!o->src.iface)
			return NULL;
		if (asprintf(&f, "udp port %u or ether proto 0x8915 or (vlan and (udp port %u "
			     "or ether proto 0x8915))", o->port, o->port) < 0)
			return NULL;
		return f;
	}
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	f = calloc(1, len);
	for (int i = 0; f && i < argc; i++) {
		if (i)
			strcat(f, " ");
		strcat(f, argv[i]);
	}
	return f;
}

struct capture_run {
	const struct capture_opts *o;
	struct source src;
	struct flow_table flows;
	struct capture_pipe pipe;	/* decodes into flows, emits through emit_packet */
	struct time_cache tc;
	bool json, print_packets;
	json_t *plot_pkts;		/* --plot: each packet as -j writes it */
	bool plot_too_many;		/* past PLOT_MAX_PACKETS: dropped */
	char line[4096];
};

/*
 * One line (or NDJSON object) per packet into stdout's buffer.  stdout is
 * line buffered with -l or on a terminal and fully buffered otherwise, so
 * a pipe or file gets big writes, never one write(2) per packet.
 */
static void emit_packet(struct capture_run *r, const struct pkt_view *v)
{
	size_t n;

	if (!r->print_packets)
		return;
	if (r->json) {
		n = render_packet_ndjson(r->line, sizeof(r->line) - 1, v, r->o->verbose);
		if (!n) {	/* too long for the line buffer: never expected */
			json_t *o = render_packet_json(v, r->o->verbose);

			json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fputc('\n', stdout);
			json_decref(o);
			return;
		}
	} else {
		n = render_packet_line(r->line, sizeof(r->line) - 1, v, r->o->verbose, &r->tc);
	}
	r->line[n] = '\n';
	fwrite_unlocked(r->line, 1, n + 1, stdout);
}

static void emit_cb(void *ctx, const struct pkt_view *v)
{
	struct capture_run *r = ctx;

	emit_packet(r, v);
	if (!r->plot_pkts)
		return;
	if (json_array_size(r->plot_pkts) < PLOT_MAX_PACKETS) {
		json_array_append_new(r->plot_pkts, render_packet_json(v, false));
		return;
	}
	/* Too many to draw: let the memory go now, say so at the end. */
	r->plot_too_many = true;
	json_decref(r->plot_pkts);
	r->plot_pkts = NULL;
}

static void no_roce_note(const struct capture_opts *o)
{
	char dev[64];

	if (source_iface_rdma_dev(o->src.iface, dev, sizeof(dev)))
		fprintf(stderr, "rdmakit capture: no RoCE packets seen on %s: it is the netdev of RDMA "
			"device %s, whose RoCE traffic is offloaded and never crosses the netdev; "
			"capture on a switch mirror port, or with ibdump on the host\n",
			o->src.iface, dev);
	else
		fprintf(stderr, "rdmakit capture: no RoCE packets seen on %s (RoCEv2 on UDP port %u, "
			"RoCEv1 by Ethertype 0x8915)\n", o->src.iface, o->port);
}

/* Live: a capture that missed packets (its kernel ring was full) says so,
 * as tcpdump's "dropped by kernel" does, so that it is never taken for the
 * whole traffic; a complete one stays quiet. */
static void kernel_drops(const struct source *src)
{
	uint64_t received, dropped, if_dropped;

	/* ps_ifdrop is the interface's own count, not this capture's. */
	if (source_stats(src, &received, &dropped, &if_dropped) < 0 || !dropped)
		return;
	fprintf(stderr, "rdmakit capture: %llu packets dropped by kernel, of %llu the filter "
		"took: this capture misses them; raise -B/--buffer-size\n",
		(unsigned long long)dropped, (unsigned long long)received);
}

/* Reads until the end, COUNT, or a signal. 0, or EXIT_RUNTIME on a read error. */
static int capture_loop(struct capture_run *r, struct sink *sink, char *err)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t frame_no = 0, kept = 0;
	int rc = 0;

	while (!cmd_stop && (rc = pcap_next_ex(r->src.pc, &h, &data)) >= 0) {
		if (rc == 0) {	/* live, nothing yet: wait a little, then look at the stop flag */
			source_wait(&r->src, 100);
			continue;
		}
		frame_no++;
		if (!source_match(&r->src, h, data))
			continue;
		if (sink && sink_write(sink, h, data, err) < 0)
			return EXIT_RUNTIME;
		/* -c counts the RDMA packets shown, as tcpdump counts matches. */
		if (capture_record(&r->pipe, frame_no, source_ts_ns(&r->src, h), data, h->caplen,
				   h->len) && r->o->count && ++kept >= r->o->count)
			return 0;
	}
	if (!cmd_stop && rc == PCAP_ERROR) {
		snprintf(err, SOURCE_ERR_LEN, "%s after %llu records: %s",
			 r->o->src.file ? r->o->src.file : r->o->src.iface,
			 (unsigned long long)frame_no, pcap_geterr(r->src.pc));
		return EXIT_RUNTIME;
	}
	return 0;
}

static int validate(const struct capture_opts *o)
{
	if (o->src.iface && o->src.file)
		return usage_error("capture", "-i and -r exclude each other: capture live with -i "
				   "IFACE, or read a file with -r FILE");
	if (!o->src.iface && !o->src.file)
		return usage_error("capture", "nothing to capture: give -i IFACE (see -D) or -r FILE");
	if ((o->file_mb || o->file_count) && !o->write)
		return usage_error("capture", "-C and -W rotate the -w file: add -w FILE");
	if (o->file_count && !o->file_mb)
		return usage_error("capture", "-W needs -C: the size at which to move to the next file");
	return 0;
}

/* The diagnosis: a table and findings, or one JSON line {"summary": ...};
 * with keep, also that line's object (a new reference), for --plot. */
static void summary(const struct flow_table *flows, bool json, bool print, json_t **keep)
{
	struct printer pr;
	json_t *o;

	/* Text when printed as text; the JSON when printed as JSON or kept. */
	printer_init_both(&pr, stdout);
	printer_restrict(&pr, (print && !json ? PRINT_FP : 0) | (json || keep ? PRINT_JSON : 0));
	print_open_object(&pr, "summary");
	render_summary(&pr, flows);
	print_close(&pr);
	o = printer_take(&pr);
	if (!o) {
		fprintf(stderr, "rdmakit capture: out of memory for the summary's JSON\n");
		return;
	}
	if (keep)
		*keep = json_incref(o);
	if (json && print)
		report_emit(stdout, o);
	else
		json_decref(o);
}

/* --plot: the capture's sequence graph, from what -j would have written. */
static int draw(struct capture_run *r, json_t *summary_line)
{
	char err[PLOT_ERR_LEN], name[600];
	json_t *doc;
	int rc = 0;

	snprintf(name, sizeof(name), "rdmakit capture %s %.500s", r->o->src.file ? "-r" : "-i",
		 r->o->src.file ? r->o->src.file : r->o->src.iface);
	if (r->plot_too_many) {
		fprintf(stderr, "rdmakit capture: --plot: more than %d packets: plot a part of the "
			"capture (-c N, or a filter)\n", PLOT_MAX_PACKETS);
		json_decref(summary_line);
		return EXIT_RUNTIME;
	}
	doc = json_pack("{s:O, s:o}", "capture_packets", r->plot_pkts, "capture_summary",
			summary_line ? summary_line : json_object());
	if (!doc || plot_document(doc, name, r->o->plot, err) < 0) {
		fprintf(stderr, "rdmakit capture: --plot: %s\n", doc ? err : "out of memory");
		rc = EXIT_RUNTIME;
	}
	json_decref(doc);
	return rc;
}

int cmd_capture(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct capture_opts o = { .port = ROCEV2_UDP_PORT };
	struct capture_run r = { .o = &o };
	struct sink sink, *sinkp = NULL;
	char err[SOURCE_ERR_LEN] = "";
	char *filter;
	int first, rc, plot_rc = 0;

	rc = opts_parse(&capture_usage, argc, argv, &g, capture_opt, &o, &first);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (o.list)
		return list_interfaces();
	rc = validate(&o);
	if (rc)
		return rc;
	filter = build_filter(argc - first, argv + first, &o);
	o.src.filter = filter;
	o.src.immediate = o.line_buffered || o.packet_buffered;
	if (source_open(&r.src, &o.src, err) < 0) {
		free(filter);
		return runtime_error("capture", "%s", err);
	}
	if (!cap_dlt_supported(r.src.dlt)) {
		rc = runtime_error("capture", "link type %s (%d) is not supported; rdmakit reads "
				   "Ethernet, Linux SLL/SLL2, raw IP, InfiniBand and ERF",
				   pcap_datalink_val_to_name(r.src.dlt) ?: "?", r.src.dlt);
		goto out;
	}
	if (o.write && sink_open(&sink, r.src.pc, o.write, o.file_mb * 1000000, (unsigned)o.file_count,
				 o.packet_buffered, err) < 0) {
		rc = runtime_error("capture", "%s", err);
		goto out;
	}
	if (o.write)
		sinkp = &sink;
	r.json = g.json;
	r.tc.utc = o.utc;
	r.print_packets = !o.summary && !(o.write && strcmp(o.write, "-") == 0);
	/* Line by line to a terminal or with -l; in big blocks otherwise. */
	if (o.line_buffered || isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOLBF, 0);
	else
		setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	if (o.plot && !(r.plot_pkts = json_array())) {
		rc = runtime_error("capture", "out of memory");
		goto out;
	}
	flows_init(&r.flows);
	r.flows.max_flows = (size_t)o.max_flows;
	r.pipe = (struct capture_pipe){ .flows = &r.flows, .dlt = r.src.dlt, .port = o.port,
					.no_icrc = o.no_icrc, .emit = emit_cb, .ctx = &r };
	cmd_catch_stop(false);	/* Ctrl-C ends the capture cleanly: the summary still prints */
	rc = capture_loop(&r, sinkp, err);
	if (sinkp)
		sink_close(sinkp);
	{
		bool json = r.json && !(o.write && strcmp(o.write, "-") == 0);
		bool print = (r.print_packets || o.summary || r.src.live) &&
			     (json || o.summary || r.src.live);
		json_t *line = NULL;

		if (print || o.plot)
			summary(&r.flows, json, print, o.plot ? &line : NULL);
		fflush(stdout);
		if (o.plot)
			plot_rc = draw(&r, line);
	}
	if (r.src.live && !r.pipe.rdma_packets)
		no_roce_note(&o);
	kernel_drops(&r.src);
	if (rc)
		runtime_error("capture", "%s", err);
	else
		rc = plot_rc;
	flows_free(&r.flows);
out:
	json_decref(r.plot_pkts);
	source_close(&r.src);
	free(filter);
	return rc;
}
