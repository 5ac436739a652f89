/* SPDX-License-Identifier: MIT */
/*
 * The control messages of bw, lat and incast: one encoding (a JSON object
 * per message, on the framing of lib/transport/oob.h) and every parser of
 * one in this one place.  A parser checks types and ranges before a value
 * reaches a caller; a test's parameters go through perf_opts_check(), the
 * command line's own check.
 */
#ifndef RDMAKIT_CTL_H
#define RDMAKIT_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "perf.h"

/* Sends msg (and releases it); -1 with err. */
int ctl_send(struct oob *c, enum oob_type type, json_t *msg, char *err);
/* One message of `type` that is a JSON object, or NULL with err. */
json_t *ctl_recv(struct oob *c, enum oob_type type, char *err);

/* bw/lat: the test the client sets (PARAMS). */
json_t *ctl_test_json(const struct perf_opts *o, uint64_t max_size);
/*
 * Fills o's test fields (the rest of o untouched) and *max_size from a
 * test message, checked by perf_opts_check(): 0, or -1 with err.
 */
int ctl_test_parse(json_t *m, struct perf_opts *o, uint64_t *max_size, char *err);

/* A side's memory for the peer: buffer address, rkey, slot size and, from
 * a server with --rdma-cm, where to connect (cm_port 0: none). */
struct ctl_mem {
	uint64_t va;
	uint32_t rkey;
	uint64_t slot;
	uint16_t cm_port;
	uint32_t cm_token;
};
json_t *ctl_mem_json(const struct ctl_mem *m);
int ctl_mem_parse(json_t *j, struct ctl_mem *m, char *err);

/* QP connection info: one object, and a list of up to cap. */
json_t *ctl_qp_json(const struct xport_qp_info *q);
int ctl_qp_parse(json_t *j, struct xport_qp_info *q);
json_t *ctl_qps_json(const struct xport_qp_info *q, unsigned n);
int ctl_qps_parse(json_t *j, struct xport_qp_info *q, unsigned cap, unsigned *n, char *err);

/* bw/lat between runs: {"run":{"size":N}} or {"end":true}; *size 0 for end. */
json_t *ctl_run_json(uint64_t size);
int ctl_run_parse(json_t *j, uint64_t *size, char *err);

/* -b: the client's end of a run: {"done":true} or {"stop":true}. */
json_t *ctl_done_json(bool stop);
int ctl_done_parse(json_t *j, bool *stop, char *err);

/* The server's verdict on a run. */
/* What the server's receives took in over the run (SEND), and what its
 * engine dropped (drops_known: the soft engine keeps these counts). */
struct ctl_received {
	uint64_t msgs, bytes;
	bool drops_known;
	uint64_t rcvbuf_drops, no_recv_drops, qkey_drops, uc_msgs_cut;
};

/* UC and UD bw: the client's count of what it sent, before the done
 * barrier, so that the server can report the loss too. */
struct ctl_sent {
	uint64_t msgs;
	bool tx_known;			/* its engine counts what its host refused */
	uint64_t host_tx_drops;
};
json_t *ctl_sent_json(const struct ctl_sent *c);
int ctl_sent_parse(json_t *j, struct ctl_sent *c, char *err);

struct ctl_verdict {
	bool verified;
	uint64_t bad_offset;
	int status;			/* enum xport_wc_status of its QP */
	struct ctl_received received;
};
json_t *ctl_verdict_json(const struct ctl_verdict *v);
int ctl_verdict_parse(json_t *j, struct ctl_verdict *v, char *err);

/* -b: the server's figures for its direction. */
json_t *ctl_figures_json(const struct perf_bw_result *r);
int ctl_figures_parse(json_t *j, struct perf_bw_result *r, char *err);

#endif
