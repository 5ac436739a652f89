// SPDX-License-Identifier: MIT
/*
 * probe's control messages (see probe_msg.h): each parser checks types
 * (json_unpack, no unknown keys) and ranges before a value is used.
 */
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "probe_msg.h"
#include "wire.h"

static int malformed(char *err, const char *what, const char *detail)
{
	snprintf(err, XPORT_ERR_LEN, "the peer sent a malformed probe %s message (%s): use the "
		 "same rdmakit version on both sides", what, detail);
	return -1;
}

static bool in(json_int_t v, json_int_t lo, json_int_t hi)
{
	return v >= lo && v <= hi;
}

json_t *probe_msg_hello(void)
{
	return json_pack("{s:{s:i}}", "probe", "version", PROBE_PROTO_VERSION);
}

int probe_msg_hello_parse(json_t *j, char *err)
{
	json_int_t v;

	if (json_object_get(j, "test"))
		return snprintf(err, XPORT_ERR_LEN, "this is rdmakit probe --serve, and the client "
				"runs a bw, lat or incast test: point that client at an rdmakit "
				"bw or lat server"), -1;
	if (json_unpack(j, "{s:{s:I!}!}", "probe", "version", &v) < 0)
		return malformed(err, "opening", "no \"probe\" object");
	if (v != PROBE_PROTO_VERSION)
		return snprintf(err, XPORT_ERR_LEN, "the probe speaks probe protocol %lld and this "
				"server %d: use the same rdmakit version on both sides",
				(long long)v, PROBE_PROTO_VERSION), -1;
	return 0;
}

json_t *probe_msg_serve(const char *engine, const char *device, int timeout_s, bool atomics)
{
	return json_pack("{s:{s:s, s:s, s:i, s:b}}", "serve", "engine", engine, "device", device,
			 "timeout_s", timeout_s, "atomics", atomics);
}

int probe_msg_serve_parse(json_t *j, struct probe_peer_info *p, char *err)
{
	const char *engine, *device;
	int timeout_s = 0, atomics = 1;

	if (json_unpack(j, "{s:{s:s, s:s, s?:i, s?:b!}!}", "serve", "engine", &engine, "device",
			&device, "timeout_s", &timeout_s, "atomics", &atomics) < 0)
		return malformed(err, "greeting", "no \"serve\" object");
	if (timeout_s < 0 || timeout_s > 86400)
		return malformed(err, "greeting", "a timeout_s outside 0..86400");
	snprintf(p->engine, sizeof(p->engine), "%s", engine);
	snprintf(p->device, sizeof(p->device), "%s", device);
	p->timeout_s = timeout_s;
	p->atomics = atomics;
	return 0;
}

json_t *probe_msg_setup(const struct probe_setup *s)
{
	return json_pack("{s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, "
			 "s:o}}",
			 "setup", "mr_bytes", (int)s->mr_bytes, "fill", s->fill, "access", s->access,
			 "recvs", (int)s->recvs, "recv_bytes", (int)s->recv_bytes, "mtu",
			 (int)s->mtu, "timeout", s->timeout, "retry_cnt", s->retry_cnt,
			 "rnr_retry", s->rnr_retry, "min_rnr_timer", s->min_rnr_timer, "tos", s->tos,
			 "rd_atomic", s->rd_atomic, "first_psn", (int)s->first_psn,
			 "peer", ctl_qp_json(&s->peer));
}

static const char *const post_ops[] = { "write", "send", "read", "fetch_add", NULL };

json_t *probe_msg_post(const struct probe_post *w)
{
	return json_pack("{s:{s:s, s:I, s:i, s:I, s:I, s:I}}", "post", "op", post_ops[w->op], "len",
			 (json_int_t)w->len, "count", (int)w->count, "remote_va",
			 (json_int_t)w->remote_va, "rkey", (json_int_t)w->rkey, "add",
			 (json_int_t)w->add);
}

json_t *probe_msg_post_reply(void)
{
	return json_pack("{s:{}}", "post");
}

static int post_parse(json_t *j, struct probe_post *w, char *err)
{
	json_int_t len, count, va, rkey, add;
	const char *op;
	int i;

	if (json_unpack(j, "{s:s, s:I, s:I, s:I, s:I, s:I!}", "op", &op, "len", &len, "count",
			&count, "remote_va", &va, "rkey", &rkey, "add", &add) < 0)
		return malformed(err, "post", "fields");
	for (i = 0; post_ops[i] && strcmp(post_ops[i], op); i++)
		;
	/* The data comes from the remote's own region: len is checked
	 * against it when the work is posted. */
	if (!post_ops[i] || !in(len, 0, PROBE_MAX_MR_BYTES) || !in(count, 1, PROBE_MAX_POSTS) ||
	    va < 0 || !in(rkey, 0, UINT32_MAX) || add < 0 ||
	    (i == PROBE_POST_FETCH_ADD && len != 8))
		return malformed(err, "post", "a value out of range");
	*w = (struct probe_post){ (enum probe_post_op)i, (uint32_t)len, (unsigned)count,
				  (uint64_t)va, (uint32_t)rkey, (uint64_t)add };
	return 0;
}

json_t *probe_msg_state_req(void)
{
	return json_pack("{s:{}}", "state");
}

json_t *probe_msg_teardown(void)
{
	return json_pack("{s:{}}", "teardown");
}

static int setup_parse(json_t *j, struct probe_setup *s, char *err)
{
	json_int_t mr, fill, access, recvs, rbytes, mtu, to, retry, rnr, rnr_timer, tos, rd = 0;
	json_int_t first_psn = -1;
	const int remote = XPORT_ACCESS_REMOTE_WRITE | XPORT_ACCESS_REMOTE_READ |
			   XPORT_ACCESS_REMOTE_ATOMIC;
	json_t *peer;

	if (json_unpack(j, "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s?I, s?I, "
			"s:o!}",
			"mr_bytes", &mr, "fill", &fill, "access", &access, "recvs", &recvs,
			"recv_bytes", &rbytes, "mtu", &mtu, "timeout", &to, "retry_cnt", &retry,
			"rnr_retry", &rnr, "min_rnr_timer", &rnr_timer, "tos", &tos, "rd_atomic", &rd,
			"first_psn", &first_psn, "peer", &peer) < 0)
		return malformed(err, "setup", "fields");
	if (!in(mr, 8, PROBE_MAX_MR_BYTES) || !in(fill, 0, 255) || (access & ~remote) ||
	    !in(recvs, 0, PROBE_MAX_RECVS) || !in(rbytes, 0, PROBE_MAX_RECV_BYTES) ||
	    !in(to, 0, 31) || !in(retry, 0, 7) || !in(rnr, 0, 7) || !in(rnr_timer, 0, 31) ||
	    !in(tos, 0, 255) || (tos & 3) || !in(rd, 0, 16) || !in(first_psn, -1, 0xFFFFFF) ||
	    !(mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096))
		return malformed(err, "setup", "a value out of range");
	if (ctl_qp_parse(peer, &s->peer) < 0)
		return malformed(err, "setup", "the probe's QP");
	s->mr_bytes = (uint32_t)mr;
	s->fill = (uint8_t)fill;
	s->access = (int)access;
	s->recvs = (unsigned)recvs;
	s->recv_bytes = (uint32_t)rbytes;
	s->mtu = (uint32_t)mtu;
	s->timeout = (uint8_t)to;
	s->retry_cnt = (uint8_t)retry;
	s->rnr_retry = (uint8_t)rnr;
	s->min_rnr_timer = (uint8_t)rnr_timer;
	s->tos = (uint8_t)tos;
	s->rd_atomic = (uint8_t)rd;
	s->first_psn = (int32_t)first_psn;
	return 0;
}

int probe_msg_req_parse(json_t *j, enum probe_req_kind *req, struct probe_setup *s,
			struct probe_post *w, char *err)
{
	const char *key;
	json_t *v;

	if (json_object_size(j) != 1)
		return malformed(err, "request", "not one key");
	json_object_foreach(j, key, v) {
		if (!json_is_object(v))
			return malformed(err, "request", "not an object");
		if (!strcmp(key, "setup")) {
			*req = PROBE_REQ_SETUP;
			return setup_parse(v, s, err);
		}
		if (!strcmp(key, "post")) {
			*req = PROBE_REQ_POST;
			return post_parse(v, w, err);
		}
		if (json_object_size(v))
			return malformed(err, "request", "unexpected fields");
		if (!strcmp(key, "state")) {
			*req = PROBE_REQ_STATE;
			return 0;
		}
		if (!strcmp(key, "teardown")) {
			*req = PROBE_REQ_TEARDOWN;
			return 0;
		}
	}
	return malformed(err, "request", "an unknown request");
}

json_t *probe_msg_setup_reply(const struct xport_qp_info *qp, const struct probe_mr_info *mr)
{
	return json_pack("{s:o, s:{s:I, s:I, s:I}}", "qp", ctl_qp_json(qp), "mr", "va",
			 (json_int_t)mr->va, "rkey", (json_int_t)mr->rkey, "len",
			 (json_int_t)mr->len);
}

int probe_msg_setup_reply_parse(json_t *j, struct xport_qp_info *qp, struct probe_mr_info *mr,
				char *err)
{
	json_int_t va, rkey, len;
	json_t *q;

	if (json_unpack(j, "{s:o, s:{s:I, s:I, s:I!}!}", "qp", &q, "mr", "va", &va, "rkey", &rkey,
			"len", &len) < 0 || ctl_qp_parse(q, qp) < 0)
		return malformed(err, "setup reply", "fields");
	if (!in(rkey, 0, UINT32_MAX) || !in(len, 8, PROBE_MAX_MR_BYTES))
		return malformed(err, "setup reply", "a value out of range");
	mr->va = (uint64_t)va;
	mr->rkey = (uint32_t)rkey;
	mr->len = (uint32_t)len;
	return 0;
}

/* Exactly n integers 0..255 from a JSON array: 0, or -1. */
static int byte_array(json_t *a, uint8_t *out, size_t n)
{
	json_t *v;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) != n)
		return -1;
	json_array_foreach(a, i, v) {
		if (!json_is_integer(v) || !in(json_integer_value(v), 0, 255))
			return -1;
		out[i] = (uint8_t)json_integer_value(v);
	}
	return 0;
}

json_t *probe_msg_state(const struct probe_remote_state *s)
{
	json_t *wcs = json_array();

	for (unsigned i = 0; i < s->n_wc; i++)
		json_array_append_new(wcs, json_pack("{s:I, s:i, s:i, s:I}", "wr_id",
						     (json_int_t)s->wc[i].wr_id, "status",
						     (int)s->wc[i].status, "opcode",
						     (int)s->wc[i].opcode, "byte_len",
						     (json_int_t)s->wc[i].byte_len));
	json_t *head = json_array();

	for (size_t i = 0; i < sizeof(s->head); i++)
		json_array_append_new(head, json_integer(s->head[i]));
	return json_pack("{s:{s:I, s:I, s:o, s:o}}", "state", "changed_bytes",
			 (json_int_t)s->changed_bytes, "first_changed",
			 (json_int_t)s->first_changed, "head", head, "wc", wcs);
}

int probe_msg_state_parse(json_t *j, struct probe_remote_state *s, char *err)
{
	json_int_t changed, first;
	json_t *wcs, *w, *head;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (json_unpack(j, "{s:{s:I, s:I, s:o, s:o!}!}", "state", "changed_bytes", &changed,
			"first_changed", &first, "head", &head, "wc", &wcs) < 0 ||
	    !json_is_array(wcs) || !in(changed, 0, PROBE_MAX_MR_BYTES) ||
	    !in(first, 0, PROBE_MAX_MR_BYTES) || json_array_size(wcs) > PROBE_MAX_WC ||
	    byte_array(head, s->head, sizeof(s->head)) < 0)
		return malformed(err, "state", "fields");
	s->changed_bytes = (uint64_t)changed;
	s->first_changed = (uint64_t)first;
	json_array_foreach(wcs, i, w) {
		json_int_t id, status, op, len;

		if (json_unpack(w, "{s:I, s:I, s:I, s:I!}", "wr_id", &id, "status", &status,
				"opcode", &op, "byte_len", &len) < 0 || !in(status, 0, 31) ||
		    !in(op, XPORT_WC_SEND, XPORT_WC_RECV_RDMA_WITH_IMM) || !in(len, 0, UINT32_MAX))
			return malformed(err, "state", "a completion");
		s->wc[i] = (struct xport_wc){ .wr_id = (uint64_t)id,
					      .status = (enum xport_wc_status)status,
					      .opcode = (enum xport_wc_opcode)op,
					      .byte_len = (uint32_t)len };
		if (status != XPORT_WC_SUCCESS)
			s->qp_error = true;
	}
	s->n_wc = (unsigned)json_array_size(wcs);
	return 0;
}

json_t *probe_msg_teardown_reply(void)
{
	return json_pack("{s:{}}", "teardown");
}
