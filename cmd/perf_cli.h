/* SPDX-License-Identifier: MIT */
/*
 * What `bw` and `lat` share: their common options (with perftest's letters),
 * parsing them into struct perf_opts, choosing the role, the -a sweep and
 * the preamble.  Each command adds its own options and renders its rows.
 */
#ifndef RDMAKIT_PERF_CLI_H
#define RDMAKIT_PERF_CLI_H

#include "cmd.h"
#include "perf.h"
#include "report.h"

enum {
	OPT_ENGINE = OPT_LONG_ONLY + 20,
	OPT_BIND,
	OPT_UDP_PORT_P,
	OPT_OP,
	OPT_RETRY_CNT,
	OPT_RNR_RETRY,
	OPT_VERIFY,
	OPT_TIMEOUT,
	OPT_LOOPBACK,
	OPT_PERSISTENT,
	OPT_MAX_MEMORY,
	OPT_CPU_UTIL,
	OPT_RDMA_CM_ALIAS,
	OPT_DCQCN,
	OPT_DCQCN_G,
	OPT_DCQCN_K_US,
	OPT_DCQCN_T_US,
	OPT_DCQCN_B_BYTES,
	OPT_DCQCN_F,
	OPT_DCQCN_RAI,
	OPT_DCQCN_RHAI,
	OPT_DCQCN_MIN,
	OPT_AUTH_KEY,
	OPT_PLOT,
	OPT_PERFTEST,
	OPT_PERFTEST_VERSION,
	OPT_PERFTEST_STRUCT,
	OPT_REPORT_GBITS,
	OPT_OUTPUT,
	OPT_TCLASS,
	OPT_OUT_JSON,
	OPT_OUT_JSON_FILE,
	OPT_BIND_SOURCE_IP,
	OPT_RETRY_COUNT_ALIAS,
	/* command-specific options start here */
	OPT_PERF_CMD = OPT_LONG_ONLY + 60,
};

/* The soft engine's DCQCN reaction point (struct xport_dcqcn). */
#define PERF_OPTS_DCQCN                                                                    \
	{ "dcqcn", OPT_DCQCN, "on|off", "soft engine: react to CNPs with DCQCN (default on)" },\
	{ "dcqcn-g", OPT_DCQCN_G, "G", "DCQCN alpha gain (default 1/256)" },                  \
	{ "dcqcn-k-us", OPT_DCQCN_K_US, "USEC", "DCQCN alpha update period (default 55)" },   \
	{ "dcqcn-t-us", OPT_DCQCN_T_US, "USEC", "DCQCN rate-increase timer (default 55)" },   \
	{ "dcqcn-b-bytes", OPT_DCQCN_B_BYTES, "BYTES", "DCQCN rate-increase byte counter "    \
						       "(default 10m)" },                     \
	{ "dcqcn-f", OPT_DCQCN_F, "N", "DCQCN fast-recovery stages (default 5)" },            \
	{ "dcqcn-rai-mbps", OPT_DCQCN_RAI, "MBPS", "DCQCN additive increase (default 40)" },  \
	{ "dcqcn-rhai-mbps", OPT_DCQCN_RHAI, "MBPS", "DCQCN hyper increase (default 10 x "    \
						     "the additive)" },                       \
	{ "dcqcn-min-mbps", OPT_DCQCN_MIN, "MBPS", "DCQCN rate floor (default 10)" }

/* Where the test runs: the engine and its endpoints (bw, lat, incast). */
#define PERF_OPTS_ENDPOINT                                                                 \
	{ "engine", OPT_ENGINE, "ENGINE", "auto, soft or verbs (default auto)" },            \
	{ "bind", OPT_BIND, "ADDR", "soft engine: local address (default: the one the "      \
				    "control connection uses)" },                          \
	{ "port", 'p', "PORT", "control (TCP) port (default 18515)" },                         \
	{ "udp-port", OPT_UDP_PORT_P, "PORT", "soft engine: UDP port (default 4791)" },       \
	{ "ib-dev", 'd', "DEV", "verbs engine: RDMA device (chooses --engine verbs)" },         \
	{ "ib-port", 'i', "PORT", "verbs engine: device port (default 1)" },                   \
	{ "gid-index", 'x', "INDEX", "verbs engine: GID index (default: pick RoCE v2; chooses " \
				     "--engine verbs)" },                                        \
	{ "auth-key", OPT_AUTH_KEY, "FILE", "authenticate the control channel with this secret "\
					    "(default $RDMAKIT_AUTH_KEY_FILE)" }

/* The QPs' transport settings, checking and waiting (bw, lat, incast). */
#define PERF_OPTS_TRANSPORT                                                                \
	{ "mtu", 'm', "BYTES", "path MTU: 256, 512, 1024, 2048 or 4096" },                    \
	{ "tos", 'T', "TOS", "IP type of service (DSCP << 2); the engine sets ECN" },          \
	{ "qp-timeout", 'u', "N", "local ACK timeout, 4.096 us * 2^N (default 14)" },           \
	{ "retry-cnt", OPT_RETRY_CNT, "N", "transport retries, 0..7 (default 7)" },            \
	{ "rnr-retry", OPT_RNR_RETRY, "N", "RNR retries, 0..7; 7 = forever (default 7)" },     \
	{ "verify", OPT_VERIFY, NULL, "check every byte moved; exit 1 on a mismatch" },        \
	{ "timeout", OPT_TIMEOUT, "SECONDS", "wait this long for the peer (default 10)" }

/* The run's picture, as `rdmakit plot` draws its JSON (bw, lat, incast). */
#define PERF_OPTS_PLOT                                                                     \
	{ "plot", OPT_PLOT, "FILE", "also draw the run into FILE (.svg, .png or .pdf), as "  \
				    "rdmakit plot would" }

/* perftest's spellings that scripts use, for bw and lat alike. */
#define PERF_OPTS_PERFTEST                                                                 \
	{ "report_gbits", OPT_REPORT_GBITS, NULL, "report in Gb/sec, as perftest's "             \
						  "--report_gbits (the default here)" },          \
	{ "CPU-freq", 'F', NULL, "accepted for perftest's scripts, no effect: rdmakit times "   \
				 "with CLOCK_MONOTONIC, not the CPU's cycle counter" },          \
	{ "output", OPT_OUTPUT, "WHAT", "print only one number per size: bandwidth or "          \
					"message_rate (bw), latency (lat)" },                      \
	{ "tclass", OPT_TCLASS, "TC", "perftest's name for -T/--tos (the traffic class)" },      \
	{ "out_json", OPT_OUT_JSON, NULL, "also write the JSON document to perftest_out.json" }, \
	{ "out_json_file", OPT_OUT_JSON_FILE, "FILE", "also write the JSON document (rdmakit's " \
						      "keys, not perftest's) to FILE" },         \
	{ "bind_source_ip", OPT_BIND_SOURCE_IP, "ADDR", "client: the control connection's "      \
							"source address" },                        \
	{ "connection", 'c', "TYPE", "transport: RC, UC or UD (default RC)" },                        \
	{ "retry_count", OPT_RETRY_COUNT_ALIAS, "N", "perftest's name for --retry-cnt" }

#define PERF_OPTS_COMMON(OP_DEFAULT)                                                       \
	PERF_OPTS_ENDPOINT,                                                                \
	{ "op", OPT_OP, "OP", "write, read, send or atomic (default " OP_DEFAULT ")" },       \
	{ "atomic_type", 'A', "TYPE", "FETCH_AND_ADD or CMP_AND_SWAP (default FETCH_AND_ADD)" }, \
	{ "size", 's', "BYTES", "message size, k/m/g suffixes allowed" },                      \
	{ "all", 'a', NULL, "every size from 2 bytes to 8 MiB, in powers of two" },            \
	{ "iters", 'n', "N", "iterations per size (default 1000; bw --op write 5000, as "     \
			     "perftest)" },                                                  \
	{ "duration", 'D', "SECONDS", "run for SECONDS instead of a number of iterations" },   \
	{ "qp", 'q', "N", "number of QPs (default 1)" },                                      \
	{ "tx-depth", 't', "N", "send queue depth" },                                          \
	{ "rx-depth", 'r', "N", "receive queue depth (send tests)" },                          \
	{ "outs", 'o', "N", "outstanding READs/atomics the responder accepts (default 16)" },  \
	PERF_OPTS_TRANSPORT,                                                               \
	{ "loopback", OPT_LOOPBACK, NULL, "run both ends in this process, through the kernel" }, \
	{ "persistent", OPT_PERSISTENT, NULL, "server: keep serving clients one after another" }, \
	{ "max-memory", OPT_MAX_MEMORY, "BYTES", "server: refuse a client whose buffers need more " \
					       "(default: 1g or a quarter of RAM, the smaller)" }, \
	{ "inline_size", 'I', "BYTES", "post SEND/WRITE messages up to BYTES inline (copied at " \
				       "post time; default 0, lat: 236 send, 220 write)" },       \
	{ "rdma-cm", 'R', NULL, "verbs engine: connect the QPs through the RDMA connection "   \
				"manager (librdmacm), as perftest -R" },                           \
	{ "rdma_cm", OPT_RDMA_CM_ALIAS, NULL, "perftest's name for --rdma-cm" },              \
	{ "cpu_util", OPT_CPU_UTIL, NULL, "report this process's CPU use during the run "       \
					  "(CPU_Util[%], 100 = one core)" },                         \
	{ "perftest", OPT_PERFTEST, NULL, "speak perftest's protocol even to rdmakit (a "        \
					  "perftest peer is recognised without it)" },               \
	{ "perftest-version", OPT_PERFTEST_VERSION, "V", "the perftest version to announce "    \
						       "(default 6.06; a server echoes its client's;" \
						       " 6.28 or later negotiates parameters)" },  \
	{ "perftest-struct", OPT_PERFTEST_STRUCT, "BYTES", "6.28+ negotiation: the peer's "     \
							   "struct size, 312 or 320 (default 320)" }, \
	PERF_OPTS_PERFTEST,                                                                \
	PERF_OPTS_DCQCN

struct perf_cli {
	const char *cmd;
	struct perf_opts o;
	bool all, loopback, persistent, iters_set, duration_set, inline_set, cpu_util, dcqcn_set;
	const char *ib_dev;
	int gid_index;
	const char *auth_key_file;	/* --auth-key, else $RDMAKIT_AUTH_KEY_FILE */
	const char *plot_path;		/* --plot FILE */
	const char *out_json_path;	/* --out_json(_file): the JSON document, also to a file */
	enum perf_output { PERF_OUTPUT_TABLE, PERF_OUTPUT_BANDWIDTH, PERF_OUTPUT_MSG_RATE,
			   PERF_OUTPUT_LATENCY } output;	/* --output: one number per size */
	struct oob_key auth_key;
	uint64_t max_msg;		/* UD: the path MTU, the most a message carries (0: none) */
	uint64_t asked_size;		/* -s as given, when UD clamped it to max_msg */
};

void perf_cli_init(struct perf_cli *c, const char *cmd, bool latency);
/* Handles a common option; returns 0, EXIT_USAGE, or 1 for "not mine". */
int perf_cli_option(struct perf_cli *c, int key, const char *arg);
/* The engine-specific options agree with --engine (-d or -x alone choose
 * the verbs engine): EXIT_USAGE (said) or 0. */
int perf_cli_check_engine(struct perf_cli *c);
/* Loads the --auth-key file (or $RDMAKIT_AUTH_KEY_FILE's): EXIT_USAGE (said) or 0. */
int perf_cli_load_key(struct perf_cli *c);
/* A client the server's gate turned away: one line on stderr naming it
 * (ctx: the command's name); the server goes on waiting. */
void perf_cli_say_refused(void *ctx, const char *why);
/* A server without a key says who can use it (a text line on stdout). */
void perf_cli_warn_open(const struct perf_cli *c, const char *listen_addr);
/* --plot FILE: after report_finish of a report that kept its document,
 * draws it; returns rc, or EXIT_RUNTIME after one line on a failure. */
int perf_cli_plot(const char *cmd, const char *path, struct report *r, int rc);
/* Checks option combinations, picks the role from the operands. */
int perf_cli_finish(struct perf_cli *c, int argc, char **argv, int first, enum perf_role *role);
/* The preamble lines (engine, address, op, QPs, MTU...). */
void perf_cli_preamble(struct report *r, const struct perf_cli *c, struct perf_session *s,
		       enum perf_role role);
/* The preamble's note that UD ran -s asked at the path MTU (bw, incast). */
void perf_cli_ud_note(struct report *r, uint64_t asked, uint64_t mtu);
/* UC and UD: what arrived of what was sent and where the rest was lost, as
 * one text line and JSON keys in the current object (bw's row, incast's
 * "loss" object); lead starts the text line, unknown_why says why nothing
 * arrived is counted when the receiver's count is not known. */
void perf_cli_loss(struct printer *pr, const char *lead, const struct perf_loss *l,
		   const char *unknown_why);
/* Sizes to run: one, or the -a sweep; returns how many. */
unsigned perf_cli_sizes(const struct perf_cli *c, uint64_t *sizes, unsigned cap);

/* Runs the command: the server serves, the client calls `client` (which
 * runs the sizes and renders the rows); --persistent servers loop.  A
 * server calls `served` (when not NULL) with each UC or UD bw run as it
 * arrived (perf_serve_all), then with res NULL when the client has gone. */
typedef int (*perf_client_fn)(void *ctx, struct perf_session *s, struct report *r);
typedef void (*perf_cli_served_fn)(void *ctx, struct perf_session *s, struct report *r,
				   const struct perf_bw_result *res);
int perf_cli_run(struct perf_cli *c, const struct global_opts *g, enum perf_role role,
		 perf_client_fn client, perf_cli_served_fn served, void *ctx);

/* perftest's options bw and lat refuse, with the reason (cmd_usage.refused). */
const char *perftest_refused(const char *word);

/* Ctrl-C and SIGTERM set cmd_stop, which the runners check; SIGPIPE is
 * ignored (a closed pipe is a write error, not death). */
void perf_cli_signals(void);

#endif
