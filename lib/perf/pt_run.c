// SPDX-License-Identifier: MIT
/*
 * Runs against perftest: what each test's data path expects of its peer
 * (../shared/reference/perftest-oob.md §9, §13.4).  A client's bandwidth
 * runs are bw.c's, with the syncs here; a server measures for itself,
 * between the syncs (passive WRITE/READ/atomic targets) or from its
 * receive completions (SEND).  Latency runs follow perftest's ping-pongs:
 * WRITE polls the last byte of the message for the iteration counter,
 * SEND answers each receive.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pt_int.h"

#define LAT_RECVS 16			/* receives kept posted in a SEND latency run */

/* A receive on QP q into the half of its slot the peer's messages land in. */
int pt_post_recv(struct perf_session *s, unsigned q, char *err)
{
	struct perf_end *e = &s->a;
	struct xport_recv_wr rr = {
		.wr_id = q,
		.sge = { (uint64_t)(uintptr_t)e->buf + q * e->slot + e->half, (uint32_t)e->half,
			 e->mr->lkey },
	};

	return xport_post_recv(e->qp[q], &rr, err);
}

void pt_post_recvs(struct perf_session *s, unsigned per_qp, char *err)
{
	for (unsigned q = 0; q < s->o.qps; q++) {
		if (s->a.recvs_posted[q])
			continue;
		for (unsigned k = 0; k < per_qp; k++)
			if (pt_post_recv(s, q, err) < 0)
				return;
		s->a.recvs_posted[q] = true;
	}
}

static int repost(struct perf_session *s, const struct xport_wc *wc, char *err)
{
	return pt_post_recv(s, (unsigned)wc->wr_id, err);
}

/* A SEND that is not the size this side expects: the options differ. */
static int wrong_size(struct perf_session *s, uint32_t got, char *err)
{
	s->pt->broken = true;
	snprintf(err, XPORT_ERR_LEN, "the perftest peer at %s sent a %" PRIu32 "-byte message "
		 "where this side runs -s %" PRIu64 ": give both sides the same -s/-a", s->oob.peer,
		 got, s->o.size);
	return -1;
}

int pt_run_begin(struct perf_session *s, char *err)
{
	s->verify_failed = false;
	s->bad_offset = 0;
	s->a.tx_off = s->a.rx_off = 0;
	/* SEND tests sync before each size, once the receives are posted;
	 * -b tests too (§9.3). */
	if (s->o.op == PERF_SEND || s->o.bidirectional) {
		if (s->o.op == PERF_SEND && (s->role == PERF_SERVER || s->o.latency ||
					     s->o.bidirectional))
			pt_post_recvs(s, s->o.latency ? LAT_RECVS : s->o.rx_depth, err);
		return pt_sync(s, err);
	}
	return 0;
}

/*
 * The closing sync of a SEND test, right after its last run rather than at
 * close: a perftest peer that counts other -n/-D or -q is still waiting for
 * messages then and does not answer, and that is this run's failure.
 */
static int close_sync_now(struct perf_session *s, char *err)
{
	int saved = s->oob.timeout_ms;
	int rc;

	s->pt->close_sync_due = false;
	rc = pt_sync(s, err);
	s->oob.timeout_ms = saved;
	if (rc < 0)
		snprintf(err, XPORT_ERR_LEN, "the perftest peer at %s did not end the test with this "
			 "side: it counts the messages of its own -n/-D, -q and -s/-a, so start it with "
			 "the same ones", s->oob.peer);
	return rc;
}

/*
 * A SEND client's perftest server stops receiving once it has its own -n
 * messages; the sends beyond them then wait on RNR NAKs forever (perftest's
 * rnr_retry is 7) while it waits for this side's sync.  So: no completion
 * for --timeout while sends are outstanding, or the server speaking before
 * this side is done (it counted fewer, or died) and no completion for a
 * grace period after, fails the run in one line naming -n.
 */
#define PT_ENDED_GRACE_NS 2000000000ull

int pt_check_stalled(struct perf_session *s, struct pt_watch *w, uint64_t done, char *err)
{
	uint64_t now, quiet;

	if (s->o.op != PERF_SEND || s->role != PERF_CLIENT || s->o.bidirectional ||
	    !s->o.iters || s->o.latency)
		return 0;
	now = perf_now_ns();
	if (!w->progress_ns || done != w->done) {
		w->done = done;
		w->progress_ns = now;
	}
	if (!w->heard_ns && perf_oob_readable(&s->oob))
		w->heard_ns = now;
	quiet = now - w->progress_ns;
	if (quiet < (uint64_t)s->o.timeout_s * 1000000000ull &&
	    (!w->heard_ns || quiet < PT_ENDED_GRACE_NS || now - w->heard_ns < PT_ENDED_GRACE_NS))
		return 0;
	snprintf(err, XPORT_ERR_LEN, "the perftest server at %s stopped taking this side's "
		 "messages after %llu of %llu (-n %llu%s): it counts its own -n, so start both "
		 "sides with the same -n", s->oob.peer, (unsigned long long)done,
		 (unsigned long long)s->o.iters, (unsigned long long)s->pt->iters_per_qp,
		 s->o.qps > 1 ? " per QP" : "");
	s->pt->broken = true;
	return -1;
}

int pt_run_end(struct perf_session *s, char *err)
{
	bool last = !s->o.sweep || s->o.size >= PERF_MAX_SIZE;

	/* -a with SEND, or with -b: a sync after each size too (§9.2, §9.3). */
	if ((s->o.op == PERF_SEND || s->o.bidirectional) && !s->o.latency && s->o.sweep &&
	    pt_sync(s, err) < 0)
		return -1;
	if (s->o.op == PERF_SEND && !s->o.bidirectional && last && s->pt->close_sync_due)
		return close_sync_now(s, err);
	return 0;
}

/* From perftest's report units (§10) to Gb/s. */
static double report_gbps(const struct perf_session *s, double v)
{
	return s->o.report_gbits ? v : v * 1048576.0 * 8 / 1e9;
}

/*
 * -b: both sides sent; after the run (and with -a a sync) each side's
 * figures go across (§9.3), and the row is the sum.  The peer may still
 * be sending when this side is done: the engine is driven until its
 * report comes in.
 */
int pt_bidir_end(struct perf_session *s, const struct perf_bw_result *r,
		 struct perf_bw_result *peer, char *err)
{
	struct pt_state *pt = s->pt;

	pt_note_bw(s, r);
	if (s->o.sweep && pt_sync_driving(s, err) < 0)	/* -a: a sync after each size */
		return -1;
	if (s->role == PERF_SERVER && pt_wait_peer(s, false, err) < 0)
		return -1;
	for (unsigned i = 0; i < PT_REPORT_FIELDS; i++) {
		uint8_t out[8], in[8];

		pt_report_field(&pt->report, i, out);
		if ((s->role == PERF_CLIENT && (oob_send_raw(&s->oob, out, 8, err) < 0 ||
						(i == 0 && pt_wait_peer(s, false, err) < 0))) ||
		    oob_recv_raw(&s->oob, in, 8, err) < 0 ||
		    (s->role == PERF_SERVER && oob_send_raw(&s->oob, out, 8, err) < 0)) {
			pt->broken = true;
			return -1;
		}
		pt_report_set(&pt->peer_report, i, in);
	}
	memset(peer, 0, sizeof(*peer));
	peer->iterations = pt->peer_report.iters;
	peer->bw_avg_gbps = report_gbps(s, pt->peer_report.bw_avg);
	peer->bw_peak_gbps = report_gbps(s, pt->peer_report.bw_peak);
	peer->msg_rate_mpps = pt->peer_report.msg_rate;
	return 0;
}

/* perftest's MB/sec: 2^20 bytes per second. */
static double mibps(double gbps)
{
	return gbps * 1e9 / 8 / 1048576.0;
}

void pt_note_bw(struct perf_session *s, const struct perf_bw_result *r)
{
	struct pt_report *p = &s->pt->report;
	bool g = s->o.report_gbits;	/* --report_gbits: 10^9 bits/s */

	p->size = r->bytes_per_msg;
	p->iters = r->iterations;
	p->bw_peak = g ? r->bw_peak_gbps : mibps(r->bw_peak_gbps);
	p->bw_avg = g ? r->bw_avg_gbps : mibps(r->bw_avg_gbps);
	p->msg_rate = r->msg_rate_mpps;
}

static void figures(struct perf_bw_result *r, double bytes, uint64_t msgs, uint64_t ns)
{
	r->iterations = msgs;
	r->seconds = (double)ns / 1e9;
	if (r->seconds > 0) {
		r->bw_avg_gbps = bytes * 8 / r->seconds / 1e9;
		r->msg_rate_mpps = (double)msgs / r->seconds / 1e6;
	}
	r->bw_peak_gbps = r->bw_avg_gbps;
}

/*
 * How a passive target sees its client's traffic: the packets its port
 * moves (soft engine: its own counters; verbs: the port's packet
 * counters in sysfs, the IB standard ones or rxe's).  The run is from the
 * first change to the last: the closing sync comes only after perftest's
 * client has printed its report (a clock calibration of ~0.2 s).  Without
 * counters, a WRITE or atomic shows in memory (perftest sends rand()
 * bytes) and the syncs bound the run.
 */
struct traffic {
	int fd[2];			/* verbs: received and sent packets */
	uint64_t last;
	bool seen;
	uint64_t first_ns, last_ns;
};

static uint64_t sysfs_value(int fd)
{
	char b[32];
	ssize_t n = fd >= 0 ? pread(fd, b, sizeof(b) - 1, 0) : 0;

	if (n <= 0)
		return 0;
	b[n] = '\0';
	return strtoull(b, NULL, 10);
}

static uint64_t traffic_count(struct perf_session *s, const struct traffic *t)
{
	struct xport_counters c;

	if (!xport_self_driven(s->dev)) {
		xport_dev_counters(s->dev, &c);
		return c.rx_packets + c.tx_packets;
	}
	return sysfs_value(t->fd[0]) + sysfs_value(t->fd[1]);
}

static void traffic_open(struct perf_session *s, struct traffic *t)
{
	static const char *const files[2][2] = {
		{ "counters/port_rcv_packets", "hw_counters/rcvd_pkts" },
		{ "counters/port_xmit_packets", "hw_counters/sent_pkts" },
	};
	char dev[64], path[256];
	int port;

	memset(t, 0, sizeof(*t));
	t->fd[0] = t->fd[1] = -1;
	if (xport_self_driven(s->dev) && xport_host_port(s->dev, dev, sizeof(dev), &port))
		for (int d = 0; d < 2; d++)
			for (int i = 0; i < 2 && t->fd[d] < 0; i++) {
				snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/%s", dev,
					 port, files[d][i]);
				t->fd[d] = open(path, O_RDONLY | O_CLOEXEC);
			}
	t->last = traffic_count(s, t);
}

static bool have_counters(struct perf_session *s, const struct traffic *t)
{
	return !xport_self_driven(s->dev) || t->fd[0] >= 0 || t->fd[1] >= 0;
}

static void traffic_check(struct perf_session *s, struct traffic *t)
{
	uint64_t now, v;

	if (!have_counters(s, t)) {	/* memory: the first WRITE or atomic */
		for (unsigned q = 0; q < s->o.qps && !t->seen; q++) {
			volatile const uint8_t *m = s->a.buf + q * s->a.slot + s->a.half;

			for (unsigned i = 0; i < 8 && !t->seen; i++)
				if (m[i]) {
					t->seen = true;
					t->first_ns = perf_now_ns();
				}
		}
		return;
	}
	v = traffic_count(s, t);
	if (v == t->last)
		return;
	now = perf_now_ns();
	if (!t->seen)
		t->first_ns = now;
	t->seen = true;
	t->last_ns = now;
	t->last = v;
}

/* Drives this end until the client's closing sync is in; *t0, *t1: when
 * its traffic began and ended, as far as this side can tell. */
static int watch_passive(struct perf_session *s, uint64_t *t0, uint64_t *t1, char *err)
{
	struct traffic t;
	bool self = xport_self_driven(s->dev);
	int rc = 0;

	traffic_open(s, &t);
	for (unsigned spins = 0;; spins++) {
		struct pollfd p = { .fd = s->oob.fd, .events = POLLIN };

		if ((self || spins % 64 == 0) && poll(&p, 1, 0) > 0)
			break;
		if (self || spins % 16 == 0)
			traffic_check(s, &t);
		if (!self) {
			struct xport_wc wc[16];

			xport_poll_cq(s->a.cq, wc, 16);
		} else {
			/* 50 us: the run's ends finely, the CPU left to the device. */
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
		if (s->o.stop && *s->o.stop) {
			snprintf(err, XPORT_ERR_LEN, "interrupted");
			s->pt->broken = true;
			rc = -1;
			break;
		}
	}
	*t1 = perf_now_ns();
	*t0 = t.seen ? t.first_ns : s->pt->t_start_ns;
	if (t.seen && t.last_ns > *t0 && have_counters(s, &t))
		*t1 = t.last_ns;
	for (int d = 0; d < 2; d++)
		if (t.fd[d] >= 0)
			close(t.fd[d]);
	return rc;
}

/*
 * A WRITE, READ or atomic target does nothing on the data path: the run
 * is its client's traffic as watch_passive sees it; the bytes are what
 * the test moves (with -D, the client's report says how many messages
 * that was).
 */
uint64_t pt_word_sum(const struct perf_session *s)
{
	volatile const uint64_t *w = (volatile const uint64_t *)(void *)s->a.buf;
	uint64_t sum = 0;

	for (size_t i = 0; i < s->a.buf_len / 8; i++)
		sum += w[i];
	return sum;
}

static int serve_passive(struct perf_session *s, struct perf_bw_result *r,
			 bool *from_report, char *err)
{
	struct pt_state *pt = s->pt;
	uint64_t t0, t1, msgs = s->o.iters;
	double bytes;

	if (watch_passive(s, &t0, &t1, err) < 0)
		return -1;
	if (s->o.op == PERF_ATOMIC && !s->o.atomic_cas) {
		r->atomic_added_known = true;
		r->atomic_added = pt_word_sum(s) - pt->word_sum0;
	}
	if (pt_sync(s, err) < 0)
		return -1;
	r->bytes_per_msg = s->o.sweep ? PERF_MAX_SIZE : s->o.op == PERF_ATOMIC ? 8 : s->o.size;
	/* -a: every size 2..8 MiB, n messages each per QP: (2^24 - 2) x n x q bytes. */
	bytes = s->o.sweep ? (double)((2ull << 23) - 2) * (double)msgs :
		(double)r->bytes_per_msg * (double)msgs;
	figures(r, bytes, s->o.sweep ? msgs * 23 : msgs, t1 - t0);
	pt_note_bw(s, r);
	if (pt_reports(s, err) < 0)
		return -1;
	if (!s->o.iters) {	/* -D: the message count is only in the client's report */
		*from_report = true;
		bytes = (double)pt->peer_report.iters * (double)r->bytes_per_msg;
		figures(r, bytes, pt->peer_report.iters, t1 - t0);
	}
	return 0;
}

/* SEND: count what arrives, timed from the first to the last receive, until
 * the count is in or the client's next sync says it has stopped (-D). */
static int serve_send(struct perf_session *s, struct perf_bw_result *r, char *err)
{
	uint64_t got = 0, first = 0, last = 0;
	struct xport_wc wc[64];

	if (pt_run_begin(s, err) < 0)
		return -1;
	r->bytes_per_msg = s->o.size;
	for (unsigned spins = 0; !s->o.iters || got < s->o.iters; spins++) {
		int n = xport_poll_cq(s->a.cq, wc, 64);

		for (int i = 0; i < n; i++) {
			if (wc[i].status != XPORT_WC_SUCCESS)
				return pt_wc_error(s, &wc[i], err);
			if (wc[i].opcode != XPORT_WC_RECV)
				continue;
			if (perf_recv_len(s, &wc[i]) != s->o.size)
				return wrong_size(s, perf_recv_len(s, &wc[i]), err);
			last = perf_now_ns();
			if (!got++)
				first = last;
			if (repost(s, &wc[i], err) < 0)
				return -1;
		}
		if (spins % 256 == 0 && perf_oob_readable(&s->oob))
			break;
		if (s->o.stop && *s->o.stop) {
			snprintf(err, XPORT_ERR_LEN, "interrupted");
			s->pt->broken = true;
			return -1;
		}
	}
	figures(r, (double)got * (double)s->o.size, got, last - first);
	if (pt_run_end(s, err) < 0)
		return -1;
	/* perftest itself would wait for the rest forever: say what to change. */
	if (s->o.iters && got < s->o.iters) {
		snprintf(err, XPORT_ERR_LEN, "the perftest client at %s stopped after %llu of the "
			 "%llu messages this side expects (-n %llu%s): start both sides with the same -n",
			 s->oob.peer, (unsigned long long)got, (unsigned long long)s->o.iters,
			 (unsigned long long)s->pt->iters_per_qp, s->o.qps > 1 ? " per QP" : "");
		return -1;
	}
	return 0;
}

int pt_serve_bw(struct perf_session *s, struct perf_bw_result *r, char *err)
{
	bool from_report = false;	/* -D: the passive target's count is the client's */
	struct xport_counters before, after;
	uint64_t cpu0 = perf_cpu_ns(), wall0 = perf_now_ns();
	int rc;

	memset(r, 0, sizeof(*r));
	xport_dev_counters(s->dev, &before);
	rc = pt_is_passive_bw(s) ? serve_passive(s, r, &from_report, err) : serve_send(s, r, err);
	if (rc < 0)
		return -1;
	s->pt->report.size = r->bytes_per_msg;
	r->cpu_util_percent = perf_cpu_percent(perf_cpu_ns() - cpu0, perf_now_ns() - wall0);
	r->cq_mod = 1;
	xport_dev_counters(s->dev, &after);
	xport_counters_delta(&r->counters, &after, &before);
	s->pt->advisory = from_report ? "with -D the message count comes from the "
			  "perftest client's report" : s->pt->advisory;
	return 0;
}

struct pingpong {
	uint64_t deadline;		/* -D: the run's end; else 0 */
	uint64_t limit_ns;		/* the longest wait for one answer */
	volatile const uint8_t *poll;	/* WRITE: where the peer's counter lands */
	uint64_t posted, completed;	/* this side's sends */
};

/* Reaps this side's own completions; -1 on a failed one. */
static int reap(struct perf_session *s, struct pingpong *pp, bool *got_recv, char *err)
{
	struct xport_wc wc[8];
	int n = xport_poll_cq(s->a.cq, wc, 8);

	for (int i = 0; i < n; i++) {
		if (wc[i].status != XPORT_WC_SUCCESS)
			return pt_wc_error(s, &wc[i], err);
		if (wc[i].opcode != XPORT_WC_RECV) {
			pp->completed++;
			continue;
		}
		if (perf_recv_len(s, &wc[i]) != s->o.size)
			return wrong_size(s, perf_recv_len(s, &wc[i]), err);
		if (repost(s, &wc[i], err) < 0)
			return -1;
		*got_recv = true;
	}
	return 0;
}

/* Waits for the peer's message number i: 1 arrived, 0 the -D run is over,
 * -1 failed (err). */
static int wait_answer(struct perf_session *s, struct pingpong *pp, uint8_t i, bool drain,
		       char *err)
{
	uint64_t until = perf_now_ns() + pp->limit_ns;
	bool got = false;

	for (unsigned spins = 1;; spins++) {
		if (reap(s, pp, &got, err) < 0)
			return -1;
		if (drain ? pp->completed == pp->posted : pp->poll ? *pp->poll == i : got)
			return 1;
		if (spins % 1024)
			continue;
		if (s->o.stop && *s->o.stop) {
			snprintf(err, XPORT_ERR_LEN, "interrupted");
			s->pt->broken = true;
			return -1;
		}
		if (pp->deadline && perf_now_ns() >= pp->deadline)
			return 0;
		if (perf_now_ns() > until) {
			s->pt->broken = true;
			snprintf(err, XPORT_ERR_LEN, "no answer from the perftest peer at %s for %d s "
				 "(iteration %u): it runs another test or other -s/-n; check its "
				 "output", s->oob.peer, s->o.timeout_s, i);
			return -1;
		}
	}
}

/*
 * perftest's write and send latency (§13.4, but see `first` below): one
 * side sends first, the other sends message i once it has the peer's
 * message i.  A WRITE carries
 * i in its last byte, which the peer polls; the round trip, halved, is
 * the latency, as perftest reports it.
 */
static int pingpong(struct perf_session *s, struct perf_lat_result *r, char *err)
{
	struct perf_end *e = &s->a;
	bool write = s->o.op == PERF_WRITE, client = s->role == PERF_CLIENT;
	/* perftest's write_lat server sends first (it skips its first wait);
	 * in send_lat the client does. */
	bool first = write ? !client : client;
	struct pingpong pp = { .limit_ns = (uint64_t)s->o.timeout_s * 1000000000ull };
	struct xport_send_wr wr = {
		.wr_id = 1, .signaled = true,
		.opcode = write ? XPORT_WR_RDMA_WRITE : XPORT_WR_SEND,
		.sge = { (uint64_t)(uintptr_t)e->buf, (uint32_t)s->o.size, e->mr->lkey },
		.remote_addr = e->remote_va, .rkey = e->remote_rkey,
		.inline_data = perf_inline_ok(s, s->o.size),
	};
	uint64_t sent_at = 0, last = 0, cpu0 = perf_cpu_ns(), wall0 = perf_now_ns();

	if (write)
		pp.poll = e->buf + e->half + s->o.size - 1;
	else if (pt_run_begin(s, err) < 0)
		return -1;
	if (!s->o.iters)
		pp.deadline = perf_now_ns() + (uint64_t)(s->o.duration * 1e9);
	for (uint64_t i = 1; s->o.iters ? i <= s->o.iters : perf_now_ns() < pp.deadline; i++) {
		if (!first || i > 1) {
			int w = wait_answer(s, &pp, (uint8_t)(first ? i - 1 : i), false, err);

			if (w < 0)
				return -1;
			if (!w)
				break;
			if (sent_at) {
				perf_lat_record(s, r, (perf_now_ns() - sent_at) / 2);
				r->iterations++;
			}
		}
		if (write)
			e->buf[s->o.size - 1] = (uint8_t)i;
		perf_latency_gap(s);
		sent_at = perf_now_ns();
		last = i;
		if (xport_post_send(e->qp[0], &wr, err) < 0) {
			s->pt->broken = true;
			return -1;
		}
		pp.posted++;
	}
	/* The first sender's last message still has its answer to come. */
	if (first && sent_at) {
		int w = wait_answer(s, &pp, (uint8_t)last, false, err);

		if (w < 0)
			return -1;
		if (w) {
			perf_lat_record(s, r, (perf_now_ns() - sent_at) / 2);
			r->iterations++;
		}
	}
	/* Our last message must leave before the QP goes (the soft engine
	 * sends only while polled). */
	if (wait_answer(s, &pp, 0, true, err) < 0 || (!write && pt_run_end(s, err) < 0))
		return -1;
	r->cpu_util_percent = perf_cpu_percent(perf_cpu_ns() - cpu0, perf_now_ns() - wall0);
	return 0;
}

int pt_run_lat(struct perf_session *s, struct perf_lat_result *r, char *err)
{
	memset(r, 0, sizeof(*r));
	hist_init(&r->h);
	r->bytes = s->o.size;
	r->half_rtt = true;
	if (s->o.op == PERF_WRITE || s->o.op == PERF_SEND)
		return pingpong(s, r, err);
	/* READ and atomic latency servers are passive targets: perftest's
	 * server waits in its closing sync while the client runs. */
	r->half_rtt = false;
	if (pt_wait_peer(s, true, err) < 0 || pt_sync(s, err) < 0)
		return -1;
	s->pt->close_sync_due = false;
	return 0;
}
