// SPDX-License-Identifier: MIT
/*
 * The server end's duties, shared by the server process and by --loopback
 * (where the same process runs both ends): keep RECVs posted for SEND
 * tests and check what arrives, echo latency pings, and otherwise just
 * drive the engine while the client works on our memory.
 */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ctl.h"
#include "perf_int.h"

uint64_t perf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t perf_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

double perf_cpu_percent(uint64_t cpu_ns, uint64_t wall_ns)
{
	return wall_ns ? (double)cpu_ns * 100.0 / (double)wall_ns : 0;
}

bool perf_inline_ok(const struct perf_session *s, uint64_t len)
{
	return (s->o.op == PERF_SEND || s->o.op == PERF_WRITE) && len <= s->o.inline_size;
}

static struct xport_sge slot_sge(const struct perf_end *e, unsigned q, uint64_t len)
{
	return (struct xport_sge){ (uint64_t)(uintptr_t)e->buf + q * e->slot, (uint32_t)len,
				   e->mr->lkey };
}

static int post_recv(struct perf_session *s, struct perf_end *e, unsigned q)
{
	struct xport_recv_wr wr = { .wr_id = q, .sge = slot_sge(e, q, e->half) };
	char err[XPORT_ERR_LEN];

	(void)s;
	wr.sge.addr += e->rx_off;
	return xport_post_recv(e->qp[q], &wr, err);
}

/* Echo a latency ping back on QP q (same size, same last byte; on UD
 * from behind the GRH area the ping landed after). */
static void echo(struct perf_session *s, struct perf_end *e, unsigned q)
{
	struct xport_send_wr wr = {
		.wr_id = UINT64_MAX, .signaled = true, .sge = slot_sge(e, q, s->o.size),
		.opcode = s->o.op == PERF_SEND ? XPORT_WR_SEND : XPORT_WR_RDMA_WRITE,
		.remote_addr = e->remote_va + q * e->peer_slot + e->peer_slot / 2,
		.rkey = e->remote_rkey, .inline_data = perf_inline_ok(s, s->o.size),
	};
	char err[XPORT_ERR_LEN];

	if (s->o.conn == XPORT_QPT_UD && s->o.op == PERF_SEND)
		wr.sge.addr += XPORT_GRH_LEN;
	xport_post_send(e->qp[q], &wr, err);
	e->echo_count++;
}

/* SEND verification: every message must carry the client's pattern (on UD
 * behind the GRH area, which is not the client's). */
static void check_message(struct perf_session *s, struct perf_end *e, unsigned q, uint32_t len)
{
	const uint8_t *m = e->buf + q * e->slot + e->rx_off + (s->o.conn == XPORT_QPT_UD ?
								 XPORT_GRH_LEN : 0);

	if (!s->o.verify || s->verify_failed)
		return;
	if (len != s->o.size) {
		s->verify_failed = true;
		s->bad_offset = len;
		return;
	}
	for (uint64_t i = 0; i + 1 < len; i++) {	/* the last byte is the ping tag */
		if (m[i] != perf_pattern(i, q, s->o.size)) {
			s->verify_failed = true;
			s->bad_offset = i;
			return;
		}
	}
}

uint32_t perf_recv_len(const struct perf_session *s, const struct xport_wc *wc)
{
	/* The GRH area is UD's alone (rxe flags IBV_WC_GRH on UC too). */
	return s->o.conn == XPORT_QPT_UD && wc->byte_len >= XPORT_GRH_LEN ?
	       wc->byte_len - XPORT_GRH_LEN : wc->byte_len;
}

void perf_server_on_wc(struct perf_session *s, struct perf_end *e, const struct xport_wc *wc)
{
	unsigned q = (unsigned)wc->wr_id;

	if (wc->status != XPORT_WC_SUCCESS) {
		s->server_error = wc->status;
		return;
	}
	if (wc->opcode != XPORT_WC_RECV)
		return;
	{
		uint32_t len = perf_recv_len(s, wc);

		s->rx_last_ns = perf_now_ns();
		if (!s->rx_msgs++)
			s->rx_first_ns = s->rx_last_ns;
		s->rx_bytes += len;
		check_message(s, e, q, len);
	}
	post_recv(s, e, q);
	if (s->o.latency)
		echo(s, e, q);
}

void perf_pump_server(struct perf_session *s, struct perf_end *e)
{
	struct xport_wc wc[32];
	int n = xport_poll_cq(e->cq, wc, 32);

	for (int i = 0; i < n; i++)
		perf_server_on_wc(s, e, &wc[i]);
	/* WRITE pings: the last byte of the slot changes. */
	if (s->o.latency && s->o.op == PERF_WRITE) {
		for (unsigned q = 0; q < s->o.qps; q++) {
			uint8_t tag = e->buf[q * e->slot + s->o.size - 1];

			if (tag && tag != e->last_tag[q]) {
				e->last_tag[q] = tag;
				echo(s, e, q);
			}
		}
	}
}

/* The bytes an end sends (WRITE, SEND) or offers to READs. */
void perf_fill_pattern(struct perf_session *s, struct perf_end *e, size_t off)
{
	for (unsigned q = 0; q < s->o.qps; q++)
		for (uint64_t i = 0; i < s->o.size; i++)
			e->buf[q * e->slot + off + i] = perf_pattern(i, q, s->o.size);
}

void perf_check_pattern(struct perf_session *s, struct perf_end *e, size_t off)
{
	if (!s->o.verify)
		return;
	for (unsigned q = 0; q < s->o.qps && !s->verify_failed; q++)
		for (uint64_t i = 0; i < s->o.size; i++)
			if (!perf_byte_ok(e->buf[q * e->slot + off + i], perf_pattern(i, q, s->o.size),
					  s->o.conn)) {
				s->verify_failed = true;
				s->bad_offset = i;
				break;
			}
}

/* SEND tests: RECVs on every QP of an end that receives, posted once. */
void perf_post_recvs(struct perf_session *s, struct perf_end *e)
{
	for (unsigned q = 0; q < s->o.qps && s->o.op == PERF_SEND; q++) {
		unsigned depth = s->o.latency ? 2 : s->o.rx_depth;

		if (e->recvs_posted[q])
			continue;
		for (unsigned k = 0; k < depth; k++)
			post_recv(s, e, q);
		e->recvs_posted[q] = true;
	}
}

/* Gets the server end ready for a run of the current size (with -b it
 * sends too, from its second halves; see perf_end). */
void perf_server_prepare(struct perf_session *s, struct perf_end *e)
{
	s->verify_failed = false;
	s->bad_offset = 0;
	s->server_error = 0;
	s->rx_msgs = s->rx_bytes = 0;
	s->rx_first_ns = s->rx_last_ns = 0;
	xport_dev_counters(s->dev, &s->rx_ctr0);
	s->rx_cpu0 = perf_cpu_ns();
	s->rx_wall0 = perf_now_ns();
	e->tx_off = s->o.bidirectional ? e->half : 0;
	e->rx_off = 0;
	memset(e->last_tag, 0, sizeof(e->last_tag));
	memset(e->buf, 0, e->buf_len);
	if (s->o.op == PERF_READ)	/* what the client will read */
		perf_fill_pattern(s, e, 0);
	if (s->o.bidirectional && (s->o.op == PERF_WRITE || s->o.op == PERF_SEND))
		perf_fill_pattern(s, e, e->tx_off);
	perf_post_recvs(s, e);
}

/* WRITE verification on the target after the run. */
void perf_server_check(struct perf_session *s, struct perf_end *e)
{
	if (s->o.op == PERF_WRITE && !s->o.latency)
		perf_check_pattern(s, e, e->rx_off);
}

bool perf_oob_readable(struct oob *o)
{
	struct pollfd p = { .fd = o->fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

int perf_pump_until_peer(struct perf_session *s, uint64_t deadline_ns, char *err)
{
	/* Look at the control channel only now and then: a poll() per pass
	 * would cost more than the data path it interrupts. */
	for (unsigned spins = 0;; spins++) {
		if (spins % 256 == 0) {
			if (perf_oob_readable(&s->oob))
				return 0;
			if (!deadline_ns && s->o.stop && *s->o.stop) {
				snprintf(err, XPORT_ERR_LEN, "interrupted");
				return -1;
			}
			if (deadline_ns && perf_now_ns() > deadline_ns) {
				snprintf(err, XPORT_ERR_LEN, "no answer from the peer for %d s; check that "
					 "it is still running (--timeout sets the wait)", s->o.timeout_s);
				return -1;
			}
		}
		perf_pump_server(s, &s->a);
	}
}

/*
 * A passive target on a device that progresses by itself (WRITE, READ or
 * atomics on an RNIC or rxe): nothing to poll, so sleep on the control
 * channel as perftest's server does, and leave the CPU to the device (with
 * Soft-RoCE, the kernel's own work).
 */
static int sleep_until_peer(struct perf_session *s, char *err)
{
	for (;;) {
		struct pollfd p = { .fd = s->oob.fd, .events = POLLIN };

		if (poll(&p, 1, 100) > 0)
			return 0;
		if (s->o.stop && *s->o.stop) {
			snprintf(err, XPORT_ERR_LEN, "interrupted");
			return -1;
		}
	}
}

static bool passive_target(const struct perf_session *s)
{
	return xport_self_driven(s->dev) && !s->o.bidirectional && !s->o.latency &&
	       s->o.op != PERF_SEND;
}

void perf_settle(struct perf_session *s, struct perf_end *e)
{
	uint64_t start = perf_now_ns(), now = start;

	if (s->o.conn == XPORT_QPT_RC)
		return;
	while (now - start < PERF_SETTLE_MAX_NS &&
	       now - (s->rx_last_ns > start ? s->rx_last_ns : start) < PERF_SETTLE_IDLE_NS) {
		perf_pump_server(s, e);
		now = perf_now_ns();
	}
}

/* What this end received over the run, for the client's loss figures. */
void perf_received(struct perf_session *s, struct ctl_received *r)
{
	struct xport_counters now, d;

	xport_dev_counters(s->dev, &now);
	xport_counters_delta(&d, &now, &s->rx_ctr0);
	*r = (struct ctl_received){ .msgs = s->rx_msgs, .bytes = s->rx_bytes,
				    .drops_known = !xport_self_driven(s->dev),
				    .rcvbuf_drops = d.rcvbuf_drops, .no_recv_drops = d.no_recv_drops,
				    .qkey_drops = d.qkey_drops, .uc_msgs_cut = d.uc_msgs_cut };
}

/* UC and UD SEND: what the client sent, and the run as it arrived here
 * (a WRITE without immediate leaves nothing here to count). */
static int report_served(struct perf_session *s, const struct ctl_sent *tx,
			 const struct ctl_received *rx, perf_served_fn served, void *ctx, char *err)
{
	struct perf_bw_result *r;

	if (!served || s->o.op != PERF_SEND)
		return 0;
	if (!(r = malloc(sizeof(*r)))) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	perf_served_result(s, tx, rx, r);
	served(r, ctx);
	free(r);
	return 0;
}

static int recv_sent(struct perf_session *s, struct ctl_sent *tx, char *err)
{
	json_t *m = ctl_recv(&s->oob, OOB_PARAMS, err);
	int rc = m ? ctl_sent_parse(m, tx, err) : -1;

	json_decref(m);
	return rc;
}

/* One run: start barrier, serve until the client's done barrier, report. */
static int serve_run(struct perf_session *s, perf_served_fn served, void *ctx, char *err)
{
	struct ctl_verdict v;
	struct ctl_sent tx = { 0 };

	perf_server_prepare(s, &s->a);
	if (oob_barrier(&s->oob, 1, err) < 0)
		return -1;
	if (s->o.bidirectional && perf_serve_tx(s, err) < 0)
		return -1;
	if ((passive_target(s) ? sleep_until_peer(s, err) : perf_pump_until_peer(s, 0, err)) < 0)
		return -1;
	perf_settle(s, &s->a);
	if (perf_tells_sent(s) && recv_sent(s, &tx, err) < 0)
		return -1;
	if (oob_barrier(&s->oob, 2, err) < 0)
		return -1;
	perf_server_check(s, &s->a);
	v = (struct ctl_verdict){ .verified = !s->verify_failed, .bad_offset = s->bad_offset,
				  .status = s->server_error };
	perf_received(s, &v.received);
	if (ctl_send(&s->oob, OOB_RESULT, ctl_verdict_json(&v), err) < 0)
		return -1;
	return perf_tells_sent(s) ? report_served(s, &tx, &v.received, served, ctx, err) : 0;
}

int perf_serve_all(struct perf_session *s, unsigned *runs, perf_served_fn served, void *ctx,
		   char *err)
{
	*runs = 0;
	for (;;) {
		uint64_t size;
		json_t *m;
		int rc;

		/* The client may think between runs: wait without a deadline. */
		s->oob.timeout_ms = -1;
		m = ctl_recv(&s->oob, OOB_PARAMS, err);
		s->oob.timeout_ms = s->o.timeout_s * 1000;
		rc = m ? ctl_run_parse(m, &size, err) : -1;
		json_decref(m);
		if (rc < 0)
			return -1;
		if (size == 0)
			return 0;
		if (perf_set_size(s, size, err) < 0)
			return -1;
		if (serve_run(s, served, ctx, err) < 0)
			return -1;
		(*runs)++;
	}
}
