// SPDX-License-Identifier: MIT
/*
 * The analyses: what a test's record (the packets both ways and the
 * remote's state after them) says, as a verdict, a line of what was
 * observed and the frames that show it.  Pure functions of the record, so
 * that the unit tests can lay out exchanges that pass and that deviate.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"
#include "wire.h"

const char *probe_verdict_name(enum probe_verdict v)
{
	static const char *const names[PROBE_VERDICTS] = {
		"pass", "informational", "deviation", "not implemented", "fail", "skipped",
	};

	return (unsigned)v < PROBE_VERDICTS ? names[v] : "?";
}

static void cite(struct probe_result *r, const struct probe_event *e)
{
	for (unsigned i = 0; i < r->n_evidence; i++)
		if (r->evidence[i] == e->frame)
			return;
	if (r->n_evidence < PROBE_MAX_EVIDENCE)
		r->evidence[r->n_evidence++] = e->frame;
}

static void verdict(struct probe_result *r, enum probe_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void verdict(struct probe_result *r, enum probe_verdict v, const char *fmt, ...)
{
	va_list ap;

	r->verdict = v;
	va_start(ap, fmt);
	vsnprintf(r->observed, sizeof(r->observed), fmt, ap);
	va_end(ap);
}

/* The last request sent at psn before index `before`; NULL if none. */
static const struct probe_event *request_at(const struct probe_trace *t, uint32_t psn,
					    unsigned before)
{
	for (unsigned i = before < t->n ? before : t->n; i-- > 0;)
		if (!t->ev[i].rx && t->ev[i].psn == psn)
			return &t->ev[i];
	return NULL;
}

int probe_find_answer(const struct probe_trace *t, uint32_t psn, unsigned from)
{
	for (unsigned i = from; i < t->n; i++)
		if (t->ev[i].rx && t->ev[i].has_aeth && t->ev[i].psn == psn)
			return (int)i;
	return -1;
}

/* "NAK remote access error (PSN 0x001000, 0.214 ms after the request)". */
static void describe_answer(char *out, size_t cap, const struct probe_event *req,
			    const struct probe_event *ans)
{
	char syn[64];

	wire_aeth_describe(syn, sizeof(syn), ans->syndrome);
	if (req && ans->t_ns >= req->t_ns)
		snprintf(out, cap, "%s (PSN 0x%06x, %.3f ms after the request)", syn, ans->psn,
			 (double)(ans->t_ns - req->t_ns) / 1e6);
	else
		snprintf(out, cap, "%s (PSN 0x%06x)", syn, ans->psn);
}

static unsigned recv_completions(const struct probe_remote_state *s, bool ok_only)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n_wc; i++)
		if ((s->wc[i].opcode == XPORT_WC_RECV || s->wc[i].opcode == XPORT_WC_RECV_RDMA_WITH_IMM) &&
		    (!ok_only || s->wc[i].status == XPORT_WC_SUCCESS))
			n++;
	return n;
}

/* The answer to the request at psn: NULL after setting a deviation when
 * there is none. */
static const struct probe_event *answer_or_deviation(struct probe_result *r, uint32_t psn,
						     const char *required)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *req = request_at(t, psn, t->n);
	int i = probe_find_answer(t, psn, req ? req->frame : 0);

	if (req)
		cite(r, req);
	if (i < 0) {
		verdict(r, PROBE_DEVIATION, "no answer to the request at PSN 0x%06x (required: %s)",
			psn, required);
		return NULL;
	}
	cite(r, &t->ev[i]);
	return &t->ev[i];
}

void probe_expect_nak(struct probe_result *r, uint32_t psn, uint8_t code, bool memory_untouched)
{
	const struct probe_trace *t = &r->trace;
	const char *want = wire_nak_name(code);
	const struct probe_event *ans = answer_or_deviation(r, psn, want ? want : "a NAK");
	char seen[160];

	if (!ans)
		return;
	describe_answer(seen, sizeof(seen), request_at(t, psn, ans->frame - 1), ans);
	if (wire_aeth_kind(ans->syndrome) != WIRE_AETH_NAK || wire_aeth_value(ans->syndrome) != code) {
		verdict(r, PROBE_DEVIATION, "%s; required: NAK %s", seen, want ? want : "?");
		return;
	}
	if (memory_untouched && t->remote_known && t->remote.changed_bytes) {
		verdict(r, PROBE_DEVIATION, "%s, but %" PRIu64 " bytes of the region changed "
			"(first at offset %" PRIu64 ")", seen, t->remote.changed_bytes,
			t->remote.first_changed);
		return;
	}
	verdict(r, PROBE_PASS, "%s%s", seen,
		memory_untouched && t->remote_known ? "; memory untouched" : "");
}

void probe_expect_ack(struct probe_result *r, uint32_t psn, unsigned recvs, uint64_t changed)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *ans = answer_or_deviation(r, psn, "an ACK");
	char seen[160];

	if (!ans)
		return;
	describe_answer(seen, sizeof(seen), request_at(t, psn, ans->frame - 1), ans);
	if (wire_aeth_kind(ans->syndrome) != WIRE_AETH_ACK) {
		verdict(r, PROBE_DEVIATION, "%s; required: an ACK", seen);
		return;
	}
	if (t->remote_known && recv_completions(&t->remote, true) != recvs) {
		verdict(r, PROBE_DEVIATION, "%s, but the remote completed %u receives, not %u", seen,
			recv_completions(&t->remote, true), recvs);
		return;
	}
	if (t->remote_known && t->remote.changed_bytes != changed) {
		verdict(r, PROBE_DEVIATION, "%s, but %" PRIu64 " bytes of the region changed, not %"
			PRIu64, seen, t->remote.changed_bytes, changed);
		return;
	}
	verdict(r, PROBE_PASS, "%s", seen);
}

void probe_expect_rnr(struct probe_result *r, uint32_t psn)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *ans = answer_or_deviation(r, psn, "an RNR NAK");
	char seen[160];

	if (!ans)
		return;
	describe_answer(seen, sizeof(seen), request_at(t, psn, ans->frame - 1), ans);
	if (wire_aeth_kind(ans->syndrome) != WIRE_AETH_RNR_NAK) {
		verdict(r, PROBE_DEVIATION, "%s; required: an RNR NAK", seen);
		return;
	}
	if (t->remote_known && recv_completions(&t->remote, false)) {
		verdict(r, PROBE_DEVIATION, "%s, but the remote completed a receive it never had",
			seen);
		return;
	}
	verdict(r, PROBE_PASS, "%s", seen);
}

void probe_expect_one_seq_nak(struct probe_result *r, uint32_t epsn)
{
	const struct probe_trace *t = &r->trace;
	unsigned naks = 0, other = 0, ahead = 0;
	const struct probe_event *first = NULL;

	for (unsigned i = 0; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];

		if (!e->rx) {
			if (wire_psn_diff(e->psn, epsn) > 0) {
				ahead++;
				cite(r, e);
			}
			continue;
		}
		if (!e->has_aeth)
			continue;
		if (wire_aeth_kind(e->syndrome) == WIRE_AETH_NAK &&
		    wire_aeth_value(e->syndrome) == WIRE_NAK_PSN_SEQ_ERR && e->psn == epsn) {
			if (!naks++)
				first = e;
			cite(r, e);
		} else {
			other++;
			cite(r, e);
		}
	}
	if (!naks)
		verdict(r, PROBE_DEVIATION, "%u requests ahead of PSN 0x%06x drew no NAK PSN "
			"sequence error%s", ahead, epsn, other ? " (other answers came)" : "");
	else if (naks > 1)
		verdict(r, PROBE_DEVIATION, "%u NAKs PSN sequence error for one episode of %u "
			"requests ahead of PSN 0x%06x; required: one", naks, ahead, epsn);
	else if (other)
		verdict(r, PROBE_DEVIATION, "one NAK PSN sequence error, and %u other answers to "
			"requests it should have dropped", other);
	else
		verdict(r, PROBE_PASS, "one NAK PSN sequence error (PSN 0x%06x) for %u requests "
			"ahead", first->psn, ahead);
}

void probe_expect_dup_ack(struct probe_result *r, uint32_t psn, unsigned recvs_posted)
{
	const struct probe_trace *t = &r->trace;
	unsigned acks = 0, recvs;

	for (unsigned i = 0; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->psn != psn)
			continue;
		if (!e->rx || (e->has_aeth && wire_aeth_kind(e->syndrome) == WIRE_AETH_ACK)) {
			cite(r, e);
			acks += e->rx;
		}
	}
	if (!t->remote_known) {
		verdict(r, PROBE_FAIL, "the remote did not report its completions");
		return;
	}
	recvs = recv_completions(&t->remote, true);
	if (acks < 2)
		verdict(r, PROBE_DEVIATION, "%u ACK%s for the request and its duplicate at PSN "
			"0x%06x; required: both acknowledged", acks, acks == 1 ? "" : "s", psn);
	else if (recvs != 1)
		verdict(r, PROBE_DEVIATION, "both acknowledged, but the remote completed %u of its %u "
			"receives; required: 1 (a duplicate consumes none)", recvs, recvs_posted);
	else
		verdict(r, PROBE_PASS, "both acknowledged (%u ACKs), one receive completed", acks);
}

void probe_expect_silent_drop(struct probe_result *r, unsigned silent_until, uint32_t psn)
{
	const struct probe_trace *t = &r->trace;
	unsigned answered = 0;
	int i;

	for (unsigned k = 0; k < t->n && t->ev[k].frame <= silent_until; k++) {
		if (t->ev[k].rx)
			answered++;
		cite(r, &t->ev[k]);
	}
	if (answered) {
		verdict(r, PROBE_DEVIATION, "%u answer%s to a packet with a bad ICRC; required: "
			"dropped silently", answered, answered == 1 ? "" : "s");
		return;
	}
	if (t->remote_known && t->remote.changed_bytes && t->remote.first_changed < 64) {
		verdict(r, PROBE_DEVIATION, "the packet with a bad ICRC was executed: its bytes "
			"are in the region");
		return;
	}
	i = probe_find_answer(t, psn, silent_until);
	if (i < 0 || wire_aeth_kind(t->ev[i].syndrome) != WIRE_AETH_ACK) {
		char seen[64] = "no answer";

		if (i >= 0) {
			wire_aeth_describe(seen, sizeof(seen), t->ev[i].syndrome);
			cite(r, &t->ev[i]);
		}
		verdict(r, PROBE_FAIL, "silent after the bad ICRC, but the same request with a good "
			"ICRC then drew %s, not an ACK", seen);
		return;
	}
	cite(r, &t->ev[silent_until]);
	cite(r, &t->ev[i]);
	verdict(r, PROBE_PASS, "silent for the bad ICRC; the same request with a good ICRC was "
		"acknowledged");
}
