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

#include "probe_analyze_int.h"
#include "wire.h"

const char *probe_verdict_name(enum probe_verdict v)
{
	static const char *const names[PROBE_VERDICTS] = {
		"pass", "informational", "deviation", "not implemented", "fail", "skipped",
	};

	return (unsigned)v < PROBE_VERDICTS ? names[v] : "?";
}

/* Names a frame as evidence, kept in frame order, once. */
void pa_cite(struct probe_result *r, const struct probe_event *e)
{
	unsigned at = r->n_evidence;

	for (unsigned i = 0; i < r->n_evidence; i++)
		if (r->evidence[i] == e->frame)
			return;
	if (r->n_evidence == PROBE_MAX_EVIDENCE)
		return;
	while (at > 0 && r->evidence[at - 1] > e->frame) {
		r->evidence[at] = r->evidence[at - 1];
		at--;
	}
	r->evidence[at] = e->frame;
	r->n_evidence++;
}

void pa_verdict(struct probe_result *r, enum probe_verdict v, const char *fmt, ...)
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

/* The test's own exchange: the record up to the liveness check, if any. */
unsigned pa_exchange_end(const struct probe_trace *t)
{
	return t->liveness_frame ? t->liveness_frame - 1 : t->n;
}

/* No answer where one was required: a deviation while the QP still
 * answers, a fail (no verdict) when the remote stopped answering. */
void pa_no_answer(struct probe_result *r, const char *what, const char *required)
{
	const struct probe_trace *t = &r->trace;

	if (t->liveness_frame && !t->alive) {
		pa_cite(r, &t->ev[t->liveness_frame - 1]);
		pa_verdict(r, PROBE_FAIL, "no answer to %s, nor to a zero-length WRITE after it "
			"(frame %u): the remote stopped answering", what,
			r->frame_base + t->liveness_frame);
		return;
	}
	pa_verdict(r, PROBE_DEVIATION, "no answer to %s (required: %s)%s", what, required,
		t->liveness_frame ? "; the QP still answers a zero-length WRITE" : "");
}

/* Nothing at all came back in the exchange: the verdict set by no_answer
 * (fail when the QP then answered nothing either), and true. */
bool pa_silent(struct probe_result *r, const char *what, const char *required)
{
	const struct probe_trace *t = &r->trace;

	for (unsigned i = 0; i < pa_exchange_end(t); i++)
		if (t->ev[i].rx)
			return false;
	pa_no_answer(r, what, required);
	return true;
}

/* The answer to the request at psn: NULL after setting the verdict when
 * there is none. */
static const struct probe_event *answer_or_deviation(struct probe_result *r, uint32_t psn,
						     const char *required)
{
	const struct probe_trace *t = &r->trace;
	unsigned end = pa_exchange_end(t);
	const struct probe_event *req = request_at(t, psn, end);
	int i = probe_find_answer(t, psn, req ? req->frame : 0);

	if (req)
		pa_cite(r, req);
	if (i < 0 || (unsigned)i >= end) {
		char what[48];

		snprintf(what, sizeof(what), "the request at PSN 0x%06x", psn);
		pa_no_answer(r, what, required);
		return NULL;
	}
	pa_cite(r, &t->ev[i]);
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
		pa_verdict(r, PROBE_DEVIATION, "%s; required: NAK %s", seen, want ? want : "?");
		return;
	}
	if (memory_untouched && t->remote_known && t->remote.changed_bytes) {
		pa_verdict(r, PROBE_DEVIATION, "%s, but %" PRIu64 " bytes of the region changed "
			"(first at offset %" PRIu64 ")", seen, t->remote.changed_bytes,
			t->remote.first_changed);
		return;
	}
	pa_verdict(r, PROBE_PASS, "%s%s", seen,
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
		pa_verdict(r, PROBE_DEVIATION, "%s; required: an ACK", seen);
		return;
	}
	if (t->remote_known && recv_completions(&t->remote, true) != recvs) {
		pa_verdict(r, PROBE_DEVIATION, "%s, but the remote completed %u receives, not %u", seen,
			recv_completions(&t->remote, true), recvs);
		return;
	}
	if (t->remote_known && t->remote.changed_bytes != changed) {
		pa_verdict(r, PROBE_DEVIATION, "%s, but %" PRIu64 " bytes of the region changed, not %"
			PRIu64, seen, t->remote.changed_bytes, changed);
		return;
	}
	pa_verdict(r, PROBE_PASS, "%s", seen);
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
		pa_verdict(r, PROBE_DEVIATION, "%s; required: an RNR NAK", seen);
		return;
	}
	if (t->remote_known && recv_completions(&t->remote, false)) {
		pa_verdict(r, PROBE_DEVIATION, "%s, but the remote completed a receive it never had",
			seen);
		return;
	}
	pa_verdict(r, PROBE_PASS, "%s", seen);
}

void probe_expect_one_seq_nak(struct probe_result *r, uint32_t epsn)
{
	const struct probe_trace *t = &r->trace;
	unsigned naks = 0, other = 0, ahead = 0;
	const struct probe_event *first = NULL;

	for (unsigned i = 0; i < pa_exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (!e->rx) {
			if (wire_psn_diff(e->psn, epsn) > 0) {
				ahead++;
				pa_cite(r, e);
			}
			continue;
		}
		if (!e->has_aeth)
			continue;
		if (wire_aeth_kind(e->syndrome) == WIRE_AETH_NAK &&
		    wire_aeth_value(e->syndrome) == WIRE_NAK_PSN_SEQ_ERR && e->psn == epsn) {
			if (!naks++)
				first = e;
			pa_cite(r, e);
		} else {
			other++;
			pa_cite(r, e);
		}
	}
	if (!naks && !other) {
		char what[64];

		snprintf(what, sizeof(what), "%u requests ahead of PSN 0x%06x", ahead, epsn);
		pa_no_answer(r, what, "one NAK PSN sequence error");
	} else if (!naks)
		pa_verdict(r, PROBE_DEVIATION, "%u requests ahead of PSN 0x%06x drew no NAK PSN "
			"sequence error (other answers came)", ahead, epsn);
	else if (naks > 1)
		pa_verdict(r, PROBE_DEVIATION, "%u NAKs PSN sequence error for one episode of %u "
			"requests ahead of PSN 0x%06x; required: one", naks, ahead, epsn);
	else if (other)
		pa_verdict(r, PROBE_DEVIATION, "one NAK PSN sequence error, and %u other answers to "
			"requests it should have dropped", other);
	else if (t->remote_known && t->remote.changed_bytes)
		pa_verdict(r, PROBE_DEVIATION, "one NAK PSN sequence error, but the requests ahead "
			"were executed: %" PRIu64 " bytes of the region changed",
			t->remote.changed_bytes);
	else
		pa_verdict(r, PROBE_PASS, "one NAK PSN sequence error (PSN 0x%06x) for %u requests "
			"ahead", first->psn, ahead);
}

void probe_expect_dup_ack(struct probe_result *r, uint32_t psn, unsigned recvs_posted)
{
	const struct probe_trace *t = &r->trace;
	unsigned acks = 0, recvs;

	for (unsigned i = 0; i < pa_exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->psn != psn)
			continue;
		if (!e->rx || (e->has_aeth && wire_aeth_kind(e->syndrome) == WIRE_AETH_ACK)) {
			pa_cite(r, e);
			acks += e->rx;
		}
	}
	if (pa_silent(r, "a SEND and its duplicate", "both acknowledged"))
		return;
	if (!t->remote_known) {
		pa_verdict(r, PROBE_FAIL, "the remote did not report its completions");
		return;
	}
	recvs = recv_completions(&t->remote, true);
	if (acks < 2)
		pa_verdict(r, PROBE_DEVIATION, "%u ACK%s for the request and its duplicate at PSN "
			"0x%06x; required: both acknowledged", acks, acks == 1 ? "" : "s", psn);
	else if (recvs != 1)
		pa_verdict(r, PROBE_DEVIATION, "both acknowledged, but the remote completed %u of its %u "
			"receives; required: 1 (a duplicate consumes none)", recvs, recvs_posted);
	else
		pa_verdict(r, PROBE_PASS, "both acknowledged (%u ACKs), one receive completed", acks);
}

void probe_expect_dup_write(struct probe_result *r, uint32_t psn, uint64_t first_bytes)
{
	const struct probe_trace *t = &r->trace;
	unsigned acks = 0;

	for (unsigned i = 0; i < pa_exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->psn == psn && (!e->rx || (e->has_aeth &&
						 wire_aeth_kind(e->syndrome) == WIRE_AETH_ACK))) {
			pa_cite(r, e);
			acks += e->rx;
		}
	}
	if (pa_silent(r, "a WRITE and its duplicate", "both acknowledged"))
		return;
	if (!t->remote_known)
		pa_verdict(r, PROBE_FAIL, "the remote did not report its memory");
	else if (acks < 2)
		pa_verdict(r, PROBE_DEVIATION, "%u ACK%s for the WRITE and its duplicate at PSN 0x%06x; "
			"required: both acknowledged", acks, acks == 1 ? "" : "s", psn);
	else if (t->remote.changed_bytes > first_bytes)
		pa_verdict(r, PROBE_DEVIATION, "both acknowledged, but the duplicate was executed: %"
			PRIu64 " bytes of the region changed, the first WRITE wrote %" PRIu64,
			t->remote.changed_bytes, first_bytes);
	else if (t->remote.changed_bytes < first_bytes)
		pa_verdict(r, PROBE_DEVIATION, "both acknowledged, but only %" PRIu64 " of the first "
			"WRITE's %" PRIu64 " bytes are in the region", t->remote.changed_bytes,
			first_bytes);
	else
		pa_verdict(r, PROBE_PASS, "both acknowledged (%u ACKs); the duplicate was not executed",
			acks);
}

void probe_expect_dup_read(struct probe_result *r, uint32_t psn, uint32_t len)
{
	const struct probe_trace *t = &r->trace;
	unsigned reqs = 0, responses = 0, other = 0;

	for (unsigned i = 0; i < pa_exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->psn != psn)
			continue;
		pa_cite(r, e);
		if (!e->rx)
			reqs++;
		else if (e->opcode == OP_RC_READ_RESPONSE_ONLY && e->payload_len == len)
			responses++;
		else
			other++;
	}
	if (pa_silent(r, "a READ and its duplicate", "a READ response to each"))
		return;
	if (reqs < 2)
		pa_verdict(r, PROBE_FAIL, "the READ and its duplicate were not both sent");
	else if (!responses)
		pa_verdict(r, PROBE_DEVIATION, "no READ response of %u bytes to the READ at PSN 0x%06x "
			"(%u other answers)", len, psn, other);
	else if (responses < 2)
		pa_verdict(r, PROBE_DEVIATION, "the duplicate READ drew %s; required: executed again, "
			"a second READ response", other ? "another kind of answer" : "no answer");
	else
		pa_verdict(r, PROBE_PASS, "both answered with a READ response of %u bytes: the "
			"duplicate was executed again", len);
}

void probe_expect_dup_atomic(struct probe_result *r, uint32_t psn, uint64_t fill, uint64_t add)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *ack[2] = { NULL, NULL }, *rd = NULL;
	unsigned acks = 0;

	if (pa_silent(r, "an atomic and its duplicate", "an atomic ACK to each"))
		return;
	for (unsigned i = 0; i < pa_exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->rx && e->opcode == OP_RC_ATOMIC_ACK && e->psn == psn) {
			if (acks < 2)
				ack[acks] = e;
			acks++;
			pa_cite(r, e);
		} else if (e->rx && e->opcode == OP_RC_READ_RESPONSE_ONLY &&
			   e->psn == wire_psn_add(psn, 1)) {
			rd = e;
		} else if (!e->rx && e->psn == psn) {
			pa_cite(r, e);
		}
	}
	if (acks < 2) {
		pa_verdict(r, PROBE_DEVIATION, "%u atomic ACK%s for the atomic and its duplicate at PSN "
			"0x%06x; required: both answered", acks, acks == 1 ? "" : "s", psn);
		return;
	}
	if (ack[0]->orig != fill) {
		pa_verdict(r, PROBE_DEVIATION, "the atomic ACK carries 0x%016" PRIx64 ", but the 8 bytes "
			"held 0x%016" PRIx64, ack[0]->orig, fill);
		return;
	}
	if (ack[1]->orig != ack[0]->orig) {
		pa_verdict(r, PROBE_DEVIATION, "the duplicate was executed again: its ACK carries 0x%016"
			PRIx64 ", not the original 0x%016" PRIx64 " replayed", ack[1]->orig,
			ack[0]->orig);
		return;
	}
	if (!rd) {
		pa_verdict(r, PROBE_PASS, "the duplicate's ACK replays the original value 0x%016" PRIx64
			" (the value after was not read back)", fill);
		return;
	}
	pa_cite(r, rd);
	/* The bytes read are the remote's memory, in its own byte order. */
	if (rd->data != fill + add && __builtin_bswap64(rd->data) != fill + add)
		pa_verdict(r, PROBE_DEVIATION, "the duplicate's ACK replays the original value, but the "
			"8 bytes then read 0x%016" PRIx64 " (bytes in memory order), not 0x%016" PRIx64
			" added once", rd->data, fill + add);
	else
		pa_verdict(r, PROBE_PASS, "the duplicate's ACK replays the original value 0x%016" PRIx64
			"; the bytes read back show one add", fill);
}

void probe_expect_cnp(struct probe_result *r, uint32_t psn, unsigned n)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *prev = NULL;
	unsigned cnps = 0, acked = 0;
	uint64_t min_gap = UINT64_MAX;

	for (unsigned i = 0; i < pa_exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (!e->rx)
			continue;
		if (e->opcode == OP_CNP) {
			if (prev && e->t_ns - prev->t_ns < min_gap)
				min_gap = e->t_ns - prev->t_ns;
			prev = e;
			if (!cnps++)
				pa_cite(r, e);
		} else if (e->has_aeth && wire_psn_diff(e->psn, psn) >= 0 &&
			   wire_psn_diff(e->psn, wire_psn_add(psn, n)) < 0) {
			/* The first answer: the marked packets arrived. */
			if (!acked++)
				pa_cite(r, e);
		}
	}
	if (t->n && !t->ev[0].rx)
		pa_cite(r, &t->ev[0]);
	if (!cnps && !acked) {
		char what[64];

		snprintf(what, sizeof(what), "%u CE-marked requests from PSN 0x%06x", n, psn);
		pa_no_answer(r, what, "ACKs, and CNPs");
		return;
	}
	if (prev)
		pa_cite(r, prev);
	if (!acked)
		pa_verdict(r, t->liveness_frame && !t->alive ? PROBE_FAIL : PROBE_DEVIATION,
			"%u CNPs, but none of the %u CE-marked requests was acknowledged%s", cnps, n,
			t->liveness_frame && !t->alive ? ", and the QP then stopped answering" : "");
	else if (!cnps)
		pa_verdict(r, PROBE_NOT_IMPL, "no CNP for %u CE-marked requests, though they were "
			"answered: no congestion notification (no DCQCN)", n);
	else if (cnps == 1)
		pa_verdict(r, PROBE_PASS, "1 CNP for %u CE-marked requests sent back to back", n);
	else
		pa_verdict(r, PROBE_PASS, "%u CNPs for %u CE-marked requests sent back to back; the "
			"smallest gap between two: %.1f us", cnps, n, (double)min_gap / 1e3);
}

void probe_expect_read_limit(struct probe_result *r, uint32_t psn, unsigned n, unsigned limit)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *nak = NULL;
	unsigned answered = 0;
	bool first_answered = false;
	char what[64], syn[64] = "";

	for (unsigned k = 0; k < n; k++) {
		uint32_t p = wire_psn_add(psn, k);

		for (unsigned i = 0; i < pa_exchange_end(t); i++) {
			const struct probe_event *e = &t->ev[i];

			if (!e->rx || e->psn != p)
				continue;
			if (e->opcode == OP_RC_READ_RESPONSE_ONLY) {
				answered++;
				first_answered |= k == 0;
				pa_cite(r, e);
				break;
			}
			if (e->has_aeth && wire_aeth_kind(e->syndrome) != WIRE_AETH_ACK && !nak) {
				nak = e;
				pa_cite(r, e);
			}
		}
	}
	if (t->n && !t->ev[0].rx)
		pa_cite(r, &t->ev[0]);
	snprintf(what, sizeof(what), "%u READs from PSN 0x%06x", n, psn);
	if (pa_silent(r, what, "a READ response to the first"))
		return;
	if (nak)
		wire_aeth_describe(syn, sizeof(syn), nak->syndrome);
	if (!first_answered)
		pa_verdict(r, PROBE_DEVIATION, "the first READ (PSN 0x%06x), within the limit, drew %s; "
			"required: a READ response", psn, nak && nak->psn == psn ? syn : "no response");
	else if (answered == n)
		pa_verdict(r, PROBE_INFO, "all %u READs answered, sent back to back to a QP that "
			"announced %u outstanding", n, limit);
	else if (nak)
		pa_verdict(r, PROBE_INFO, "%u of %u READs answered, then %s at PSN 0x%06x (it announced "
			"%u outstanding)", answered, n, syn, nak->psn, limit);
	else
		pa_verdict(r, PROBE_INFO, "%u of %u READs answered, the rest dropped silently (it "
			"announced %u outstanding)", answered, n, limit);
}

void probe_expect_credits(struct probe_result *r, uint32_t psn, unsigned recvs)
{
	const struct probe_event *ans = answer_or_deviation(r, psn, "an ACK");
	uint8_t code;
	char seen[64];

	if (!ans)
		return;
	wire_aeth_describe(seen, sizeof(seen), ans->syndrome);
	code = wire_aeth_value(ans->syndrome);
	if (wire_aeth_kind(ans->syndrome) != WIRE_AETH_ACK)
		pa_verdict(r, PROBE_DEVIATION, "%s for a SEND with %u receives posted; required: an "
			"ACK", seen, recvs);
	else if (code == 31)
		pa_verdict(r, PROBE_INFO, "ACK with credits invalid (code 31), %u receives posted: it "
			"keeps no end-to-end credits", recvs);
	else
		pa_verdict(r, PROBE_INFO, "ACK with credits %d (code %u) after one of %u receives was "
			"consumed", wire_aeth_credits(code), code, recvs);
}

void probe_expect_acks(struct probe_result *r, uint32_t psn, unsigned n, uint64_t changed)
{
	const struct probe_trace *t = &r->trace;
	unsigned end = pa_exchange_end(t);

	for (unsigned k = 0; k < n; k++) {
		uint32_t p = wire_psn_add(psn, k);
		const struct probe_event *req = request_at(t, p, end);
		int i = req ? probe_find_answer(t, p, req->frame) : -1;
		char what[48], seen[64];

		if (req)
			pa_cite(r, req);
		if (i < 0 || (unsigned)i >= end) {
			snprintf(what, sizeof(what), "the request at PSN 0x%06x", p);
			pa_no_answer(r, what, "an ACK");
			return;
		}
		pa_cite(r, &t->ev[i]);
		if (wire_aeth_kind(t->ev[i].syndrome) != WIRE_AETH_ACK) {
			wire_aeth_describe(seen, sizeof(seen), t->ev[i].syndrome);
			pa_verdict(r, PROBE_DEVIATION, "%s for the request at PSN 0x%06x; required: an ACK",
				seen, p);
			return;
		}
	}
	if (t->remote_known && t->remote.changed_bytes != changed)
		pa_verdict(r, PROBE_DEVIATION, "all %u ACKed, but %" PRIu64 " bytes of the region "
			"changed, not %" PRIu64, n, t->remote.changed_bytes, changed);
	else
		pa_verdict(r, PROBE_PASS, "all %u requests from PSN 0x%06x to 0x%06x ACKed%s", n, psn,
			wire_psn_add(psn, n - 1), t->remote_known ? ", their bytes in place" : "");
}

void probe_expect_silent_drop(struct probe_result *r, unsigned silent_until, uint32_t psn)
{
	const struct probe_trace *t = &r->trace;
	unsigned answered = 0;
	int i;

	for (unsigned k = 0; k < t->n && t->ev[k].frame <= silent_until; k++) {
		if (t->ev[k].rx)
			answered++;
		pa_cite(r, &t->ev[k]);
	}
	if (answered) {
		pa_verdict(r, PROBE_DEVIATION, "%u answer%s to a packet with a bad ICRC; required: "
			"dropped silently", answered, answered == 1 ? "" : "s");
		return;
	}
	if (t->remote_known && t->remote.changed_bytes && t->remote.first_changed < 64) {
		pa_verdict(r, PROBE_DEVIATION, "the packet with a bad ICRC was executed: its bytes "
			"are in the region");
		return;
	}
	i = probe_find_answer(t, psn, silent_until);
	if (i < 0 || wire_aeth_kind(t->ev[i].syndrome) != WIRE_AETH_ACK) {
		char seen[64] = "no answer";

		if (i >= 0) {
			wire_aeth_describe(seen, sizeof(seen), t->ev[i].syndrome);
			pa_cite(r, &t->ev[i]);
		}
		pa_verdict(r, PROBE_FAIL, "silent after the bad ICRC, but the same request with a good "
			"ICRC then drew %s, not an ACK", seen);
		return;
	}
	pa_cite(r, &t->ev[silent_until]);
	pa_cite(r, &t->ev[i]);
	if (t->remote_known && !(t->remote.changed_bytes == 64 && t->remote.first_changed == 64)) {
		pa_verdict(r, PROBE_DEVIATION, "the WRITE with a good ICRC did not land as sent: %"
			PRIu64 " bytes of the region changed, the first at offset %" PRIu64
			" (required: 64 at 64)", t->remote.changed_bytes, t->remote.first_changed);
		return;
	}
	pa_verdict(r, PROBE_PASS, "silent for the bad ICRC; the same request with a good ICRC was "
		"acknowledged");
}

bool pa_is_request(const struct probe_event *e, uint32_t psn)
{
	return e->rx && !e->has_aeth && e->psn == psn;
}

bool pa_completed_with(const struct probe_trace *t, enum xport_wc_status st)
{
	for (unsigned i = 0; i < t->remote.n_wc; i++)
		if (t->remote.wc[i].status == st && t->remote.wc[i].opcode != XPORT_WC_RECV)
			return true;
	return false;
}
