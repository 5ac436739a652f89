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

#include "perf_int.h"

#define BIN_NS_START 10000000ull	/* 10 ms; doubles when the bins run out */
#define ATOMIC_LANES 8			/* distinct result buffers per QP */

struct bins {
	uint64_t width_ns;
	uint64_t bytes[PERF_MAX_INTERVALS];
	uint64_t msgs[PERF_MAX_INTERVALS];
	unsigned used;
};

static void bins_add(struct bins *b, uint64_t t_ns, uint64_t bytes)
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
	b->msgs[i]++;
	if (i + 1 > b->used)
		b->used = (unsigned)i + 1;
}

/* Client prologue of a run: tell the server, fill buffers, start together. */
int perf_run_begin(struct perf_session *s, char *err)
{
	char text[64];

	memset(s->a.buf, 0, s->a.buf_len);
	for (unsigned q = 0; q < s->o.qps; q++)
		if (s->o.op == PERF_WRITE || s->o.op == PERF_SEND)
			for (uint64_t i = 0; i < s->o.size; i++)
				s->a.buf[q * s->a.slot + i] = perf_pattern(i, q, s->o.size);
	if (s->role == PERF_LOOPBACK) {
		perf_server_prepare(s, &s->b);
		return 0;
	}
	snprintf(text, sizeof(text), "run size=%" PRIu64, s->o.size);
	if (oob_send(&s->oob, OOB_PARAMS, text, strlen(text), err) < 0)
		return -1;
	return oob_barrier(&s->oob, 1, err);
}

/* Client epilogue: the server's verdict on what it received. */
int perf_run_end(struct perf_session *s, bool *verified, uint64_t *bad, char *err)
{
	char text[128];
	size_t len;
	int ok, status;

	if (s->role == PERF_LOOPBACK) {
		perf_server_check(s, &s->b);
		*verified = !s->verify_failed;
		*bad = s->bad_offset;
		return 0;
	}
	if (oob_barrier(&s->oob, 2, err) < 0 ||
	    oob_recv(&s->oob, OOB_RESULT, text, sizeof(text) - 1, &len, err) < 0)
		return -1;
	text[len] = '\0';
	if (sscanf(text, "verified=%d bad=%" SCNu64 " status=%d", &ok, bad, &status) != 3) {
		snprintf(err, XPORT_ERR_LEN, "the server sent a malformed result");
		return -1;
	}
	*verified = ok;
	if (status) {
		snprintf(err, XPORT_ERR_LEN, "the server's QP failed: %s",
			 xport_wc_status_str((enum xport_wc_status)status));
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

static struct xport_send_wr make_wr(struct perf_session *s, unsigned q, uint64_t n)
{
	struct perf_end *e = &s->a;
	uint64_t local = (uint64_t)(uintptr_t)e->buf + q * e->slot;
	uint64_t remote = e->remote_va + q * e->peer_slot;
	struct xport_send_wr wr = {
		.wr_id = (uint64_t)q << 48 | (n & 0xFFFFFFFFFFFFULL), .signaled = true,
		.sge = { local, (uint32_t)s->o.size, e->mr->lkey },
		.remote_addr = remote, .rkey = e->remote_rkey,
	};

	switch (s->o.op) {
	case PERF_WRITE: wr.opcode = XPORT_WR_RDMA_WRITE; break;
	case PERF_READ: wr.opcode = XPORT_WR_RDMA_READ; break;
	case PERF_SEND: wr.opcode = XPORT_WR_SEND; wr.sge.length = (uint32_t)s->o.size; break;
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

/* Atomics: the n-th operation on a QP's counter must return n. */
static bool atomic_ok(struct perf_session *s, const struct xport_wc *wc)
{
	unsigned q = (unsigned)(wc->wr_id >> 48);
	uint64_t n = wc->wr_id & 0xFFFFFFFFFFFFULL, got;

	memcpy(&got, s->a.buf + q * s->a.slot + s->a.half + (n % ATOMIC_LANES) * 8, 8);
	return got == n;
}

static unsigned depth_of(const struct perf_session *s)
{
	if (s->o.op == PERF_ATOMIC && s->o.tx_depth > ATOMIC_LANES)
		return ATOMIC_LANES;
	return s->o.tx_depth;
}

static int run_bw(struct perf_session *s, struct perf_bw_result *r, struct bins *bp, char *err)
{
#define bins (*bp)
	uint64_t posted[PERF_MAX_QPS] = { 0 }, done[PERF_MAX_QPS] = { 0 };
	uint64_t total_posted = 0, total_done = 0, t0, deadline, last = 0;
	unsigned depth = depth_of(s), q = 0;
	bool stop_posting = false;

	memset(r, 0, sizeof(*r));
	memset(&bins, 0, sizeof(bins));
	bins.width_ns = BIN_NS_START;
	r->bytes_per_msg = s->o.size;
	if (perf_run_begin(s, err) < 0)
		return -1;
	t0 = perf_now_ns();
	deadline = t0 + (uint64_t)(s->o.duration * 1e9);
	while (!stop_posting || total_done < total_posted) {
		struct xport_wc wc[64];
		int n;

		/* One operation per QP per pass, so every QP gets its share. */
		for (bool room = true; room && !stop_posting;) {
			room = false;
			for (unsigned k = 0; k < s->o.qps && !stop_posting; k++, q = (q + 1) % s->o.qps) {
				struct xport_send_wr wr;

				if (posted[q] - done[q] >= depth)
					continue;
				wr = make_wr(s, q, posted[q]);
				if (xport_post_send(s->a.qp[q], &wr, err) < 0)
					return -1;
				posted[q]++;
				total_posted++;
				room = true;
				stop_posting = s->o.iters ? total_posted >= s->o.iters : false;
			}
		}
		n = xport_poll_cq(s->a.cq, wc, 64);
		if (n < 0) {
			snprintf(err, XPORT_ERR_LEN, "the completion queue overflowed");
			return -1;
		}
		last = perf_now_ns();
		for (int i = 0; i < n; i++) {
			unsigned wq = (unsigned)(wc[i].wr_id >> 48);

			if (wc[i].status != XPORT_WC_SUCCESS)
				return perf_wc_error(&wc[i], err);
			if (s->o.op == PERF_ATOMIC && s->o.verify &&
			    r->bad_offset == 0 && !atomic_ok(s, &wc[i]))
				r->bad_offset = UINT64_MAX;
			done[wq]++;
			total_done++;
			bins_add(&bins, last - t0, s->o.op == PERF_ATOMIC ? 8 : s->o.size);
		}
		perf_pump(s);
		if (!s->o.iters && last >= deadline)
			stop_posting = true;
		if (s->o.stop && *s->o.stop) {
			r->interrupted = true;
			break;
		}
	}
	r->iterations = total_done;
	r->seconds = last > t0 ? (double)(last - t0) / 1e9 : 0;
	if (r->seconds > 0) {
		double bytes = (double)total_done * (s->o.op == PERF_ATOMIC ? 8 : (double)s->o.size);

		r->bw_avg_gbps = bytes * 8 / r->seconds / 1e9;
		r->msg_rate_mpps = (double)total_done / r->seconds / 1e6;
	}
	/* Peak: the best full bin; short runs have none, so peak = average. */
	r->bw_peak_gbps = r->bw_avg_gbps;
	for (unsigned i = 0; i + 1 < bins.used; i++) {
		double g = (double)bins.bytes[i] * 8 / ((double)bins.width_ns / 1e9) / 1e9;

		if (bins.used > 2 && g > r->bw_peak_gbps)
			r->bw_peak_gbps = g;
	}
	if (s->o.interval > 0) {
		uint64_t w = (uint64_t)(s->o.interval * 1e9);

		if (w < bins.width_ns)
			w = bins.width_ns;
		for (unsigned i = 0; i < bins.used; i++) {
			unsigned k = (unsigned)((uint64_t)i * bins.width_ns / w);
			struct perf_interval *iv = &r->intervals[k];

			if (k >= PERF_MAX_INTERVALS)
				break;
			iv->start_s = (double)k * (double)w / 1e9;
			iv->end_s = iv->start_s + (double)w / 1e9;
			iv->bytes += bins.bytes[i];
			iv->msgs += bins.msgs[i];
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
	if (perf_run_end(s, &r->verified, &r->bad_offset, err) < 0)
		return -1;
	if (s->o.verify && s->o.op == PERF_READ) {
		for (unsigned wq = 0; wq < s->o.qps && r->verified; wq++)
			for (uint64_t i = 0; i < s->o.size; i++)
				if (s->a.buf[wq * s->a.slot + i] != perf_pattern(i, wq, s->o.size)) {
					r->verified = false;
					r->bad_offset = i;
					break;
				}
	}
	if (s->o.verify && s->o.op == PERF_ATOMIC && r->bad_offset) {
		r->verified = false;
		r->bad_offset = 0;
	}
	xport_dev_counters(s->dev, &r->counters);
	return 0;
#undef bins
}

int perf_run_bw(struct perf_session *s, struct perf_bw_result *r, char *err)
{
	struct bins *b = malloc(sizeof(*b));
	int rc;

	if (!b) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	rc = run_bw(s, r, b, err);
	free(b);
	return rc;
}
