// SPDX-License-Identifier: MIT
/*
 * The latency test, client side: one operation in flight, timed from
 * post to completion (READ, atomics) or to the echo's arrival (SEND,
 * WRITE), recorded in the fixed-memory histogram so percentiles exist in
 * duration mode too.  SEND and WRITE report half the round trip, as
 * perftest does.  Busy-polls.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_int.h"

static struct xport_sge half_sge(struct perf_end *e, unsigned q, size_t off, uint64_t len)
{
	return (struct xport_sge){ (uint64_t)(uintptr_t)e->buf + q * e->slot + off, (uint32_t)len,
				   e->mr->lkey };
}

/* The wait for one answer: RC's is --timeout (no answer is a failure);
 * UC's and UD's is lat_wait_us, after which the ping counts as lost. */
static uint64_t answer_wait_ns(const struct perf_session *s)
{
	if (s->o.conn == XPORT_QPT_RC)
		return (uint64_t)s->o.timeout_s * 1000000000ull;
	return (uint64_t)(s->o.lat_wait_us ? s->o.lat_wait_us : PERF_LAT_WAIT_US) * 1000;
}

/* Waits for the echo or the completion: 1, or 0 when a UC/UD ping had no
 * answer in time, or -1 with err on failure (RC: no answer at all). */
static int wait_for(struct perf_session *s, bool (*ready)(struct perf_session *, void *),
		    void *ctx, char *err)
{
	uint64_t limit = perf_now_ns() + answer_wait_ns(s);
	unsigned spins = 0;

	while (!ready(s, ctx)) {
		perf_pump(s);
		if (++spins % 1024 == 0) {
			if (s->o.stop && *s->o.stop) {
				snprintf(err, XPORT_ERR_LEN, "interrupted");
				return -1;
			}
			if (perf_now_ns() > limit && s->o.conn != XPORT_QPT_RC)
				return 0;
			if (perf_now_ns() > limit) {
				snprintf(err, XPORT_ERR_LEN, "no answer from the peer for %d s; check that "
					 "it is still running (--timeout sets the wait)", s->o.timeout_s);
				return -1;
			}
		}
	}
	return 1;
}

struct wait_ctx {
	uint8_t tag;
	bool want_recv, want_send;
	bool got_recv, got_send;
	bool failed;
	struct xport_wc bad;
	uint64_t late;			/* UC/UD: echoes of earlier pings, taken and dropped */
};

/* Where a received message's bytes start: behind the GRH area on UD. */
static size_t payload_off(const struct perf_session *s)
{
	return s->o.conn == XPORT_QPT_UD ? XPORT_GRH_LEN : 0;
}

static int post_echo_recv(struct perf_session *s, char *err);

/* Reaps completions: the send's own, and the echo's RECV. */
static bool completions_ready(struct perf_session *s, void *p)
{
	struct wait_ctx *w = p;
	struct xport_wc wc[8];
	int n = xport_poll_cq(s->a.cq, wc, 8);

	for (int i = 0; i < n; i++) {
		if (wc[i].status != XPORT_WC_SUCCESS) {
			w->failed = true;
			w->bad = wc[i];
			return true;
		}
		if (wc[i].opcode != XPORT_WC_RECV) {
			w->got_send = true;
			continue;
		}
		/* The echo carries the ping's tag in its last byte: a late echo
		 * of a lost ping's is taken, counted and its receive posted again. */
		if (s->o.conn != XPORT_QPT_RC &&
		    s->a.buf[s->a.half + payload_off(s) + s->o.size - 1] != w->tag) {
			char err[XPORT_ERR_LEN];

			w->late++;
			if (post_echo_recv(s, err) < 0) {
				w->failed = true;
				w->bad = wc[i];
				w->bad.status = XPORT_WC_GENERAL_ERR;	/* the repost, not the echo */
				return true;
			}
			continue;
		}
		w->got_recv = true;
	}
	return (!w->want_recv || w->got_recv) && (!w->want_send || w->got_send);
}

/* WRITE echo: the last byte of our echo half carries the tag back. */
static bool write_echo_ready(struct perf_session *s, void *p)
{
	struct wait_ctx *w = p;
	struct xport_wc wc[8];
	int n = xport_poll_cq(s->a.cq, wc, 8);

	for (int i = 0; i < n; i++)
		if (wc[i].status != XPORT_WC_SUCCESS) {
			w->failed = true;
			w->bad = wc[i];
			return true;
		}
	return s->a.buf[s->a.half + s->o.size - 1] == w->tag;
}

static int post_echo_recv(struct perf_session *s, char *err)
{
	struct xport_recv_wr rr = { .wr_id = 0, .sge = half_sge(&s->a, 0, s->a.half, s->a.half) };

	return xport_post_recv(s->a.qp[0], &rr, err);
}

void perf_lat_record(struct perf_session *s, struct perf_lat_result *r, uint64_t ns)
{
	hist_record(&r->h, ns);
	if (!s->o.raw_samples)
		return;
	if (r->nsamples == s->samples_cap) {
		uint64_t cap = s->samples_cap ? 2 * s->samples_cap : 4096;
		uint64_t *p;

		if (cap > PERF_MAX_SAMPLES)
			cap = PERF_MAX_SAMPLES;
		p = cap > s->samples_cap ? realloc(s->samples, cap * sizeof(*p)) : NULL;
		if (!p) {	/* at the cap, or out of memory: the histogram goes on */
			r->samples_truncated = true;
			return;
		}
		s->samples = p;
		s->samples_cap = cap;
	}
	s->samples[r->nsamples++] = ns;
	r->samples = s->samples;
}

void perf_latency_gap(const struct perf_session *s)
{
	uint64_t until;

	if (!s->o.latency_gap_us)
		return;
	until = perf_now_ns() + (uint64_t)s->o.latency_gap_us * 1000;
	while (perf_now_ns() < until)
		;
}

/* One timed operation: 1 with its duration in *ns, 0 when a UC/UD ping
 * had no answer in time (lost), or -1 with err. */
static int ping(struct perf_session *s, uint64_t i, uint64_t *ns, struct perf_lat_result *r,
		char *err)
{
	struct perf_end *e = &s->a;
	struct wait_ctx w = { .tag = (uint8_t)(i % 127 + 1) };
	struct xport_send_wr wr = {
		.wr_id = i, .signaled = true, .sge = half_sge(e, 0, 0, s->o.size),
		.remote_addr = e->remote_va, .rkey = e->remote_rkey,
		.inline_data = perf_inline_ok(s, s->o.size),
	};
	uint64_t t0;
	int ok;

	switch (s->o.op) {
	case PERF_SEND:
		wr.opcode = XPORT_WR_SEND;
		w.want_recv = w.want_send = true;
		break;
	case PERF_WRITE:
		wr.opcode = XPORT_WR_RDMA_WRITE;
		break;
	case PERF_READ:
		wr.opcode = XPORT_WR_RDMA_READ;
		w.want_send = true;
		break;
	case PERF_ATOMIC:
		wr.opcode = s->o.atomic_cas ? XPORT_WR_ATOMIC_CMP_AND_SWP :
			    XPORT_WR_ATOMIC_FETCH_AND_ADD;
		wr.sge.length = 8;
		wr.compare_add = s->o.atomic_cas ? i : 1;
		wr.swap = i + 1;
		w.want_send = true;
		break;
	}
	if (s->o.op == PERF_SEND || s->o.op == PERF_WRITE)
		e->buf[s->o.size - 1] = w.tag;
	perf_latency_gap(s);
	t0 = perf_now_ns();
	if (xport_post_send(e->qp[0], &wr, err) < 0)
		return -1;
	ok = wait_for(s, s->o.op == PERF_WRITE ? write_echo_ready : completions_ready, &w, err);
	*ns = perf_now_ns() - t0;
	r->late += w.late;
	if (ok <= 0)
		return ok;	/* lost: its receive stays posted for whatever comes */
	if (w.failed) {
		perf_wc_error(&w.bad, err);
		return -1;
	}
	if (s->o.op == PERF_SEND && post_echo_recv(s, err) < 0)
		return -1;
	return 1;
}

int perf_run_lat(struct perf_session *s, struct perf_lat_result *r, char *err)
{
	uint64_t deadline, t, wall0, cpu0, last_answer, streak = 0;
	int rc;

	if (s->pt && (s->role == PERF_SERVER || s->o.op == PERF_WRITE || s->o.op == PERF_SEND))
		return pt_run_lat(s, r, err);
	memset(r, 0, sizeof(*r));
	hist_init(&r->h);
	r->bytes = s->o.size;
	r->half_rtt = s->o.op == PERF_SEND || s->o.op == PERF_WRITE;
	r->unreliable = s->o.conn != XPORT_QPT_RC;
	r->wait_us = (uint32_t)(answer_wait_ns(s) / 1000);
	if (perf_run_begin(s, err) < 0)
		return -1;
	/* One echo receive outstanding for the session: each answer's is
	 * posted again as it is taken, and a lost ping leaves its own posted
	 * (one per size would pile up on the one buffer they share). */
	if (s->o.op == PERF_SEND && !s->echo_recv_posted) {
		if (post_echo_recv(s, err) < 0)
			return -1;
		s->echo_recv_posted = true;
	}
	cpu0 = perf_cpu_ns();
	wall0 = last_answer = perf_now_ns();
	deadline = wall0 + (uint64_t)(s->o.duration * 1e9);
	for (uint64_t i = 0; s->o.iters ? i < s->o.iters : perf_now_ns() < deadline; i++) {
		if (s->o.stop && *s->o.stop) {	/* Ctrl-C: report what we have */
			r->interrupted = true;
			break;
		}
		rc = ping(s, i, &t, r, err);
		if (rc < 0) {
			if (s->o.stop && *s->o.stop) {
				r->interrupted = true;
				break;
			}
			return -1;
		}
		if (rc == 0) {
			r->lost++;
			streak++;
			/* A peer that answers nothing for --timeout is gone, not
			 * lossy: end the run rather than wait on every ping. */
			if (perf_now_ns() - last_answer >= (uint64_t)s->o.timeout_s * 1000000000ull) {
				snprintf(err, XPORT_ERR_LEN, "no ping was answered for %d s (--timeout; "
					 "%llu lost in a row): the peer stopped answering",
					 s->o.timeout_s, (unsigned long long)streak);
				return -1;
			}
			continue;
		}
		last_answer = perf_now_ns();
		streak = 0;
		perf_lat_record(s, r, r->half_rtt ? t / 2 : t);
		r->iterations++;
		if (s->o.op == PERF_ATOMIC && s->o.verify) {
			uint64_t got;

			memcpy(&got, s->a.buf, 8);
			if (got != i && !r->bad_offset)
				r->bad_offset = i + 1;
		}
	}
	r->cpu_util_percent = perf_cpu_percent(perf_cpu_ns() - cpu0, perf_now_ns() - wall0);
	{
		uint64_t atomic_bad = r->bad_offset;

		if (perf_run_end(s, &r->verified, &r->bad_offset, err) < 0)
			return -1;
		if (atomic_bad) {
			r->verified = false;
			r->bad_offset = atomic_bad - 1;
		}
	}
	if (s->o.verify && s->o.op == PERF_READ)
		for (uint64_t i = 0; i < s->o.size; i++)
			if (s->a.buf[i] != perf_pattern(i, 0, s->o.size)) {
				r->verified = false;
				r->bad_offset = i;
				break;
			}
	return 0;
}
