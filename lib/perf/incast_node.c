// SPDX-License-Identifier: MIT
/*
 * An incast node: the ends of the flows its participants take part in,
 * on one device and one completion queue, and the data path that drives
 * them.  Senders keep tx_depth messages in flight per QP and time each
 * from post to completion; receivers keep RECVs posted (SEND tests) and
 * check what arrives with --verify.  When idle the node sleeps on the
 * engine (xport_wait) instead of spinning, so many nodes share few cores.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "incast_int.h"
#include "perf_int.h"

#define WR_EP_SHIFT 48
#define WR_QP_SHIFT 40
#define WR_SEQ_MASK ((1ULL << WR_QP_SHIFT) - 1)

static uint64_t wr_id(unsigned ep, unsigned q, uint64_t seq)
{
	return (uint64_t)ep << WR_EP_SHIFT | (uint64_t)q << WR_QP_SHIFT | (seq & WR_SEQ_MASK);
}

static void node_host_id(struct incast_node *n)
{
	char host[64] = "";
	struct stat st;

	gethostname(host, sizeof(host) - 1);
	/* Namespaces on one machine share the hostname: add the netns inode. */
	if (stat("/proc/self/ns/net", &st) == 0)
		snprintf(n->host_id, sizeof(n->host_id), "%s/netns:%lu", host,
			 (unsigned long)st.st_ino);
	else
		snprintf(n->host_id, sizeof(n->host_id), "%s", host);
}

int node_open(struct incast_node *n, const struct incast_opts *o, const char *bind, char *err)
{
	struct xport_dev_attr a = { .engine = o->p.engine, .bind = bind, .udp_port = o->p.udp_port,
				    .ib_dev = o->p.ib_dev, .ib_port = o->p.ib_port,
				    .gid_index = o->p.gid_index, .dcqcn = o->p.dcqcn };

	n->o = *o;
	snprintf(n->local_addr, sizeof(n->local_addr), "%s", bind);
	node_host_id(n);
	return xport_open(&a, &n->dev, err);
}

static uint64_t msg_len(const struct incast_node *n, const struct incast_ep *e, uint64_t seq)
{
	uint64_t size = n->o.p.size;

	if (e->msgs_target && seq + 1 == e->msgs_target && n->o.flow_bytes % size)
		return n->o.flow_bytes % size;
	return size;
}

static uint8_t *slot_of(struct incast_node *n, const struct incast_ep *e, unsigned q)
{
	return n->buf + e->offset + q * n->slot_len;
}

static int post_recv(struct incast_node *n, unsigned i, unsigned q, char *err)
{
	struct incast_ep *e = &n->eps[i];
	struct xport_recv_wr wr = {
		.wr_id = wr_id(i, q, 0),
		.sge = { (uint64_t)(uintptr_t)slot_of(n, e, q), (uint32_t)n->slot_len, n->mr->lkey },
	};

	return xport_post_recv(e->qp[q], &wr, err);
}

int node_build(struct incast_node *n, const struct incast_flow_def *flows, unsigned nflows,
	       char *err)
{
	const struct perf_opts *p = &n->o.p;
	struct xport_qp_attr a = {
		.max_send_wr = p->tx_depth + 8, .max_recv_wr = p->rx_depth + 8, .mtu = p->mtu,
		.max_rd_atomic = 16, .timeout = p->qp_timeout, .retry_cnt = p->retry_cnt,
		.rnr_retry = p->rnr_retry, .min_rnr_timer = 1, .tos = p->tos, .type = p->conn,
	};
	unsigned qps = p->qps;

	n->eps = calloc(nflows ? nflows * 2 : 1, sizeof(*n->eps));
	n->latency = malloc(sizeof(*n->latency));
	if (!n->eps || !n->latency) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	hist_init(n->latency);
	n->slot_len = (size_t)((perf_recv_buf_bytes(p->conn, p->size) + 63) & ~63ULL);
	for (unsigned i = 0; i < nflows; i++) {
		for (int side = 0; side < 2; side++) {
			unsigned rank = side ? flows[i].dst : flows[i].src;
			struct incast_ep *e;

			if (rank < n->first_rank || rank >= n->first_rank + n->nranks)
				continue;
			e = &n->eps[n->neps++];
			e->f = flows[i];
			e->is_src = side == 0;
			e->offset = n->buf_len;
			n->buf_len += qps * n->slot_len;
		}
	}
	if (!n->neps) {
		snprintf(err, XPORT_ERR_LEN, "this node takes part in no flow");
		return -1;
	}
	/* Senders set the size and QPs a coordinator adopts: its memory is
	 * bounded here, before anything is allocated. */
	{
		uint64_t limit = p->max_memory ? p->max_memory : perf_default_max_memory();

		if (n->buf_len > limit) {
			snprintf(err, XPORT_ERR_LEN, "this run needs %zu MiB of buffers on %s (%u flow "
				 "ends x %u QPs x %zu bytes), more than its --max-memory of %" PRIu64
				 " MiB: fewer senders or QPs, smaller messages, or a larger "
				 "--max-memory there", (n->buf_len + (1 << 20) - 1) >> 20,
				 n->local_addr[0] ? n->local_addr : "this host", n->neps, qps,
				 n->slot_len, limit >> 20);
			return -1;
		}
	}
	if (posix_memalign((void **)&n->buf, 4096, n->buf_len)) {
		snprintf(err, XPORT_ERR_LEN, "cannot allocate %zu bytes of buffers", n->buf_len);
		return -1;
	}
	memset(n->buf, 0, n->buf_len);
	n->mr = xport_reg_mr(n->dev, n->buf, n->buf_len, XPORT_ACCESS_LOCAL_WRITE |
			     XPORT_ACCESS_REMOTE_WRITE, err);
	if (!n->mr)
		return -1;
	n->cq = xport_create_cq(n->dev, (int)(n->neps * qps * (p->tx_depth + p->rx_depth + 16)),
				err);
	if (!n->cq)
		return -1;
	for (unsigned i = 0; i < n->neps; i++) {
		struct incast_ep *e = &n->eps[i];

		for (unsigned q = 0; q < qps; q++) {
			e->qp[q] = xport_create_qp(n->dev, n->cq, n->cq, &a, err);
			if (!e->qp[q])
				return -1;
			if (e->is_src) {
				e->post_ns[q] = calloc(p->tx_depth, sizeof(uint64_t));
				if (!e->post_ns[q]) {
					snprintf(err, XPORT_ERR_LEN, "out of memory");
					return -1;
				}
				/* The pattern --verify checks, distinct per flow and QP. */
				for (uint64_t b = 0; b < p->size; b++)
					slot_of(n, e, q)[b] = perf_pattern(b, q, e->f.id);
			}
		}
		if (e->is_src && n->o.flow_bytes)
			e->msgs_target = (n->o.flow_bytes + p->size - 1) / p->size;
		if (e->is_src && p->interval > 0 &&
		    !(e->ival_bytes = calloc(INCAST_MAX_INTERVALS, sizeof(uint64_t)))) {
			snprintf(err, XPORT_ERR_LEN, "out of memory");
			return -1;
		}
	}
	n->ival_ns = p->interval > 0 ? (uint64_t)(p->interval * 1e9) : 0;
	{
		struct xport_qp_info info;

		/* Several soft engines on one address differ by their UDP port. */
		xport_qp_info(n->eps[0].qp[0], &info);
		if (info.udp_port && info.udp_port != 4791)
			snprintf(n->name, sizeof(n->name), "%.63s:%u", n->local_addr, info.udp_port);
		else
			snprintf(n->name, sizeof(n->name), "%.63s", n->local_addr);
	}
	return 0;
}

void node_name_ranks(const struct incast_node *n, char names[][INCAST_NAME_LEN])
{
	for (unsigned i = 0; i < n->nranks && n->first_rank + i < INCAST_MAX_RANKS; i++)
		snprintf(names[n->first_rank + i], INCAST_NAME_LEN, n->nranks == 1 ? "%.80s" :
			 "%.80s#%u", n->name, i + 1);
}

json_t *node_describe(const struct incast_node *n)
{
	json_t *eps = json_array();

	for (unsigned i = 0; i < n->neps; i++) {
		const struct incast_ep *e = &n->eps[i];
		json_t *qps = json_array();

		for (unsigned q = 0; q < n->o.p.qps; q++) {
			struct xport_qp_info info;

			xport_qp_info(e->qp[q], &info);
			json_array_append_new(qps, ctl_qp_json(&info));
		}
		json_array_append_new(eps, json_pack("{s:i, s:b, s:I, s:i, s:I, s:o}", "flow", e->f.id,
			"src", e->is_src, "va", (json_int_t)(uintptr_t)(n->buf + e->offset),
			"rkey", (int)n->mr->rkey, "slot", (json_int_t)n->slot_len, "qps", qps));
	}
	return eps;
}

/* peers: for each of this node's ends, the other end's description. */
int node_connect(struct incast_node *n, json_t *peers, char *err)
{
	size_t k;
	json_t *d;

	json_array_foreach(peers, k, d) {
		json_int_t flow = json_integer_value(json_object_get(d, "flow"));
		bool peer_src = json_is_true(json_object_get(d, "src"));
		json_t *qps = json_object_get(d, "qps");
		struct incast_ep *e = NULL;

		for (unsigned i = 0; i < n->neps && !e; i++)
			if ((json_int_t)n->eps[i].f.id == flow && n->eps[i].is_src != peer_src)
				e = &n->eps[i];
		if (!e || json_array_size(qps) != n->o.p.qps) {
			snprintf(err, XPORT_ERR_LEN, "the coordinator described flow %lld wrongly",
				 (long long)flow);
			return -1;
		}
		e->remote_va = (uint64_t)json_integer_value(json_object_get(d, "va"));
		e->remote_rkey = (uint32_t)json_integer_value(json_object_get(d, "rkey"));
		e->remote_slot = (size_t)json_integer_value(json_object_get(d, "slot"));
		for (unsigned q = 0; q < n->o.p.qps; q++) {
			struct xport_qp_info info;

			if (ctl_qp_parse(json_array_get(qps, q), &info) < 0) {
				snprintf(err, XPORT_ERR_LEN, "a malformed QP description for flow %lld",
					 (long long)flow);
				return -1;
			}
			if (!n->mtu || info.mtu < n->mtu)
				n->mtu = info.mtu;
			if (xport_connect(e->qp[q], &info, err) < 0)
				return -1;
		}
	}
	for (unsigned i = 0; i < n->neps; i++) {
		if (n->o.p.op != PERF_SEND || n->eps[i].is_src)
			continue;
		for (unsigned q = 0; q < n->o.p.qps; q++)
			for (unsigned r = 0; r < n->o.p.rx_depth; r++)
				if (post_recv(n, i, q, err) < 0)
					return -1;
	}
	return 0;
}

uint32_t node_min_mtu(json_t *eps)
{
	uint32_t mtu = 0;
	size_t i, q;
	json_t *e, *d;

	json_array_foreach(eps, i, e)
		json_array_foreach(json_object_get(e, "qps"), q, d) {
			json_int_t m = json_integer_value(json_object_get(d, "mtu"));

			if (m > 0 && (!mtu || m < mtu))
				mtu = (uint32_t)m;
		}
	return mtu;
}

void node_set_size(struct incast_node *n, uint64_t size)
{
	if (!size || size >= n->o.p.size)
		return;
	n->o.p.size = size;
	for (unsigned i = 0; i < n->neps; i++)
		if (n->eps[i].is_src && n->o.flow_bytes)
			n->eps[i].msgs_target = (n->o.flow_bytes + size - 1) / size;
}

static void sample_host(struct incast_node *n, struct ctr_snapshot *s)
{
	struct ctr_opts co = { .port_ethtool = ctr_opts_default_ethtool(NULL) };
	char err[256];

	memset(s, 0, sizeof(*s));
	ctr_sample(&co, s, err, sizeof(err));
	(void)n;
}

void node_start(struct incast_node *n)
{
	xport_dev_counters(n->dev, &n->engine_start);
	sample_host(n, &n->host_start);
	n->host_sampled = true;
	n->t0 = perf_now_ns();
}

static void ep_fail(struct incast_ep *e, const char *prefix, const char *what)
{
	if (e->failed)
		return;
	e->failed = true;
	e->finished = e->posting_done = true;
	snprintf(e->error, sizeof(e->error), "%s%.200s", prefix, what);
}

static void check_recv(struct incast_node *n, struct incast_ep *e, unsigned q, uint32_t len)
{
	const uint8_t *m = slot_of(n, e, q);

	if (n->o.p.conn == XPORT_QPT_UD) {	/* the message follows the GRH area */
		m += XPORT_GRH_LEN;
		len = len > XPORT_GRH_LEN ? len - XPORT_GRH_LEN : 0;
	}
	e->recv_msgs++;
	e->recv_bytes += len;
	if (!n->o.p.verify || e->verify_failed)
		return;
	for (uint32_t b = 0; b < len; b++)
		if (m[b] != perf_pattern(b, q, e->f.id)) {
			e->verify_failed = true;
			e->bad_offset = b;
			return;
		}
}

/* Bytes completed at t_ns from the start into e's interval bins; past the
 * last bin every sender's bins merge in pairs (twice as wide), as bw's. */
static void interval_add(struct incast_node *n, struct incast_ep *e, uint64_t t_ns,
			 uint64_t bytes)
{
	uint64_t i = t_ns / n->ival_ns;

	while (i >= INCAST_MAX_INTERVALS) {
		for (unsigned k = 0; k < n->neps; k++) {
			uint64_t *b = n->eps[k].ival_bytes;

			for (unsigned j = 0; b && j < INCAST_MAX_INTERVALS / 2; j++)
				b[j] = b[2 * j] + b[2 * j + 1];
			if (b)
				memset(b + INCAST_MAX_INTERVALS / 2, 0,
				       INCAST_MAX_INTERVALS / 2 * sizeof(*b));
		}
		n->ival_ns *= 2;
		n->ival_used = (n->ival_used + 1) / 2;
		i = t_ns / n->ival_ns;
	}
	e->ival_bytes[i] += bytes;
	if (i + 1 > n->ival_used)
		n->ival_used = (unsigned)i + 1;
}

static void complete(struct incast_node *n, const struct xport_wc *wc, uint64_t now)
{
	unsigned i = (unsigned)(wc->wr_id >> WR_EP_SHIFT);
	unsigned q = (unsigned)(wc->wr_id >> WR_QP_SHIFT & 0xFF);
	uint64_t seq = wc->wr_id & WR_SEQ_MASK;
	struct incast_ep *e;
	char err[XPORT_ERR_LEN];

	if (i >= n->neps || q >= n->o.p.qps)
		return;
	e = &n->eps[i];
	if (wc->status != XPORT_WC_SUCCESS) {
		ep_fail(e, "", xport_wc_status_str(wc->status));
		return;
	}
	if (wc->opcode == XPORT_WC_RECV) {
		n->rx_last_ns = now;
		check_recv(n, e, q, wc->byte_len);
		if (post_recv(n, i, q, err) < 0)
			ep_fail(e, "cannot post a receive: ", err);
		return;
	}
	hist_record(n->latency, now - e->post_ns[q][seq % n->o.p.tx_depth]);
	e->done[q]++;
	e->msgs_done++;
	e->bytes_done += msg_len(n, e, seq * n->o.p.qps + q);
	e->last_ns = now;
	if (e->ival_bytes)
		interval_add(n, e, now > n->t0 ? now - n->t0 : 0, msg_len(n, e, seq * n->o.p.qps + q));
	if (e->posting_done && e->msgs_done == e->msgs_posted)
		e->finished = true;
}

/* Posts what fits on every QP of a sending end; returns how many. */
static int post_some(struct incast_node *n, unsigned i, uint64_t now, char *err)
{
	struct incast_ep *e = &n->eps[i];
	const struct perf_opts *p = &n->o.p;
	int posted = 0;

	if (!n->o.flow_bytes && now - n->t0 >= (uint64_t)(p->duration * 1e9)) {
		e->posting_done = true;
		e->finished = e->msgs_done == e->msgs_posted;
	}
	for (unsigned q = 0; q < p->qps && !e->posting_done; q++) {
		while (e->posted[q] - e->done[q] < p->tx_depth && !e->posting_done) {
			/* Message k of the flow goes on QP k % qps: --bytes splits evenly. */
			uint64_t k = e->posted[q] * p->qps + q;
			struct xport_send_wr wr = {
				.wr_id = wr_id(i, q, e->posted[q]), .signaled = true,
				.opcode = p->op == PERF_SEND ? XPORT_WR_SEND : XPORT_WR_RDMA_WRITE,
				.sge = { (uint64_t)(uintptr_t)slot_of(n, e, q), 0, n->mr->lkey },
				.remote_addr = e->remote_va + q * e->remote_slot, .rkey = e->remote_rkey,
			};

			if (e->msgs_target && k >= e->msgs_target)
				break;
			wr.sge.length = (uint32_t)msg_len(n, e, k);
			e->post_ns[q][e->posted[q] % p->tx_depth] = now;
			if (xport_post_send(e->qp[q], &wr, err) < 0) {
				ep_fail(e, "cannot post: ", err);
				return posted;
			}
			e->posted[q]++;
			e->msgs_posted++;
			posted++;
		}
		if (e->msgs_target && e->msgs_posted >= e->msgs_target)
			e->posting_done = true;
	}
	return posted;
}

int node_step(struct incast_node *n)
{
	struct xport_wc wc[64];
	char err[XPORT_ERR_LEN];
	uint64_t now = perf_now_ns();
	int events = 0, got;

	for (unsigned i = 0; i < n->neps; i++)
		if (n->eps[i].is_src && !n->eps[i].posting_done)
			events += post_some(n, i, now, err);
	got = xport_poll_cq(n->cq, wc, 64);
	if (got > 0) {
		now = perf_now_ns();
		for (int k = 0; k < got; k++)
			complete(n, &wc[k], now);
		events += got;
	}
	if (!events)
		xport_wait(n->dev, 1000);
	return events;
}

void node_settle(struct incast_node *n)
{
	uint64_t start = perf_now_ns(), now = start;

	if (n->o.p.conn == XPORT_QPT_RC)
		return;
	while (now - start < PERF_SETTLE_MAX_NS &&
	       now - (n->rx_last_ns > start ? n->rx_last_ns : start) < PERF_SETTLE_IDLE_NS &&
	       !(n->o.p.stop && *n->o.p.stop)) {
		node_step(n);
		now = perf_now_ns();
	}
}

bool node_sending_done(const struct incast_node *n)
{
	for (unsigned i = 0; i < n->neps; i++)
		if (n->eps[i].is_src && !n->eps[i].finished)
			return false;
	return true;
}

/* One port counter that moved, as a member of the node's delta list. */
static void port_delta(const struct ctr_port *p, const struct ctr_counter *c, uint64_t delta,
		       void *ctx)
{
	char src[48];

	if (strlen(p->device) > 40)
		return;
	snprintf(src, sizeof(src), "%.40s/%d", p->device, p->port);
	json_array_append_new(ctx, json_pack("{s:s, s:s, s:I, s:b}", "source", src, "name", c->name,
					     "delta", (json_int_t)delta, "host", 1));
}

/* The node's engine and host counters that moved since node_start(). */
static json_t *counter_deltas(struct incast_node *n)
{
	struct xport_counters now;
	struct ctr_snapshot s;
	json_t *out = json_array();

	xport_dev_counters(n->dev, &now);
	for (size_t i = 0; i < xport_counter_count(); i++) {
		uint64_t a = xport_counter_value(&n->engine_start, i);
		uint64_t b = xport_counter_value(&now, i);

		/* Byte counts are left to the flows' own figures. */
		if (strstr(xport_counter_name(i), "_bytes"))
			continue;
		json_array_append_new(out, json_pack("{s:s, s:s, s:I}", "source", "engine", "name",
						     xport_counter_name(i), "delta",
						     (json_int_t)(b - a)));
	}
	if (!n->host_sampled)
		return out;
	sample_host(n, &s);
	for (size_t i = 0; i < s.netstat.n; i++) {
		const struct ctr_counter *c = &s.netstat.c[i];
		const struct ctr_counter *c0 = ctr_find(&n->host_start.netstat, CTR_SRC_NETSTAT,
							c->name);

		json_array_append_new(out, json_pack("{s:s, s:s, s:I, s:b}", "source", "IpExt",
			"name", c->name, "delta", (json_int_t)(c0 ? c->value - c0->value : 0),
			"host", 1));
	}
	ctr_port_deltas(&n->host_start, &s, NULL, 0, port_delta, out);
	ctr_snapshot_free(&s);
	return out;
}

static json_t *latency_json(const struct hist *h)
{
	json_t *b = json_array();
	struct hist_iter it;
	uint64_t lo, hi, count;

	hist_iter_init(&it, h);
	while (hist_iter_next(&it, &lo, &hi, &count))
		json_array_append_new(b, json_pack("[I, I]", (json_int_t)lo, (json_int_t)count));
	return json_pack("{s:I, s:I, s:o}", "min_ns", (json_int_t)hist_min(h), "max_ns",
			 (json_int_t)hist_max(h), "buckets", b);
}

/* WRITE targets, after the run: every QP's slot holds the sender's pattern
 * as far as the longest message that QP carried. */
static void check_write_target(struct incast_node *n, struct incast_ep *e)
{
	const struct perf_opts *p = &n->o.p;
	uint64_t target = n->o.flow_bytes ? (n->o.flow_bytes + p->size - 1) / p->size : 0;

	for (unsigned q = 0; q < p->qps && !e->verify_failed; q++) {
		uint64_t len = p->size;

		if (target) {
			if (q >= target)
				continue;	/* no message went on this QP */
			if (q + p->qps >= target && q == target - 1 && n->o.flow_bytes % p->size)
				len = n->o.flow_bytes % p->size;	/* only the short last one */
		}
		for (uint64_t b = 0; b < len; b++)
			if (!perf_byte_ok(slot_of(n, e, q)[b], perf_pattern(b, q, e->f.id), p->conn)) {
				e->verify_failed = true;
				e->bad_offset = b;
				break;
			}
	}
}

json_t *node_result(struct incast_node *n)
{
	json_t *flows = json_array(), *recv = json_array(), *fl;

	for (unsigned i = 0; i < n->neps; i++) {
		struct incast_ep *e = &n->eps[i];

		if (!e->is_src) {
			if (n->o.p.verify && n->o.p.op == PERF_WRITE)
				check_write_target(n, e);
			json_array_append_new(recv, json_pack("{s:i, s:I, s:I, s:b, s:I}", "flow",
				e->f.id, "messages", (json_int_t)e->recv_msgs, "bytes",
				(json_int_t)e->recv_bytes, "verified", !e->verify_failed, "bad_offset",
				(json_int_t)e->bad_offset));
			continue;
		}
		fl = json_pack("{s:i, s:I, s:I, s:I, s:b, s:s}", "flow", e->f.id, "bytes",
			       (json_int_t)e->bytes_done, "messages", (json_int_t)e->msgs_done, "ns",
			       (json_int_t)(e->last_ns > n->t0 ? e->last_ns - n->t0 : 0), "failed",
			       e->failed, "error", e->error);
		if (e->ival_bytes) {
			json_t *b = json_array();

			for (unsigned k = 0; k < n->ival_used; k++)
				json_array_append_new(b, json_integer((json_int_t)e->ival_bytes[k]));
			json_object_set_new(fl, "interval_ns", json_integer((json_int_t)n->ival_ns));
			json_object_set_new(fl, "interval_bytes", b);
		}
		json_array_append_new(flows, fl);
	}
	/* drops_known: its engine sees every packet, so its counters say where
	 * UC and UD losses went (the soft engine; not an RNIC). */
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:b}", "host_id", n->host_id, "flows", flows,
			 "received", recv, "latency", latency_json(n->latency), "counters",
			 counter_deltas(n), "drops_known", !xport_self_driven(n->dev));
}

void node_close(struct incast_node *n)
{
	for (unsigned i = 0; i < n->neps; i++) {
		for (unsigned q = 0; q < PERF_MAX_QPS; q++) {
			if (n->eps[i].qp[q])
				xport_destroy_qp(n->dev, n->eps[i].qp[q]);
			free(n->eps[i].post_ns[q]);
		}
		free(n->eps[i].ival_bytes);
	}
	if (n->cq)
		xport_destroy_cq(n->dev, n->cq);
	if (n->mr)
		xport_dereg_mr(n->dev, n->mr);
	if (n->dev)
		xport_close(n->dev);
	if (n->host_sampled)
		ctr_snapshot_free(&n->host_start);
	free(n->buf);
	free(n->eps);
	free(n->latency);
	memset(n, 0, sizeof(*n));
}
