// SPDX-License-Identifier: MIT
/*
 * DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015), run by whichever side sends the data:
 * a CNP cuts the rate by alpha/2 and raises alpha; without CNPs alpha
 * decays, and the rate recovers in stages driven by a timer and a byte
 * counter: fast recovery towards the target for the first F stages, then
 * additive increase, then hyper increase.  Sending is paced by a token
 * bucket at the current rate; until the first CNP nothing is paced.
 *
 * Defaults (soft_dcqcn_init), each from the paper: g = 1/256, alpha
 * update and rate-increase timer 55 us, byte counter 10 MB, F = 5,
 * R_AI = 40 Mb/s; R_HAI = 10 x R_AI is our choice (the paper leaves it to
 * the operator).
 */
#include "soft.h"

#define DCQCN_G (1.0 / 256)
#define DCQCN_K_NS 55000ull		/* alpha update period */
#define DCQCN_T_NS 55000ull		/* rate increase timer */
#define DCQCN_B_BYTES (10ull << 20)	/* rate increase byte counter */
#define DCQCN_F 5			/* fast recovery stages */
#define DCQCN_RAI_GBPS 0.04		/* additive increase */
#define DCQCN_RHAI_GBPS 0.4		/* hyper increase */
#define DCQCN_MIN_GBPS 0.01		/* never below 10 Mb/s */
#define DCQCN_BURST_BYTES (64 * 1024)	/* the pacer's bucket */

void soft_dcqcn_init(struct soft_dcqcn *c, double line_gbps)
{
	*c = (struct soft_dcqcn){ .line_gbps = line_gbps, .rc_gbps = line_gbps,
				  .rt_gbps = line_gbps, .alpha = 1.0 };
}

static void increase(struct soft_dcqcn *c)
{
	unsigned lo = c->timer_stage < c->byte_stage ? c->timer_stage : c->byte_stage;
	unsigned hi = c->timer_stage > c->byte_stage ? c->timer_stage : c->byte_stage;

	if (hi < DCQCN_F)
		;				/* fast recovery: towards the target */
	else if (lo > DCQCN_F)
		c->rt_gbps += (lo - DCQCN_F) * DCQCN_RHAI_GBPS;	/* hyper increase */
	else
		c->rt_gbps += DCQCN_RAI_GBPS;	/* additive increase */
	if (c->rt_gbps > c->line_gbps)
		c->rt_gbps = c->line_gbps;
	c->rc_gbps = (c->rt_gbps + c->rc_gbps) / 2;
	/* Back at line rate: stop pacing until the next CNP. */
	if (c->rc_gbps > c->line_gbps * 0.999)
		c->limited = false;
}

void soft_dcqcn_on_cnp(struct soft_dcqcn *c, uint64_t now)
{
	c->rt_gbps = c->rc_gbps;
	c->rc_gbps *= 1 - c->alpha / 2;
	if (c->rc_gbps < DCQCN_MIN_GBPS)
		c->rc_gbps = DCQCN_MIN_GBPS;
	c->alpha = (1 - DCQCN_G) * c->alpha + DCQCN_G;
	c->timer_stage = c->byte_stage = 0;
	c->bytes = 0;
	c->last_cnp_ns = c->last_alpha_ns = c->last_timer_ns = now;
	if (!c->limited) {
		c->limited = true;
		c->tokens = 0;
		c->last_token_ns = now;
	}
	c->cuts++;
}

void soft_dcqcn_tick(struct soft_dcqcn *c, uint64_t now)
{
	if (!c->limited)
		return;
	while (now - c->last_alpha_ns >= DCQCN_K_NS) {	/* no CNP for K: decay */
		c->alpha *= 1 - DCQCN_G;
		c->last_alpha_ns += DCQCN_K_NS;
	}
	while (c->limited && now - c->last_timer_ns >= DCQCN_T_NS) {
		c->timer_stage++;
		c->last_timer_ns += DCQCN_T_NS;
		increase(c);
	}
}

void soft_dcqcn_sent(struct soft_dcqcn *c, size_t bytes)
{
	if (!c->limited)
		return;
	c->bytes += bytes;
	if (c->bytes >= DCQCN_B_BYTES) {
		c->bytes = 0;
		c->byte_stage++;
		increase(c);
	}
}

bool soft_dcqcn_may_send(struct soft_dcqcn *c, uint64_t now, size_t bytes)
{
	if (!c->limited)
		return true;
	c->tokens += c->rc_gbps * (double)(now - c->last_token_ns) / 8;	/* Gb/s * ns / 8 = bytes */
	c->last_token_ns = now;
	if (c->tokens > DCQCN_BURST_BYTES)
		c->tokens = DCQCN_BURST_BYTES;
	if (c->tokens < (double)bytes)
		return false;
	c->tokens -= (double)bytes;
	return true;
}
