// SPDX-License-Identifier: MIT
/*
 * The incast coordinator (rank 0): gathers the participants, hands each
 * node its ranks and flows, relays every flow's two end descriptions,
 * releases every flow at once, then drives its own ends while it collects
 * each node's result.  A node that goes away mid-run has its flows marked
 * failed by name; the others' results still make the report.
 *
 * Control messages (JSON over the control channel, see incast_int.h):
 *   member -> PARAMS {"join": {"local": L, "rank": R, "test": {...}}}
 *   coord  -> PARAMS {"plan": {"first_rank", "count", "size", "test", "flows"}}
 *   member -> PARAMS {"endpoints": [...]}
 *   coord  -> PARAMS {"peers": [...]}       (the far end of each of its ends)
 *   member -> BARRIER 1 (ready), coord -> BARRIER 1 (start, to all at once)
 *   member -> RESULT {...}                   (when its own flows are done)
 *   coord  -> BARRIER 2 (everyone is done), then BYE both ways
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "incast_int.h"
#include "perf_int.h"

struct member {
	struct oob c;
	unsigned first, n;		/* its ranks */
	int rank_asked;			/* launcher rank, -1 none */
	json_t *endpoints;
	bool alive, done;
};

struct coord {
	struct incast_opts *o;
	struct incast_result *r;
	struct member *m;
	unsigned nm, joined;
	int listen_fd;
	struct oob_gate *gate;		/* opening and authentication, many at once */
	char refused[XPORT_ERR_LEN];	/* the last client the gate turned away */
	struct incast_node node;
	struct incast_flow_def *flows;
	unsigned nflows;
	json_t *seen_hosts;
	bool predates_conn;		/* a member whose rdmakit knows no -c: RC only */
};

/* Accepts one participant and its test; a refused one does not end the wait. */
static int admit(struct coord *k, int timeout_ms, char *err)
{
	struct member *m = &k->m[k->nm];
	struct incast_opts theirs = *k->o;
	json_t *msg, *join;
	json_int_t local = 0, rank = -1;
	bool predates_conn;
	char why[XPORT_ERR_LEN];
	int rc;

	memset(m, 0, sizeof(*m));
	m->c.fd = -1;
	rc = oob_gate_accept(k->gate, timeout_ms, k->o->p.stop, &m->c, why);
	if (rc == OOB_GATE_REFUSED) {
		memcpy(k->refused, why, sizeof(k->refused));
		if (k->o->p.on_refused)
			k->o->p.on_refused(k->o->p.refused_ctx, why);
		return 0;	/* it was told; keep waiting */
	}
	if (rc < 0) {
		memcpy(err, why, XPORT_ERR_LEN);
		return -1;
	}
	m->c.timeout_ms = k->o->p.timeout_s * 1000;
	m->c.stop = k->o->p.stop;
	if (oob_hello(&m->c, true, why) < 0 || !(msg = ctl_recv(&m->c, OOB_PARAMS, why))) {
		oob_close(&m->c);
		return 0;	/* not one of ours, or it left: keep waiting */
	}
	join = json_object_get(msg, "join");
	/* An rdmakit before -c sends no "connection": it runs RC only. */
	predates_conn = !json_object_get(json_object_get(join, "test"), "connection");
	if (json_unpack(join, "{s:I, s?I}", "local", &local, "rank", &rank) < 0 || local < 1 ||
	    incast_test_from_json(&theirs, json_object_get(join, "test"), why) < 0) {
		snprintf(why, sizeof(why), "malformed join request");
	} else if (predates_conn && k->o->p.conn != XPORT_QPT_RC) {
		snprintf(why, sizeof(why), "this run is -c %s and the rdmakit at %s predates -c: "
			 "run the same rdmakit version everywhere", perf_conn_name(k->o->p.conn),
			 m->c.peer);
	} else if (k->predates_conn && theirs.p.conn != XPORT_QPT_RC) {
		snprintf(why, sizeof(why), "-c %s: a member of this run has an rdmakit that predates "
			 "-c and runs RC only: run the same rdmakit version everywhere",
			 perf_conn_name(theirs.p.conn));
	} else if (k->joined + local > k->o->senders) {
		snprintf(why, sizeof(why), "the run is full: it waits for %u senders and %u have "
			 "joined; start the coordinator with a larger --senders", k->o->senders,
			 k->joined);
	} else if (incast_adopt(k->o, &theirs, m->c.peer, k->nm == 0, why) == 0) {
		k->predates_conn = k->predates_conn || predates_conn;
		json_decref(msg);
		m->n = (unsigned)local;
		m->rank_asked = (int)rank;
		m->alive = true;
		k->joined += m->n;
		k->nm++;
		return 0;
	}
	json_decref(msg);
	oob_send_error(&m->c, why);
	oob_close(&m->c);
	return 0;
}

/* Launcher ranks when every node brought one, else ranks by arrival. */
static int assign_ranks(struct coord *k, char *err)
{
	bool given = true, used[INCAST_MAX_RANKS] = { true };
	unsigned next = 1;

	for (unsigned i = 0; i < k->nm; i++)
		given = given && k->m[i].rank_asked > 0 && k->m[i].n == 1;
	for (unsigned i = 0; i < k->nm; i++) {
		struct member *m = &k->m[i];

		if (!given) {
			m->first = next;
			next += m->n;
			continue;
		}
		if ((unsigned)m->rank_asked > k->o->senders || used[m->rank_asked]) {
			snprintf(err, XPORT_ERR_LEN, "%s asked for rank %d, which is %s: give every "
				 "process a distinct rank below the size", m->c.peer, m->rank_asked,
				 used[m->rank_asked % INCAST_MAX_RANKS] ? "taken" : "out of range");
			return -1;
		}
		used[m->rank_asked] = true;
		m->first = (unsigned)m->rank_asked;
	}
	return 0;
}

static json_t *flows_json(const struct coord *k, unsigned first, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < k->nflows; i++)
		if (incast_flow_touches(&k->flows[i], first, n))
			json_array_append_new(a, json_pack("[i, i, i]", k->flows[i].id,
							   k->flows[i].src, k->flows[i].dst));
	return a;
}

static void name_ranks(struct coord *k, unsigned first, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n && first + i < INCAST_MAX_RANKS; i++)
		snprintf(k->r->names[first + i], INCAST_NAME_LEN, n == 1 ? "%.80s" : "%.80s#%u",
			 name, i + 1);
}

/* The far end of flow `flow` from an end on side `src`. */
static json_t *far_end(struct coord *k, json_t *mine, json_int_t flow, bool src)
{
	json_t *lists[INCAST_MAX_RANKS + 1];
	unsigned nl = 0;

	lists[nl++] = mine;
	for (unsigned i = 0; i < k->nm; i++)
		lists[nl++] = k->m[i].endpoints;
	for (unsigned l = 0; l < nl; l++) {
		size_t j;
		json_t *e;

		json_array_foreach(lists[l], j, e)
			if (json_integer_value(json_object_get(e, "flow")) == flow &&
			    json_is_true(json_object_get(e, "src")) != src)
				return e;
	}
	return NULL;
}

static json_t *peers_for(struct coord *k, json_t *mine, json_t *eps)
{
	json_t *peers = json_array();
	size_t j;
	json_t *e;

	json_array_foreach(eps, j, e) {
		json_t *f = far_end(k, mine, json_integer_value(json_object_get(e, "flow")),
				    json_is_true(json_object_get(e, "src")));

		if (f)
			json_array_append(peers, f);
	}
	return peers;
}

static int setup(struct coord *k, char *err)
{
	struct incast_opts *o = k->o;
	unsigned size = 1 + o->senders;
	char bind[64];
	json_t *mine;

	if (assign_ranks(k, err) < 0)
		return -1;
	k->flows = calloc((size_t)size * size, sizeof(*k->flows));
	k->r->flows = calloc((size_t)size * size, sizeof(*k->r->flows));
	if (!k->flows || !k->r->flows) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	k->nflows = incast_flows(o->pattern, size, k->flows, size * size);
	k->r->nflows = k->nflows;
	for (unsigned i = 0; i < k->nflows; i++) {
		k->r->flows[i].id = k->flows[i].id;
		k->r->flows[i].src = k->flows[i].src;
		k->r->flows[i].dst = k->flows[i].dst;
	}
	oob_socket_addr(k->m[0].c.fd, true, bind, sizeof(bind));
	if (node_open(&k->node, o, o->p.bind ? o->p.bind : bind, err) < 0)
		return -1;
	k->node.first_rank = 0;
	k->node.nranks = 1;
	k->node.size = size;
	if (node_build(&k->node, k->flows, k->nflows, err) < 0)
		return -1;
	node_name_ranks(&k->node, k->r->names);
	for (unsigned i = 0; i < k->nm; i++) {
		struct member *m = &k->m[i];
		json_t *plan = json_pack("{s:{s:i, s:i, s:i, s:o, s:o}}", "plan", "first_rank",
					 m->first, "count", m->n, "size", size, "test",
					 incast_test_to_json(o), "flows", flows_json(k, m->first, m->n));

		if (ctl_send(&m->c, OOB_PARAMS, plan, err) < 0)
			return -1;
	}
	for (unsigned i = 0; i < k->nm; i++) {
		struct member *m = &k->m[i];
		json_t *msg = ctl_recv(&m->c, OOB_PARAMS, err);
		const char *name;

		if (!msg)
			return -1;
		m->endpoints = json_incref(json_object_get(msg, "endpoints"));
		name = json_string_value(json_object_get(msg, "name"));
		name_ranks(k, m->first, m->n, name ? name : m->c.peer);
		json_decref(msg);
		if (!json_is_array(m->endpoints)) {
			snprintf(err, XPORT_ERR_LEN, "%s sent no flow ends", m->c.peer);
			return -1;
		}
	}
	mine = node_describe(&k->node);
	if (o->p.conn == XPORT_QPT_UD) {
		/* A UD message is one packet: -s over the smallest path MTU of
		 * the run becomes it, as perftest clamps it (said in the report). */
		uint32_t mtu = node_min_mtu(mine);

		for (unsigned i = 0; i < k->nm; i++) {
			uint32_t theirs = node_min_mtu(k->m[i].endpoints);

			if (theirs && (!mtu || theirs < mtu))
				mtu = theirs;
		}
		if (mtu && o->p.size > mtu) {
			k->r->ud_asked_size = o->p.size;
			o->p.size = mtu;
			node_set_size(&k->node, mtu);
		}
	}
	for (unsigned i = 0; i < k->nm; i++) {
		json_t *msg = json_pack("{s:o, s:I}", "peers", peers_for(k, mine, k->m[i].endpoints),
					"size", (json_int_t)o->p.size);

		if (ctl_send(&k->m[i].c, OOB_PARAMS, msg, err) < 0) {
			json_decref(mine);
			return -1;
		}
	}
	{
		json_t *peers = peers_for(k, mine, mine);
		int rc = node_connect(&k->node, peers, err);

		json_decref(peers);
		json_decref(mine);
		if (rc < 0)
			return -1;
	}
	k->r->mtu = k->node.mtu;
	return 0;
}

static int start_all(struct coord *k, char *err)
{
	uint8_t id[4] = { 0, 0, 0, 1 };
	size_t len;
	uint8_t got[8];

	for (unsigned i = 0; i < k->nm; i++)
		if (oob_recv(&k->m[i].c, OOB_BARRIER, got, sizeof(got), &len, err) < 0)
			return -1;
	for (unsigned i = 0; i < k->nm; i++)
		if (oob_send(&k->m[i].c, OOB_BARRIER, id, 4, err) < 0)
			return -1;
	node_start(&k->node);
	return 0;
}

static void member_gone(struct coord *k, struct member *m, const char *why)
{
	char text[256];

	m->alive = false;
	if (m->n == 1)
		snprintf(text, sizeof(text), "rank %u (%s) went away mid-run: %.150s", m->first,
			 k->r->names[m->first], why);
	else
		snprintf(text, sizeof(text), "ranks %u-%u (%s) went away mid-run: %.150s", m->first,
			 m->first + m->n - 1, m->c.peer, why);
	incast_fail_ranks(k->r, m->first, m->n, text);
	k->r->failed_participants += m->n;
	oob_close(&m->c);
}

/* Notes members whose flows are done (BARRIER 3), errors and hang-ups. */
static void collect(struct coord *k)
{
	for (unsigned i = 0; i < k->nm; i++) {
		struct member *m = &k->m[i];
		struct pollfd p = { .fd = m->c.fd, .events = POLLIN };
		char err[XPORT_ERR_LEN];
		uint8_t id[8];
		size_t len;

		if (!m->alive || m->done || poll(&p, 1, 0) <= 0)
			continue;
		if (oob_recv(&m->c, OOB_BARRIER, id, sizeof(id), &len, err) < 0)
			member_gone(k, m, err);
		else
			m->done = true;
	}
}

static bool all_done(const struct coord *k)
{
	for (unsigned i = 0; i < k->nm; i++)
		if (k->m[i].alive && !k->m[i].done)
			return false;
	return true;
}

static void run(struct coord *k)
{
	const struct incast_opts *o = k->o;
	/* With -D the nodes are done right after it; --bytes runs are bounded
	 * by their flows' retry limits, a hang-up, or Ctrl-C. */
	uint64_t deadline = o->flow_bytes ? UINT64_MAX :
			    k->node.t0 + (uint64_t)((o->p.duration + o->p.timeout_s) * 1e9);
	uint64_t next_look = 0;

	for (;;) {
		uint64_t now;

		node_step(&k->node);
		now = perf_now_ns();
		if (now >= next_look) {	/* the control channel every millisecond */
			collect(k);
			next_look = now + 1000000;
		}
		if (node_sending_done(&k->node) && all_done(k))
			break;
		if (o->p.stop && *o->p.stop) {
			k->r->interrupted = true;
			break;
		}
		if (now >= deadline) {
			for (unsigned i = 0; i < k->nm; i++)
				if (k->m[i].alive && !k->m[i].done)
					member_gone(k, &k->m[i], "its flows did not end within "
						    "--timeout of the run's end");
			break;
		}
	}
}

/* Everyone is done: BARRIER 2 asks every node for its measurements. */
static void collect_results(struct coord *k)
{
	uint8_t id[4] = { 0, 0, 0, 2 };
	char err[XPORT_ERR_LEN];
	json_t *mine;

	for (unsigned i = 0; i < k->nm; i++)
		if (k->m[i].alive && oob_send(&k->m[i].c, OOB_BARRIER, id, 4, err) < 0)
			member_gone(k, &k->m[i], err);
	for (unsigned i = 0; i < k->nm; i++) {
		struct member *m = &k->m[i];
		json_t *res;

		if (!m->alive)
			continue;
		res = ctl_recv(&m->c, OOB_RESULT, err);
		if (!res || incast_fold(k->r, res, k->seen_hosts, err) < 0)
			member_gone(k, m, err);
		json_decref(res);
		if (m->alive)
			oob_bye(&m->c, err);
	}
	mine = node_result(&k->node);
	incast_fold(k->r, mine, k->seen_hosts, err);
	json_decref(mine);
}

static int gather(struct coord *k, char *err)
{
	struct incast_opts *o = k->o;
	uint64_t deadline = perf_now_ns() + (uint64_t)(o->wait_timeout_s * 1e9);

	while (k->joined < o->senders) {
		uint64_t now = perf_now_ns();
		int ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000) + 1;

		if (now >= deadline || admit(k, ms, err) < 0) {
			if (o->p.stop && *o->p.stop) {
				snprintf(err, XPORT_ERR_LEN, "interrupted while waiting for senders");
				return -1;
			}
			snprintf(err, XPORT_ERR_LEN, "only %u of %u senders joined within %g s "
				 "(--wait-timeout): start the missing ones with `rdmakit incast THIS_HOST "
				 "-p %u`, or lower --senders%s%.300s", k->joined, o->senders,
				 o->wait_timeout_s, o->p.port, k->refused[0] ? "; refused: " : "",
				 k->refused);
			return -1;
		}
	}
	return 0;
}

int incast_coordinate(struct incast_opts *o, struct incast_result *r, char *err)
{
	struct coord k = { .o = o, .r = r };
	int rc = -1;

	memset(r, 0, sizeof(*r));
	hist_init(&r->latency);
	k.m = calloc(o->senders ? o->senders : 1, sizeof(*k.m));
	k.seen_hosts = json_object();
	if (!k.m || !k.seen_hosts) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		goto out;
	}
	k.listen_fd = o->listen_fd;
	if ((o->p.bind && perf_check_bind(o->p.bind, err) < 0) ||
	    (k.listen_fd < 0 && oob_listen(o->listen, o->p.port, &k.listen_fd, err) < 0) ||
	    !(k.gate = oob_gate_new(k.listen_fd, o->senders, o->p.auth_key, err)) ||
	    gather(&k, err) < 0 ||
	    setup(&k, err) < 0 || start_all(&k, err) < 0) {
		for (unsigned i = 0; i < k.nm; i++)
			oob_send_error(&k.m[i].c, err);
		goto out;
	}
	run(&k);
	node_settle(&k.node);
	r->test = o->p;		/* before folding: interval samples are read by it */
	collect_results(&k);
	r->pattern = o->pattern;
	r->participants = 1 + o->senders;
	r->flow_bytes = o->flow_bytes;
	snprintf(r->engine, sizeof(r->engine), "%s", xport_engine_name(k.node.dev));
	snprintf(r->local_addr, sizeof(r->local_addr), "%s", k.node.local_addr);
	incast_finish_result(r);
	rc = 0;
out:
	for (unsigned i = 0; k.m && i < k.nm; i++) {
		oob_close(&k.m[i].c);
		json_decref(k.m[i].endpoints);
	}
	oob_gate_free(k.gate);
	if (k.listen_fd >= 0)
		close(k.listen_fd);
	node_close(&k.node);
	json_decref(k.seen_hosts);
	free(k.flows);
	free(k.m);
	return rc;
}
