// SPDX-License-Identifier: MIT
/* Options and set-up shared by `bw` and `lat`; see perf_cli.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_cli.h"
#include "plot.h"
#include "pt_wire.h"

void perf_cli_signals(void)
{
	cmd_catch_stop(false);
	signal(SIGPIPE, SIG_IGN);
}

void perf_cli_init(struct perf_cli *c, const char *cmd, bool latency)
{
	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	c->gid_index = -1;
	c->o.op = latency ? PERF_SEND : PERF_WRITE;
	c->o.latency = latency;
	/* perftest's defaults: BW 65536 bytes, LAT 2 bytes; 1000 iterations
	 * (write BW: 5000, set by bw once the op is known). */
	c->o.size = latency ? 2 : 65536;
	c->o.iters = 1000;
	c->o.qps = 1;
	c->o.tx_depth = latency ? 1 : 128;
	c->o.rx_depth = 512;
	c->o.outs = 16;
	c->o.qp_timeout = 14;
	c->o.retry_cnt = 7;
	c->o.rnr_retry = 7;
	c->o.timeout_s = 10;
	c->o.port = OOB_DEFAULT_PORT;
	c->o.gid_index = -1;
	c->o.stop = &cmd_stop;
}

/* One --dcqcn* option into p (zero fields keep the engine's defaults). */
static int dcqcn_option(const char *cmd, struct xport_dcqcn *p, int key, const char *arg)
{
	static const char *const onoff[] = { "on", "off", NULL };
	uint64_t v;
	int idx, rc;

	switch (key) {
	case OPT_DCQCN:
		rc = parse_choice(cmd, "--dcqcn", arg, onoff, &idx);
		p->off = idx == 1;
		return rc;
	case OPT_DCQCN_G:
		return parse_double(cmd, "--dcqcn-g", arg, 1e-6, 1, &p->g);
	case OPT_DCQCN_K_US:
		rc = parse_u64(cmd, "--dcqcn-k-us", arg, 1, 1000000, false, &v);
		p->k_us = (uint32_t)v;
		return rc;
	case OPT_DCQCN_T_US:
		rc = parse_u64(cmd, "--dcqcn-t-us", arg, 1, 1000000, false, &v);
		p->t_us = (uint32_t)v;
		return rc;
	case OPT_DCQCN_B_BYTES:
		return parse_u64(cmd, "--dcqcn-b-bytes", arg, 1024, 1ULL << 40, true, &p->b_bytes);
	case OPT_DCQCN_F:
		rc = parse_u64(cmd, "--dcqcn-f", arg, 1, 1000, false, &v);
		p->f = (unsigned)v;
		return rc;
	case OPT_DCQCN_RAI:
		return parse_double(cmd, "--dcqcn-rai-mbps", arg, 0.001, 100000, &p->rai_mbps);
	case OPT_DCQCN_RHAI:
		return parse_double(cmd, "--dcqcn-rhai-mbps", arg, 0.001, 100000, &p->rhai_mbps);
	default:
		return parse_double(cmd, "--dcqcn-min-mbps", arg, 0.001, 100000, &p->min_mbps);
	}
}

int perf_cli_option(struct perf_cli *c, int key, const char *arg)
{
	static const char *const ops[] = { "write", "read", "send", "atomic", NULL };
	static const char *const atomics[] = { "FETCH_AND_ADD", "CMP_AND_SWAP", NULL };
	static const char *const engines[] = { "auto", "soft", "verbs", NULL };
	const char *cmd = c->cmd;
	struct perf_opts *o = &c->o;
	uint64_t v;
	int idx, rc = 0;

	switch (key) {
	case OPT_ENGINE:
		rc = parse_choice(cmd, "--engine", arg, engines, &idx);
		o->engine = arg;
		break;
	case OPT_BIND: o->bind = arg; break;
	case OPT_AUTH_KEY: c->auth_key_file = arg; break;
	case 'p':
		rc = parse_u64(cmd, "-p/--port", arg, 1, 65535, false, &v);
		o->port = (uint16_t)v;
		break;
	case OPT_UDP_PORT_P:
		rc = parse_u64(cmd, "--udp-port", arg, 1, 65535, false, &v);
		o->udp_port = (uint16_t)v;
		break;
	case 'd':
		c->ib_dev = o->ib_dev = arg;
		break;
	case 'i':
		rc = parse_u64(cmd, "-i/--ib-port", arg, 1, 255, false, &v);
		o->ib_port = (int)v;
		break;
	case 'x':
		rc = parse_u64(cmd, "-x/--gid-index", arg, 0, 255, false, &v);
		c->gid_index = o->gid_index = (int)v;
		break;
	case OPT_OP:
		rc = parse_choice(cmd, "--op", arg, ops, &idx);
		o->op = (enum perf_op)idx;
		o->explicit_set |= PERF_SET_OP;
		break;
	case 'A':
		rc = parse_choice(cmd, "-A/--atomic_type", arg, atomics, &idx);
		o->atomic_cas = idx == 1;
		o->op = PERF_ATOMIC;
		o->explicit_set |= PERF_SET_OP;
		break;
	case 's':
		rc = parse_u64(cmd, "-s/--size", arg, 1, PERF_MAX_SIZE, true, &o->size);
		o->explicit_set |= PERF_SET_SIZE;
		break;
	case 'a': c->all = true; break;
	case 'n':
		rc = parse_u64(cmd, "-n/--iters", arg, PERF_MIN_ITERS, PERF_MAX_ITERS, false, &o->iters);
		c->iters_set = true;
		o->explicit_set |= PERF_SET_ITERS;
		break;
	case 'D':
		rc = parse_double(cmd, "-D/--duration", arg, PERF_MIN_DURATION, PERF_MAX_DURATION, &o->duration);
		c->duration_set = true;
		o->explicit_set |= PERF_SET_DURATION;
		break;
	case 'q':
		rc = parse_u64(cmd, "-q/--qp", arg, 1, PERF_MAX_QPS, false, &v);
		o->qps = (unsigned)v;
		o->explicit_set |= PERF_SET_QPS;
		break;
	case 't':
		rc = parse_u64(cmd, "-t/--tx-depth", arg, 1, PERF_MAX_DEPTH, false, &v);
		o->tx_depth = (unsigned)v;
		break;
	case 'r':
		rc = parse_u64(cmd, "-r/--rx-depth", arg, 1, PERF_MAX_DEPTH, false, &v);
		o->rx_depth = (unsigned)v;
		break;
	case 'o':
		rc = parse_u64(cmd, "-o/--outs", arg, 1, PERF_MAX_OUTS, false, &v);
		o->outs = (unsigned)v;
		break;
	case 'm':
		rc = parse_u64(cmd, "-m/--mtu", arg, 256, 4096, false, &v);
		if (!rc && (v & (v - 1)))
			rc = usage_error(cmd, "invalid value '%s' for -m/--mtu: expected 256, 512, "
					 "1024, 2048 or 4096", arg);
		o->mtu = (uint32_t)v;
		break;
	case 'T':
		rc = parse_u64(cmd, "-T/--tos", arg, 0, 255, false, &v);
		o->tos = (uint8_t)v;
		break;
	case 'u':
		rc = parse_u64(cmd, "-u/--qp-timeout", arg, 1, 31, false, &v);
		o->qp_timeout = (uint8_t)v;
		break;
	case OPT_RETRY_CNT:
	case OPT_RETRY_COUNT_ALIAS:
		rc = parse_u64(cmd, "--retry-cnt", arg, 0, 7, false, &v);
		o->retry_cnt = (uint8_t)v;
		break;
	case OPT_RNR_RETRY:
		rc = parse_u64(cmd, "--rnr-retry", arg, 0, 7, false, &v);
		o->rnr_retry = (uint8_t)v;
		break;
	case OPT_VERIFY: o->verify = true; break;
	case OPT_TIMEOUT:
		rc = parse_u64(cmd, "--timeout", arg, 1, 3600, false, &v);
		o->timeout_s = (int)v;
		break;
	case OPT_LOOPBACK: c->loopback = true; break;
	case OPT_PERSISTENT: c->persistent = true; break;
	case OPT_MAX_MEMORY:
		rc = parse_u64(cmd, "--max-memory", arg, 1 << 20, 1ULL << 40, true, &o->max_memory);
		break;
	case 'I':
		/* The engine refuses what it cannot post inline (soft: 912 bytes). */
		rc = parse_u64(cmd, "-I/--inline_size", arg, 0, PERF_MAX_INLINE, false, &v);
		o->inline_size = (uint32_t)v;
		c->inline_set = true;
		break;
	case OPT_CPU_UTIL: c->cpu_util = true; break;
	case OPT_PLOT:
		if (plot_format_of(arg) == PLOT_FMT_NONE)
			return usage_error(cmd, "--plot '%s': name the picture .svg, .png or .pdf", arg);
		c->plot_path = arg;
		break;
	case OPT_DCQCN:
	case OPT_DCQCN_G:
	case OPT_DCQCN_K_US:
	case OPT_DCQCN_T_US:
	case OPT_DCQCN_B_BYTES:
	case OPT_DCQCN_F:
	case OPT_DCQCN_RAI:
	case OPT_DCQCN_RHAI:
	case OPT_DCQCN_MIN:
		c->dcqcn_set = true;
		return dcqcn_option(cmd, &o->dcqcn, key, arg);
	case OPT_PERFTEST: o->perftest = true; break;
	case OPT_REPORT_GBITS: o->report_gbits = true; break;
	case 'F': break;	/* perftest's cycle-counter check; nothing to check here */
	case OPT_OUTPUT: {
		static const char *const what[] = { "bandwidth", "message_rate", "latency", NULL };

		rc = parse_choice(cmd, "--output", arg, what, &idx);
		c->output = (enum perf_output)(idx + 1);
		break;
	}
	case OPT_TCLASS:
		rc = parse_u64(cmd, "--tclass", arg, 0, 255, false, &v);
		o->tos = (uint8_t)v;
		break;
	case OPT_OUT_JSON: c->out_json_path = "perftest_out.json"; break;
	case OPT_OUT_JSON_FILE: c->out_json_path = arg; break;
	case OPT_BIND_SOURCE_IP: o->bind_source = arg; break;
	case 'c':
		if (perf_conn_parse(arg) >= 0) {
			o->conn = (enum xport_qp_type)perf_conn_parse(arg);
			o->explicit_set |= PERF_SET_CONN;
			break;
		}
		if (!strcmp(arg, "XRC") || !strcmp(arg, "DC") || !strcmp(arg, "SRD"))
			return usage_error(cmd, "-c %s: not a transport this build runs; it runs RC, "
					   "UC and UD", arg);
		return usage_error(cmd, "invalid value '%s' for -c/--connection: expected RC, UC, UD, "
				   "XRC, DC or SRD (perftest's names)", arg);
	case OPT_PERFTEST_VERSION: {
		uint8_t wire[PT_VERSION_LEN];
		char err[XPORT_ERR_LEN];

		if (pt_version_build(arg, wire, err) < 0)
			return usage_error(cmd, "%s", err);
		o->perftest_version = arg;
		break;
	}
	case OPT_PERFTEST_STRUCT:
		rc = parse_u64(cmd, "--perftest-struct", arg, PT_NEGOTIATE_LEN, PT_NEGOTIATE_LEN_DV,
			       false, &v);
		if (!rc && v != PT_NEGOTIATE_LEN && v != PT_NEGOTIATE_LEN_DV)
			rc = usage_error(cmd, "invalid value '%s' for --perftest-struct: expected %d "
					 "(perftest built without mlx5dv) or %d (with it)", arg,
					 PT_NEGOTIATE_LEN, PT_NEGOTIATE_LEN_DV);
		o->perftest_struct = (unsigned)v;
		break;
	case 'R':
	case OPT_RDMA_CM_ALIAS:
		o->rdma_cm = true;
		o->explicit_set |= PERF_SET_RDMA_CM;
		break;
	default:
		return 1;
	}
	return rc;
}

int perf_cli_check_engine(struct perf_cli *c)
{
	const char *engine = c->o.engine;

	/* -d and -x are the verbs engine's, as in perftest: they choose it. */
	if ((c->ib_dev || c->gid_index >= 0) && (!engine || !strcmp(engine, "auto")))
		engine = c->o.engine = "verbs";

	if (c->dcqcn_set && engine && strcmp(engine, "verbs") == 0)
		return usage_error(c->cmd, "--dcqcn* set the soft engine's congestion reaction; an "
				   "RDMA NIC uses its own settings (mlx5: /sys/class/net/IF/ecn/"
				   "roce_rp/): drop them or use --engine soft");
	if ((c->ib_dev || c->gid_index >= 0) && (!engine || strcmp(engine, "verbs")))
		return usage_error(c->cmd, "-d/--ib-dev and -x/--gid-index select a device for "
				   "--engine verbs; the soft engine uses --bind ADDR");
	return 0;
}

int perf_cli_finish(struct perf_cli *c, int argc, char **argv, int first, enum perf_role *role)
{
	struct perf_opts *o = &c->o;

	if (argc - first > 1)
		return usage_error(c->cmd, "unexpected argument '%s'; give one HOST (the server) "
				   "or none (be the server)", argv[first + 1]);
	if (argc - first == 1 && !*argv[first])
		return usage_error(c->cmd, "empty HOST: give the server's name or address");
	if (c->iters_set && c->duration_set)
		return usage_error(c->cmd, "-n/--iters and -D/--duration exclude each other: give one");
	if (c->duration_set)
		o->iters = 0;
	if (c->loopback && argc - first == 1)
		return usage_error(c->cmd, "--loopback runs both ends here: drop HOST '%s'",
				   argv[first]);
	if (perf_cli_check_engine(c))
		return EXIT_USAGE;
	if (o->rdma_cm && c->loopback)
		return usage_error(c->cmd, "-R/--rdma-cm connects a client to a server; --loopback "
				   "runs both ends in one process: drop one of them");
	if (o->rdma_cm && o->engine && strcmp(o->engine, "soft") == 0)
		return usage_error(c->cmd, "-R/--rdma-cm needs the verbs engine (the RDMA "
				   "connection manager); the soft engine connects over the control "
				   "channel: drop -R or use --engine verbs");
	perf_conn_default_op(o);
	if (o->op == PERF_ATOMIC)
		o->size = 8;	/* atomics move 8 bytes */
	if (c->all && o->op == PERF_ATOMIC)
		return usage_error(c->cmd, "-a/--all sweeps message sizes; atomics are always 8 "
				   "bytes: drop -a");
	if (c->all)
		o->size = 8 << 20;	/* buffers for the largest size */
	o->sweep = c->all;
	if (c->output && (c->output == PERF_OUTPUT_LATENCY) != o->latency)
		return usage_error(c->cmd, "--output %s: %s prints %s", c->output ==
				   PERF_OUTPUT_BANDWIDTH ? "bandwidth" : c->output == PERF_OUTPUT_MSG_RATE ?
				   "message_rate" : "latency", c->cmd, o->latency ? "latency" :
				   "bandwidth or message_rate");
	if (o->bind_source && (c->loopback || argc - first != 1))
		return usage_error(c->cmd, "--bind_source_ip is the client's control connection: "
				   "give it with HOST");
	if (o->perftest_struct && (!o->perftest_version ||
				   strtod(o->perftest_version, NULL) < PT_VERSION_NEGOTIATES))
		return usage_error(c->cmd, "--perftest-struct sizes the 6.28+ parameter "
				   "negotiation: give --perftest-version 6.28 or later too");
	if ((o->perftest || o->perftest_version) && c->loopback)
		return usage_error(c->cmd, "--perftest and --perftest-version are for a perftest "
				   "peer; --loopback runs both ends here: drop one of them");
	/* perftest's inline defaults: latency SEND 236, WRITE 220, else none. */
	if (!c->inline_set && o->latency)
		o->inline_size = o->op == PERF_SEND ? 236 : o->op == PERF_WRITE ? 220 : 0;
	*role = c->loopback ? PERF_LOOPBACK : argc - first == 1 ? PERF_CLIENT : PERF_SERVER;
	if (*role == PERF_CLIENT)
		o->host = argv[first];
	if (c->persistent && *role != PERF_SERVER)
		return usage_error(c->cmd, "--persistent is for the server: drop it, or drop HOST");
	if (c->plot_path && *role == PERF_SERVER)
		return usage_error(c->cmd, "--plot draws the client's run: give it to the client, "
				   "or drop it");
	{
		char err[XPORT_ERR_LEN];

		/* The check a server applies to a client's test (one function). */
		if (perf_opts_check(o, o->size, err) < 0)
			return usage_error(c->cmd, "%s", err);
	}
	return *role == PERF_LOOPBACK ? 0 : perf_cli_load_key(c);
}

int perf_cli_load_key(struct perf_cli *c)
{
	const char *path = c->auth_key_file ? c->auth_key_file : getenv("RDMAKIT_AUTH_KEY_FILE");
	char err[XPORT_ERR_LEN];

	if (!path || !*path) {
		c->o.auth_key = NULL;
		return 0;
	}
	if (oob_key_load(path, &c->auth_key, err) < 0)
		return usage_error(c->cmd, "%s", err);
	c->o.auth_key = &c->auth_key;
	return 0;
}

void perf_cli_warn_open(const struct perf_cli *c, const char *listen_addr)
{
	bool loopback = listen_addr && (!strncmp(listen_addr, "127.", 4) ||
					!strcmp(listen_addr, "::1") ||
					!strcmp(listen_addr, "localhost"));

	if (!c->o.auth_key && !loopback)
		printf("No --auth-key: anyone who can reach TCP port %u of this host can run tests "
		       "(see docs/security.md)\n", c->o.port);
}

unsigned perf_cli_sizes(const struct perf_cli *c, uint64_t *sizes, unsigned cap)
{
	unsigned n = 0;

	sizes[0] = c->o.size;
	if (!c->all && !c->o.sweep)
		return 1;
	for (uint64_t s = 2; s <= (c->max_msg ? c->max_msg : 8 << 20) && n < cap; s *= 2)
		sizes[n++] = s;
	return n;
}

/* A UD message is one packet: as perftest does, a larger -s becomes the
 * path MTU (said in the preamble), and -a stops there. */
static void ud_clamp(struct perf_cli *c, const struct perf_session *s, uint64_t asked)
{
	if (perf_connection(s) != XPORT_QPT_UD)
		return;
	c->max_msg = perf_mtu(s);
	if (!c->all && asked > c->max_msg) {	/* a perftest session clamped it already */
		c->asked_size = asked;
		c->o.size = c->max_msg;
	}
}

void perf_cli_ud_note(struct report *r, uint64_t asked, uint64_t mtu)
{
	char note[160];

	snprintf(note, sizeof(note), "-s %llu is over the path MTU, the most a UD message "
		 "carries: the run uses -s %llu", (unsigned long long)asked,
		 (unsigned long long)mtu);
	report_param(r, "Note", "ud_size_note", REPORT_STR, RV_STR(note));
}

/* What the senders' hosts refused, null where their engine cannot tell. */
static void tx_drops(struct printer *pr, const char *fmt, const struct perf_loss *l)
{
	if (l->tx_known)
		print_uint(pr, PRINT_ANY, "host_tx_drops", fmt, l->host_tx_drops);
	else
		print_null(pr, PRINT_JSON, "host_tx_drops", NULL, NULL);
}

void perf_cli_loss(struct printer *pr, const char *lead, const struct perf_loss *l,
		   const char *unknown_why)
{
	print_fp(pr, "%s", lead);
	print_uint(pr, PRINT_JSON, "sent_msgs", NULL, l->sent_msgs);
	if (!l->received_known) {
		print_uint(pr, PRINT_FP, NULL, " sent %llu messages", l->sent_msgs);
		print_string(pr, PRINT_FP, NULL, "; %s", unknown_why);
		print_null(pr, PRINT_JSON, "received_msgs", NULL, NULL);
		print_null(pr, PRINT_JSON, "received_bytes", NULL, NULL);
		print_null(pr, PRINT_JSON, "lost_msgs", NULL, NULL);
		print_null(pr, PRINT_JSON, "loss_percent", NULL, NULL);
		tx_drops(pr, "; the sender's host refused %llu packets", l);
		print_fp(pr, "\n");
		return;
	}
	print_uint(pr, PRINT_ANY, "received_msgs", " received %llu", l->received_msgs);
	print_uint(pr, PRINT_FP, NULL, " of %llu messages", l->sent_msgs);
	print_uint(pr, PRINT_JSON, "received_bytes", NULL, l->received_bytes);
	print_uint(pr, PRINT_ANY, "lost_msgs", ", lost %llu", l->lost_msgs);
	print_float(pr, PRINT_ANY, "loss_percent", " (%.3f%%)", l->loss_percent);
	print_open_object(pr, "lost_where");
	tx_drops(pr, "; sender's host refused %llu packets", l);
	if (l->where_known) {
		print_uint(pr, PRINT_ANY, "rcvbuf_drops", ", receiver's socket buffer dropped %llu datagrams",
			   l->rcvbuf_drops);
		print_uint(pr, PRINT_ANY, "no_recv_drops", ", %llu found no receive posted",
			   l->no_recv_drops);
		print_uint(pr, PRINT_ANY, "qkey_drops", ", %llu under another Q_Key", l->qkey_drops);
		print_uint(pr, PRINT_ANY, "uc_msgs_cut", ", %llu cut at a PSN gap", l->uc_msgs_cut);
	}
	print_close(pr);
	print_fp(pr, "\n");
}

void perf_cli_preamble(struct report *r, const struct perf_cli *c, struct perf_session *s,
		       enum perf_role role)
{
	static const char *const roles[] = { "client", "server", "loopback" };
	const struct perf_opts *o = &c->o;
	const char *op = o->op == PERF_ATOMIC ? (o->atomic_cas ? "atomic CMP_AND_SWAP" :
				  "atomic FETCH_AND_ADD") : perf_op_name(o->op);

	report_start_time(r);
	report_param(r, "Engine", "engine", REPORT_STR, RV_STR(perf_engine(s)));
	report_param(r, "Role", "role", REPORT_STR, RV_STR(roles[role]));
	report_param(r, "Local address", "local_address", REPORT_STR, RV_STR(perf_local_addr(s)));
	if (role != PERF_LOOPBACK) {
		struct perf_peer_proto pp;

		report_param(r, "Peer", "peer", REPORT_STR, RV_STR(perf_peer(s)));
		perf_peer_protocol(s, &pp);
		report_param(r, "Peer protocol", "peer_protocol", REPORT_STR,
			     RV_STR(pp.perftest ? "perftest" : "rdmakit"));
		if (pp.perftest) {
			report_param(r, "Peer version", "peer_perftest_version", REPORT_STR,
				     RV_STR(pp.version));
			report_param(r, "Negotiated", "perftest_negotiated", REPORT_BOOL,
				     RV_BOOL(pp.negotiated));
			if (pp.negotiated)
				report_param(r, "Negotiation struct", "perftest_struct_bytes",
					     REPORT_U64, RV_U64(pp.struct_len));
		}
		if (perf_advisory(s))
			report_param(r, "Note", "perftest_note", REPORT_STR, RV_STR(perf_advisory(s)));
	}
	if (o->rdma_cm)	/* perftest's heading for how the QPs were connected */
		report_param(r, "Data ex. method", "connection_method", REPORT_STR, RV_STR("rdma_cm"));
	report_param(r, "Operation", "op", REPORT_STR, RV_STR(op));
	report_param(r, "Connection type", "connection", REPORT_STR,
		     RV_STR(perf_conn_name(perf_connection(s))));
	if (c->asked_size)
		perf_cli_ud_note(r, c->asked_size, c->max_msg);
	report_param(r, "Number of qps", "qps", REPORT_U64, RV_U64(o->qps));
	report_param(r, "TX depth", "tx_depth", REPORT_U64, RV_U64(o->tx_depth));
	if (!o->latency) {	/* perftest's headings; -a: the first size's (rows say theirs) */
		struct perf_opts first = *o;

		first.size = c->all ? 2 : o->size;
		report_param(r, "CQ Moderation", "cq_mod", REPORT_U64,
			     RV_U64(perf_cq_mod(&first, perf_tx_depth(o))));
		report_param(r, "Post List", "post_list", REPORT_U64,
			     RV_U64(o->post_list ? o->post_list : 1));
	}
	report_param(r, "Mtu", "mtu_bytes", REPORT_U64, RV_U64(perf_mtu(s)));
	if (o->iters)
		report_param(r, "Iterations", "iterations", REPORT_U64, RV_U64(o->iters));
	else
		report_param(r, "Duration", "duration_s", REPORT_DOUBLE, RV_DBL(o->duration));
	report_param(r, "Verify", "verify", REPORT_BOOL, RV_BOOL(o->verify));
	report_param(r, "Max inline data", "inline_size_bytes", REPORT_U64, RV_U64(o->inline_size));
	if (o->bidirectional)
		report_param(r, "Bidirectional", "bidirectional", REPORT_BOOL, RV_BOOL(true));
	if (o->rate_limit > 0) {	/* perftest's letters: Gb/s, MiB/s, messages/s */
		static const char *const units[] = { "g", "M", "p" };

		report_param(r, "Rate limit (SW)", "rate_limit", REPORT_DOUBLE, RV_DBL(o->rate_limit));
		report_param(r, "Rate units", "rate_units", REPORT_STR, RV_STR(units[o->rate_unit]));
	}
}

void perf_cli_say_refused(void *ctx, const char *why)
{
	fprintf(stderr, "rdmakit %s: %s\n", (const char *)ctx, why);
	fflush(stderr);
}

int perf_cli_plot(const char *cmd, const char *path, struct report *r, int rc)
{
	json_t *doc = report_take_document(r);
	char err[PLOT_ERR_LEN] = "out of memory for the run's document", name[96];

	/* The subtitle (the title has the run and its start time). */
	snprintf(name, sizeof(name), "drawn by rdmakit %s --plot", cmd);
	if (!doc || plot_document(doc, name, path, err) < 0) {
		fprintf(stderr, "rdmakit %s: --plot: %s\n", cmd, err);
		rc = rc ? rc : EXIT_RUNTIME;
	}
	json_decref(doc);
	return rc;
}

/* --out_json(_file) and --plot, from the run's document (taken once). */
static int run_outputs(const struct perf_cli *c, struct report *r, int rc)
{
	json_t *doc;

	if (!c->out_json_path)
		return c->plot_path ? perf_cli_plot(c->cmd, c->plot_path, r, rc) : rc;
	doc = report_take_document(r);
	if (!doc || json_dump_file(doc, c->out_json_path, JSON_INDENT(2)) < 0) {
		fprintf(stderr, "rdmakit %s: cannot write the JSON document to '%s' (--out_json): %s\n",
			c->cmd, c->out_json_path, doc ? strerror(errno) : "out of memory");
		rc = rc ? rc : EXIT_RUNTIME;
	}
	if (doc && c->plot_path) {
		char err[PLOT_ERR_LEN] = "", name[96];

		snprintf(name, sizeof(name), "drawn by rdmakit %s --plot", c->cmd);
		if (plot_document(doc, name, c->plot_path, err) < 0) {
			fprintf(stderr, "rdmakit %s: --plot: %s\n", c->cmd, err);
			rc = rc ? rc : EXIT_RUNTIME;
		}
	}
	json_decref(doc);
	return rc;
}

/* perf_serve_all's callback, carrying the command's and the report. */
struct served_to {
	perf_cli_served_fn fn;
	void *ctx;
	struct perf_session *s;
	struct report *r;
};

static void on_served(const struct perf_bw_result *res, void *p)
{
	struct served_to *to = p;

	to->fn(to->ctx, to->s, to->r, res);
}

int perf_cli_run(struct perf_cli *c, const struct global_opts *g, enum perf_role role,
		 perf_client_fn client, perf_cli_served_fn served, void *ctx)
{
	struct perf_session *s = NULL;
	char err[XPORT_ERR_LEN];
	FILE *out = stdout;
	struct report r;
	int rc;

	if (c->output && g->json)
		return usage_error(c->cmd, "--output prints one number, -j one JSON document: give "
				   "one of them");
	/* --output: the report goes nowhere; the command prints its numbers. */
	if (c->output && !(out = fopen("/dev/null", "w")))
		return runtime_error(c->cmd, "cannot open /dev/null: %s", strerror(errno));
	/* A verbs server with no device to run on says so now, not after a
	 * client has come (perftest's server fails at once too). */
	if (role == PERF_SERVER && c->o.engine && !strcmp(c->o.engine, "verbs") &&
	    !xport_engine_available("verbs")) {
		if (out != stdout)
			fclose(out);
		return runtime_error(c->cmd, "--engine verbs: no RDMA device on this host (ibv_devices "
				     "lists none); use --engine soft, or load a driver (rxe: rdma link add)");
	}
	perf_cli_signals();
	do {
		struct perf_opts o = c->o;

		o.on_refused = perf_cli_say_refused;
		o.refused_ctx = (void *)c->cmd;

		report_init(&r, c->cmd, RDMAKIT_VERSION, g->json, g->pretty, out, stderr);
		if (c->plot_path || c->out_json_path)
			report_keep_document(&r);
		if (role == PERF_SERVER && !g->json && !c->output) {
			printf("Waiting for a client on port %u...\n", o.port);
			perf_cli_warn_open(c, NULL);
		}
		fflush(stdout);
		rc = perf_open(&s, role, &o, err);
		if (rc == PERF_CLIENT_FAILED && c->persistent) {
			report_error(&r, "%s", err);	/* that client's; wait for the next */
			report_finish(&r);
			rc = EXIT_RUNTIME;
			continue;
		}
		if (rc < 0) {
			report_error(&r, "%s", err);
			report_finish(&r);
			json_decref(report_take_document(&r));	/* no run to draw */
			rc = EXIT_RUNTIME;
			break;
		}
		if (role != PERF_SERVER)
			ud_clamp(c, s, c->o.size);
		c->o = o;	/* what the server adopted, for the preamble */
		if (c->asked_size)
			c->o.size = c->max_msg;
		perf_cli_preamble(&r, c, s, role);
		if (role == PERF_SERVER && !perf_serves_as_runner(s)) {
			struct served_to to = { served, ctx, s, &r };
			unsigned runs;

			rc = perf_serve_all(s, &runs, served ? on_served : NULL, &to, err) < 0 ?
			     EXIT_RUNTIME : EXIT_OK;
			if (served)
				served(ctx, s, &r, NULL);
			if (rc)
				report_error(&r, "%s", err);
			report_param(&r, "Runs served", "runs_served", REPORT_U64, RV_U64(runs));
		} else {
			rc = client(ctx, s, &r);
		}
		perf_close(s);
		report_finish(&r);
		rc = run_outputs(c, &r, rc);
	} while (c->persistent && !cmd_stop);
	if (out != stdout)
		fclose(out);
	return rc;
}
