// SPDX-License-Identifier: MIT
/*
 * `rdmakit probe --serve`: the remote end a probe tests.  One client at a
 * time; for each test it asks for, one RC QP and one memory region (and
 * the receives it wants posted), connected to the probe's QP, while this
 * loop drives the engine and collects completions.  A client can make it
 * allocate at most PROBE_MAX_MR_BYTES plus PROBE_MAX_RECVS receives of
 * PROBE_MAX_RECV_BYTES, and one QP (a send queue of PROBE_MAX_POSTS): the
 * same bounds whatever it sends.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "probe_msg.h"

struct serve_qp {
	struct xport_cq *cq;
	struct xport_qp *qp;
	struct xport_mr *mr, *rmr;
	uint8_t *buf, *rbuf;
	uint32_t len;
	uint8_t fill;
	struct probe_remote_state state;	/* completions since setup */
};

struct serve {
	const struct probe_serve_opts *o;
	struct oob c;
	struct xport_dev *dev;
	struct serve_qp q;
	bool have_qp;
};

static void qp_free(struct serve *s)
{
	struct serve_qp *q = &s->q;

	if (q->qp)
		xport_destroy_qp(s->dev, q->qp);
	if (q->cq)
		xport_destroy_cq(s->dev, q->cq);
	if (q->mr)
		xport_dereg_mr(s->dev, q->mr);
	if (q->rmr)
		xport_dereg_mr(s->dev, q->rmr);
	free(q->buf);
	free(q->rbuf);
	memset(q, 0, sizeof(*q));
	s->have_qp = false;
}

static void poll_cq(struct serve *s)
{
	struct xport_wc wc[8];
	int n;

	if (!s->have_qp)
		return;
	while ((n = xport_poll_cq(s->q.cq, wc, 8)) > 0)
		for (int i = 0; i < n; i++)
			if (s->q.state.n_wc < PROBE_MAX_WC)
				s->q.state.wc[s->q.state.n_wc++] = wc[i];
}

/* Whether a QP peer's GID is the address the control connection came from. */
static bool peer_is_client(const struct serve *s, const struct xport_qp_info *peer)
{
	char client[64], gid_addr[INET6_ADDRSTRLEN];
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };

	oob_socket_addr(s->c.fd, false, client, sizeof(client));
	if (!memcmp(peer->gid, v4mapped, 12))
		inet_ntop(AF_INET, &peer->gid[12], gid_addr, sizeof(gid_addr));
	else
		inet_ntop(AF_INET6, peer->gid, gid_addr, sizeof(gid_addr));
	return !strcmp(client, gid_addr);
}

static int setup(struct serve *s, const struct probe_setup *p, json_t **reply, char *err)
{
	struct xport_qp_attr a = {
		.max_send_wr = PROBE_MAX_POSTS, .max_recv_wr = PROBE_MAX_RECVS, .mtu = p->mtu,
		.max_rd_atomic = p->rd_atomic ? p->rd_atomic : 16, .timeout = p->timeout,
		.no_ack_timer = p->timeout == 0,
		.retry_cnt = p->retry_cnt,
		.rnr_retry = p->rnr_retry, .min_rnr_timer = p->min_rnr_timer, .type = XPORT_QPT_RC,
		.tos = p->tos, .fixed_psn = p->first_psn >= 0,
		.first_psn = p->first_psn >= 0 ? (uint32_t)p->first_psn : 0,
	};
	struct serve_qp *q = &s->q;
	struct xport_qp_info info;
	struct probe_mr_info mr;

	qp_free(s);
	/* The QP answers the probe only: never traffic to a third host. */
	if (!peer_is_client(s, &p->peer))
		return snprintf(err, XPORT_ERR_LEN, "the probe asked for a QP towards another "
				"address than its own: refused"), -1;
	s->have_qp = true;
	q->len = p->mr_bytes;
	q->fill = p->fill;
	q->buf = aligned_alloc(4096, (p->mr_bytes + 4095) & ~4095u);
	q->rbuf = aligned_alloc(4096, ((size_t)p->recvs * p->recv_bytes + 4096) & ~(size_t)4095);
	if (!q->buf || !q->rbuf)
		return snprintf(err, XPORT_ERR_LEN, "out of memory"), -1;
	memset(q->buf, p->fill, p->mr_bytes);
	if (!(q->mr = xport_reg_mr(s->dev, q->buf, p->mr_bytes,
				   XPORT_ACCESS_LOCAL_WRITE | p->access, err)) ||
	    !(q->rmr = xport_reg_mr(s->dev, q->rbuf, (size_t)p->recvs * p->recv_bytes + 1,
				    XPORT_ACCESS_LOCAL_WRITE, err)) ||
	    !(q->cq = xport_create_cq(s->dev, PROBE_MAX_POSTS + PROBE_MAX_RECVS, err)) ||
	    !(q->qp = xport_create_qp(s->dev, q->cq, q->cq, &a, err)))
		return -1;
	for (unsigned i = 0; i < p->recvs; i++) {
		struct xport_recv_wr wr = {
			.wr_id = i, .sge = { (uint64_t)(uintptr_t)q->rbuf + (uint64_t)i * p->recv_bytes,
					     p->recv_bytes, q->rmr->lkey },
		};

		if (xport_post_recv(q->qp, &wr, err) < 0)
			return -1;
	}
	if (xport_connect(q->qp, &p->peer, err) < 0)
		return -1;
	xport_qp_info(q->qp, &info);
	mr = (struct probe_mr_info){ (uint64_t)(uintptr_t)q->buf, q->mr->rkey, q->len };
	*reply = probe_msg_setup_reply(&info, &mr);
	return 0;
}

/* The requester's work a test asks for, from the region's start. */
static int post(struct serve *s, const struct probe_post *w, char *err)
{
	static const enum xport_wr_opcode ops[] = {
		[PROBE_POST_WRITE] = XPORT_WR_RDMA_WRITE, [PROBE_POST_SEND] = XPORT_WR_SEND,
		[PROBE_POST_READ] = XPORT_WR_RDMA_READ,
		[PROBE_POST_FETCH_ADD] = XPORT_WR_ATOMIC_FETCH_AND_ADD,
	};

	if (!s->have_qp)
		return snprintf(err, XPORT_ERR_LEN, "a post before any setup: use the same rdmakit "
				"version on both sides"), -1;
	if (w->len > s->q.len)
		return snprintf(err, XPORT_ERR_LEN, "a post of %u bytes from a region of %u",
				w->len, s->q.len), -1;
	for (unsigned i = 0; i < w->count; i++) {
		struct xport_send_wr wr = {
			.wr_id = 1000 + i, .opcode = ops[w->op], .signaled = true,
			.sge = { (uint64_t)(uintptr_t)s->q.buf, w->len, s->q.mr->lkey },
			.remote_addr = w->remote_va, .rkey = w->rkey, .compare_add = w->add,
		};

		if (xport_post_send(s->q.qp, &wr, err) < 0)
			return -1;
	}
	return 0;
}

static json_t *state(struct serve *s)
{
	struct probe_remote_state st = { 0 };

	if (s->have_qp) {
		poll_cq(s);
		st = s->q.state;
		memcpy(st.head, s->q.buf, s->q.len < sizeof(st.head) ? s->q.len : sizeof(st.head));
		for (uint32_t i = 0; i < s->q.len; i++)
			if (s->q.buf[i] != s->q.fill && !st.changed_bytes++)
				st.first_changed = i;
	}
	return probe_msg_state(&st);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits for the probe's next request while driving the engine (a verbs
 * device drives itself: then the wait is on the socket alone): 1 when one
 * is readable, 0 when the probe has been silent for the timeout. */
static int await_request(struct serve *s)
{
	uint64_t end = mono_ms() + (uint64_t)s->o->timeout_s * 1000u;
	struct pollfd pfd = { .fd = s->c.fd, .events = POLLIN };
	bool self_driven = xport_self_driven(s->dev);

	while (!(s->o->stop && *s->o->stop) && mono_ms() < end) {
		if (poll(&pfd, 1, self_driven ? 1 : 0) > 0)
			return 1;
		if (!self_driven)
			xport_wait(s->dev, 1000);
		poll_cq(s);
	}
	return 0;
}

/* One probe's session: 0 when it said goodbye, -1 with err otherwise. */
static int session(struct serve *s, char *err)
{
	for (;;) {
		struct probe_setup p;
		struct probe_post w;
		enum probe_req_kind req = PROBE_REQ_STATE;
		json_t *m, *reply = NULL;
		enum oob_type type;
		char buf[4096];
		size_t len;
		int rc;

		if (!await_request(s))
			return snprintf(err, XPORT_ERR_LEN, "the probe sent nothing for %d s "
					"(--timeout)", s->o->timeout_s), -1;
		if (oob_recv_msg(&s->c, &type, buf, sizeof(buf) - 1, &len, err) < 0)
			return -1;
		if (type == OOB_BYE)
			return 0;
		if (type != OOB_PARAMS)
			return snprintf(err, XPORT_ERR_LEN, "the probe sent a %s message where a "
					"request belongs: use the same rdmakit version on both "
					"sides", oob_type_name(type)), -1;
		m = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
		rc = m ? probe_msg_req_parse(m, &req, &p, &w, err) : -1;
		json_decref(m);
		if (!m)
			snprintf(err, XPORT_ERR_LEN, "the probe sent a request that is not JSON");
		if (rc == 0 && req == PROBE_REQ_SETUP)
			rc = setup(s, &p, &reply, err);
		else if (rc == 0 && req == PROBE_REQ_POST)
			reply = (rc = post(s, &w, err)) ? NULL : probe_msg_post_reply();
		else if (rc == 0 && req == PROBE_REQ_STATE)
			reply = state(s);
		else if (rc == 0) {
			qp_free(s);
			reply = probe_msg_teardown_reply();
		}
		if (rc < 0) {
			/* A setup or post the engine refused is this test's
			 * failure, not the session's. */
			oob_send_error(&s->c, err);
			if (!m || (req != PROBE_REQ_SETUP && req != PROBE_REQ_POST))
				return -1;
			if (req == PROBE_REQ_SETUP)
				qp_free(s);
			continue;
		}
		if (ctl_send(&s->c, OOB_RESULT, reply, err) < 0)
			return -1;
	}
}

static void device_name(struct xport_dev *d, const char *local, char *out, size_t cap)
{
	char name[64];
	int port;

	if (xport_host_port(d, name, sizeof(name), &port))
		snprintf(out, cap, "%s/%d", name, port);
	else
		snprintf(out, cap, "%s", local);
}

/* Opens the engine for this client: its address is the one the control
 * connection came to, unless --bind said otherwise. */
static int open_client(struct serve *s, char *err)
{
	struct xport_dev_attr a = s->o->dev;
	char local[64], device[80], buf[1024];
	size_t len;
	json_t *m;
	int rc;

	s->c.timeout_ms = s->o->timeout_s * 1000;
	s->c.stop = s->o->stop;
	if (oob_hello(&s->c, true, err) < 0 ||
	    oob_recv(&s->c, OOB_PARAMS, buf, sizeof(buf) - 1, &len, err) < 0)
		return -1;
	m = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	rc = m ? probe_msg_hello_parse(m, err)
	       : (snprintf(err, XPORT_ERR_LEN, "the client's opening is not JSON"), -1);
	json_decref(m);
	if (rc < 0) {
		oob_send_error(&s->c, err);
		return -1;
	}
	oob_socket_addr(s->c.fd, true, local, sizeof(local));
	if (!a.bind)
		a.bind = local;
	if (xport_open(&a, &s->dev, err) < 0) {
		oob_send_error(&s->c, err);
		/* A device, or an address the server was told, fails every
		 * probe alike: fatal.  The address a client came to is its own. */
		return a.ib_dev || s->o->dev.bind || !strcmp(a.engine, "verbs") ? -2 : -1;
	}
	device_name(s->dev, a.bind, device, sizeof(device));
	return ctl_send(&s->c, OOB_PARAMS, probe_msg_serve(xport_engine_name(s->dev), device,
								   s->o->timeout_s,
								   xport_has_atomics(s->dev)), err);
}

int probe_serve(const struct probe_serve_opts *o, char *err)
{
	struct oob_gate *gate;
	int listen_fd, rc = 0;

	if (oob_listen(NULL, o->port, &listen_fd, err) < 0)
		return -1;
	gate = oob_gate_new(listen_fd, 1, o->auth_key, err);
	if (!gate)
		return -1;
	do {
		struct serve s = { .o = o };
		char why[XPORT_ERR_LEN];

		/* A refused client (a wrong key, not rdmakit) does not use up a
		 * one-shot server: it waits for the next. */
		while ((rc = oob_gate_accept(gate, -1, o->stop, &s.c, err)) == OOB_GATE_REFUSED)
			if (o->on_client)
				o->on_client(o->ctx, "?", err);
		if (rc < 0)
			break;
		rc = open_client(&s, why);
		if (rc == -2) {
			/* The engine is this server's own: fatal. */
			snprintf(err, XPORT_ERR_LEN, "%s", why);
			oob_close(&s.c);
			break;
		}
		if (rc == 0)
			rc = session(&s, why);
		if (o->on_client)
			o->on_client(o->ctx, s.c.peer, rc < 0 ? why : "done");
		qp_free(&s);
		if (s.dev)
			xport_close(s.dev);
		oob_close(&s.c);
		rc = 0;
	} while (o->persistent && !(o->stop && *o->stop));
	oob_gate_free(gate);
	return rc;
}
