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

/* Names a frame as evidence, kept in frame order, once. */
static void cite(struct probe_result *r, const struct probe_event *e)
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

/* The test's own exchange: the record up to the liveness check, if any. */
static unsigned exchange_end(const struct probe_trace *t)
{
	return t->liveness_frame ? t->liveness_frame - 1 : t->n;
}

/* No answer where one was required: a deviation while the QP still
 * answers, a fail (no verdict) when the remote stopped answering. */
static void no_answer(struct probe_result *r, const char *what, const char *required)
{
	const struct probe_trace *t = &r->trace;

	if (t->liveness_frame && !t->alive) {
		cite(r, &t->ev[t->liveness_frame - 1]);
		verdict(r, PROBE_FAIL, "no answer to %s, nor to a zero-length WRITE after it "
			"(frame %u): the remote stopped answering", what,
			r->frame_base + t->liveness_frame);
		return;
	}
	verdict(r, PROBE_DEVIATION, "no answer to %s (required: %s)%s", what, required,
		t->liveness_frame ? "; the QP still answers a zero-length WRITE" : "");
}

/* Nothing at all came back in the exchange: the verdict set by no_answer
 * (fail when the QP then answered nothing either), and true. */
static bool silent(struct probe_result *r, const char *what, const char *required)
{
	const struct probe_trace *t = &r->trace;

	for (unsigned i = 0; i < exchange_end(t); i++)
		if (t->ev[i].rx)
			return false;
	no_answer(r, what, required);
	return true;
}

/* The answer to the request at psn: NULL after setting the verdict when
 * there is none. */
static const struct probe_event *answer_or_deviation(struct probe_result *r, uint32_t psn,
						     const char *required)
{
	const struct probe_trace *t = &r->trace;
	unsigned end = exchange_end(t);
	const struct probe_event *req = request_at(t, psn, end);
	int i = probe_find_answer(t, psn, req ? req->frame : 0);

	if (req)
		cite(r, req);
	if (i < 0 || (unsigned)i >= end) {
		char what[48];

		snprintf(what, sizeof(what), "the request at PSN 0x%06x", psn);
		no_answer(r, what, required);
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

	for (unsigned i = 0; i < exchange_end(t); i++) {
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
	if (!naks && !other) {
		char what[64];

		snprintf(what, sizeof(what), "%u requests ahead of PSN 0x%06x", ahead, epsn);
		no_answer(r, what, "one NAK PSN sequence error");
	} else if (!naks)
		verdict(r, PROBE_DEVIATION, "%u requests ahead of PSN 0x%06x drew no NAK PSN "
			"sequence error (other answers came)", ahead, epsn);
	else if (naks > 1)
		verdict(r, PROBE_DEVIATION, "%u NAKs PSN sequence error for one episode of %u "
			"requests ahead of PSN 0x%06x; required: one", naks, ahead, epsn);
	else if (other)
		verdict(r, PROBE_DEVIATION, "one NAK PSN sequence error, and %u other answers to "
			"requests it should have dropped", other);
	else if (t->remote_known && t->remote.changed_bytes)
		verdict(r, PROBE_DEVIATION, "one NAK PSN sequence error, but the requests ahead "
			"were executed: %" PRIu64 " bytes of the region changed",
			t->remote.changed_bytes);
	else
		verdict(r, PROBE_PASS, "one NAK PSN sequence error (PSN 0x%06x) for %u requests "
			"ahead", first->psn, ahead);
}

void probe_expect_dup_ack(struct probe_result *r, uint32_t psn, unsigned recvs_posted)
{
	const struct probe_trace *t = &r->trace;
	unsigned acks = 0, recvs;

	for (unsigned i = 0; i < exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->psn != psn)
			continue;
		if (!e->rx || (e->has_aeth && wire_aeth_kind(e->syndrome) == WIRE_AETH_ACK)) {
			cite(r, e);
			acks += e->rx;
		}
	}
	if (silent(r, "a SEND and its duplicate", "both acknowledged"))
		return;
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

void probe_expect_dup_write(struct probe_result *r, uint32_t psn, uint64_t first_bytes)
{
	const struct probe_trace *t = &r->trace;
	unsigned acks = 0;

	for (unsigned i = 0; i < exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->psn == psn && (!e->rx || (e->has_aeth &&
						 wire_aeth_kind(e->syndrome) == WIRE_AETH_ACK))) {
			cite(r, e);
			acks += e->rx;
		}
	}
	if (silent(r, "a WRITE and its duplicate", "both acknowledged"))
		return;
	if (!t->remote_known)
		verdict(r, PROBE_FAIL, "the remote did not report its memory");
	else if (acks < 2)
		verdict(r, PROBE_DEVIATION, "%u ACK%s for the WRITE and its duplicate at PSN 0x%06x; "
			"required: both acknowledged", acks, acks == 1 ? "" : "s", psn);
	else if (t->remote.changed_bytes > first_bytes)
		verdict(r, PROBE_DEVIATION, "both acknowledged, but the duplicate was executed: %"
			PRIu64 " bytes of the region changed, the first WRITE wrote %" PRIu64,
			t->remote.changed_bytes, first_bytes);
	else if (t->remote.changed_bytes < first_bytes)
		verdict(r, PROBE_DEVIATION, "both acknowledged, but only %" PRIu64 " of the first "
			"WRITE's %" PRIu64 " bytes are in the region", t->remote.changed_bytes,
			first_bytes);
	else
		verdict(r, PROBE_PASS, "both acknowledged (%u ACKs); the duplicate was not executed",
			acks);
}

void probe_expect_dup_read(struct probe_result *r, uint32_t psn, uint32_t len)
{
	const struct probe_trace *t = &r->trace;
	unsigned reqs = 0, responses = 0, other = 0;

	for (unsigned i = 0; i < exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->psn != psn)
			continue;
		cite(r, e);
		if (!e->rx)
			reqs++;
		else if (e->opcode == OP_RC_READ_RESPONSE_ONLY && e->payload_len == len)
			responses++;
		else
			other++;
	}
	if (silent(r, "a READ and its duplicate", "a READ response to each"))
		return;
	if (reqs < 2)
		verdict(r, PROBE_FAIL, "the READ and its duplicate were not both sent");
	else if (!responses)
		verdict(r, PROBE_DEVIATION, "no READ response of %u bytes to the READ at PSN 0x%06x "
			"(%u other answers)", len, psn, other);
	else if (responses < 2)
		verdict(r, PROBE_DEVIATION, "the duplicate READ drew %s; required: executed again, "
			"a second READ response", other ? "another kind of answer" : "no answer");
	else
		verdict(r, PROBE_PASS, "both answered with a READ response of %u bytes: the "
			"duplicate was executed again", len);
}

void probe_expect_dup_atomic(struct probe_result *r, uint32_t psn, uint64_t fill, uint64_t add)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *ack[2] = { NULL, NULL }, *rd = NULL;
	unsigned acks = 0;

	if (silent(r, "an atomic and its duplicate", "an atomic ACK to each"))
		return;
	for (unsigned i = 0; i < exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (e->rx && e->opcode == OP_RC_ATOMIC_ACK && e->psn == psn) {
			if (acks < 2)
				ack[acks] = e;
			acks++;
			cite(r, e);
		} else if (e->rx && e->opcode == OP_RC_READ_RESPONSE_ONLY &&
			   e->psn == wire_psn_add(psn, 1)) {
			rd = e;
		} else if (!e->rx && e->psn == psn) {
			cite(r, e);
		}
	}
	if (acks < 2) {
		verdict(r, PROBE_DEVIATION, "%u atomic ACK%s for the atomic and its duplicate at PSN "
			"0x%06x; required: both answered", acks, acks == 1 ? "" : "s", psn);
		return;
	}
	if (ack[0]->orig != fill) {
		verdict(r, PROBE_DEVIATION, "the atomic ACK carries 0x%016" PRIx64 ", but the 8 bytes "
			"held 0x%016" PRIx64, ack[0]->orig, fill);
		return;
	}
	if (ack[1]->orig != ack[0]->orig) {
		verdict(r, PROBE_DEVIATION, "the duplicate was executed again: its ACK carries 0x%016"
			PRIx64 ", not the original 0x%016" PRIx64 " replayed", ack[1]->orig,
			ack[0]->orig);
		return;
	}
	if (!rd) {
		verdict(r, PROBE_PASS, "the duplicate's ACK replays the original value 0x%016" PRIx64
			" (the value after was not read back)", fill);
		return;
	}
	cite(r, rd);
	/* The bytes read are the remote's memory, in its own byte order. */
	if (rd->data != fill + add && __builtin_bswap64(rd->data) != fill + add)
		verdict(r, PROBE_DEVIATION, "the duplicate's ACK replays the original value, but the "
			"8 bytes then read 0x%016" PRIx64 " (bytes in memory order), not 0x%016" PRIx64
			" added once", rd->data, fill + add);
	else
		verdict(r, PROBE_PASS, "the duplicate's ACK replays the original value 0x%016" PRIx64
			"; the bytes read back show one add", fill);
}

void probe_expect_cnp(struct probe_result *r, uint32_t psn, unsigned n)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *prev = NULL;
	unsigned cnps = 0, acked = 0;
	uint64_t min_gap = UINT64_MAX;

	for (unsigned i = 0; i < exchange_end(t); i++) {
		const struct probe_event *e = &t->ev[i];

		if (!e->rx)
			continue;
		if (e->opcode == OP_CNP) {
			if (prev && e->t_ns - prev->t_ns < min_gap)
				min_gap = e->t_ns - prev->t_ns;
			prev = e;
			if (!cnps++)
				cite(r, e);
		} else if (e->has_aeth && wire_psn_diff(e->psn, psn) >= 0 &&
			   wire_psn_diff(e->psn, wire_psn_add(psn, n)) < 0) {
			/* The first answer: the marked packets arrived. */
			if (!acked++)
				cite(r, e);
		}
	}
	if (t->n && !t->ev[0].rx)
		cite(r, &t->ev[0]);
	if (!cnps && !acked) {
		char what[64];

		snprintf(what, sizeof(what), "%u CE-marked requests from PSN 0x%06x", n, psn);
		no_answer(r, what, "ACKs, and CNPs");
		return;
	}
	if (prev)
		cite(r, prev);
	if (!acked)
		verdict(r, t->liveness_frame && !t->alive ? PROBE_FAIL : PROBE_DEVIATION,
			"%u CNPs, but none of the %u CE-marked requests was acknowledged%s", cnps, n,
			t->liveness_frame && !t->alive ? ", and the QP then stopped answering" : "");
	else if (!cnps)
		verdict(r, PROBE_NOT_IMPL, "no CNP for %u CE-marked requests, though they were "
			"answered: no congestion notification (no DCQCN)", n);
	else if (cnps == 1)
		verdict(r, PROBE_PASS, "1 CNP for %u CE-marked requests sent back to back", n);
	else
		verdict(r, PROBE_PASS, "%u CNPs for %u CE-marked requests sent back to back; the "
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

		for (unsigned i = 0; i < exchange_end(t); i++) {
			const struct probe_event *e = &t->ev[i];

			if (!e->rx || e->psn != p)
				continue;
			if (e->opcode == OP_RC_READ_RESPONSE_ONLY) {
				answered++;
				first_answered |= k == 0;
				cite(r, e);
				break;
			}
			if (e->has_aeth && wire_aeth_kind(e->syndrome) != WIRE_AETH_ACK && !nak) {
				nak = e;
				cite(r, e);
			}
		}
	}
	if (t->n && !t->ev[0].rx)
		cite(r, &t->ev[0]);
	snprintf(what, sizeof(what), "%u READs from PSN 0x%06x", n, psn);
	if (silent(r, what, "a READ response to the first"))
		return;
	if (nak)
		wire_aeth_describe(syn, sizeof(syn), nak->syndrome);
	if (!first_answered)
		verdict(r, PROBE_DEVIATION, "the first READ (PSN 0x%06x), within the limit, drew %s; "
			"required: a READ response", psn, nak && nak->psn == psn ? syn : "no response");
	else if (answered == n)
		verdict(r, PROBE_INFO, "all %u READs answered, sent back to back to a QP that "
			"announced %u outstanding", n, limit);
	else if (nak)
		verdict(r, PROBE_INFO, "%u of %u READs answered, then %s at PSN 0x%06x (it announced "
			"%u outstanding)", answered, n, syn, nak->psn, limit);
	else
		verdict(r, PROBE_INFO, "%u of %u READs answered, the rest dropped silently (it "
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
		verdict(r, PROBE_DEVIATION, "%s for a SEND with %u receives posted; required: an "
			"ACK", seen, recvs);
	else if (code == 31)
		verdict(r, PROBE_INFO, "ACK with credits invalid (code 31), %u receives posted: it "
			"keeps no end-to-end credits", recvs);
	else
		verdict(r, PROBE_INFO, "ACK with credits %d (code %u) after one of %u receives was "
			"consumed", wire_aeth_credits(code), code, recvs);
}

void probe_expect_acks(struct probe_result *r, uint32_t psn, unsigned n, uint64_t changed)
{
	const struct probe_trace *t = &r->trace;
	unsigned end = exchange_end(t);

	for (unsigned k = 0; k < n; k++) {
		uint32_t p = wire_psn_add(psn, k);
		const struct probe_event *req = request_at(t, p, end);
		int i = req ? probe_find_answer(t, p, req->frame) : -1;
		char what[48], seen[64];

		if (req)
			cite(r, req);
		if (i < 0 || (unsigned)i >= end) {
			snprintf(what, sizeof(what), "the request at PSN 0x%06x", p);
			no_answer(r, what, "an ACK");
			return;
		}
		cite(r, &t->ev[i]);
		if (wire_aeth_kind(t->ev[i].syndrome) != WIRE_AETH_ACK) {
			wire_aeth_describe(seen, sizeof(seen), t->ev[i].syndrome);
			verdict(r, PROBE_DEVIATION, "%s for the request at PSN 0x%06x; required: an ACK",
				seen, p);
			return;
		}
	}
	if (t->remote_known && t->remote.changed_bytes != changed)
		verdict(r, PROBE_DEVIATION, "all %u ACKed, but %" PRIu64 " bytes of the region "
			"changed, not %" PRIu64, n, t->remote.changed_bytes, changed);
	else
		verdict(r, PROBE_PASS, "all %u requests from PSN 0x%06x to 0x%06x ACKed%s", n, psn,
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
	if (t->remote_known && !(t->remote.changed_bytes == 64 && t->remote.first_changed == 64)) {
		verdict(r, PROBE_DEVIATION, "the WRITE with a good ICRC did not land as sent: %"
			PRIu64 " bytes of the region changed, the first at offset %" PRIu64
			" (required: 64 at 64)", t->remote.changed_bytes, t->remote.first_changed);
		return;
	}
	verdict(r, PROBE_PASS, "silent for the bad ICRC; the same request with a good ICRC was "
		"acknowledged");
}

/* --- the remote as requester ------------------------------------------------- */

static bool is_request(const struct probe_event *e, uint32_t psn)
{
	return e->rx && !e->has_aeth && e->psn == psn;
}

static bool completed_with(const struct probe_trace *t, enum xport_wc_status st)
{
	for (unsigned i = 0; i < t->remote.n_wc; i++)
		if (t->remote.wc[i].status == st && t->remote.wc[i].opcode != XPORT_WC_RECV)
			return true;
	return false;
}

/* The remote's first transmission of the request at psn (cited) and its
 * second (NULL if none); false, with a fail, when it never sent it. */
static bool first_two_sends(struct probe_result *r, uint32_t psn, const struct probe_event **first,
			    const struct probe_event **second)
{
	const struct probe_trace *t = &r->trace;

	*first = *second = NULL;
	for (unsigned i = 0; i < t->n && !*second; i++)
		if (is_request(&t->ev[i], psn)) {
			if (!*first)
				*first = &t->ev[i];
			else
				*second = &t->ev[i];
		}
	if (!*first) {
		verdict(r, PROBE_FAIL, "the remote never sent the request it was asked to post");
		return false;
	}
	cite(r, *first);
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
		verdict(r, PROBE_DEVIATION, "no retransmission of PSN 0x%06x without an ACK "
			"(timeout %u: %.3f ms)", psn, timeout, nominal_us / 1e3);
		return;
	}
	cite(r, second);
	gap_us = (double)(second->t_ns - first->t_ns) / 1e3;
	if (gap_us + res_us < nominal_us || gap_us > 4 * nominal_us + res_us)
		verdict(r, PROBE_DEVIATION, "first retransmission after %.3f ms; timeout %u allows "
			"%.3f to %.3f ms (+-%.0f ms resolution)", gap_us / 1e3, timeout,
			nominal_us / 1e3, 4 * nominal_us / 1e3, res_us / 1e3);
	else
		verdict(r, PROBE_PASS, "first retransmission after %.3f ms = %.2f x 4.096 us x 2^%u "
			"(allowed: 1 to 4 x, +-%.0f ms resolution)", gap_us / 1e3,
			gap_us / nominal_us, timeout, res_us / 1e3);
}

void probe_expect_no_timer(struct probe_result *r, uint32_t psn)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *first, *again;

	if (!first_two_sends(r, psn, &first, &again))
		return;
	if (again) {
		cite(r, again);
		verdict(r, PROBE_DEVIATION, "sent again %.3f ms later with timeout 0, which means no "
			"ACK timer", (double)(again->t_ns - first->t_ns) / 1e6);
		return;
	}
	verdict(r, PROBE_PASS, "not sent again in %.1f s without an ACK: timeout 0, no timer",
		(double)(t->end_ns > first->t_ns ? t->end_ns - first->t_ns : 0) / 1e9);
}

void probe_expect_retries(struct probe_result *r, uint32_t psn, unsigned retry_cnt)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *first = NULL, *last = NULL;
	unsigned sent = 0, retries;

	for (unsigned i = 0; i < t->n; i++)
		if (is_request(&t->ev[i], psn)) {
			first = first ? first : &t->ev[i];
			last = &t->ev[i];
			sent++;
		}
	if (!sent) {
		verdict(r, PROBE_FAIL, "the remote never sent the request it was asked to post");
		return;
	}
	cite(r, first);
	cite(r, last);
	retries = sent - 1;
	if (retries > retry_cnt) {
		verdict(r, PROBE_DEVIATION, "%s%u retransmissions over %.1f s for retry_cnt %u "
			"(only rnr_retry 7 means forever)", t->truncated ? "more than " : "",
			retries, (double)(last->t_ns - first->t_ns) / 1e9, retry_cnt);
	} else if (retries < retry_cnt) {
		verdict(r, PROBE_DEVIATION, "gave up after %u retransmissions; retry_cnt is %u",
			retries, retry_cnt);
	} else if (!t->remote_known || !completed_with(t, XPORT_WC_RETRY_EXC_ERR)) {
		verdict(r, PROBE_DEVIATION, "%u retransmissions, as retry_cnt says, but the work "
			"request did not complete with \"transport retry counter exceeded\"",
			retries);
	} else {
		verdict(r, PROBE_PASS, "%u retransmissions, then \"transport retry counter "
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
		verdict(r, PROBE_FAIL, "the remote's request never came, so no NAK was sent");
		return;
	}
	cite(r, nak);
	for (unsigned i = nak->frame; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];

		if (!e->rx || e->has_aeth)
			continue;
		cite(r, e);
		if (e->psn == nak_psn)
			verdict(r, PROBE_PASS, "resent from PSN 0x%06x, the one the NAK named, %.3f "
				"ms after it", e->psn, (double)(e->t_ns - nak->t_ns) / 1e6);
		else
			verdict(r, PROBE_DEVIATION, "resent from PSN 0x%06x after a NAK naming "
				"0x%06x", e->psn, nak_psn);
		return;
	}
	verdict(r, PROBE_DEVIATION, "nothing resent after the NAK PSN sequence error naming "
		"0x%06x", nak_psn);
}

void probe_expect_rnr_wait(struct probe_result *r, uint32_t psn, uint32_t res_us)
{
	const struct probe_trace *t = &r->trace;
	const struct probe_event *rnr = our_answer(t, WIRE_AETH_RNR_NAK);
	uint32_t timer_us;

	if (!rnr) {
		verdict(r, PROBE_FAIL, "the remote's SEND never came, so no RNR NAK was sent");
		return;
	}
	cite(r, rnr);
	timer_us = wire_rnr_timer_us(wire_aeth_value(rnr->syndrome));
	for (unsigned i = rnr->frame; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];
		double waited_us;

		if (!is_request(e, psn))
			continue;
		cite(r, e);
		waited_us = (double)(e->t_ns - rnr->t_ns) / 1e3;
		if (waited_us + res_us < timer_us)
			verdict(r, PROBE_DEVIATION, "resent after %.3f ms, before the RNR NAK's "
				"timer of %.2f ms ran out", waited_us / 1e3, timer_us / 1e3);
		else
			verdict(r, PROBE_PASS, "resent after %.3f ms for an RNR NAK timer of %.2f ms",
				waited_us / 1e3, timer_us / 1e3);
		return;
	}
	verdict(r, PROBE_DEVIATION, "never resent after an RNR NAK of %.2f ms (rnr_retry 7: "
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
		verdict(r, PROBE_FAIL, "%s, but the remote did not report its completions", seen);
	else if (!wc || wc->status != XPORT_WC_SUCCESS)
		verdict(r, PROBE_DEVIATION, "%s, but the READ %s once answered", seen,
			wc ? xport_wc_status_str(wc->status) : "did not complete");
	else if (t->remote.changed_bytes < len)
		verdict(r, PROBE_DEVIATION, "%s, but only %" PRIu64 " of the %u bytes read are in "
			"its region", seen, t->remote.changed_bytes, len);
	else
		verdict(r, v, "%s; the READ completed with all %u bytes", seen, len);
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
		verdict(r, PROBE_FAIL, "the remote never sent the READ it was asked to post");
		return;
	}
	cite(r, orig);
	retry = read_request(t, orig->frame);
	/* The responses this side sent, the gap among them. */
	for (unsigned i = orig->frame; i < (retry ? retry->frame - 1 : t->n); i++)
		if (!t->ev[i].rx) {
			cite(r, &t->ev[i]);
			if (!beyond && wire_psn_diff(t->ev[i].psn, lost) > 0)
				beyond = &t->ev[i];
		}
	if (!retry) {
		if (wc && wc->status == XPORT_WC_SUCCESS)
			verdict(r, PROBE_DEVIATION, "the READ completed successfully with the response "
				"at PSN 0x%06x never received", lost);
		else
			verdict(r, PROBE_DEVIATION, "no READ asked again after the response at PSN "
				"0x%06x was lost", lost);
		return;
	}
	cite(r, retry);
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
		verdict(r, PROBE_DEVIATION, "READ asked again at PSN 0x%06x for %u bytes at +%" PRIu64
			"; required: PSN 0x%06x, %u bytes at +%u", retry->psn, retry->dmalen,
			retry->va - orig->va, lost, orig->dmalen - skip, skip);
	}
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
		verdict(r, PROBE_FAIL, "the remote never sent the READ it was asked to post");
		return;
	}
	cite(r, orig);
	for (unsigned i = orig->frame; i < t->n && !ack; i++)
		if (!t->ev[i].rx && t->ev[i].opcode == OP_RC_ACK)
			ack = &t->ev[i];
	if (!ack) {
		verdict(r, PROBE_FAIL, "the remote never sent the WRITE after the READ, so no ACK "
			"passed it");
		return;
	}
	cite(r, ack);
	retry = read_request(t, ack->frame);
	if (!retry) {
		if (wc && wc->status == XPORT_WC_SUCCESS)
			verdict(r, PROBE_DEVIATION, "the READ completed successfully, unanswered, once "
				"an ACK for a later PSN came");
		else
			verdict(r, PROBE_DEVIATION, "the READ was not sent again after an ACK passed "
				"it (listened %.1f s)", (double)(t->ev[t->n - 1].t_ns - ack->t_ns) / 1e9);
		return;
	}
	cite(r, retry);
	gap_us = (double)(retry->t_ns - ack->t_ns) / 1e3;
	if (gap_us + res_us >= nominal_us) {
		verdict(r, PROBE_DEVIATION, "the READ was sent again %.3f ms after the ACK that "
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

/* The evidence: what the trace kept (the first and last data packets, the
 * first and last CNP). */
static void cite_all(struct probe_result *r)
{
	for (unsigned i = 0; i < r->trace.n; i++)
		cite(r, &r->trace.ev[i]);
}

void probe_expect_cnp_reaction(struct probe_result *r, const struct probe_stream *s)
{
	const uint64_t settle = 10000000u, window = 20000000u;	/* 10 ms, 20 ms */
	double before, under, after = -1;
	uint64_t last, mid;

	cite_all(r);
	if (s->n < 16 || !s->cnps) {
		verdict(r, PROBE_FAIL, "the remote's stream gave %u packets and %u CNPs went: too "
			"little to measure a rate", s->n, s->cnps);
		return;
	}
	last = s->t_ns[s->n - 1];
	if (last < s->cnp_to_ns || s->cnp_from_ns < s->t_ns[0] + 1000000u) {
		verdict(r, PROBE_FAIL, "the remote's stream %s (%u packets): no rate to compare",
			last < s->cnp_to_ns ? (s->complete ? "ended before the CNPs did"
						: "stopped during the CNPs")
			: "had under 1 ms before the CNPs", s->n);
		return;
	}
	mid = s->cnp_from_ns + (s->cnp_to_ns - s->cnp_from_ns) / 2;
	before = stream_gbps(s, s->t_ns[0], s->cnp_from_ns);
	under = stream_gbps(s, mid, s->cnp_to_ns);
	if (last >= s->cnp_to_ns + settle + window)
		after = stream_gbps(s, s->cnp_to_ns + settle, s->cnp_to_ns + settle + window);
	if (under > 0.75 * before) {
		verdict(r, PROBE_NOT_IMPL, "%.3f Gb/s before %u CNPs, %.3f Gb/s under them: no "
			"reaction (no DCQCN reaction point)%s", before, s->cnps, under,
			s->gaps ? "; packets were lost on the way in, NAKed" : "");
		return;
	}
	if (after < 0)
		verdict(r, PROBE_PASS, "rate fell from %.3f to %.3f Gb/s under %u CNPs over %.1f "
			"ms (the stream ended before a recovery could be seen)", before, under,
			s->cnps, (double)(s->cnp_to_ns - s->cnp_from_ns) / 1e6);
	else
		verdict(r, PROBE_PASS, "rate fell from %.3f to %.3f Gb/s under %u CNPs over %.1f "
			"ms; %.3f Gb/s 10 to 30 ms after the last", before, under, s->cnps,
			(double)(s->cnp_to_ns - s->cnp_from_ns) / 1e6, after);
}

void probe_expect_rnr_forever(struct probe_result *r, uint32_t psn, unsigned naks)
{
	const struct probe_trace *t = &r->trace;
	unsigned sent = 0, rnrs = 0;
	const struct probe_event *last = NULL;

	for (unsigned i = 0; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];

		if (is_request(e, psn)) {
			if (!sent++)
				cite(r, e);
			last = e;
		} else if (!e->rx && e->has_aeth && wire_aeth_kind(e->syndrome) == WIRE_AETH_RNR_NAK) {
			rnrs++;
		}
	}
	if (!sent) {
		verdict(r, PROBE_FAIL, "the remote never sent the SEND it was asked to post");
		return;
	}
	cite(r, last);
	if (rnrs < naks || sent < naks + 1)
		verdict(r, PROBE_DEVIATION, "gave up after %u RNR NAKs (sent %u times): rnr_retry 7 "
			"retries forever", rnrs, sent);
	else if (!t->remote_known || !completed_with(t, XPORT_WC_SUCCESS))
		verdict(r, PROBE_DEVIATION, "sent again after each of %u RNR NAKs, but the SEND did "
			"not complete successfully once ACKed", rnrs);
	else
		verdict(r, PROBE_PASS, "sent again after each of %u RNR NAKs, then completed once "
			"ACKed", rnrs);
}

/* --- the remote's own packets ------------------------------------------------ */

void probe_expect_ect(struct probe_result *r)
{
	const struct probe_trace *t = &r->trace;
	unsigned data = 0, ect = 0;

	for (unsigned i = 0; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];

		if (!e->rx || e->has_aeth)
			continue;
		data++;
		/* CE too: only an ECN-capable packet can have been marked. */
		if ((e->tos & 3) != WIRE_NOT_ECT)
			ect++;
		else
			cite(r, e);
		if (data == 1)
			cite(r, e);
	}
	if (!data)
		verdict(r, PROBE_FAIL, "the remote sent no data packet");
	else if (!ect)
		verdict(r, PROBE_NOT_IMPL, "none of its %u data packets is ECN-capable (ToS ECN "
			"bits 00): no CE marks can reach it, so no congestion control by ECN", data);
	else if (ect < data)
		verdict(r, PROBE_DEVIATION, "%u of its %u data packets ECN-capable", ect, data);
	else
		verdict(r, PROBE_PASS, "all %u data packets ECN-capable (ECT or CE)", data);
}

/* The packets received from index *i on, one a call; *n counts them and
 * the first is cited.  NULL after the last. */
static const struct probe_event *next_received(struct probe_result *r, unsigned *i, unsigned *n)
{
	for (; *i < r->trace.n; ++*i)
		if (r->trace.ev[*i].rx) {
			if (!(*n)++)
				cite(r, &r->trace.ev[*i]);
			return &r->trace.ev[(*i)++];
		}
	return NULL;
}

void probe_expect_dscp(struct probe_result *r, uint8_t dscp)
{
	const struct probe_event *e;
	unsigned n = 0, right = 0;
	int other = -1;

	for (unsigned i = 0; (e = next_received(r, &i, &n));) {
		if (e->tos >> 2 == dscp) {
			right++;
		} else if (other < 0) {
			other = e->tos >> 2;
			cite(r, e);
		}
	}
	if (!n)
		verdict(r, PROBE_FAIL, "the remote sent nothing");
	else if (right < n)
		verdict(r, PROBE_DEVIATION, "%u of its %u packets carry DSCP %d, not the QP's %u",
			n - right, n, other, dscp);
	else
		verdict(r, PROBE_PASS, "all %u packets carry DSCP %u, the QP's traffic class", n, dscp);
}

void probe_expect_sports(struct probe_result *r, uint32_t qpn_a, uint32_t qpn_b)
{
	const struct probe_trace *t = &r->trace;
	int port_a = -1, port_b = -1;
	bool mixed = false;

	for (unsigned i = 0; i < t->n; i++) {
		const struct probe_event *e = &t->ev[i];
		int *port = e->dqpn == qpn_a ? &port_a : e->dqpn == qpn_b ? &port_b : NULL;

		if (!e->rx || !port)
			continue;
		if (*port < 0) {
			*port = e->sport;
			cite(r, e);
		} else if (*port != e->sport) {
			mixed = true;
			cite(r, e);
		}
	}
	if (port_a < 0 || port_b < 0)
		verdict(r, PROBE_FAIL, "the remote did not send from both QPs");
	else if (mixed)
		verdict(r, PROBE_INFO, "a QP's packets left from more than one UDP source port "
			"(first %d and %d): paths may change, and order with them", port_a, port_b);
	else if (port_a == port_b)
		verdict(r, PROBE_INFO, "both QPs send from UDP port %d: ECMP hashes them onto one "
			"path", port_a);
	else
		verdict(r, PROBE_PASS, "one UDP source port per QP (%d and %d): entropy for ECMP",
			port_a, port_b);
}

void probe_expect_ipv4(struct probe_result *r)
{
	const struct probe_event *e, *lo = NULL, *hi = NULL;
	unsigned n = 0, bad = 0, no_df = 0, zero = 0;

	for (unsigned i = 0; (e = next_received(r, &i, &n));) {
		if (!e->icrc_ok) {
			bad++;
			cite(r, e);
			continue;
		}
		if (!e->df) {
			no_df++;
			cite(r, e);
		}
		zero += e->ip_id == 0;
		lo = !lo || e->ip_id < lo->ip_id ? e : lo;
		hi = !hi || e->ip_id > hi->ip_id ? e : hi;
	}
	if (!n)
		verdict(r, PROBE_FAIL, "the remote sent nothing");
	else if (bad)
		verdict(r, PROBE_DEVIATION, "%u of its %u packets carry an ICRC that no IPv4 ID, DF "
			"set or clear, makes hold: a bad ICRC", bad, n);
	else if (no_df)
		verdict(r, PROBE_DEVIATION, "%u of its %u packets have DF clear: a router may "
			"fragment them, and RoCE receivers do not reassemble", no_df, n);
	else if (zero == n)
		verdict(r, PROBE_PASS, "all %u packets: DF set, IPv4 ID 0, ICRC valid (solved over "
			"the ID a UDP socket hides)", n);
	else
		verdict(r, PROBE_INFO, "all %u packets: DF set, ICRC valid; IPv4 IDs 0x%04x to 0x%04x "
			"(%u of them 0): any ID is allowed under DF (RFC 6864), and the ICRC covers it",
			n, lo->ip_id, hi->ip_id, zero);
}

void probe_expect_msn(struct probe_result *r, uint32_t psn)
{
	const struct probe_trace *t = &r->trace;
	int a = probe_find_answer(t, psn, 0), b = probe_find_answer(t, wire_psn_add(psn, 1), 0);

	/* Not the zero-length WRITE's answer: that checked the QP, no message. */
	a = a >= 0 && (unsigned)a < exchange_end(t) ? a : -1;
	b = b >= 0 && (unsigned)b < exchange_end(t) ? b : -1;

	if (silent(r, "two WRITEs", "an ACK for each"))
		return;
	if (a < 0 || b < 0) {
		verdict(r, PROBE_DEVIATION, "no ACK for %s of two WRITEs that asked for one",
			a < 0 && b < 0 ? "either" : "one");
		return;
	}
	cite(r, &t->ev[a]);
	cite(r, &t->ev[b]);
	if (wire_aeth_kind(t->ev[a].syndrome) != WIRE_AETH_ACK ||
	    wire_aeth_kind(t->ev[b].syndrome) != WIRE_AETH_ACK)
		verdict(r, PROBE_DEVIATION, "the two WRITEs were not both ACKed");
	else if (t->ev[a].msn != 1 || t->ev[b].msn != 2)
		verdict(r, PROBE_DEVIATION, "ACK MSNs %u and %u for the first two messages; "
			"required: 1 and 2 (messages completed)", t->ev[a].msn, t->ev[b].msn);
	else
		verdict(r, PROBE_PASS, "ACK MSNs 1 and 2 for the first two messages");
}
