// SPDX-License-Identifier: MIT
/*
 * The analyses of the remote as requester: its transmissions of what it
 * was asked to post, against the timers, retries and recovery the IBTA
 * requires, judged from this side's packet times.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "probe_analyze_int.h"
#include "wire.h"

/* The remote's first transmission of the request at psn (cited) and its
 * second (NULL if none); false, with a fail, when it never sent it. */
static bool first_two_sends(struct probe_result *r, uint32_t psn, const struct probe_event **first,
			    const struct probe_event **second)
{
	const struct probe_trace *t = &r->trace;

	*first = *second = NULL;
	for (unsigned i = 0; i < t->n && !*second; i++)
		if (pa_is_request(&t->ev[i], psn)) {
			if (!*first)
				*first = &t->ev[i];
			else
				*second = &t->ev[i];
		}
	if (!*first) {
		pa_verdict(r, PROBE_FAIL, "the remote never sent the request it was asked to post");
		return false;
	}
	pa_cite(r, *first);
	return true;
}

void probe_expect_ack_timer(struct probe_result *r, uint32_t psn, uint8_t timeout,
			    uint32_t res_us)
{
	const struct probe_event *first, *second;
	double nominal_us = 4.096 * (double)(1ull << timeout), gap_us;

	if (!first_two_sends(r, psn, &first, &second))
		return;
	if (!second) {
		pa_verdict(r, PROBE_DEVIATION, "no retransmission of PSN 0x%06x without an ACK "
			"(timeout %u: %.3f ms)", psn, timeout, nominal_us / 1e3);
		return;
	}
	pa_cite(r, second);
	gap_us = (double)(second->t_ns - first->t_ns) / 1e3;
	/* Early by up to two resolutions: the remote's timer starts within a
	 * tick, and the gap is taken from packet arrivals, so the first
	 * packet's own delay on its way out (a tick on a loaded or emulated
	 * host) shortens it too. */
	if (gap_us + 2 * res_us < nominal_us || gap_us > 4 * nominal_us + res_us)
		pa_verdict(r, PROBE_DEVIATION, "first retransmission after %.3f ms; timeout %u allows "
			"%.3f to %.3f ms (%.0f ms early and %.0f ms late for the resolution)",
			gap_us / 1e3, timeout, nominal_us / 1e3, 4 * nominal_us / 1e3,
			2 * res_us / 1e3, res_us / 1e3);
	else
		pa_verdict(r, PROBE_PASS, "first retransmission after %.3f ms = %.2f x 4.096 us x 2^%u "
			"(allowed: 1 to 4 x, %.0f ms early and %.0f ms late for the resolution)",
			gap_us / 1e3, gap_us / nominal_us, timeout, 2 * res_us / 1e3, res_us / 1e3);
}

void probe_expect_no_timer(struct probe_result *r, uint32_t psn)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *first, *again;

	if (!first_two_sends(r, psn, &first, &again))
		return;
	if (again) {
		pa_cite(r, again);
		pa_verdict(r, PROBE_DEVIATION, "sent again %.3f ms later with timeout 0, which means no "
			"ACK timer", (double)(again->t_ns - first->t_ns) / 1e6);
		return;
	}
	pa_verdict(r, PROBE_PASS, "not sent again in %.1f s without an ACK: timeout 0, no timer",
		(double)(t->end_ns > first->t_ns ? t->end_ns - first->t_ns : 0) / 1e9);
}

void probe_expect_retries(struct probe_result *r, uint32_t psn, unsigned retry_cnt)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *first = NULL, *last = NULL;
	unsigned sent = 0, retries;

	for (unsigned i = 0; i < t->n; i++)
		if (pa_is_request(&t->ev[i], psn)) {
			first = first ? first : &t->ev[i];
			last = &t->ev[i];
			sent++;
		}
	if (!sent) {
		pa_verdict(r, PROBE_FAIL, "the remote never sent the request it was asked to post");
		return;
	}
	pa_cite(r, first);
	pa_cite(r, last);
	retries = sent - 1;
	if (retries > retry_cnt) {
		pa_verdict(r, PROBE_DEVIATION, "%s%u retransmissions over %.1f s for retry_cnt %u "
			"(only rnr_retry 7 means forever)", t->truncated ? "more than " : "",
			retries, (double)(last->t_ns - first->t_ns) / 1e9, retry_cnt);
	} else if (retries < retry_cnt) {
		pa_verdict(r, PROBE_DEVIATION, "gave up after %u retransmissions; retry_cnt is %u",
			retries, retry_cnt);
	} else if (!t->remote_known || !pa_completed_with(t, XPORT_WC_RETRY_EXC_ERR)) {
		pa_verdict(r, PROBE_DEVIATION, "%u retransmissions, as retry_cnt says, but the work "
			"request did not complete with \"transport retry counter exceeded\"",
			retries);
	} else {
		pa_verdict(r, PROBE_PASS, "%u retransmissions, then \"transport retry counter "
			"exceeded\"", retries);
	}
}

/* The last packet this side sent with an AETH of the given kind; NULL if none. */
static const struct probe_event *our_answer(const struct probe_trace *t, enum wire_aeth_kind k)
{
	for (unsigned i = t->n; i-- > 0;)
		if (!t->ev[i].rx && t->ev[i].has_aeth && wire_aeth_kind(t->ev[i].syndrome) == k)
			return &t->ev[i];
	return NULL;
}

void probe_expect_resend_from(struct probe_result *r, uint32_t nak_psn)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *nak = our_answer(t, WIRE_AETH_NAK);

	if (!nak) {
		pa_verdict(r, PROBE_FAIL, "the remote's request never came, so no NAK was sent");
		return;
	}
	pa_cite(r, nak);
	for (unsigned i = nak->frame; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];

		if (!e->rx || e->has_aeth)
			continue;
		pa_cite(r, e);
		if (e->psn == nak_psn)
			pa_verdict(r, PROBE_PASS, "resent from PSN 0x%06x, the one the NAK named, %.3f "
				"ms after it", e->psn, (double)(e->t_ns - nak->t_ns) / 1e6);
		else
			pa_verdict(r, PROBE_DEVIATION, "resent from PSN 0x%06x after a NAK naming "
				"0x%06x", e->psn, nak_psn);
		return;
	}
	pa_verdict(r, PROBE_DEVIATION, "nothing resent after the NAK PSN sequence error naming "
		"0x%06x", nak_psn);
}

void probe_expect_rnr_wait(struct probe_result *r, uint32_t psn, uint32_t res_us)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *rnr = our_answer(t, WIRE_AETH_RNR_NAK);
	uint32_t timer_us;

	if (!rnr) {
		pa_verdict(r, PROBE_FAIL, "the remote's SEND never came, so no RNR NAK was sent");
		return;
	}
	pa_cite(r, rnr);
	timer_us = wire_rnr_timer_us(wire_aeth_value(rnr->syndrome));
	for (unsigned i = rnr->frame; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];
		double waited_us;

		if (!pa_is_request(e, psn))
			continue;
		pa_cite(r, e);
		waited_us = (double)(e->t_ns - rnr->t_ns) / 1e3;
		if (waited_us + res_us < timer_us)
			pa_verdict(r, PROBE_DEVIATION, "resent after %.3f ms, before the RNR NAK's "
				"timer of %.2f ms ran out", waited_us / 1e3, timer_us / 1e3);
		else
			pa_verdict(r, PROBE_PASS, "resent after %.3f ms for an RNR NAK timer of %.2f ms",
				waited_us / 1e3, timer_us / 1e3);
		return;
	}
	pa_verdict(r, PROBE_DEVIATION, "never resent after an RNR NAK of %.2f ms (rnr_retry 7: "
		"it must retry)", timer_us / 1e3);
}

/* The remote's READ requests, in order: the first at or after index from. */
static const struct probe_event *read_request(const struct probe_trace *t, unsigned from)
{
	for (unsigned i = from; i < t->n; i++)
		if (t->ev[i].rx && t->ev[i].opcode == OP_RC_READ_REQUEST)
			return &t->ev[i];
	return NULL;
}

/* The completion of the one work request a test posted (a receive's aside:
 * an error completion's opcode is undefined in verbs). */
static const struct xport_wc *work_completion(const struct probe_trace *t)
{
	for (unsigned i = 0; t->remote_known && i < t->remote.n_wc; i++)
		if (t->remote.wc[i].opcode != XPORT_WC_RECV &&
		    t->remote.wc[i].opcode != XPORT_WC_RECV_RDMA_WITH_IMM)
			return &t->remote.wc[i];
	return NULL;
}

static const struct xport_wc *read_completion(const struct probe_trace *t)
{
	for (unsigned i = 0; t->remote_known && i < t->remote.n_wc; i++)
		if (t->remote.wc[i].opcode == XPORT_WC_RDMA_READ)
			return &t->remote.wc[i];
	return NULL;
}

/* After the retry was answered: the READ completed, its bytes in place. */
static void read_completed(struct probe_result *r, enum probe_verdict v, const char *seen,
			   uint32_t len)
{
	const struct probe_trace *t = &r->trace;
	const struct xport_wc *wc = read_completion(t);

	if (!t->remote_known)
		pa_verdict(r, PROBE_FAIL, "%s, but the remote did not report its completions", seen);
	else if (!wc || wc->status != XPORT_WC_SUCCESS)
		pa_verdict(r, PROBE_DEVIATION, "%s, but the READ %s once answered", seen,
			wc ? xport_wc_status_str(wc->status) : "did not complete");
	else if (t->remote.changed_bytes < len)
		pa_verdict(r, PROBE_DEVIATION, "%s, but only %" PRIu64 " of the %u bytes read are in "
			"its region", seen, t->remote.changed_bytes, len);
	else
		pa_verdict(r, v, "%s; the READ completed with all %u bytes", seen, len);
}

void probe_expect_read_resume(struct probe_result *r, uint32_t psn, uint32_t lost, uint32_t mtu,
			      uint8_t timeout)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *orig = read_request(t, 0), *retry, *beyond = NULL;
	double nominal_us = 4.096 * (double)(1ull << timeout);
	const struct xport_wc *wc = read_completion(t);
	uint32_t skip = (uint32_t)wire_psn_diff(lost, psn) * mtu;
	char seen[160];

	if (!orig || orig->psn != psn) {
		pa_verdict(r, PROBE_FAIL, "the remote never sent the READ it was asked to post");
		return;
	}
	pa_cite(r, orig);
	retry = read_request(t, orig->frame);
	/* The responses this side sent, the gap among them. */
	for (unsigned i = orig->frame; i < (retry ? retry->frame - 1 : t->n); i++)
		if (!t->ev[i].rx) {
			pa_cite(r, &t->ev[i]);
			if (!beyond && wire_psn_diff(t->ev[i].psn, lost) > 0)
				beyond = &t->ev[i];
		}
	if (!retry) {
		if (wc && wc->status == XPORT_WC_SUCCESS)
			pa_verdict(r, PROBE_DEVIATION, "the READ completed successfully with the response "
				"at PSN 0x%06x never received", lost);
		else
			pa_verdict(r, PROBE_DEVIATION, "no READ asked again after the response at PSN "
				"0x%06x was lost", lost);
		return;
	}
	pa_cite(r, retry);
	if (retry->psn == lost && retry->va == orig->va + skip && retry->dmalen == orig->dmalen - skip) {
		/* How soon is left open: at once on the out-of-sequence
		 * response, or when the ACK timer runs out. */
		double gap_us = beyond ? (double)(retry->t_ns - beyond->t_ns) / 1e3 : 0;

		snprintf(seen, sizeof(seen), "READ asked again from PSN 0x%06x, %u bytes on, %.3f ms "
			 "after the out-of-sequence response (%s; ACK timer %.1f ms)", lost, skip,
			 gap_us / 1e3, gap_us < nominal_us / 2 ? "at once" : "by the timer",
			 nominal_us / 1e3);
		read_completed(r, PROBE_PASS, seen, orig->dmalen);
	} else if (retry->psn == psn && retry->va == orig->va && retry->dmalen == orig->dmalen) {
		snprintf(seen, sizeof(seen), "the whole READ asked again from PSN 0x%06x, not from "
			 "the lost response's 0x%06x", psn, lost);
		read_completed(r, PROBE_INFO, seen, orig->dmalen);
	} else {
		pa_verdict(r, PROBE_DEVIATION, "READ asked again at PSN 0x%06x for %u bytes at +%" PRIu64
			"; required: PSN 0x%06x, %u bytes at +%u", retry->psn, retry->dmalen,
			retry->va - orig->va, lost, orig->dmalen - skip, skip);
	}
}

void probe_expect_atomic_resend(struct probe_result *r, uint32_t psn, uint64_t va, uint64_t add,
				uint64_t orig)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *first, *again, *ack = NULL;
	const struct xport_wc *wc = work_completion(t);
	uint64_t le = 0, be = 0;
	char seen[160];

	if (!first_two_sends(r, psn, &first, &again))
		return;
	if (first->opcode != OP_RC_FETCH_ADD || first->va != va || first->swap_add != add) {
		pa_verdict(r, PROBE_DEVIATION, "the request at PSN 0x%06x is opcode 0x%02x, VA 0x%"
			PRIx64 ", add %" PRIu64 "; posted: FETCH_ADD (0x%02x) of %" PRIu64 " at VA 0x%"
			PRIx64, psn, first->opcode, first->va, first->swap_add, OP_RC_FETCH_ADD, add, va);
		return;
	}
	if (!again) {
		if (wc && wc->status == XPORT_WC_SUCCESS)
			pa_verdict(r, PROBE_DEVIATION, "the FETCH_ADD completed successfully with no "
				"atomic ACK received");
		else
			pa_verdict(r, PROBE_DEVIATION, "the FETCH_ADD at PSN 0x%06x never sent again "
				"after its ACK was lost (required: when its ACK timer runs out)", psn);
		return;
	}
	pa_cite(r, again);
	/* A FETCH_ADD's compare field is unused: devices may put anything there. */
	if (again->opcode != first->opcode || again->va != first->va ||
	    again->swap_add != first->swap_add) {
		pa_verdict(r, PROBE_DEVIATION, "sent again as opcode 0x%02x, VA 0x%" PRIx64 ", add %"
			PRIu64 ": a retry must repeat the request unchanged", again->opcode, again->va,
			again->swap_add);
		return;
	}
	for (unsigned i = again->frame; i < t->n && !ack; i++)
		if (!t->ev[i].rx && t->ev[i].opcode == OP_RC_ATOMIC_ACK)
			ack = &t->ev[i];
	if (ack)
		pa_cite(r, ack);
	snprintf(seen, sizeof(seen), "the FETCH_ADD sent again unchanged %.3f ms after its ACK was "
		 "lost", (double)(again->t_ns - first->t_ns) / 1e6);
	for (int i = 7; i >= 0; i--) {
		le = le << 8 | t->remote.head[i];
		be = be << 8 | t->remote.head[7 - i];
	}
	if (!ack)
		pa_verdict(r, PROBE_FAIL, "%s, but this side could not answer it", seen);
	else if (!t->remote_known)
		pa_verdict(r, PROBE_FAIL, "%s, but the remote did not report its completions", seen);
	else if (!wc || wc->status != XPORT_WC_SUCCESS)
		pa_verdict(r, PROBE_DEVIATION, "%s, but it %s once answered", seen,
			wc ? xport_wc_status_str(wc->status) : "did not complete");
	else if (le != orig && be != orig)
		pa_verdict(r, PROBE_DEVIATION, "%s, but its buffer holds 0x%016" PRIx64 " (as "
			"little-endian), not the original value 0x%016" PRIx64 " answered", seen, le,
			orig);
	else
		pa_verdict(r, PROBE_PASS, "%s; completed with the original value answered in its "
			"buffer (%s)", seen, le == orig ? "little-endian" : "big-endian");
}

/* A WRITE's opcode for packet k of n. */
static uint8_t write_opcode(unsigned k, unsigned n)
{
	return n == 1 ? OP_RC_WRITE_ONLY : k == 0 ? OP_RC_WRITE_FIRST
		: k == n - 1 ? OP_RC_WRITE_LAST : OP_RC_WRITE_MIDDLE;
}

/* A packet the remote sent this long after this side's ACK was sent out
 * cannot have left before the ACK reached it (an ACK timer is 67 ms). */
#define AFTER_ACK_NS 20000000ull

void probe_expect_send_wrap(struct probe_result *r, uint32_t asked, uint32_t first, unsigned n,
			    uint32_t mtu)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *ack = NULL, *last = NULL;
	const struct xport_wc *wc = work_completion(t);
	unsigned k = 0, i;

	if (first != asked) {
		pa_verdict(r, PROBE_FAIL, "the remote's QP starts at PSN 0x%06x, not 0x%06x as asked: "
			"its engine did not take the first PSN", first, asked);
		return;
	}
	for (i = 0; i < t->n && k < n; i++) {
		const struct probe_event *e = &t->ev[i];

		if (!e->rx || e->has_aeth)
			continue;
		pa_cite(r, e);
		if (e->payload_len != mtu) {
			pa_verdict(r, PROBE_FAIL, "packet %u of the WRITE carries %u bytes, not the %u of "
				"the path MTU asked for: the test needs %u packets", k + 1,
				e->payload_len, mtu, n);
			return;
		}
		if (e->opcode != write_opcode(k, n)) {
			pa_verdict(r, PROBE_DEVIATION, "packet %u of the WRITE (PSN 0x%06x) is opcode 0x%02x; "
				"required: 0x%02x", k + 1, e->psn, e->opcode, write_opcode(k, n));
			return;
		}
		if (e->psn != wire_psn_add(first, k)) {
			pa_verdict(r, PROBE_DEVIATION, "packet %u of the WRITE came with PSN 0x%06x; "
				"required: 0x%06x (PSNs count modulo 2^24)", k + 1, e->psn,
				wire_psn_add(first, k));
			return;
		}
		last = e;
		k++;
	}
	if (k < n) {
		pa_verdict(r, PROBE_FAIL, "the remote sent %u of the WRITE's %u packets", k, n);
		return;
	}
	for (; i < t->n && !ack; i++)
		if (!t->ev[i].rx && t->ev[i].opcode == OP_RC_ACK)
			ack = &t->ev[i];
	if (!ack) {
		pa_verdict(r, PROBE_FAIL, "this side could not ACK PSN 0x%06x", last->psn);
		return;
	}
	pa_cite(r, ack);
	for (i = ack->frame; i < pa_exchange_end(t); i++)
		if (t->ev[i].rx && !t->ev[i].has_aeth && t->ev[i].t_ns > ack->t_ns + AFTER_ACK_NS) {
			pa_cite(r, &t->ev[i]);
			pa_verdict(r, PROBE_DEVIATION, "PSN 0x%06x sent again after the ACK for 0x%06x, "
				"which covers it across the wrap", t->ev[i].psn, ack->psn);
			return;
		}
	if (!t->remote_known)
		pa_verdict(r, PROBE_FAIL, "PSNs 0x%06x to 0x%06x in order, but the remote did not "
			"report its completions", first, last->psn);
	else if (!wc || wc->status != XPORT_WC_SUCCESS)
		pa_verdict(r, PROBE_DEVIATION, "PSNs 0x%06x to 0x%06x in order, but the WRITE %s "
			"once ACKed at 0x%06x", first, last->psn,
			wc ? xport_wc_status_str(wc->status) : "did not complete", ack->psn);
	else
		pa_verdict(r, PROBE_PASS, "PSNs 0x%06x to 0x%06x in order across 2^24; the ACK for "
			"0x%06x completed the WRITE", first, last->psn, ack->psn);
}

void probe_expect_implied_nak(struct probe_result *r, uint32_t psn, uint8_t timeout,
			      uint32_t res_us)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *orig = read_request(t, 0), *ack = NULL, *retry;
	const struct xport_wc *wc = read_completion(t);
	double nominal_us = 4.096 * (double)(1ull << timeout), gap_us;
	char seen[160];

	if (!orig || orig->psn != psn) {
		pa_verdict(r, PROBE_FAIL, "the remote never sent the READ it was asked to post");
		return;
	}
	pa_cite(r, orig);
	for (unsigned i = orig->frame; i < t->n && !ack; i++)
		if (!t->ev[i].rx && t->ev[i].opcode == OP_RC_ACK)
			ack = &t->ev[i];
	if (!ack) {
		pa_verdict(r, PROBE_FAIL, "the remote never sent the WRITE after the READ, so no ACK "
			"passed it");
		return;
	}
	pa_cite(r, ack);
	retry = read_request(t, ack->frame);
	if (!retry) {
		if (wc && wc->status == XPORT_WC_SUCCESS)
			pa_verdict(r, PROBE_DEVIATION, "the READ completed successfully, unanswered, once "
				"an ACK for a later PSN came");
		else
			pa_verdict(r, PROBE_DEVIATION, "the READ was not sent again after an ACK passed "
				"it (listened %.1f s)", (double)(t->ev[t->n - 1].t_ns - ack->t_ns) / 1e9);
		return;
	}
	pa_cite(r, retry);
	gap_us = (double)(retry->t_ns - ack->t_ns) / 1e3;
	if (gap_us + res_us >= nominal_us) {
		pa_verdict(r, PROBE_DEVIATION, "the READ was sent again %.3f ms after the ACK that "
			"passed it: by its ACK timer (%.3f ms), not as an implied NAK", gap_us / 1e3,
			nominal_us / 1e3);
		return;
	}
	snprintf(seen, sizeof(seen), "the READ sent again %.3f ms after the ACK that passed it "
		 "(its ACK timer: %.3f ms)", gap_us / 1e3, nominal_us / 1e3);
	read_completed(r, PROBE_PASS, seen, orig->dmalen);
}

/* Gb/s of the stream's packets that arrived in (from, to]. */
static double stream_gbps(const struct probe_stream *s, uint64_t from, uint64_t to)
{
	unsigned k = 0;

	if (to <= from)
		return 0;
	for (unsigned i = 0; i < s->n; i++)
		k += s->t_ns[i] > from && s->t_ns[i] <= to;
	return (double)k * s->pkt_bytes * 8 / (double)(to - from);
}

/* The highest rate of `parts` equal parts of [from, to). */
static double fastest_part(const struct probe_stream *s, uint64_t from, uint64_t to,
			   unsigned parts)
{
	uint64_t len = (to - from) / parts;
	double fastest = 0;

	for (unsigned i = 0; len && i < parts; i++) {
		double g = stream_gbps(s, from + i * len, from + (i + 1) * len);

		if (g > fastest)
			fastest = g;
	}
	return fastest;
}

/* The evidence: what the trace kept (the first and last data packets, each
 * round's first and last CNP). */
static void cite_all(struct probe_result *r)
{
	for (unsigned i = 0; i < r->trace.n; i++)
		pa_cite(r, &r->trace.ev[i]);
}

void probe_expect_cnp_reaction(struct probe_result *r, const struct probe_stream *s)
{
	const uint64_t settle = 10000000u, window = 20000000u;	/* 10 ms, 20 ms */
	const uint64_t min_decoys = 2500000u, min_cnps = 5000000u;	/* half the phases */
	const struct probe_cnp_round *first = &s->round[0], *end = &s->round[PROBE_CNP_ROUNDS - 1];
	double before, reference, after = -1;
	unsigned reacted = 0, cnps = 0;
	char figures[96] = "";
	size_t used = 0;
	uint64_t last;

	cite_all(r);
	if (!s->rounds_done || s->n < 16) {
		char when[40] = "before the first round";

		if (s->rounds_done)
			snprintf(when, sizeof(when), "after the rounds");
		else if (s->rounds)
			snprintf(when, sizeof(when), "in round %u of %u", s->rounds, PROBE_CNP_ROUNDS);
		pa_verdict(r, PROBE_FAIL, "the remote's stream %s after %u packets, %s: too little to "
			"measure a rate", s->complete ? "ended" : "stopped", s->n, when);
		return;
	}
	for (unsigned k = 0; k < PROBE_CNP_ROUNDS; k++) {
		const struct probe_cnp_round *rd = &s->round[k];

		if (!rd->decoys || !rd->cnps || rd->decoy_to_ns - rd->decoy_from_ns < min_decoys ||
		    rd->cnp_to_ns - rd->cnp_from_ns < min_cnps) {
			pa_verdict(r, PROBE_FAIL, "round %u: %u decoys went over %.1f ms and %u CNPs "
				"over %.1f ms (this side fell behind): too short to measure a rate "
				"under them", k + 1, rd->decoys,
				(double)(rd->decoy_to_ns - rd->decoy_from_ns) / 1e6, rd->cnps,
				(double)(rd->cnp_to_ns - rd->cnp_from_ns) / 1e6);
			return;
		}
		cnps += rd->cnps;
	}
	last = s->t_ns[s->n - 1];
	if (last < end->cnp_to_ns || first->decoy_from_ns < s->t_ns[0] + 1000000u) {
		pa_verdict(r, PROBE_FAIL, "the remote's stream %s (%u packets): no rate to compare",
			last < end->cnp_to_ns ? (s->complete ? "ended before the CNPs did"
						  : "stopped during the CNPs")
			: "had under 1 ms before the decoys", s->n);
		return;
	}
	before = stream_gbps(s, s->t_ns[0], first->decoy_from_ns);
	if (before <= 0) {
		pa_verdict(r, PROBE_FAIL, "the remote's stream had no rate before the decoys (%u "
			"packets in all): nothing to compare", s->n);
		return;
	}
	/* What a round's rate is held to: the rate before, or under the first
	 * round's decoys if lower (a stream that slowed down on its own after
	 * the baseline is not reacting). */
	reference = fmin(before, stream_gbps(s, first->decoy_from_ns, first->decoy_to_ns));
	if (last >= end->cnp_to_ns + settle + window)
		after = stream_gbps(s, end->cnp_to_ns + settle, end->cnp_to_ns + settle + window);
	/* A round shows a reaction when the rate is down under its CNPs from
	 * the reference in every quarter of the second half: a reaction
	 * point holds the rate down while CNPs keep coming, a stall drags an
	 * average down for a part of the time only.  Later rounds' decoys may
	 * find a reaction point still recovering, so only the first round's
	 * count (taking packets in is no reaction). */
	for (unsigned k = 0; k < PROBE_CNP_ROUNDS; k++) {
		const struct probe_cnp_round *rd = &s->round[k];
		uint64_t mid = rd->cnp_from_ns + (rd->cnp_to_ns - rd->cnp_from_ns) / 2;
		double decoyed = stream_gbps(s, rd->decoy_from_ns, rd->decoy_to_ns);
		double under = stream_gbps(s, mid, rd->cnp_to_ns);

		reacted += under <= 0.75 * reference &&
			   fastest_part(s, mid, rd->cnp_to_ns, 4) <= 0.75 * reference;
		if (used < sizeof(figures))
			used += (size_t)snprintf(figures + used, sizeof(figures) - used,
						 "%s%.3f (%.3f)", k ? ", " : "", under, decoyed);
	}
	if (reacted == PROBE_CNP_ROUNDS && after >= 0)
		pa_verdict(r, PROBE_PASS, "rate fell from %.3f Gb/s to %s under the CNPs (the decoys) "
			"of each round, %u CNPs in all; %.3f Gb/s 10 to 30 ms after the last",
			before, figures, cnps, after);
	else if (reacted == PROBE_CNP_ROUNDS)
		pa_verdict(r, PROBE_PASS, "rate fell from %.3f Gb/s to %s under the CNPs (the decoys) "
			"of each round, %u CNPs in all (the stream ended before a recovery)",
			before, figures, cnps);
	else if (reacted)
		pa_verdict(r, PROBE_NOT_IMPL, "%.3f Gb/s before; %s under the CNPs (the decoys) of "
			"each round: down in %u of %u rounds only, the stream's own dips (no DCQCN "
			"reaction point)", before, figures, reacted, PROBE_CNP_ROUNDS);
	else
		pa_verdict(r, PROBE_NOT_IMPL, "%.3f Gb/s before; %s under the CNPs (the decoys) of "
			"each round: no reaction (no DCQCN reaction point)%s", before, figures,
			s->gaps ? "; packets were lost on the way in, NAKed" : "");
}

void probe_expect_rnr_forever(struct probe_result *r, uint32_t psn, unsigned naks)
{
	const struct probe_trace *t = &r->trace;
	unsigned sent = 0, rnrs = 0;
	const struct probe_event *last = NULL;

	for (unsigned i = 0; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];

		if (pa_is_request(e, psn)) {
			if (!sent++)
				pa_cite(r, e);
			last = e;
		} else if (!e->rx && e->has_aeth && wire_aeth_kind(e->syndrome) == WIRE_AETH_RNR_NAK) {
			rnrs++;
		}
	}
	if (!sent) {
		pa_verdict(r, PROBE_FAIL, "the remote never sent the SEND it was asked to post");
		return;
	}
	pa_cite(r, last);
	if (rnrs < naks || sent < naks + 1)
		pa_verdict(r, PROBE_DEVIATION, "gave up after %u RNR NAKs (sent %u times): rnr_retry 7 "
			"retries forever", rnrs, sent);
	else if (!t->remote_known || !pa_completed_with(t, XPORT_WC_SUCCESS))
		pa_verdict(r, PROBE_DEVIATION, "sent again after each of %u RNR NAKs, but the SEND did "
			"not complete successfully once ACKed", rnrs);
	else
		pa_verdict(r, PROBE_PASS, "sent again after each of %u RNR NAKs, then completed once "
			"ACKed", rnrs);
}
