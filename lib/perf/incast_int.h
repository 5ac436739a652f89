/* SPDX-License-Identifier: MIT */
/* Internals of incast: a node's flow ends and the messages between nodes. */
#ifndef RDMAKIT_INCAST_INT_H
#define RDMAKIT_INCAST_INT_H

#include <jansson.h>

#include "counters.h"
#include "ctl.h"
#include "incast.h"

/* A flow: src rank sends to dst rank. */
struct incast_flow_def {
	unsigned id, src, dst;
};

/* This node's end of one flow. */
struct incast_ep {
	struct incast_flow_def f;
	bool is_src;
	struct xport_qp *qp[PERF_MAX_QPS];
	size_t offset;			/* of its first slot in the node buffer */
	uint64_t remote_va;		/* sender: the receiver's slots */
	uint32_t remote_rkey;
	size_t remote_slot;
	/* Sender. */
	uint64_t posted[PERF_MAX_QPS], done[PERF_MAX_QPS];
	uint64_t *post_ns[PERF_MAX_QPS];	/* ring of tx_depth post times */
	uint64_t msgs_posted, msgs_done, bytes_done, msgs_target;
	uint64_t last_ns;		/* the latest completion */
	uint64_t *ival_bytes;		/* --interval: bytes completed per interval */
	bool posting_done, finished;
	bool failed;
	char error[256];
	/* Receiver. */
	uint64_t recv_msgs, recv_bytes;
	bool verify_failed;
	uint64_t bad_offset;
};

struct incast_node {
	struct incast_opts o;		/* the test as adopted */
	unsigned first_rank, nranks, size;
	struct xport_dev *dev;
	struct xport_cq *cq;
	struct xport_mr *mr;
	uint8_t *buf;
	size_t buf_len, slot_len;
	struct incast_ep *eps;
	unsigned neps;
	struct hist *latency;
	uint64_t t0;
	char local_addr[64];
	char host_id[96];		/* tells hosts (and namespaces) apart */
	struct xport_counters engine_start;
	struct ctr_snapshot host_start;
	bool host_sampled;
	uint32_t mtu;
	uint64_t ival_ns;		/* --interval: the width of ival_bytes' bins */
	unsigned ival_used;		/* bins in use, every sender alike */
	char name[INCAST_NAME_LEN];	/* ADDR, or ADDR:PORT off UDP 4791 */
	uint64_t rx_last_ns;		/* the latest receive completion */
};

/* incast_node.c */
int node_open(struct incast_node *n, const struct incast_opts *o, const char *bind, char *err);
int node_build(struct incast_node *n, const struct incast_flow_def *flows, unsigned nflows,
	       char *err);
json_t *node_describe(const struct incast_node *n);
/* Names the node's ranks in names[]: its name, "#k" added when it has several. */
void node_name_ranks(const struct incast_node *n, char names[][INCAST_NAME_LEN]);
int node_connect(struct incast_node *n, json_t *peers, char *err);
/* UD: the run's message size, the smallest path MTU of every QP in it at
 * most (before node_start); what the coordinator decided, members too. */
void node_set_size(struct incast_node *n, uint64_t size);
/* The smallest MTU among the QPs of node_describe()'s endpoints (0: none). */
uint32_t node_min_mtu(json_t *eps);
/* UC and UD: takes what is still on its way here (see perf_settle). */
void node_settle(struct incast_node *n);
void node_start(struct incast_node *n);
/* One pass of the data path; returns how much happened (0: idle). */
int node_step(struct incast_node *n);
bool node_sending_done(const struct incast_node *n);
json_t *node_result(struct incast_node *n);
void node_close(struct incast_node *n);

/* incast_plan.c: the test on the wire, flows, and the folding of results. */
json_t *incast_test_to_json(const struct incast_opts *o);
int incast_test_from_json(struct incast_opts *o, json_t *t, char *err);
/* Adopts a participant's test where this coordinator set nothing itself. */
int incast_adopt(struct incast_opts *mine, const struct incast_opts *theirs, const char *who,
		 bool first, char *err);
unsigned incast_flows(enum incast_pattern p, unsigned size, struct incast_flow_def *out,
		      unsigned cap);
bool incast_flow_touches(const struct incast_flow_def *f, unsigned first, unsigned n);
/* Folds one node's result message into r; host_ids dedupes host counters. */
int incast_fold(struct incast_result *r, json_t *node_res, json_t *seen_hosts, char *err);
/* Marks every flow whose sender is in [first, first+n) failed with why. */
void incast_fail_ranks(struct incast_result *r, unsigned first, unsigned n, const char *why);
void incast_finish_result(struct incast_result *r);
/* The control-channel messages and QP info: ctl.h. */

#endif
