// SPDX-License-Identifier: MIT
/*
 * The bandwidth test, client side: keep tx_depth operations in flight on
 * every QP, count completions, and bin completed bytes by time so the
 * peak rate and --interval reports come from the same measurement.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "ctl.h"
#include "pt_int.h"

#define BIN_NS_START 10000000ull	/* 10 ms; doubles when the bins run out */
#define ATOMIC_LANES 8			/* distinct result buffers per QP */

struct bins {
	uint64_t width_ns;
	uint64_t bytes[PERF_MAX_INTERVALS];
	uint64_t msgs[PERF_MAX_INTERVALS];
	unsigned used;
};

static void bins_add(struct bins *b, uint64_t t_ns, uint64_t bytes, uint64_t msgs)
{
	uint64_t i = t_ns / b->width_ns;

	while (i >= PERF_MAX_INTERVALS) {	/* merge pairs: twice as wide */
		for (unsigned k = 0; k < PERF_MAX_INTERVALS / 2; k++) {
			b->bytes[k] = b->bytes[2 * k] + b->bytes[2 * k + 1];
			b->msgs[k] = b->msgs[2 * k] + b->msgs[2 * k + 1];
		}
		memset(b->bytes + PERF_MAX_INTERVALS / 2, 0, sizeof(b->bytes) / 2);
		memset(b->msgs + PERF_MAX_INTERVALS / 2, 0, sizeof(b->msgs) / 2);
		b->width_ns *= 2;
		b->used = (b->used + 1) / 2;
		i = t_ns / b->width_ns;
	}
	b->bytes[i] += bytes;
	b->msgs[i] += msgs;
	if (i + 1 > b->used)
		b->used = (unsigned)i + 1;
}

/* Client prologue of a run: tell the server, fill buffers, start together. */
int perf_run_begin(struct perf_session *s, char *err)
{
	memset(s->a.buf, 0, s->a.buf_len);
	s->verify_failed = false;
	s->bad_offset = 0;
	s->a.tx_off = 0;
	s->a.rx_off = s->o.bidirectional ? s->a.half : 0;	/* see perf_end */
	if (s->o.op == PERF_WRITE || s->o.op == PERF_SEND)
		perf_fill_pattern(s, &s->a, 0);
	if (s->o.bidirectional && s->o.op == PERF_READ)	/* what the server reads */
		perf_fill_pattern(s, &s->a, s->a.rx_off);
	if (s->o.bidirectional)
		perf_post_recvs(s, &s->a);
	if (s->role == PERF_LOOPBACK) {
		perf_server_prepare(s, &s->b);
		return 0;
	}
	if (s->pt)
		return pt_run_begin(s, err);
	if (ctl_send(&s->oob, OOB_PARAMS, ctl_run_json(s->o.size), err) < 0)
		return -1;
	return oob_barrier(&s->oob, 1, err);
}

/* Client epilogue: the server's verdict on what it received (and, with
 * -b, this side's on what the server sent). */
int perf_run_end(struct perf_session *s, bool *verified, uint64_t *bad, char *err)
{
	struct ctl_verdict v;
	json_t *m;
	int rc;
	bool mine_ok = !s->verify_failed;
	uint64_t mine_bad = s->bad_offset;

	if (s->role == PERF_LOOPBACK) {
		perf_settle(s, &s->b);
		perf_server_check(s, &s->b);
		perf_received(s, &s->peer_rx);
		*verified = !s->verify_failed;
		*bad = s->bad_offset;
		return 0;
	}
	if (s->pt) {	/* perftest checks nothing (--verify is refused) */
		*verified = false;
		*bad = 0;
		return s->o.bidirectional ? 0 : pt_run_end(s, err);	/* -b: pt_bidir_end */
	}
	if (oob_barrier(&s->oob, 2, err) < 0 || !(m = ctl_recv(&s->oob, OOB_RESULT, err)))
		return -1;
	rc = ctl_verdict_parse(m, &v, err);
	json_decref(m);
	if (rc < 0)
		return -1;
	s->peer_rx = v.received;
	*verified = v.verified && mine_ok;
	*bad = v.verified && !mine_ok ? mine_bad : v.bad_offset;
	if (v.status) {
		snprintf(err, XPORT_ERR_LEN, "the server's QP failed: %s",
			 xport_wc_status_str((enum xport_wc_status)v.status));
		return -1;
	}
	return 0;
}

void perf_pump(struct perf_session *s)
{
	if (s->role == PERF_LOOPBACK)
		perf_pump_server(s, &s->b);
}

int perf_wc_error(const struct xport_wc *wc, char *err)
{
	snprintf(err, XPORT_ERR_LEN, "a work request failed: %s (status %d); %s",
		 xport_wc_status_str(wc->status), wc->status, xport_wc_status_hint(wc->status));
	return -1;
}

static uint64_t msg_bytes(const struct perf_session *s)
{
	return s->o.op == PERF_ATOMIC ? 8 : s->o.size;
}

/* WR n of QP q; its completion (when signaled) says that WRs 0..n of the
 * QP are done: completions come in order on a QP. */
static struct xport_send_wr make_wr(struct perf_session *s, struct perf_end *e, unsigned q,
				    uint64_t n, bool signaled)
{
	uint64_t local = (uint64_t)(uintptr_t)e->buf + q * e->slot + e->tx_off;
	uint64_t remote = e->remote_va + q * e->peer_slot + e->tx_off;
	struct xport_send_wr wr = {
		.wr_id = (uint64_t)q << 48 | (n & 0xFFFFFFFFFFFFULL), .signaled = signaled,
		.sge = { local, (uint32_t)s->o.size, e->mr->lkey },
		.remote_addr = remote, .rkey = e->remote_rkey,
		.inline_data = perf_inline_ok(s, s->o.size),
	};

	switch (s->o.op) {
	case PERF_WRITE: wr.opcode = XPORT_WR_RDMA_WRITE; break;
	case PERF_READ: wr.opcode = XPORT_WR_RDMA_READ; break;
	case PERF_SEND: wr.opcode = XPORT_WR_SEND; break;
	case PERF_ATOMIC:
		wr.opcode = s->o.atomic_cas ? XPORT_WR_ATOMIC_CMP_AND_SWP :
			    XPORT_WR_ATOMIC_FETCH_AND_ADD;
		/* Results land in one of several lanes so each can be checked. */
		wr.sge = (struct xport_sge){ local + e->half + (n % ATOMIC_LANES) * 8, 8, e->mr->lkey };
		wr.compare_add = s->o.atomic_cas ? n : 1;
		wr.swap = n + 1;
		break;
	}
	return wr;
}

/* Atomics: the n-th operation on a QP's counter must return n.  At most
 * ATOMIC_LANES are in flight, so WR n's lane is not yet reused when its
 * completion (or a later WR's, when it was unsignaled) is seen. */
static bool atomic_ok(const struct perf_end *e, unsigned q, uint64_t n)
{
	uint64_t got;

	memcpy(&got, e->buf + q * e->slot + e->half + (n % ATOMIC_LANES) * 8, 8);
	return got == n;
}

unsigned perf_tx_depth(const struct perf_opts *o)
{
	if (o->op == PERF_ATOMIC && o->tx_depth > ATOMIC_LANES)
		return ATOMIC_LANES;
	return o->tx_depth;
}

/* --rate_limit as messages per second of this run's size. */
static double rate_pps(const struct perf_opts *o, uint64_t bytes)
{
	switch (o->rate_unit) {
	case PERF_RATE_PPS: return o->rate_limit;
	case PERF_RATE_MIBPS: return o->rate_limit * 1048576.0 / (double)bytes;
	case PERF_RATE_GBPS: break;
	}
	return o->rate_limit * 1e9 / 8 / (double)bytes;
}

unsigned perf_cq_mod(const struct perf_opts *o, unsigned depth)
{
	unsigned m = o->post_list > 1 ? o->post_list : o->cq_mod ? o->cq_mod :
		     o->size <= PERF_CQ_MOD_MAX_SIZE ? PERF_CQ_MOD_DEFAULT : 1;

	return m > depth ? depth : m;
}

/* One end's sending side of a run: the client's, and with -b the
 * server's too. */
struct tx {
	struct perf_end *e;
	struct bins *bins;
	uint64_t posted[PERF_MAX_QPS], done[PERF_MAX_QPS];
	uint64_t quota[PERF_MAX_QPS];	/* -n: WRs each QP posts; 0: until the deadline */
	bool tail_due[PERF_MAX_QPS];	/* -D ended after an unsignaled WR: one more,
					 * signaled, so the QP's last completion comes */
	unsigned tails_due, cq_mod, list;
	uint64_t total_posted, total_done, t0, deadline, last, cpu0;
	double pps;			/* --rate_limit; 0: as fast as it goes */
	uint64_t pace_t0, pace_posted;	/* the pacing schedule's origin */
	unsigned depth, q;
	bool stop_posting, atomic_bad;
};

static void tx_start(struct perf_session *s, struct perf_end *e, struct tx *t, struct bins *b)
{
	memset(t, 0, sizeof(*t));
	memset(b, 0, sizeof(*b));
	b->width_ns = BIN_NS_START;
	t->e = e;
	t->bins = b;
	t->depth = perf_tx_depth(&s->o);
	t->list = s->o.post_list > 1 ? s->o.post_list : 1;
	t->cq_mod = perf_cq_mod(&s->o, t->depth);
	/* -n in whole lists, spread over the QPs as evenly as lists allow. */
	if (s->o.iters) {
		uint64_t lists = s->o.iters / t->list;

		for (unsigned q = 0; q < s->o.qps; q++)
			t->quota[q] = t->list * (lists / s->o.qps + (q < lists % s->o.qps));
	}
	t->pps = s->o.rate_limit > 0 ? rate_pps(&s->o, msg_bytes(s)) : 0;
	t->cpu0 = perf_cpu_ns();
	t->t0 = t->pace_t0 = perf_now_ns();
	t->deadline = t->t0 + (uint64_t)(s->o.duration * 1e9);
}

static bool tx_done(const struct tx *t)
{
	return t->stop_posting && !t->tails_due && t->total_done >= t->total_posted;
}

/* Whether WR n of QP q asks for a completion: every cq_mod-th, the last of
 * each list, and the last the QP posts. */
static bool tx_signaled(const struct tx *t, unsigned q, uint64_t n)
{
	return (n + 1) % t->cq_mod == 0 || (t->quota[q] && n + 1 == t->quota[q]);
}

/* Posts a list of `len` WRs on QP q (one call, one doorbell). */
static int tx_post(struct perf_session *s, struct tx *t, unsigned q, unsigned len, bool signal_last,
		   char *err)
{
	struct xport_send_wr wrs[PERF_MAX_POST_LIST];

	for (unsigned i = 0; i < len; i++) {
		uint64_t n = t->posted[q] + i;

		wrs[i] = make_wr(s, t->e, q, n, tx_signaled(t, q, n) ||
				 (signal_last && i + 1 == len));
		wrs[i].next = i + 1 < len ? &wrs[i + 1] : NULL;
	}
	if (xport_post_send_list(t->e->qp[q], wrs, NULL, err) < 0)
		return -1;
	t->posted[q] += len;
	t->total_posted += len;
	return 0;
}

/* -D ended: each QP whose last WR went unsignaled posts one more that is
 * signaled (a full message, counted like the others) once there is room. */
static int tx_tails(struct perf_session *s, struct tx *t, char *err)
{
	for (unsigned q = 0; q < s->o.qps; q++) {
		if (!t->tail_due[q] || t->posted[q] - t->done[q] >= t->depth)
			continue;
		if (tx_post(s, t, q, 1, true, err) < 0)
			return -1;
		t->tail_due[q] = false;
		t->tails_due--;
	}
	return 0;
}

static void tx_stop(struct perf_session *s, struct tx *t)
{
	t->stop_posting = true;
	for (unsigned q = 0; q < s->o.qps; q++) {
		t->tail_due[q] = t->posted[q] && !tx_signaled(t, q, t->posted[q] - 1);
		t->tails_due += t->tail_due[q];
	}
}

/* Software pacing: no message before its time on the rate's schedule.
 * After a stall (the process was descheduled) at most one queue depth is
 * made up at once; the schedule restarts from there, so the rate stays a
 * ceiling rather than a burst. */
static bool tx_due(struct tx *t, uint64_t now)
{
	double allowed;

	if (!t->pps)
		return true;
	allowed = (double)t->pace_posted + (double)(now - t->pace_t0) / 1e9 * t->pps + 1;
	if (allowed - (double)t->total_posted > t->depth) {
		t->pace_t0 = now - (uint64_t)((double)t->depth / t->pps * 1e9);
		t->pace_posted = t->total_posted;
		allowed = (double)t->total_posted + t->depth + 1;
	}
	return (double)t->total_posted < allowed;
}

/* Posts what the depth and the pacing allow, one operation per QP per
 * pass so every QP gets its share, then reaps completions.  RECVs here
 * are the peer's SENDs (-b): the server end's duties handle them. */
static int tx_step(struct perf_session *s, struct tx *t, char *err)
{
	bool was_done = tx_done(t);
	uint64_t now = perf_now_ns(), bytes = msg_bytes(s);
	struct xport_wc wc[64];
	int n;

	for (bool room = true; room && !t->stop_posting;) {
		room = false;
		for (unsigned k = 0; k < s->o.qps && !t->stop_posting && tx_due(t, now);
		     k++, t->q = (t->q + 1) % s->o.qps) {
			unsigned q = t->q;

			if (t->posted[q] - t->done[q] + t->list > t->depth ||
			    (t->quota[q] && t->posted[q] >= t->quota[q]))
				continue;
			if (tx_post(s, t, q, t->list, false, err) < 0)
				return -1;
			room = true;
			if (s->o.iters && t->total_posted >= s->o.iters)
				tx_stop(s, t);
		}
	}
	if (t->tails_due && tx_tails(s, t, err) < 0)
		return -1;
	n = xport_poll_cq(t->e->cq, wc, 64);
	if (n < 0) {
		snprintf(err, XPORT_ERR_LEN, "the completion queue overflowed");
		return -1;
	}
	now = perf_now_ns();
	if (!was_done)
		t->last = now;
	for (int i = 0; i < n; i++) {
		unsigned wq = (unsigned)(wc[i].wr_id >> 48);
		uint64_t upto = (wc[i].wr_id & 0xFFFFFFFFFFFFULL) + 1, count;

		if (wc[i].status != XPORT_WC_SUCCESS)
			return s->pt ? pt_wc_error(s, &wc[i], err) : perf_wc_error(&wc[i], err);
		if (wc[i].opcode == XPORT_WC_RECV) {
			perf_server_on_wc(s, t->e, &wc[i]);
			continue;
		}
		if (wq >= s->o.qps || upto <= t->done[wq] || upto > t->posted[wq]) {
			snprintf(err, XPORT_ERR_LEN, "a completion for work request %llu of QP %u, "
				 "which is not outstanding", (unsigned long long)upto - 1, wq);
			return -1;
		}
		/* One completion retires the unsignaled WRs before it too. */
		count = upto - t->done[wq];
		for (uint64_t k = t->done[wq]; s->o.op == PERF_ATOMIC && s->o.verify && k < upto; k++)
			t->atomic_bad |= !atomic_ok(t->e, wq, k);
		t->done[wq] = upto;
		t->total_done += count;
		bins_add(t->bins, now - t->t0, bytes * count, count);
	}
	if (!s->o.iters && now >= t->deadline && !t->stop_posting)
		tx_stop(s, t);
	return 0;
}

/* The run's figures from what the sender completed. */
static void tx_finish(struct perf_session *s, const struct tx *t, struct perf_bw_result *r)
{
	const struct bins *b = t->bins;

	r->bytes_per_msg = s->o.size;
	r->iterations = t->total_done;
	r->cq_mod = t->cq_mod;
	r->seconds = t->last > t->t0 ? (double)(t->last - t->t0) / 1e9 : 0;
	if (r->seconds > 0) {
		double bytes = (double)t->total_done * (double)msg_bytes(s);

		r->bw_avg_gbps = bytes * 8 / r->seconds / 1e9;
		r->msg_rate_mpps = (double)t->total_done / r->seconds / 1e6;
	}
	/* Peak: the best full bin; short runs have none, so peak = average;
	 * -N/--noPeak: none, as perftest prints it (0). */
	r->bw_peak_gbps = s->o.no_peak ? 0 : r->bw_avg_gbps;
	for (unsigned i = 0; i + 1 < b->used; i++) {
		double g = (double)b->bytes[i] * 8 / ((double)b->width_ns / 1e9) / 1e9;

		if (!s->o.no_peak && b->used > 2 && g > r->bw_peak_gbps)
			r->bw_peak_gbps = g;
	}
	if (s->o.interval > 0) {
		uint64_t w = (uint64_t)(s->o.interval * 1e9);

		if (w < b->width_ns)
			w = b->width_ns;
		for (unsigned i = 0; i < b->used; i++) {
			unsigned k = (unsigned)((uint64_t)i * b->width_ns / w);
			struct perf_interval *iv = &r->intervals[k];

			if (k >= PERF_MAX_INTERVALS)
				break;
			iv->start_s = (double)k * (double)w / 1e9;
			iv->end_s = iv->start_s + (double)w / 1e9;
			iv->bytes += b->bytes[i];
			iv->msgs += b->msgs[i];
			if (k + 1 > r->nintervals)
				r->nintervals = k + 1;
		}
		if (r->nintervals && r->intervals[r->nintervals - 1].end_s > r->seconds)
			r->intervals[r->nintervals - 1].end_s = r->seconds;
		/* A sliver at the end (the drain) joins the interval before it. */
		if (r->nintervals > 1) {
			struct perf_interval *last = &r->intervals[r->nintervals - 1];
			struct perf_interval *prev = last - 1;

			if (last->end_s - last->start_s < (double)w / 1e9 / 10) {
				prev->end_s = last->end_s;
				prev->bytes += last->bytes;
				prev->msgs += last->msgs;
				r->nintervals--;
			}
		}
	}
}

/* -b client: says it is done ("done", or "stop" after Ctrl-C: the server
 * then stops sending too), and serves the server's traffic until the
 * server reports its figures. */
static int wait_peer(struct perf_session *s, struct perf_bw_result *peer, bool interrupted,
		     char *err)
{
	uint64_t deadline = interrupted ? perf_now_ns() + (uint64_t)s->o.timeout_s * 1000000000u : 0;
	json_t *m;
	int rc;

	if (ctl_send(&s->oob, OOB_PARAMS, ctl_done_json(interrupted), err) < 0)
		return -1;
	if (perf_pump_until_peer(s, deadline, err) < 0 || !(m = ctl_recv(&s->oob, OOB_RESULT, err)))
		return -1;
	rc = ctl_figures_parse(m, peer, err);
	json_decref(m);
	return rc;
}

/* -b: the figures are the sums of both directions, as perftest prints. */
static void add_peer(struct perf_bw_result *r, const struct perf_bw_result *peer)
{
	r->bidirectional = true;
	r->local_bw_avg_gbps = r->bw_avg_gbps;
	r->peer_bw_avg_gbps = peer->bw_avg_gbps;
	r->peer_iterations = peer->iterations;
	r->bw_avg_gbps += peer->bw_avg_gbps;
	r->bw_peak_gbps += peer->bw_peak_gbps;
	r->msg_rate_mpps += peer->msg_rate_mpps;
}

/* The device's RDMA port, sampled as rdmakit top reads it (the RDMA
 * netlink, else sysfs): false for an engine that has no host port. */
static bool sample_port(struct perf_session *s, struct perf_port_deltas *pd,
			struct ctr_snapshot *snap)
{
	char filter[96], err[256];
	const char *devs[1] = { filter };
	struct ctr_opts co = { .devices = devs, .ndevices = 1,
			       .port_ethtool = ctr_opts_default_ethtool(NULL),
			       .no_ethtool_stats = true };

	memset(snap, 0, sizeof(*snap));
	if (!xport_host_port(s->dev, pd->device, sizeof(pd->device), &pd->port))
		return false;
	snprintf(filter, sizeof(filter), "%s/%d", pd->device, pd->port);
	return ctr_sample(&co, snap, err, sizeof(err)) == 0 && snap->nports == 1;
}

static void keep_delta(const struct ctr_port *p, const struct ctr_counter *c, uint64_t delta,
		       void *ctx)
{
	struct perf_port_deltas *pd = ctx;
	/* A device-level counter named like a port's is keyed device/NAME, as
	 * top keys it. */
	const char *prefix = c->src == CTR_SRC_HW_DEV &&
			     (ctr_find(&p->set, CTR_SRC_HW_PORT, c->name) ||
			      ctr_find(&p->set, CTR_SRC_NLDEV, c->name)) ? "device/" : "";

	if (pd->n == PERF_MAX_PORT_DELTAS ||
	    strlen(prefix) + strlen(c->name) >= sizeof(pd->d[0].name)) {
		pd->left_out++;
		return;
	}
	/* Fits: checked above. */
	memcpy(pd->d[pd->n].name, prefix, strlen(prefix));
	memcpy(pd->d[pd->n].name + strlen(prefix), c->name, strlen(c->name) + 1);
	pd->d[pd->n++].delta = delta;
}

/* What moved on the port between two samples of it. */
static void port_deltas(struct perf_port_deltas *pd, const struct ctr_snapshot *before,
			const struct ctr_snapshot *after)
{
	pd->known = true;
	pd->source = after->ports[0].nldev_known ? "netlink" : "sysfs";
	ctr_port_deltas(before, after, pd->device, pd->port, keep_delta, pd);
}

/* UC and UD: what arrived of what a sender sent (rx: the receiver's
 * count).  A WRITE without immediate gives the receiver nothing to count:
 * its figures are the sender's (and --verify checks the data). */
static void fill_loss(struct perf_loss *l, bool counted, const struct ctl_sent *tx,
		      const struct ctl_received *rx)
{
	l->sent_msgs = tx->msgs;
	l->tx_known = tx->tx_known;
	l->host_tx_drops = tx->host_tx_drops;
	if (!counted)
		return;
	perf_loss_count(l, tx->msgs, rx->msgs, rx->bytes);
	l->where_known = rx->drops_known;
	l->rcvbuf_drops = rx->rcvbuf_drops;
	l->no_recv_drops = rx->no_recv_drops;
	l->qkey_drops = rx->qkey_drops;
	l->uc_msgs_cut = rx->uc_msgs_cut;
}

/* What this side sent: iterations, and what its host refused since before. */
static void count_sent(struct perf_session *s, const struct xport_counters *before,
		       uint64_t msgs, struct ctl_sent *tx)
{
	struct xport_counters now, d;

	xport_dev_counters(s->dev, &now);
	xport_counters_delta(&d, &now, before);
	*tx = (struct ctl_sent){ .msgs = msgs, .tx_known = !xport_self_driven(s->dev),
				 .host_tx_drops = d.tx_drops };
}

bool perf_tells_sent(const struct perf_session *s)
{
	return s->o.conn != XPORT_QPT_RC && !s->o.latency && !s->pt;
}

void perf_served_result(struct perf_session *s, const struct ctl_sent *tx,
			const struct ctl_received *rx, struct perf_bw_result *r)
{
	struct xport_counters now;
	double secs = (double)(s->rx_last_ns - s->rx_first_ns) / 1e9;

	memset(r, 0, sizeof(*r));
	r->bytes_per_msg = s->o.size;
	r->iterations = rx->msgs;
	r->cq_mod = 1;		/* every receive completes */
	/* From the first arrival to the last: the first message's own time
	 * is not in the span, so neither are its bytes (fewer than two
	 * arrivals: no span, rates 0). */
	if (rx->msgs > 1 && secs > 0) {
		r->seconds = secs;
		r->msg_rate_mpps = (double)(rx->msgs - 1) / secs / 1e6;
		r->bw_avg_gbps = (double)rx->bytes * (double)(rx->msgs - 1) /
				 (double)rx->msgs * 8 / secs / 1e9;
		r->bw_peak_gbps = s->o.no_peak ? 0 : r->bw_avg_gbps;
	}
	r->cpu_util_percent = perf_cpu_percent(perf_cpu_ns() - s->rx_cpu0,
					       perf_now_ns() - s->rx_wall0);
	r->verified = !s->verify_failed;
	r->bad_offset = s->bad_offset;
	xport_dev_counters(s->dev, &now);
	xport_counters_delta(&r->counters, &now, &s->rx_ctr0);
	r->unreliable = true;
	fill_loss(&r->loss, s->o.op == PERF_SEND, tx, rx);
}

static int run_bw(struct perf_session *s, struct perf_bw_result *r, struct perf_bw_result *peer,
		  struct bins *bins, char *err)
{
	bool both_here = s->role == PERF_LOOPBACK && s->o.bidirectional;
	struct xport_counters before, after;
	struct ctl_sent sent = { 0 };
	struct pt_watch watch = { 0 };	/* perftest: its server still taking messages */
	struct tx a, b;

	memset(r, 0, sizeof(*r));
	memset(peer, 0, sizeof(*peer));
	xport_dev_counters(s->dev, &before);
	if (perf_run_begin(s, err) < 0)
		return -1;
	tx_start(s, &s->a, &a, &bins[0]);
	if (both_here)
		tx_start(s, &s->b, &b, &bins[1]);
	for (unsigned spins = 0; !tx_done(&a) || (both_here && !tx_done(&b)); spins++) {
		if (tx_step(s, &a, err) < 0)
			return -1;
		if (s->pt && spins % 256 == 0 && pt_check_stalled(s, &watch, a.total_done, err) < 0)
			return -1;
		if (both_here) {
			if (tx_step(s, &b, err) < 0)
				return -1;
		} else {
			perf_pump(s);
		}
		if (s->o.stop && *s->o.stop) {
			r->interrupted = true;
			break;
		}
	}
	tx_finish(s, &a, r);
	if (both_here)
		tx_finish(s, &b, peer);
	else if (s->o.bidirectional && s->pt && pt_bidir_end(s, r, peer, err) < 0)
		return -1;
	else if (s->o.bidirectional && !s->pt && wait_peer(s, peer, r->interrupted, err) < 0)
		return -1;
	r->cpu_util_percent = perf_cpu_percent(perf_cpu_ns() - a.cpu0, perf_now_ns() - a.t0);
	if (s->o.bidirectional)
		add_peer(r, peer);
	/* What landed here: our READs, and with -b the server's WRITEs (its
	 * SENDs were checked as they arrived); in loopback also its READs. */
	if (s->o.op == PERF_READ)
		perf_check_pattern(s, &s->a, s->a.tx_off);
	if (s->o.bidirectional && s->o.op == PERF_WRITE)
		perf_check_pattern(s, &s->a, s->a.rx_off);
	if (both_here && s->o.op == PERF_READ)
		perf_check_pattern(s, &s->b, s->b.tx_off);
	if (s->o.conn != XPORT_QPT_RC)
		count_sent(s, &before, r->iterations, &sent);
	if (perf_tells_sent(s) && s->role == PERF_CLIENT &&
	    ctl_send(&s->oob, OOB_PARAMS, ctl_sent_json(&sent), err) < 0)
		return -1;
	if (perf_run_end(s, &r->verified, &r->bad_offset, err) < 0)
		return -1;
	if (s->o.verify && s->o.op == PERF_ATOMIC && a.atomic_bad) {
		r->verified = false;
		r->bad_offset = 0;
	}
	xport_dev_counters(s->dev, &after);
	xport_counters_delta(&r->counters, &after, &before);
	if (s->o.conn != XPORT_QPT_RC) {
		r->unreliable = true;
		r->loss.peer_silent = s->pt && s->o.op == PERF_SEND;
		fill_loss(&r->loss, s->o.op == PERF_SEND && !s->pt, &sent, &s->peer_rx);
	}
	return 0;
}

/* The run's scratch: bins for up to two senders, the peer's figures and
 * the -W counters before the run. */
struct bw_scratch {
	struct bins bins[2];
	struct perf_bw_result peer;
	struct perf_listed listed;
};

int perf_run_bw(struct perf_session *s, struct perf_bw_result *r, char *err)
{
	struct bw_scratch *x = malloc(sizeof(*x));
	struct perf_port_deltas port = { .known = false };
	struct ctr_snapshot port_before, port_after = { 0 };
	bool have_port;
	int rc;

	if (!x) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	if (perf_listed_before(s, &x->listed, err) < 0) {
		free(x);
		return -1;
	}
	have_port = sample_port(s, &port, &port_before);
	if (s->pt && s->role == PERF_SERVER && !s->o.bidirectional) {
		rc = pt_serve_bw(s, r, err);
	} else {
		rc = run_bw(s, r, &x->peer, x->bins, err);
		if (rc == 0 && s->pt)
			pt_note_bw(s, r);
		else if (rc < 0 && s->pt)
			s->pt->broken = true;
	}
	if (rc == 0)
		rc = perf_listed_after(s, &x->listed, &r->listed, err);
	if (have_port && rc == 0 && sample_port(s, &port, &port_after)) {
		r->port = port;
		port_deltas(&r->port, &port_before, &port_after);
	}
	ctr_snapshot_free(&port_before);
	ctr_snapshot_free(&port_after);
	free(x);
	return rc;
}

/* -b server: the client's one message of a run, "done" with its
 * direction, or "stop" (interrupted): then stop sending and drain. */
static int client_done(struct perf_session *s, struct tx *t, char *err)
{
	json_t *m = ctl_recv(&s->oob, OOB_PARAMS, err);
	bool stop = false;
	int rc = m ? ctl_done_parse(m, &stop, err) : -1;

	json_decref(m);
	if (rc == 0 && stop)
		tx_stop(s, t);
	return rc;
}

int perf_serve_tx(struct perf_session *s, char *err)
{
	struct bw_scratch *x = malloc(sizeof(*x));
	struct perf_bw_result *r;
	struct tx t;
	bool heard = false;	/* the client's "done" or "stop" */
	int rc = 0;

	if (!x) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	r = &x->peer;
	memset(r, 0, sizeof(*r));
	tx_start(s, &s->a, &t, &x->bins[0]);
	for (unsigned spins = 0; !tx_done(&t) && rc == 0; spins++) {
		rc = tx_step(s, &t, err);
		if (spins % 256 || rc)
			continue;
		if (s->o.stop && *s->o.stop) {
			snprintf(err, XPORT_ERR_LEN, "interrupted");
			rc = -1;
		} else if (!heard && perf_oob_readable(&s->oob)) {
			rc = client_done(s, &t, err);
			heard = true;
		}
	}
	if (rc == 0 && !heard)
		rc = perf_pump_until_peer(s, 0, err) < 0 ? -1 : client_done(s, &t, err);
	if (rc == 0) {
		if (s->o.op == PERF_READ)	/* checked with the client's verdict */
			perf_check_pattern(s, &s->a, s->a.tx_off);
		tx_finish(s, &t, r);
		rc = ctl_send(&s->oob, OOB_RESULT, ctl_figures_json(r), err);
	}
	free(x);
	return rc;
}
