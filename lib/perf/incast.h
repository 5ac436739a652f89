/* SPDX-License-Identifier: MIT */
/*
 * Many-to-one (incast) and all-to-all runs.  Every process is a node that
 * hosts one or more participants (ranks); rank 0 lives in the coordinator,
 * which is also the receiver of an incast.  The coordinator gathers the
 * participants over the control channel, hands each node its flows, relays
 * the QP and memory descriptions between the ends of every flow, starts
 * every flow at once (a barrier), collects each node's measurements and
 * folds them into one result.  A flow is one sender rank writing (or
 * sending) to one receiver rank over -q QPs.  Nothing here prints.
 */
#ifndef RDMAKIT_INCAST_H
#define RDMAKIT_INCAST_H

#include "hist.h"
#include "perf.h"

#define INCAST_MAX_RANKS 256
#define INCAST_NAME_LEN 96
/* --interval samples per flow; a longer run widens them (merging pairs). */
#define INCAST_MAX_INTERVALS 512

enum incast_pattern { INCAST_MANY_TO_ONE, INCAST_ALL_TO_ALL };

/* What a coordinator may have been told itself (adopted otherwise). */
enum {
	INCAST_SET_PATTERN = 1 << 8,	/* above the PERF_SET_* bits */
	INCAST_SET_BYTES = 1 << 9,
};

struct incast_opts {
	struct perf_opts p;		/* op (write or send), size, duration, qps, depths, engine... */
	enum incast_pattern pattern;
	uint64_t flow_bytes;		/* bytes per flow; 0: run p.duration seconds */
	unsigned senders;		/* coordinator: participants to wait for */
	unsigned local;			/* participants this process contributes (>= 1) */
	int rank;			/* launcher rank (-1: in order of arrival) */
	double wait_timeout_s;		/* coordinator: for every participant to join */
	const char *listen;		/* coordinator: control address (NULL: all) */
	int listen_fd;			/* coordinator: already listening (-1: listen here) */
};

/* One flow as the report shows it. */
struct incast_flow {
	unsigned id, src, dst;		/* ranks */
	uint64_t bytes, messages;
	double seconds;			/* start to the flow's last completion */
	double fct_us;			/* with --bytes; < 0 with -D */
	double goodput_gbps;
	bool verified;			/* --verify: what the receiver found */
	/* UC and UD: bytes and messages are what was sent; loss says what
	 * arrived of them (loss.received_known: SEND, its receiver counted). */
	struct perf_loss loss;
	bool sent_known;		/* the sender's figures came in */
	bool failed;
	char error[256];
	/* --interval: bytes completed in each interval of interval_ns from
	 * the start (owned; NULL without --interval or from an old sender). */
	uint64_t *interval_bytes;
	unsigned nintervals;
	uint64_t interval_ns;
};

/* A counter's change over the run, from one source ("engine", "IpExt",
 * "mlx5_0/1"...), its name verbatim. */
struct incast_counter {
	char source[48];
	char name[64];
	uint64_t delta;
};

struct incast_result {
	enum incast_pattern pattern;
	unsigned participants;
	char names[INCAST_MAX_RANKS][INCAST_NAME_LEN];	/* "ADDR" or "ADDR host" per rank */
	struct incast_flow *flows;
	unsigned nflows;
	double seconds;			/* the longest flow */
	double aggregate_gbps;		/* every flow's bytes over the longest flow's time */
	double receiver_gbps;		/* incast: the receiver's link rate, 0 unknown */
	double fairness_jain;		/* over the flows that did not fail */
	unsigned fair_flows;
	bool has_fct;
	double fct_p50_us, fct_p99_us, fct_max_us;
	struct hist latency;		/* per message, post to completion, ns */
	struct incast_counter *counters;
	unsigned ncounters;
	unsigned failed_participants;
	bool interrupted;
	char engine[16];
	char local_addr[64];
	uint32_t mtu;
	struct perf_opts test;		/* what ran (adopted); test.interval: asked for */
	uint64_t interval_ns;		/* the flows' common interval (0: none), at
					 * least the one asked for (see INCAST_MAX_INTERVALS) */
	uint64_t flow_bytes;
	/* UC and UD: every flow's loss summed, and where it went as far as the
	 * hosts' engines can tell (their counters; known when every node runs
	 * the soft engine). */
	bool unreliable;
	struct perf_loss loss;
	bool drops_unknown;		/* a node's engine cannot tell */
	uint64_t ud_asked_size;		/* -s as asked, when UD ran it at the path MTU */
};

/* Coordinator: waits for the participants, runs, fills *r (free with
 * incast_result_free).  Returns -1 when no run happened; a run in which
 * participants failed returns 0 with the failures in r. */
int incast_coordinate(struct incast_opts *o, struct incast_result *r, char *err);
/* Member: joins o->p.host's run with o->local participants; fills *r with
 * this node's own flows. */
int incast_join(struct incast_opts *o, struct incast_result *r, char *err);
void incast_result_free(struct incast_result *r);

const char *incast_pattern_name(enum incast_pattern p);
/* The link rate of the interface that holds addr, in Gb/s; 0 unknown. */
double incast_link_gbps(const char *addr);
/* What a flow delivered: on UC and UD what its receiver counted, if it did. */
uint64_t incast_flow_delivered_bytes(const struct incast_flow *f);
uint64_t incast_flow_delivered_msgs(const struct incast_flow *f);
/* Jain's fairness index of n values: (sum x)^2 / (n * sum x^2). */
double incast_jain(const double *x, unsigned n);

#endif
