/* SPDX-License-Identifier: MIT */
/*
 * Bandwidth and latency tests over the transport API, shared by `bw`,
 * `lat` (and later `incast`).  A session is one side of a test: the
 * client (sets the test), the server (adopts it), or --loopback (both in
 * one process, every packet still through the kernel).  Results are
 * structs; nothing here prints.
 */
#ifndef RDMAKIT_PERF_H
#define RDMAKIT_PERF_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "hist.h"
#include "oob.h"
#include "transport.h"

#define PERF_MAX_QPS 64
#define PERF_MAX_SIZE (8u << 20)	/* the largest message, -s and -a */
/* The ranges of a test's parameters: what the command line accepts
 * (cmd/perf_cli.c) is what a server adopts from a client (perf_opts_check). */
#define PERF_MIN_ITERS 5
#define PERF_MAX_ITERS 4294967295ULL
#define PERF_MAX_DEPTH 8192
#define PERF_MAX_OUTS 255
#define PERF_MIN_DURATION 0.001
#define PERF_MAX_DURATION 86400.0
#define PERF_MIN_INTERVAL 0.01
#define PERF_MAX_INTERVAL 3600.0
#define PERF_MAX_INLINE (1u << 20)
#define PERF_MIN_RATE 1e-6
#define PERF_MAX_RATE 1e12
#define PERF_MAX_INTERVALS 4096

#define PERF_MAX_POST_LIST 512
/* perftest's selective signaling: one completion per 100 WRs for messages
 * up to 8 KiB, every WR above. */
#define PERF_CQ_MOD_DEFAULT 100
#define PERF_CQ_MOD_MAX_SIZE 8192

enum perf_op { PERF_WRITE, PERF_READ, PERF_SEND, PERF_ATOMIC };

/* Parameters a server may have been given itself: set on both sides with
 * different values, the test is refused rather than silently adopted. */
enum {
	PERF_SET_OP = 1 << 0,
	PERF_SET_SIZE = 1 << 1,
	PERF_SET_ITERS = 1 << 2,
	PERF_SET_DURATION = 1 << 3,
	PERF_SET_QPS = 1 << 4,
	PERF_SET_BIDIR = 1 << 5,
	PERF_SET_RDMA_CM = 1 << 6,
	PERF_SET_CONN = 1 << 7,
};
enum perf_role { PERF_CLIENT, PERF_SERVER, PERF_LOOPBACK };
/* --rate_units, perftest's letters: g = Gb/s (10^9 bits), M = MiB/s
 * (2^20 bytes), p = messages per second. */
enum perf_rate_unit { PERF_RATE_GBPS, PERF_RATE_MIBPS, PERF_RATE_PPS };

struct perf_opts {
	enum perf_op op;
	bool atomic_cas;		/* CMP_AND_SWAP instead of FETCH_AND_ADD */
	uint64_t size;			/* message size, bytes */
	uint64_t iters;			/* 0: by duration */
	double duration;		/* seconds, when iters == 0 */
	unsigned qps;
	unsigned tx_depth;
	unsigned cq_mod;		/* bw: one WR in cq_mod signaled (perftest -Q);
					 * 0: 100 up to 8 KiB, 1 above, as perftest */
	unsigned post_list;		/* bw: WRs posted per call (perftest -l); 0, 1: one */
	unsigned rx_depth;
	unsigned outs;			/* outstanding READs/atomics per QP */
	uint32_t mtu;			/* 0: engine default */
	uint8_t qp_timeout, retry_cnt, rnr_retry, tos;
	bool verify;
	unsigned explicit_set;		/* PERF_SET_* bits: set on this side's command line */
	bool latency;			/* a latency test (ping-pong), not bandwidth */
	double interval;		/* seconds between interval reports; 0: none */
	int timeout_s;			/* control-channel waits */
	uint64_t max_memory;		/* server: most buffer bytes a client may ask
					 * for; 0: perf_default_max_memory() */
	/* Where: the engine and its local address, the control port. */
	const char *engine;
	const char *ib_dev;		/* verbs: device, port, GID index (-1: pick) */
	int ib_port;
	int gid_index;
	const char *bind;
	uint16_t udp_port;
	uint16_t port;
	const char *host;		/* client: the server */
	const volatile sig_atomic_t *stop;	/* Ctrl-C */
	const struct oob_key *auth_key;	/* --auth-key: control-channel secret (NULL: none) */
	/* Server: told of each client the gate turned away (one line, naming
	 * it and why); the server goes on waiting.  NULL: not told. */
	void (*on_refused)(void *ctx, const char *why);
	void *refused_ctx;
	bool bidirectional;		/* bw: both sides send at once (perftest -b) */
	uint32_t inline_size;		/* SEND/WRITE messages up to this are posted inline */
	double rate_limit;		/* bw: software pacing of each sender; 0: none */
	enum perf_rate_unit rate_unit;
	bool rdma_cm;			/* QPs connected by the RDMA CM (perftest -R) */
	struct xport_dcqcn dcqcn;	/* soft engine: congestion reaction (zeros: defaults) */
	bool sweep;			/* -a: the sizes 2..8 MiB (perftest's peers must know) */
	/* perftest's own protocol (lib/perf/pt_*.c): a perftest peer is
	 * recognised by its opening; --perftest forces it. */
	bool perftest;
	const char *perftest_version;	/* what to announce (NULL: 6.06; a server echoes) */
	unsigned perftest_struct;	/* 6.28+ negotiation struct: 312 or 320 (0: 320) */
	const char *bind_source;	/* client: the control connection's source address */
	bool report_gbits;		/* perftest --report_gbits: its report in Gb/s */
	bool no_peak;			/* bw: -N/--noPeak, no peak computed (0) */
	uint32_t latency_gap_us;	/* lat: --latency_gap, a pause before each message */
	const char *report_counters;	/* bw -W: "dir/name,..." under the RDMA port's sysfs */
	bool raw_samples;		/* lat -H/-U: keep every sample, not only the histogram */
	enum xport_qp_type conn;	/* -c/--connection: RC, UC or UD (perftest's names) */
	uint32_t lat_wait_us;		/* lat over UC/UD: how long a ping waits for its answer
					 * before it counts as lost (0: PERF_LAT_WAIT_US) */
};

#define PERF_LAT_WAIT_US 100000		/* 100 ms: far beyond any RTT a host measures */

/* -W/--report-counters: the listed port counters' deltas over a run. */
#define PERF_MAX_LISTED 32
struct perf_listed {
	unsigned n;
	struct {
		char name[64];		/* as listed: "counters/port_xmit_data" */
		uint64_t value;		/* the delta, raw (port_xmit_data: 4-byte words) */
	} c[PERF_MAX_LISTED];
};
/* The list's syntax, before anything runs: 0, or -1 with err. */
int perf_listed_check(const char *list, char *err);

/* What the peer spoke, for the report. */
struct perf_peer_proto {
	bool perftest;			/* perftest's protocol, not rdmakit's */
	char version[16];		/* the version the peer announced */
	bool negotiated;		/* 6.28+: the parameter struct was exchanged */
	unsigned struct_len;		/* its size (312 or 320) */
};

struct perf_interval {
	double start_s, end_s;
	uint64_t bytes, msgs;
};

/* Counters of the host's RDMA port that moved over a run (verbs engine). */
#define PERF_MAX_PORT_DELTAS 64
struct perf_port_deltas {
	bool known;			/* the port was sampled before and after */
	char device[64];
	int port;
	const char *source;		/* "netlink" or "sysfs": where its driver counters came from */
	unsigned n, left_out;		/* deltas kept; more that moved, not kept */
	struct {
		char name[48];
		uint64_t delta;
	} d[PERF_MAX_PORT_DELTAS];
};

/*
 * UC and UD, which resend nothing: what arrived of what was sent, and where
 * the rest was lost as far as the hosts can tell (their engines' counters
 * over the run; known on the soft engine, which sees every packet).
 */
struct perf_loss {
	bool received_known;		/* SEND: the receiver counted; WRITE: nothing to count */
	bool peer_silent;		/* the receiver is perftest, which tells nothing */
	uint64_t sent_msgs, received_msgs, received_bytes, lost_msgs;
	double loss_percent;
	bool where_known;		/* the receivers' drop counters below */
	bool tx_known;			/* the senders' host_tx_drops */
	uint64_t host_tx_drops;		/* sender: its host refused to send (packets) */
	uint64_t rcvbuf_drops;		/* receiver: its UDP socket buffer overflowed (packets) */
	uint64_t no_recv_drops;		/* receiver: a SEND found no receive posted */
	uint64_t qkey_drops;		/* receiver, UD: under another Q_Key */
	uint64_t uc_msgs_cut;		/* receiver, UC: given up at a PSN gap */
};

/* Fills the counted part of l: received_known, lost_msgs and loss_percent. */
void perf_loss_count(struct perf_loss *l, uint64_t sent_msgs, uint64_t received_msgs,
		     uint64_t received_bytes);

struct perf_bw_result {
	uint64_t bytes_per_msg, iterations;
	unsigned cq_mod;		/* one WR in cq_mod was signaled */
	double seconds;
	double bw_avg_gbps, bw_peak_gbps, msg_rate_mpps;
	struct perf_interval intervals[PERF_MAX_INTERVALS];
	unsigned nintervals;
	bool verified;			/* --verify ran and found the data right */
	uint64_t bad_offset;		/* first wrong byte, when !verified */
	struct xport_counters counters;	/* this side's engine, over this run */
	struct perf_port_deltas port;	/* verbs: its RDMA port's counters, over this run */
	struct perf_listed listed;	/* -W: the listed counters' deltas */
	bool interrupted;
	double cpu_util_percent;	/* this process: CPU time / wall time; 100 = one core */
	/* -b: bw_* and msg_rate_mpps are the sum of both directions, as
	 * perftest prints; these are the parts. */
	bool bidirectional;
	double local_bw_avg_gbps, peer_bw_avg_gbps;
	uint64_t peer_iterations;
	/* A server for perftest's FETCH_AND_ADD (+1 each): what they added
	 * to this side's buffer, counted in memory. */
	bool atomic_added_known;
	uint64_t atomic_added;
	/* UC and UD (-c), which resend nothing: what the receiver got of what
	 * this side sent, and where the rest was lost. */
	bool unreliable;
	struct perf_loss loss;
};

struct perf_lat_result {
	uint64_t bytes, iterations;
	bool half_rtt;			/* send/write: RTT/2, as perftest */
	struct hist h;			/* ns */
	bool verified;
	uint64_t bad_offset;
	bool interrupted;
	double cpu_util_percent;	/* this process: CPU time / wall time; 100 = one core */
	/* lat -H/-U: every sample in the order taken (ns), when asked for;
	 * the session's memory, valid until its next run. */
	const uint64_t *samples;
	uint64_t nsamples;
	bool samples_truncated;		/* more than PERF_MAX_SAMPLES were taken */
	/* UC and UD: pings with no answer within lat_wait_us (not in h). */
	bool unreliable;
	uint64_t lost, late;		/* no answer in time; answers that came after it */
	uint32_t wait_us;
};

#define PERF_MAX_SAMPLES (16u << 20)	/* lat -H/-U: 128 MiB of samples at most */

struct perf_session;

/* Sets up a session (connects, exchanges the test and QP info).  0, or -1
 * with err; a server returns PERF_CLIENT_FAILED when the client it accepted
 * failed or was refused (its parameters, its memory): it may serve the next. */
#define PERF_CLIENT_FAILED (-2)
int perf_open(struct perf_session **out, enum perf_role role, struct perf_opts *o, char *err);
/*
 * The one check of a test's parameters, shared by the command line and by
 * a server adopting a client's (and incast's coordinator a participant's):
 * 0, or -1 with err naming the field, its value and its range.  max_size:
 * the largest message the buffers are sized for (>= o->size).
 */
int perf_opts_check(const struct perf_opts *o, uint64_t max_size, char *err);
/* -c with the other options: what the transport carries (part of the above). */
int perf_conn_check(const struct perf_opts *o, char *err);
/* "RC", "UC" or "UD". */
const char *perf_conn_name(enum xport_qp_type t);
/* The transport of a perftest name ("RC", "UC", "UD"), or -1. */
int perf_conn_parse(const char *name);
/* UD is SEND's: with -c UD and no --op given, the operation is SEND (as
 * ib_send_bw -c UD); the command lines and incast's adoption alike. */
void perf_conn_default_op(struct perf_opts *o);
/* The receive buffer a message of size bytes needs: on UD the GRH area
 * first, and room for any datagram (the largest MTU), so that one from a
 * stranger who knows the QPN and Q_Key cannot fail the receive. */
static inline uint64_t perf_recv_buf_bytes(enum xport_qp_type conn, uint64_t size)
{
	return conn == XPORT_QPT_UD ? (size > 4096 ? size : 4096) + XPORT_GRH_LEN : size;
}
void perf_close(struct perf_session *s);
const char *perf_engine(const struct perf_session *s);
/* The local address the soft engine bound, and the peer's, for the preamble. */
const char *perf_local_addr(const struct perf_session *s);
uint32_t perf_mtu(const struct perf_session *s);
/* The QPs' transport (a server's: its client's -c). */
enum xport_qp_type perf_connection(const struct perf_session *s);
/* Re-arms the session for another message size (the -a sweep). */
int perf_set_size(struct perf_session *s, uint64_t size, char *err);

/* Runs one bandwidth test of the current size; the server serves it. */
int perf_run_bw(struct perf_session *s, struct perf_bw_result *r, char *err);
int perf_run_lat(struct perf_session *s, struct perf_lat_result *r, char *err);
/*
 * Server: serves the client's runs until it ends the session; *runs counts
 * them.  UC and UD bw SEND: served (when not NULL) gets each run as this
 * side saw it: iterations, rates and seconds are the messages that arrived,
 * from the first arrival to the last, and loss is what the client sent
 * less what arrived.
 */
typedef void (*perf_served_fn)(const struct perf_bw_result *r, void *ctx);
int perf_serve_all(struct perf_session *s, unsigned *runs, perf_served_fn served, void *ctx,
		   char *err);
/* The client's address, on a server. */
const char *perf_peer(const struct perf_session *s);
/* Which protocol the peer spoke (rdmakit's or perftest's, and its version). */
void perf_peer_protocol(const struct perf_session *s, struct perf_peer_proto *p);
/*
 * A server with a perftest client measures for itself: it runs the
 * sizes (perf_run_bw/perf_run_lat) as a client does instead of
 * perf_serve_all.  perf_runs_once: one run covers the whole -a sweep
 * (perftest's passive WRITE/READ/atomic servers never hear of the sizes).
 */
bool perf_serves_as_runner(const struct perf_session *s);
bool perf_runs_once(const struct perf_session *s);
/* An advisory line for the user before the run (NULL: none). */
const char *perf_advisory(const struct perf_session *s);

const char *perf_op_name(enum perf_op op);
/* The cq_mod a bw run uses with send-queue depth `depth` (-l sets it to
 * the list length; capped at the depth, as perftest does). */
unsigned perf_cq_mod(const struct perf_opts *o, unsigned depth);
/* WRs a bw run keeps in flight per QP: -t, and at most 8 atomics (each
 * has a result buffer of its own). */
unsigned perf_tx_depth(const struct perf_opts *o);

/* A server's default --max-memory: the smaller of 1 GiB and a quarter of RAM. */
uint64_t perf_default_max_memory(void);

#endif
