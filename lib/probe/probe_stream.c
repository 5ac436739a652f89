// SPDX-License-Identifier: MIT
/*
 * cnp_reaction: the remote streams WRITEs too long for a test's record;
 * this side ACKs them as a responder would, sends CNPs to the remote's QP
 * for a while, and keeps each new packet's arrival time, from which
 * probe_expect_cnp_reaction reads the rate before, under and after.
 */
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"

/* The remote's stream: 8 WRITEs of 1 MiB (8192 packets at MTU 1024).
 * Its rate before, under and after CNPs sent every 100 us for 10 ms,
 * once 512 packets (or 200 ms) have set a baseline. */
#define STREAM_MSGS 8
#define STREAM_BYTES (1u << 20)
#define BASE_PKTS 512
#define BASE_MS 200
#define CNP_EVERY_NS 100000u
#define CNP_PHASE_NS 10000000u
#define RECOVERY_NS 40000000u
#define STALL_MS 500

struct stream_run {
	struct probe_stream s;
	uint64_t *t;
	uint32_t next, last;		/* the PSN expected next, the stream's last */
	uint32_t since_ack;
	uint64_t next_cnp, cnp_end;	/* 0: not yet */
	struct probe_raw kept;		/* the latest data packet, kept at the end */
};

static bool is_write_data(uint8_t op)
{
	return op >= OP_RC_WRITE_FIRST && op <= OP_RC_WRITE_ONLY_IMM;
}

/* A data packet of the stream: counted when new, ACKed as a responder
 * would (each AckReq, and every 16 in between); a gap NAKed. */
static bool stream_packet(struct probe_ctx *c, struct stream_run *sr, const struct wire_pkt *p,
			  const struct probe_raw *raw)
{
	int32_t d = wire_psn_diff(p->bth.psn, sr->next);
	struct probe_req ack = { .opcode = OP_RC_ACK, .syndrome = wire_aeth_make(WIRE_AETH_ACK, 31) };

	if (d > 0) {		/* a gap: go-back-N from the one expected */
		sr->s.gaps++;
		ack.syndrome = wire_aeth_make(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR);
		ack.psn = sr->next;
		return probe_send_quiet(c, &ack);
	}
	if (d == 0) {
		if (!sr->s.n)
			probe_keep(c, raw);	/* the first, as evidence */
		sr->t[sr->s.n++] = raw->t_ns;
		sr->kept.len = raw->len;
		memcpy(sr->kept.buf, raw->buf, raw->len);
		sr->kept.from = raw->from;
		sr->kept.t_ns = raw->t_ns;
		sr->kept.tos = raw->tos;
		sr->next = wire_psn_add(sr->next, 1);
		sr->since_ack++;
	}
	if (p->bth.ackreq || sr->since_ack >= 16 || d < 0) {
		ack.psn = wire_psn_add(sr->next, (uint32_t)-1);
		sr->since_ack = 0;
		return probe_send_quiet(c, &ack);
	}
	return true;
}

/* CNPs every CNP_EVERY_NS in the CNP phase; the first and last recorded. */
static bool stream_cnps(struct probe_ctx *c, struct stream_run *sr, uint64_t now)
{
	const struct probe_req cnp = { .opcode = OP_CNP };
	bool last;

	if (!sr->next_cnp || now < sr->next_cnp || now > sr->cnp_end)
		return true;
	last = now + CNP_EVERY_NS > sr->cnp_end;
	if (!sr->s.cnps || last ? !probe_send(c, &cnp) : !probe_send_quiet(c, &cnp))
		return false;
	if (!sr->s.cnps++)
		sr->s.cnp_from_ns = now;
	sr->s.cnp_to_ns = now;
	sr->next_cnp = last ? 0 : now + CNP_EVERY_NS;
	return true;
}

/* Receives, ACKs and paces the CNPs until the stream is done, stalls, or
 * the recovery window has passed: 0, or -1 (the result says why). */
static int stream_follow(struct probe_ctx *c, struct stream_run *sr)
{
	uint64_t quit = probe_deadline_ms((uint64_t)probe_quiet_limit_ms(c)), stop_at = 0;
	struct probe_raw raw;
	unsigned idle_ms = 0;

	while (probe_ms_left(quit) > 0 && !(c->o->stop && *c->o->stop)) {
		struct wire_pkt p;
		int got = probe_next_quiet(c, &raw, &p, 1);
		uint64_t now = probe_link_now_ns();

		if (got < 0)
			break;
		if (got == 0 && ++idle_ms >= STALL_MS)
			break;
		if (got > 0) {
			idle_ms = 0;
			if (is_write_data(p.bth.opcode) && !stream_packet(c, sr, &p, &raw))
				return -1;
		}
		/* The baseline ends at BASE_PKTS packets or BASE_MS after the first. */
		if (!sr->cnp_end && sr->s.n &&
		    (sr->s.n >= BASE_PKTS || now >= sr->t[0] + BASE_MS * 1000000ull)) {
			sr->next_cnp = now;
			sr->cnp_end = now + CNP_PHASE_NS;
			stop_at = sr->cnp_end + RECOVERY_NS;
		}
		if (!stream_cnps(c, sr, now))
			return -1;
		if (sr->s.n && wire_psn_diff(sr->next, sr->last) > 0) {
			sr->s.complete = true;
			break;
		}
		if (stop_at && now >= stop_at)
			break;
	}
	return 0;
}

int probe_cnp_reaction(struct probe_ctx *c, struct probe_result *r)
{
	const struct probe_post w = { PROBE_POST_WRITE, STREAM_BYTES, STREAM_MSGS, PROBE_VA,
				      PROBE_RKEY, 0 };
	struct probe_setup s = probe_setup_defaults(ALL_ACCESS, 0);
	struct stream_run *sr = calloc(1, sizeof(*sr));
	int rc = -1;

	/* A time for each packet the stream can have at the smallest MTU. */
	if (!sr || !(sr->t = calloc(STREAM_MSGS * (STREAM_BYTES / 256), sizeof(*sr->t)))) {
		snprintf(r->observed, sizeof(r->observed), "out of memory");
		goto out;
	}
	s.mr_bytes = STREAM_BYTES;
	if (probe_setup(c, &s) < 0 || probe_post(c, &w) < 0)
		goto out;
	sr->s.t_ns = sr->t;
	sr->s.pkt_bytes = c->mtu;
	sr->next = c->rqp.psn;
	sr->last = wire_psn_add(c->rqp.psn, STREAM_MSGS * (STREAM_BYTES / c->mtu) - 1);
	if (stream_follow(c, sr) < 0)
		goto out;
	if (sr->s.n > 1)
		probe_keep(c, &sr->kept);	/* the last, as evidence */
	if (probe_fetch_state(c) < 0)
		goto out;
	probe_expect_cnp_reaction(r, &sr->s);
	rc = 0;
out:
	if (sr)
		free(sr->t);
	free(sr);
	return rc;
}
