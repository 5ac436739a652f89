// SPDX-License-Identifier: MIT
/*
 * cnp_reaction: the remote streams WRITEs too long for a test's record;
 * this side ACKs them as a responder would and, in each of a few rounds,
 * sends the remote's QP decoy CNPs (a wrong ICRC: every stack drops them)
 * and then real ones, keeping each new packet's arrival time, from which
 * probe_expect_cnp_reaction reads the rates.  The decoys cost the remote
 * and this side what the CNPs do, so a stack that slows down because it
 * has packets to take in slows down under both; and a reaction point
 * reacts in every round, where a stream that stalls now and then (rxe in
 * an emulated guest) dips under the CNPs of one round by chance only.
 */
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"

/* The remote's stream: 64 WRITEs of 1 MiB (65536 packets at MTU 1024), as
 * many as a probe --serve takes (PROBE_MAX_POSTS, PROBE_MAX_MR_BYTES):
 * long enough for the rounds at the 2-4 Gb/s this side takes in.
 * Once 512 packets (or 200 ms) have set a baseline, PROBE_CNP_ROUNDS
 * rounds of a decoy every 100 us for 5 ms, a CNP every 100 us for 10 ms
 * and 5 ms of neither; then 40 ms to see it recover. */
#define STREAM_MSGS 64
#define STREAM_BYTES (1u << 20)
#define BASE_PKTS 512
#define BASE_MS 200
#define CNP_EVERY_US 100u
#define DECOY_US 5000u
#define CNP_US 10000u
#define PAUSE_US 5000u
#define RECOVERY_US 40000u
#define STALL_MS 500

_Static_assert(STREAM_MSGS <= PROBE_MAX_POSTS && STREAM_BYTES <= PROBE_MAX_MR_BYTES,
	       "the stream is what a probe --serve takes");

struct stream_run {
	struct probe_stream s;
	uint64_t *t;
	uint32_t next, last;		/* the PSN expected next, the stream's last */
	uint32_t since_ack;
	bool started;			/* the baseline is over */
	unsigned round;			/* the round under way */
	bool cnp_phase;			/* its CNPs (else its decoys) */
	/* CLOCK_MONOTONIC us: the phase's start, when the next decoy or CNP
	 * is due (0: none, yet or again), the end of the recovery window. */
	uint64_t phase_from_us, next_us, stop_us;
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

_Static_assert((DECOY_US / CNP_EVERY_US * 3 / 5 - 1) * CNP_EVERY_US > DECOY_US / 2 &&
	       (CNP_US / CNP_EVERY_US * 3 / 5 - 1) * CNP_EVERY_US > CNP_US / 2,
	       "3/5 of a phase's packets span more than the half probe_expect_cnp_reaction needs");

/* The decoy or CNP due now, if any: in each round decoys (a wrong ICRC,
 * unrecorded) for DECOY_US, then CNPs for CNP_US, the first and last
 * recorded, then a pause.  Each phase is timed from its own first packet,
 * so a late start (this side descheduled) does not shorten it.  The
 * schedule runs on mono_us (CLOCK_MONOTONIC: no clock step stops or
 * stretches it); what is recorded, on now_ns, the packets' clock. */
static bool stream_cnps(struct probe_ctx *c, struct stream_run *sr, uint64_t now_ns,
			uint64_t mono_us)
{
	const struct probe_req cnp = { .opcode = OP_CNP }, decoy = { .opcode = OP_CNP,
								     .corrupt_icrc = true };
	struct probe_cnp_round *rd;
	bool last;

	if (!sr->next_us || mono_us < sr->next_us)
		return true;
	rd = &sr->s.round[sr->round];
	if (!sr->phase_from_us) {
		sr->phase_from_us = mono_us;
		sr->s.rounds = sr->round + 1;
	}
	sr->next_us = mono_us + CNP_EVERY_US;
	/* A phase lasts its time and at least 3/5 of its packets: this side,
	 * descheduled for a while, makes up for it. */
	if (!sr->cnp_phase && (mono_us - sr->phase_from_us < DECOY_US ||
			       rd->decoys < DECOY_US / CNP_EVERY_US * 3 / 5)) {
		if (!probe_send_quiet(c, &decoy))
			return false;
		if (!rd->decoys++)
			rd->decoy_from_ns = now_ns;
		rd->decoy_to_ns = now_ns;
		return true;
	}
	if (!sr->cnp_phase) {
		sr->cnp_phase = true;
		sr->phase_from_us = mono_us;
	}
	last = mono_us + CNP_EVERY_US >= sr->phase_from_us + CNP_US &&
	       rd->cnps + 1 >= CNP_US / CNP_EVERY_US * 3 / 5;
	if (!rd->cnps || last ? !probe_send(c, &cnp) : !probe_send_quiet(c, &cnp))
		return false;
	if (!rd->cnps++)
		rd->cnp_from_ns = now_ns;
	rd->cnp_to_ns = now_ns;
	if (last) {	/* on to the next round after a pause, or to the end */
		sr->cnp_phase = false;
		sr->phase_from_us = 0;
		if (++sr->round < PROBE_CNP_ROUNDS) {
			sr->next_us = mono_us + PAUSE_US;
		} else {
			sr->next_us = 0;
			sr->s.rounds_done = true;
			sr->stop_us = mono_us + RECOVERY_US;
		}
	}
	return true;
}

/* Receives, ACKs and paces the CNPs until the stream is done, stalls, or
 * the recovery window has passed: 0, or -1 (the result says why). */
static int stream_follow(struct probe_ctx *c, struct stream_run *sr)
{
	uint64_t quit = probe_deadline_ms((uint64_t)probe_quiet_limit_ms(c));
	uint64_t last_rx_us = probe_mono_us();
	struct probe_raw raw;

	while (probe_ms_left(quit) > 0 && !(c->o->stop && *c->o->stop)) {
		struct wire_pkt p;
		/* Wait no longer than the next decoy or CNP is due: one late by
		 * a whole 1 ms wait (a stream slowed to a trickle brings no
		 * packet to wake on) lets a reaction point recover between
		 * CNPs.  Sleeping, not spinning: a spinning probe shares a CPU
		 * with the remote's (an emulated guest's) and is descheduled
		 * for milliseconds. */
		uint64_t mono_us = probe_mono_us(), wait_us = 1000, now_ns;
		int got;

		if (sr->next_us && sr->next_us < mono_us + wait_us)
			wait_us = sr->next_us > mono_us ? sr->next_us - mono_us : 0;
		got = probe_next_quiet(c, &raw, &p, wait_us);
		now_ns = probe_link_now_ns();
		mono_us = probe_mono_us();
		if (got < 0)
			break;
		if (got > 0) {
			last_rx_us = mono_us;
			if (is_write_data(p.bth.opcode) && !stream_packet(c, sr, &p, &raw))
				return -1;
		} else if (mono_us - last_rx_us >= STALL_MS * 1000u) {
			break;
		}
		/* The baseline ends at BASE_PKTS packets or BASE_MS after the first. */
		if (!sr->started && sr->s.n &&
		    (sr->s.n >= BASE_PKTS || now_ns >= sr->t[0] + BASE_MS * 1000000ull)) {
			sr->started = true;
			sr->next_us = mono_us;
		}
		if (!stream_cnps(c, sr, now_ns, mono_us))
			return -1;
		if (sr->s.n && wire_psn_diff(sr->next, sr->last) > 0) {
			sr->s.complete = true;
			break;
		}
		if (sr->stop_us && mono_us >= sr->stop_us)
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
