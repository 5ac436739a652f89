/* SPDX-License-Identifier: MIT */
/* Exchanges laid out by hand for the probe's analyses (test_probe.c,
 * test_probe_req.c): packets sent and received, and the remote's state. */
#ifndef RDMAKIT_PROBE_FX_H
#define RDMAKIT_PROBE_FX_H

#include <string.h>

#include "probe.h"
#include "wire.h"

#define PSN 0x001000u

static inline struct probe_result fresh(void)
{
	struct probe_result r;

	memset(&r, 0, sizeof(r));
	r.verdict = PROBE_FAIL;
	r.trace.remote_known = true;
	return r;
}

static inline void tx(struct probe_result *r, uint8_t op, uint32_t psn, uint64_t t_us)
{
	struct probe_event *e = &r->trace.ev[r->trace.n++];

	*e = (struct probe_event){ .frame = r->trace.n, .opcode = op, .psn = psn,
				   .t_ns = t_us * 1000, .ackreq = true };
}

static inline void rx(struct probe_result *r, uint8_t syndrome, uint32_t psn, uint64_t t_us)
{
	struct probe_event *e = &r->trace.ev[r->trace.n++];

	*e = (struct probe_event){ .frame = r->trace.n, .rx = true, .opcode = OP_RC_ACK,
				   .psn = psn, .t_ns = t_us * 1000, .has_aeth = true,
				   .syndrome = syndrome };
}

static inline uint8_t nak(enum wire_nak_code c)
{
	return wire_aeth_make(WIRE_AETH_NAK, c);
}

static const uint8_t ACK = 0x1F;	/* ACK, credits invalid */

static inline void recv_wc(struct probe_result *r, enum xport_wc_status st)
{
	r->trace.remote.wc[r->trace.remote.n_wc++] =
		(struct xport_wc){ .opcode = XPORT_WC_RECV, .status = st, .byte_len = 64 };
}

/* A received READ response (it carries an AETH) of len bytes. */
static inline void rx_read(struct probe_result *r, uint32_t psn, uint32_t len, uint64_t t_us)
{
	rx(r, ACK, psn, t_us);
	r->trace.ev[r->trace.n - 1].opcode = OP_RC_READ_RESPONSE_ONLY;
	r->trace.ev[r->trace.n - 1].payload_len = len;
}

/* The remote's request (a packet without an AETH) at t_us. */
static inline void req_in(struct probe_result *r, uint32_t psn, uint64_t t_us)
{
	struct probe_event *e = &r->trace.ev[r->trace.n++];

	*e = (struct probe_event){ .frame = r->trace.n, .rx = true, .opcode = OP_RC_WRITE_ONLY,
				   .psn = psn, .t_ns = t_us * 1000 };
}

/* This side's ACK, NAK or RNR NAK at t_us. */
static inline void answer_out(struct probe_result *r, uint8_t syndrome, uint32_t psn, uint64_t t_us)
{
	struct probe_event *e = &r->trace.ev[r->trace.n++];

	*e = (struct probe_event){ .frame = r->trace.n, .opcode = OP_RC_ACK, .psn = psn,
				   .t_ns = t_us * 1000, .has_aeth = true, .syndrome = syndrome };
}

static inline void send_wc(struct probe_result *r, enum xport_wc_status st)
{
	r->trace.remote.wc[r->trace.remote.n_wc++] =
		(struct xport_wc){ .opcode = XPORT_WC_RDMA_WRITE, .status = st };
}

#endif
