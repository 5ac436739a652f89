/* SPDX-License-Identifier: MIT */
/* Internals shared by the perf session and its bw/lat runners. */
#ifndef RDMAKIT_PERF_INT_H
#define RDMAKIT_PERF_INT_H

#include <unistd.h>

#include "ctl.h"
#include "perf.h"

/* One end of a test: its CQ, QPs and registered buffer (a slot per QP). */
struct perf_end {
	struct xport_cq *cq;
	struct xport_qp *qp[PERF_MAX_QPS];
	uint8_t *buf;
	size_t buf_len, slot, half;
	/* Where in each slot this end's own operations start (tx_off: their
	 * source, or a READ's destination) and where the peer's land (rx_off:
	 * its WRITEs and SENDs, or its READs' source).  0 and 0, except in a
	 * -b run, where the server end's direction uses the second halves on
	 * both sides, so each direction's data is checked where nothing else
	 * wrote it. */
	size_t tx_off, rx_off;
	struct xport_mr *mr;
	uint64_t remote_va;	/* the peer's buffer */
	uint32_t remote_rkey;
	size_t peer_slot;
	/* Server-end state. */
	uint64_t echo_count;
	uint8_t last_tag[PERF_MAX_QPS];
	bool recvs_posted[PERF_MAX_QPS];
};

struct perf_session {
	enum perf_role role;
	struct perf_opts o;
	uint64_t max_size;
	struct xport_dev *dev;
	struct perf_end a;	/* this side (client or server) */
	struct perf_end b;	/* the server end, in loopback */
	struct oob oob;
	int listen_fd;
	struct xport_cm *cm;	/* server, --rdma-cm: the CM listener */
	char local_addr[64];
	uint32_t eff_mtu;		/* the path MTU the QPs use */
	/* What the server end saw in the current run. */
	bool verify_failed;
	uint64_t bad_offset;
	int server_error;		/* a failed completion's status, 0 if none */
	uint64_t rx_msgs, rx_bytes;	/* SEND: the receives that completed (payload bytes) */
	uint64_t rx_first_ns, rx_last_ns;	/* when the first and the last one did */
	struct xport_counters rx_ctr0;	/* the engine's counters when the run began */
	uint64_t rx_cpu0, rx_wall0;	/* this process's CPU time and the clock then */
	struct ctl_received peer_rx;	/* client: the server's count of the last run */
	bool echo_recv_posted;		/* lat SEND: the echo's receive is posted */
	struct pt_state *pt;		/* a perftest peer: its protocol's state (pt_int.h) */
	uint64_t *samples;		/* lat -H/-U (perf_lat_record) */
	uint64_t samples_cap;
};

/* -W: the listed counters before a run, and their deltas after it. */
int perf_listed_before(struct perf_session *s, struct perf_listed *before, char *err);
int perf_listed_after(struct perf_session *s, const struct perf_listed *before,
		      struct perf_listed *out, char *err);

/* The session's building blocks, shared with the perftest protocol. */
int perf_open_dev(struct perf_session *s, const char *bind, char *err);
int perf_end_open(struct perf_session *s, struct perf_end *e, char *err);
void perf_end_close(struct perf_session *s, struct perf_end *e);

static inline void close_fd(int fd)
{
	close(fd);
}

/* A test pattern byte: position i of QP q's message. */
static inline uint8_t perf_pattern(uint64_t i, unsigned q, uint64_t seed)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL ^ (q + 1) * 0xBF58476D1CE4E5B9ULL ^ seed;

	return (uint8_t)(x >> 56 ^ x >> 24);
}

uint64_t perf_now_ns(void);
/* A server's --bind, checked before it waits for peers, so a wrong
 * address fails at once rather than when the first peer arrives:
 * 0, or -1 with err set. */
int perf_check_bind(const char *addr, char *err);
/* CPU time this process has used (user + system), and it as a share of
 * wall time in percent (100 = one core busy). */
uint64_t perf_cpu_ns(void);
double perf_cpu_percent(uint64_t cpu_ns, uint64_t wall_ns);
/* Whether a message of len bytes goes inline (-I: SEND and WRITE only). */
bool perf_inline_ok(const struct perf_session *s, uint64_t len);
bool perf_oob_readable(struct oob *o);
/* lat --latency_gap: spins that long before the next message (perftest
 * spins on its cycle counter; a sleep would add the scheduler's wake-up). */
void perf_latency_gap(const struct perf_session *s);
/* One latency sample (ns): into the histogram, and with -H/-U the list. */
void perf_lat_record(struct perf_session *s, struct perf_lat_result *r, uint64_t ns);
/* Serves this end (s->a) until the peer's next control message arrives;
 * deadline_ns 0: until Ctrl-C, else (after Ctrl-C) until then. */
int perf_pump_until_peer(struct perf_session *s, uint64_t deadline_ns, char *err);
/* Drives progress and handles the server end's duties (SEND receives,
 * latency echoes) when this process runs it. */
void perf_pump_server(struct perf_session *s, struct perf_end *e);
int perf_run_begin(struct perf_session *s, char *err);
int perf_run_end(struct perf_session *s, bool *verified, uint64_t *bad, char *err);
/* UC and UD bw between rdmakit peers: the client tells the server what it
 * sent (ctl_sent) before the done barrier. */
bool perf_tells_sent(const struct perf_session *s);
/* Server: the run as it arrived here (perf_serve_all's served). */
void perf_served_result(struct perf_session *s, const struct ctl_sent *tx,
			const struct ctl_received *rx, struct perf_bw_result *r);
void perf_pump(struct perf_session *s);
int perf_wc_error(const struct xport_wc *wc, char *err);
void perf_server_prepare(struct perf_session *s, struct perf_end *e);
/* The server end's handling of one completion (SEND receives, echoes). */
void perf_server_on_wc(struct perf_session *s, struct perf_end *e, const struct xport_wc *wc);
void perf_fill_pattern(struct perf_session *s, struct perf_end *e, size_t off);
/* A WRITE target's byte after the run (zeroed before it): the pattern, or
 * on UC also untouched, where every message to it was lost (loss, which UC
 * WRITE cannot count, is not wrong data). */
static inline bool perf_byte_ok(uint8_t got, uint8_t want, enum xport_qp_type conn)
{
	return got == want || (conn == XPORT_QPT_UC && got == 0);
}
/* A receive's message bytes (on UD its byte count has the GRH area too). */
uint32_t perf_recv_len(const struct perf_session *s, const struct xport_wc *wc);
/*
 * UC and UD: a sender's "done" can overtake its last packets (its sends
 * complete once its host has them), so a receiver goes on taking them
 * until none has come for PERF_SETTLE_IDLE_NS (PERF_SETTLE_MAX_NS at most).
 */
#define PERF_SETTLE_IDLE_NS 50000000ull
#define PERF_SETTLE_MAX_NS 1000000000ull
void perf_settle(struct perf_session *s, struct perf_end *e);
/* What this end's receives took in over the run (and its engine dropped). */
void perf_received(struct perf_session *s, struct ctl_received *r);

/* --verify: the pattern at offset off of every slot, else s->verify_failed. */
void perf_check_pattern(struct perf_session *s, struct perf_end *e, size_t off);
void perf_post_recvs(struct perf_session *s, struct perf_end *e);
/* -b on the server: sends for the run, then tells the client its figures. */
int perf_serve_tx(struct perf_session *s, char *err);
void perf_server_check(struct perf_session *s, struct perf_end *e);

#endif
