// SPDX-License-Identifier: MIT
/*
 * The analyses of the remote's own packets: their IP and UDP headers as
 * this side received them, and their AETH.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "probe_analyze_int.h"
#include "wire.h"

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
			pa_cite(r, e);
		if (data == 1)
			pa_cite(r, e);
	}
	if (!data)
		pa_verdict(r, PROBE_FAIL, "the remote sent no data packet");
	else if (!ect)
		pa_verdict(r, PROBE_NOT_IMPL, "none of its %u data packets is ECN-capable (ToS ECN "
			"bits 00): no CE marks can reach it, so no congestion control by ECN", data);
	else if (ect < data)
		pa_verdict(r, PROBE_DEVIATION, "%u of its %u data packets ECN-capable", ect, data);
	else
		pa_verdict(r, PROBE_PASS, "all %u data packets ECN-capable (ECT or CE)", data);
}

/* The packets received from index *i on, one a call; *n counts them and
 * the first is cited.  NULL after the last. */
static const struct probe_event *next_received(struct probe_result *r, unsigned *i, unsigned *n)
{
	for (; *i < r->trace.n; ++*i)
		if (r->trace.ev[*i].rx) {
			if (!(*n)++)
				pa_cite(r, &r->trace.ev[*i]);
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
			pa_cite(r, e);
		}
	}
	if (!n)
		pa_verdict(r, PROBE_FAIL, "the remote sent nothing");
	else if (right < n)
		pa_verdict(r, PROBE_DEVIATION, "%u of its %u packets carry DSCP %d, not the QP's %u",
			n - right, n, other, dscp);
	else
		pa_verdict(r, PROBE_PASS, "all %u packets carry DSCP %u, the QP's traffic class", n, dscp);
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
			pa_cite(r, e);
		} else if (*port != e->sport) {
			mixed = true;
			pa_cite(r, e);
		}
	}
	if (port_a < 0 || port_b < 0)
		pa_verdict(r, PROBE_FAIL, "the remote did not send from both QPs");
	else if (mixed)
		pa_verdict(r, PROBE_INFO, "a QP's packets left from more than one UDP source port "
			"(first %d and %d): paths may change, and order with them", port_a, port_b);
	else if (port_a == port_b)
		pa_verdict(r, PROBE_INFO, "both QPs send from UDP port %d: ECMP hashes them onto one "
			"path", port_a);
	else
		pa_verdict(r, PROBE_PASS, "one UDP source port per QP (%d and %d): entropy for ECMP",
			port_a, port_b);
}

void probe_expect_ipv4(struct probe_result *r)
{
	const struct probe_event *e, *lo = NULL, *hi = NULL;
	unsigned n = 0, bad = 0, no_df = 0, zero = 0;

	for (unsigned i = 0; (e = next_received(r, &i, &n));) {
		if (!e->icrc_ok) {
			bad++;
			pa_cite(r, e);
			continue;
		}
		if (!e->df) {
			no_df++;
			pa_cite(r, e);
		}
		zero += e->ip_id == 0;
		lo = !lo || e->ip_id < lo->ip_id ? e : lo;
		hi = !hi || e->ip_id > hi->ip_id ? e : hi;
	}
	if (!n)
		pa_verdict(r, PROBE_FAIL, "the remote sent nothing");
	else if (bad)
		pa_verdict(r, PROBE_DEVIATION, "%u of its %u packets carry an ICRC that no IPv4 ID, DF "
			"set or clear, makes hold: a bad ICRC", bad, n);
	else if (no_df)
		pa_verdict(r, PROBE_DEVIATION, "%u of its %u packets have DF clear: a router may "
			"fragment them, and RoCE receivers do not reassemble", no_df, n);
	else if (zero == n)
		pa_verdict(r, PROBE_PASS, "all %u packets: DF set, IPv4 ID 0, ICRC valid (solved over "
			"the ID a UDP socket hides)", n);
	else
		pa_verdict(r, PROBE_INFO, "all %u packets: DF set, ICRC valid; IPv4 IDs 0x%04x to 0x%04x "
			"(%u of them 0): any ID is allowed under DF (RFC 6864), and the ICRC covers it",
			n, lo->ip_id, hi->ip_id, zero);
}

void probe_expect_msn(struct probe_result *r, uint32_t psn)
{
	const struct probe_trace *t = &r->trace;
	int a = probe_find_answer(t, psn, 0), b = probe_find_answer(t, wire_psn_add(psn, 1), 0);

	/* Not the zero-length WRITE's answer: that checked the QP, no message. */
	a = a >= 0 && (unsigned)a < pa_exchange_end(t) ? a : -1;
	b = b >= 0 && (unsigned)b < pa_exchange_end(t) ? b : -1;

	if (pa_silent(r, "two WRITEs", "an ACK for each"))
		return;
	if (a < 0 || b < 0) {
		pa_verdict(r, PROBE_DEVIATION, "no ACK for %s of two WRITEs that asked for one",
			a < 0 && b < 0 ? "either" : "one");
		return;
	}
	pa_cite(r, &t->ev[a]);
	pa_cite(r, &t->ev[b]);
	if (wire_aeth_kind(t->ev[a].syndrome) != WIRE_AETH_ACK ||
	    wire_aeth_kind(t->ev[b].syndrome) != WIRE_AETH_ACK)
		pa_verdict(r, PROBE_DEVIATION, "the two WRITEs were not both ACKed");
	else if (t->ev[a].msn != 1 || t->ev[b].msn != 2)
		pa_verdict(r, PROBE_DEVIATION, "ACK MSNs %u and %u for the first two messages; "
			"required: 1 and 2 (messages completed)", t->ev[a].msn, t->ev[b].msn);
	else
		pa_verdict(r, PROBE_PASS, "ACK MSNs 1 and 2 for the first two messages");
}
