/* SPDX-License-Identifier: MIT */
/*
 * probe's control messages, built and parsed here only.  Every message is
 * a JSON object on lib/transport/oob.h's framing; a request is a PARAMS
 * message, its answer a RESULT (or an ERROR naming what went wrong).
 *
 *   probe -> serve   {"probe": {"version": 1}}
 *   serve -> probe   {"serve": {"engine": E, "device": D}}
 *   probe -> serve   {"setup": {...}}     -> {"qp": QP, "mr": {...}}
 *   probe -> serve   {"post": {...}}      -> {"post": {}}
 *   probe -> serve   {"state": {}}        -> {"state": {...}}
 *   probe -> serve   {"teardown": {}}     -> {"teardown": {}}
 *   probe -> serve   BYE
 */
#ifndef RDMAKIT_PROBE_MSG_H
#define RDMAKIT_PROBE_MSG_H

#include <jansson.h>

#include "probe.h"

#define PROBE_PROTO_VERSION 3

/* What one test asks of the remote's QP and memory.  Limits: a server
 * never allocates more than PROBE_MAX_MR_BYTES + the receives' bytes. */
#define PROBE_MAX_MR_BYTES (1u << 20)
#define PROBE_MAX_RECVS 16
#define PROBE_MAX_RECV_BYTES 65536u
struct probe_setup {
	uint32_t mr_bytes;
	uint8_t fill;			/* every byte of the region, before the test */
	int access;			/* enum xport_access REMOTE_* bits */
	unsigned recvs;			/* receives posted, each recv_bytes */
	uint32_t recv_bytes;
	uint32_t mtu;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t tos;			/* DSCP << 2: the traffic class of its packets */
	uint8_t rd_atomic;		/* READs/atomics it accepts outstanding, 1..16 (0: 16) */
	int32_t first_psn;		/* the first PSN it sends, 0..2^24-1 (-1: random) */
	struct xport_qp_info peer;	/* this side, as the remote QP's peer */
};

struct probe_mr_info {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

/* Work the remote's QP is to post, as the requester a test examines:
 * `count` messages of `len` bytes from the start of its region, to the
 * probe's (made up) va and rkey for WRITE, READ and FETCH_ADD (whose len
 * is 8: the original value lands in the region's first 8 bytes).  64
 * WRITEs of 1 MiB: cnp_reaction's stream, long enough for its rounds at
 * the rates a probe takes in. */
#define PROBE_MAX_POSTS 64
enum probe_post_op { PROBE_POST_WRITE, PROBE_POST_SEND, PROBE_POST_READ, PROBE_POST_FETCH_ADD };
struct probe_post {
	enum probe_post_op op;
	uint32_t len;
	unsigned count;
	uint64_t remote_va;
	uint32_t rkey;
	uint64_t add;			/* FETCH_ADD: what to add (below 2^63: JSON integers) */
};

enum probe_req_kind { PROBE_REQ_SETUP, PROBE_REQ_POST, PROBE_REQ_STATE, PROBE_REQ_TEARDOWN };

json_t *probe_msg_hello(void);
int probe_msg_hello_parse(json_t *j, char *err);
/* timeout_s: how long the server lets the control channel stay silent;
 * atomics: whether its device executes RC atomics. */
json_t *probe_msg_serve(const char *engine, const char *device, int timeout_s, bool atomics);
int probe_msg_serve_parse(json_t *j, struct probe_peer_info *p, char *err);

json_t *probe_msg_setup(const struct probe_setup *s);
json_t *probe_msg_post(const struct probe_post *w);
json_t *probe_msg_post_reply(void);
json_t *probe_msg_state_req(void);
json_t *probe_msg_teardown(void);
/* Which request j is; a setup's fields into *s, a post's into *w.  -1
 * with err if malformed. */
int probe_msg_req_parse(json_t *j, enum probe_req_kind *req, struct probe_setup *s,
			struct probe_post *w, char *err);

json_t *probe_msg_setup_reply(const struct xport_qp_info *qp, const struct probe_mr_info *mr);
int probe_msg_setup_reply_parse(json_t *j, struct xport_qp_info *qp, struct probe_mr_info *mr,
				char *err);
json_t *probe_msg_state(const struct probe_remote_state *s);
int probe_msg_state_parse(json_t *j, struct probe_remote_state *s, char *err);
json_t *probe_msg_teardown_reply(void);

#endif
