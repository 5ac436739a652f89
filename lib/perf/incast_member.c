// SPDX-License-Identifier: MIT
/*
 * An incast member: joins the coordinator's run with one or more
 * participants (--local N: each its own QPs, so its own UDP source port),
 * builds the ends of the flows it is given, starts on the coordinator's
 * barrier, says when its own flows are done, keeps serving the flows that
 * end here until everyone is done, then hands over its measurements.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "incast_int.h"
#include "perf_int.h"

/* The plan: this node's ranks, the adopted test and its flows. */
static int take_plan(struct incast_node *n, struct incast_opts *o, json_t *msg,
		     struct incast_flow_def **flows, unsigned *nflows, char *err)
{
	json_t *plan = json_object_get(msg, "plan"), *fl = json_object_get(plan, "flows");
	int first, count, size;
	size_t k;
	json_t *v;

	if (json_unpack(plan, "{s:i, s:i, s:i}", "first_rank", &first, "count", &count, "size",
			&size) < 0 || !json_is_array(fl) || first < 1 || count < 1 ||
	    size > INCAST_MAX_RANKS || first + count > size ||
	    incast_test_from_json(o, json_object_get(plan, "test"), err) < 0) {
		snprintf(err, XPORT_ERR_LEN, "the coordinator sent a plan this rdmakit cannot use; "
			 "run the same rdmakit version everywhere");
		return -1;
	}
	/* An rdmakit before -c runs RC whatever this side asked for. */
	if (!json_object_get(json_object_get(plan, "test"), "connection") &&
	    (o->p.explicit_set & PERF_SET_CONN) && o->p.conn != XPORT_QPT_RC) {
		snprintf(err, XPORT_ERR_LEN, "-c %s: the coordinator's rdmakit predates -c and runs "
			 "RC only: run the same rdmakit version everywhere", perf_conn_name(o->p.conn));
		return -1;
	}
	*flows = calloc(json_array_size(fl) + 1, sizeof(**flows));
	if (!*flows) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	json_array_foreach(fl, k, v) {
		struct incast_flow_def *f = &(*flows)[(*nflows)++];

		f->id = (unsigned)json_integer_value(json_array_get(v, 0));
		f->src = (unsigned)json_integer_value(json_array_get(v, 1));
		f->dst = (unsigned)json_integer_value(json_array_get(v, 2));
	}
	n->first_rank = (unsigned)first;
	n->nranks = (unsigned)count;
	n->size = (unsigned)size;
	return 0;
}

static int set_up(struct incast_node *n, struct incast_opts *o, struct oob *c,
		  struct incast_result *r, char *err)
{
	json_t *msg = json_pack("{s:{s:i, s:i, s:o}}", "join", "local", o->local, "rank", o->rank,
				"test", incast_test_to_json(o));
	struct incast_flow_def *flows = NULL;
	unsigned nflows = 0;
	char bind[64];
	int rc = -1;

	if (ctl_send(c, OOB_PARAMS, msg, err) < 0)
		return -1;
	/* The coordinator may wait a while for the other senders. */
	c->timeout_ms = (int)(o->wait_timeout_s * 1000) + o->p.timeout_s * 1000;
	msg = ctl_recv(c, OOB_PARAMS, err);
	c->timeout_ms = o->p.timeout_s * 1000;
	if (!msg)
		return -1;
	oob_socket_addr(c->fd, true, bind, sizeof(bind));
	if (take_plan(n, o, msg, &flows, &nflows, err) < 0 ||
	    node_open(n, o, o->p.bind ? o->p.bind : bind, err) < 0 ||
	    node_build(n, flows, nflows, err) < 0)
		goto out;
	r->flows = calloc(nflows + 1, sizeof(*r->flows));
	if (!r->flows) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < n->size && i < INCAST_MAX_RANKS; i++)
		snprintf(r->names[i], INCAST_NAME_LEN, "rank %u", i);
	node_name_ranks(n, r->names);
	for (unsigned i = 0; i < nflows; i++)
		if (flows[i].src >= n->first_rank && flows[i].src < n->first_rank + n->nranks)
			r->flows[r->nflows++] = (struct incast_flow){ .id = flows[i].id,
				.src = flows[i].src, .dst = flows[i].dst };
	json_decref(msg);
	msg = json_pack("{s:s, s:o}", "name", n->name, "endpoints", node_describe(n));
	if (ctl_send(c, OOB_PARAMS, msg, err) < 0)
		goto out_nomsg;
	msg = ctl_recv(c, OOB_PARAMS, err);
	if (!msg)
		goto out;
	/* UD: the run's message size, the smallest path MTU in it at most. */
	{
		uint64_t size = (uint64_t)json_integer_value(json_object_get(msg, "size"));

		if (size && size < n->o.p.size)
			r->ud_asked_size = n->o.p.size;
		node_set_size(n, size);
	}
	if (node_connect(n, json_object_get(msg, "peers"), err) < 0)
		goto out;
	rc = 0;
out:
	json_decref(msg);
out_nomsg:
	free(flows);
	return rc;
}

/* Runs until the coordinator says everyone is done (BARRIER 2). */
static int run(struct incast_node *n, struct oob *c, struct incast_result *r, char *err)
{
	uint8_t id[8], done_id[4] = { 0, 0, 0, 3 };
	bool told = false;
	uint64_t next_look = 0;
	size_t len;

	for (;;) {
		uint64_t now;

		node_step(n);
		if (!told && node_sending_done(n)) {
			if (oob_send(c, OOB_BARRIER, done_id, 4, err) < 0)
				return -1;
			told = true;
		}
		now = perf_now_ns();
		if (now < next_look)
			continue;
		next_look = now + 1000000;
		if (n->o.p.stop && *n->o.p.stop) {
			r->interrupted = true;
			snprintf(err, XPORT_ERR_LEN, "interrupted");
			oob_send_error(c, "a sender was interrupted (Ctrl-C)");
			return -1;
		}
		{
			struct pollfd p = { .fd = c->fd, .events = POLLIN };

			if (poll(&p, 1, 0) <= 0)
				continue;
		}
		if (oob_recv(c, OOB_BARRIER, id, sizeof(id), &len, err) < 0)
			return -1;
		return 0;
	}
}

int incast_join(struct incast_opts *o, struct incast_result *r, char *err)
{
	struct incast_node n = { 0 };
	struct oob c = { .fd = -1 };
	json_t *res;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	hist_init(&r->latency);
	if (oob_connect(o->p.host, o->p.port, o->p.timeout_s * 1000, &c, err) < 0)
		return -1;
	c.stop = o->p.stop;
	c.key = o->p.auth_key;
	if (oob_hello(&c, false, err) < 0 || set_up(&n, o, &c, r, err) < 0 ||
	    oob_barrier(&c, 1, err) < 0)
		goto out;
	node_start(&n);
	if (run(&n, &c, r, err) < 0)
		goto out;
	node_settle(&n);
	res = node_result(&n);
	r->test = n.o.p;	/* before folding: interval samples are read by it */
	incast_fold(r, res, NULL, err);
	/* The receivers judge --verify; their verdicts are in the coordinator's
	 * report and exit status, not known here. */
	for (unsigned i = 0; i < r->nflows; i++)
		r->flows[i].verified = true;
	if (ctl_send(&c, OOB_RESULT, res, err) < 0)
		goto out;
	oob_bye(&c, err);
	r->pattern = n.o.pattern;
	r->flow_bytes = n.o.flow_bytes;
	r->participants = n.size;
	r->mtu = n.mtu;
	snprintf(r->engine, sizeof(r->engine), "%s", xport_engine_name(n.dev));
	snprintf(r->local_addr, sizeof(r->local_addr), "%s", n.local_addr);
	incast_finish_result(r);
	*o = n.o;
	rc = 0;
out:
	oob_close(&c);
	node_close(&n);
	return rc;
}
