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
 * The parameters and their defaults (struct xport_dcqcn, set with the
 * --dcqcn-* options): g = 1/256, alpha update and rate-increase timer
 * 55 us, byte counter 10 MB, F = 5, R_AI = 40 Mb/s, each from the paper;
 * R_HAI = 10 x R_AI and the 10 Mb/s floor are our choices (the paper leaves
 * them to the operator).
 */
#include "soft.h"

#define DCQCN_BURST_BYTES (64 * 1024)	/* the pacer's bucket */

struct xport_dcqcn xport_dcqcn_resolve(const struct xport_dcqcn *p)
{
	struct xport_dcqcn r = *p;

	if (!r.g)
		r.g = 1.0 / 256;
	if (!r.k_us)
		r.k_us = 55;
	if (!r.t_us)
		r.t_us = 55;
	if (!r.b_bytes)
		r.b_bytes = 10ull << 20;
	if (!r.f)
		r.f = 5;
	if (!r.rai_mbps)
		r.rai_mbps = 40;
	if (!r.rhai_mbps)
		r.rhai_mbps = 10 * r.rai_mbps;
	if (!r.min_mbps)
		r.min_mbps = 10;
	return r;
}

void soft_dcqcn_init(struct soft_dcqcn *c, double line_gbps, const struct xport_dcqcn *p)
{
	*c = (struct soft_dcqcn){ .p = xport_dcqcn_resolve(p), .line_gbps = line_gbps,
				  .rc_gbps = line_gbps, .rt_gbps = line_gbps, .alpha = 1.0 };
}

static void increase(struct soft_dcqcn *c)
{
	unsigned lo = c->timer_stage < c->byte_stage ? c->timer_stage : c->byte_stage;
	unsigned hi = c->timer_stage > c->byte_stage ? c->timer_stage : c->byte_stage;

	if (hi < c->p.f)
		;				/* fast recovery: towards the target */
	else if (lo > c->p.f)
		c->rt_gbps += (lo - c->p.f) * c->p.rhai_mbps / 1000;	/* hyper increase */
	else
		c->rt_gbps += c->p.rai_mbps / 1000;	/* additive increase */
	if (c->rt_gbps > c->line_gbps)
		c->rt_gbps = c->line_gbps;
	c->rc_gbps = (c->rt_gbps + c->rc_gbps) / 2;
	/* Back at line rate: stop pacing until the next CNP. */
	if (c->rc_gbps > c->line_gbps * 0.999)
		c->limited = false;
}

bool soft_dcqcn_on_cnp(struct soft_dcqcn *c, uint64_t now)
{
	if (c->p.off)
		return false;
	c->rt_gbps = c->rc_gbps;
	c->rc_gbps *= 1 - c->alpha / 2;
	if (c->rc_gbps < c->p.min_mbps / 1000)
		c->rc_gbps = c->p.min_mbps / 1000;
	c->alpha = (1 - c->p.g) * c->alpha + c->p.g;
	c->timer_stage = c->byte_stage = 0;
	c->bytes = 0;
	c->last_cnp_ns = c->last_alpha_ns = c->last_timer_ns = now;
	if (!c->limited) {
		c->limited = true;
		c->tokens = 0;
		c->last_token_ns = now;
	}
	c->cuts++;
	return true;
}

void soft_dcqcn_tick(struct soft_dcqcn *c, uint64_t now)
{
	if (!c->limited)
		return;
	uint64_t k_ns = c->p.k_us * 1000ull, t_ns = c->p.t_us * 1000ull;

	while (now - c->last_alpha_ns >= k_ns) {	/* no CNP for K: decay */
		c->alpha *= 1 - c->p.g;
		c->last_alpha_ns += k_ns;
	}
	while (c->limited && now - c->last_timer_ns >= t_ns) {
		c->timer_stage++;
		c->last_timer_ns += t_ns;
		increase(c);
	}
}

void soft_dcqcn_sent(struct soft_dcqcn *c, size_t bytes)
{
	if (!c->limited)
		return;
	c->bytes += bytes;
	if (c->bytes >= c->p.b_bytes) {
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
