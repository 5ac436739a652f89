// SPDX-License-Identifier: MIT
/*
 * The soft engine's objects (device, memory regions, CQs, QPs), its ops
 * table, and the progress loop that receives, checks and dispatches
 * packets.  Received ICRCs are verified against the IP/UDP headers the
 * packet came with; the IPv4 ID is not visible on a UDP socket, so the
 * ICRC is tried with ID 0 (senders with DF set, such as rxe and this
 * engine), then with the ID solved from the ICRC itself (solve_ip_id).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bytes_le.h"
#include "crc32.h"
#include "engine.h"
#include "icrc.h"
#include "soft.h"

struct soft_dev *soft_dev_open(struct soft_link *link, char *err)
{
	struct soft_dev *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	d->tx = calloc(SOFT_BATCH, sizeof(*d->tx));
	d->rx = calloc(SOFT_BATCH, sizeof(*d->rx));
	if (!d->tx || !d->rx) {
		free(d->tx);
		free(d->rx);
		free(d);
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	d->link = link;
	d->now_ns = soft_now_ns();
	d->shm = shm_publish_open(link->local.ip, link->local.port);
	return d;
}

void soft_dev_close(struct soft_dev *d)
{
	if (!d)
		return;
	soft_tx_flush(d);
	shm_publish_close(d->shm);
	if (d->link)
		d->link->ops->close(d->link);
	free(d->tx);
	free(d->rx);
	free(d);
}

struct soft_mr *soft_mr_lookup(struct soft_dev *d, uint32_t key)
{
	uint32_t idx = key & SOFT_INDEX_MASK;

	if (!d->mrs[idx].used || d->mrs[idx].pub.rkey != key)
		return NULL;
	return &d->mrs[idx];
}

struct soft_mr *soft_mr_check(struct soft_dev *d, uint32_t rkey, uint64_t va, uint64_t len,
			      int access)
{
	struct soft_mr *mr = soft_mr_lookup(d, rkey);
	uint64_t start, end;

	if (!mr || (mr->pub.access & access) != access)
		return NULL;
	start = (uint64_t)(uintptr_t)mr->pub.addr;
	end = start + mr->pub.length;
	/* va + len must not wrap, and must stay inside the region. */
	if (va < start || len > end - start || va - start > end - start - len)
		return NULL;
	return mr;
}

static void cq_push(struct soft_cq *cq, const struct xport_wc *wc, int qp_slot, uint64_t sq_free)
{
	if (cq->count == cq->depth) {
		cq->overflow = true;	/* an overrun CQ is a fatal error on RNICs too */
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->depth] =
		(struct soft_cqe){ .wc = *wc, .qp_slot = qp_slot, .sq_free = sq_free };
	cq->count++;
}

void soft_cq_push(struct soft_cq *cq, const struct xport_wc *wc)
{
	cq_push(cq, wc, -1, 0);
}

void soft_cq_push_send(struct soft_qp *qp, const struct xport_wc *wc, uint64_t sq_index)
{
	cq_push(qp->scq, wc, qp->slot, sq_index + 1);
}

/*
 * The IPv4 ID a packet was sent with, solved from its ICRC.  CRC-32 is
 * affine in the message bits, so flipping ID bit i changes the ICRC by a
 * fixed D_i that depends only on how many bytes follow the ID: the ID is
 * the combination of the D_i that turns ICRC(ID 0) into the stored value
 * (16 unknowns, 32 equations: elimination over GF(2)).  rxe, for one,
 * sends an ID that counts up per packet.  A corrupted packet now passes
 * with odds of 2^-16 rather than 2^-32.
 */
static const uint8_t zeros[SOFT_PKT_MAX];

/* Each ID bit's change to the ICRC for messages of `after` bytes past the
 * ID, reduced to a basis; kept, since a flow's packets repeat their sizes. */
static void id_basis(struct soft_id_basis *b, size_t after)
{
	static const uint8_t zero2[2] = { 0, 0 };
	uint32_t c00;

	if (b->valid && b->after == after)
		return;
	memset(b, 0, sizeof(*b));
	c00 = crc32_ieee(crc32_ieee(0, zero2, 2), zeros, after);
	for (int i = 0; i < 16; i++) {
		uint8_t bits[2] = { (uint8_t)((1u << i) >> 8), (uint8_t)(1u << i) };
		uint32_t v = crc32_ieee(crc32_ieee(0, bits, 2), zeros, after) ^ c00;
		uint32_t m = 1u << i;

		for (int p = 31; p >= 0 && v; p--) {
			if (!(v >> p & 1))
				continue;
			if (!b->v[p]) {
				b->v[p] = v;
				b->m[p] = m;
				break;
			}
			v ^= b->v[p];
			m ^= b->m[p];
		}
	}
	b->after = after;
	b->valid = true;
}

static bool solve_ip_id(struct soft_dev *d, const struct soft_pkt *pk, uint32_t crc0,
			uint32_t want, uint16_t *id)
{
	/* The CRC'd message: 8 x 0xFF, IPv4 header (ID at its bytes 4..5, so
	 * at bytes 12..13), UDP header, BTH .. before the ICRC. */
	size_t after = 8 + WIRE_IPV4_LEN + WIRE_UDP_LEN + pk->len - WIRE_ICRC_LEN - 14;
	uint32_t t = crc0 ^ want, x = 0;

	if (after > sizeof(zeros))
		return false;
	id_basis(&d->id_basis, after);
	for (int p = 31; p >= 0; p--) {
		if (!(t >> p & 1))
			continue;
		if (!d->id_basis.v[p])
			return false;
		t ^= d->id_basis.v[p];
		x ^= d->id_basis.m[p];
	}
	*id = (uint16_t)x;
	return t == 0;
}

/* A received packet's ICRC, with the IPv4 IDs a sender could have used. */
static bool rx_icrc_ok(struct soft_dev *d, const struct soft_pkt *pk)
{
	uint32_t want;

	if (pk->len < WIRE_BTH_LEN + WIRE_ICRC_LEN)
		return false;
	want = get_le32(pk->buf + pk->len - 4);
	/* The hint first: segment k of a GRO aggregate was sealed with ID k. */
	if (soft_icrc(&pk->src, &pk->dst, pk->ecn, pk->ip_id, pk->buf, pk->len) == want)
		return true;
	if (pk->src.v6)
		return soft_icrc(&pk->src, &pk->dst, pk->ecn, 0, pk->buf, pk->len) == want;
	{
		uint32_t crc0 = soft_icrc(&pk->src, &pk->dst, pk->ecn, 0, pk->buf, pk->len);
		uint16_t id;

		if (crc0 == want)
			return true;
		/* Any other ID: solve for it, then check the whole ICRC with it. */
		return solve_ip_id(d, pk, crc0, want, &id) &&
		       soft_icrc(&pk->src, &pk->dst, pk->ecn, id, pk->buf, pk->len) == want;
	}
}

static void send_cnp(struct soft_qp *qp)
{
	struct soft_pkt *slot;
	struct wire_pkt p;

	if (qp->dev->now_ns - qp->last_cnp_ns < SOFT_CNP_GAP_NS && qp->last_cnp_ns)
		return;
	qp->last_cnp_ns = qp->dev->now_ns;
	slot = soft_tx_slot(qp->dev);
	soft_bth(qp, &p, OP_CNP, 0);
	p.bth.becn = true;
	soft_tx_commit(qp, slot, &p, NULL, 0, WIRE_NOT_ECT);
	qp->ctr.cnps_tx++;
	qp->dev->ctr.cnps_tx++;
}

static void dispatch(struct soft_dev *d, struct soft_pkt *pk)
{
	struct wire_pkt p;
	struct soft_qp *qp;
	uint32_t slot;

	d->ctr.rx_packets++;
	d->ctr.rx_bytes += pk->len;
	if (wire_decode_bth(&p, pk->buf, pk->len) != WIRE_OK || !p.op ||
	    p.op->transport == WIRE_TR_UD) {
		d->ctr.drops++;
		return;
	}
	if (!rx_icrc_ok(d, pk)) {
		d->ctr.icrc_errors++;
		return;
	}
	slot = p.bth.dqpn & SOFT_INDEX_MASK;
	qp = d->qps[slot];
	if (!qp || qp->qpn != p.bth.dqpn || qp->state == SOFT_QP_RESET ||
	    (p.op->transport != WIRE_TR_RC && p.op->transport != WIRE_TR_CNP)) {
		d->ctr.drops++;
		return;
	}
	/* RC is a connection: only its peer's address may speak on it (not
	 * its UDP source port, which carries entropy), under its P_Key. */
	if ((pk->src.v6 != qp->peer.v6 || memcmp(pk->src.ip, qp->peer.ip, 16) != 0 ||
	     (p.bth.pkey & 0x7FFF) != (WIRE_DEFAULT_PKEY & 0x7FFF))) {
		qp->ctr.wrong_peer_drops++;
		d->ctr.wrong_peer_drops++;
		return;
	}
	qp->ctr.rx_packets++;
	qp->ctr.rx_bytes += pk->len;
	if (pk->ecn == WIRE_CE) {
		qp->ctr.ce_rx++;
		d->ctr.ce_rx++;
		send_cnp(qp);
	}
	if (p.bth.opcode == OP_CNP) {
		qp->ctr.cnps_rx++;
		d->ctr.cnps_rx++;
		if (soft_dcqcn_on_cnp(&qp->cc, d->now_ns)) {
			qp->ctr.cnps_handled++;
			d->ctr.cnps_handled++;
		}
		return;
	}
	if (flow_is_response_op(p.bth.opcode))
		soft_req_rx(qp, &p, pk->buf);
	else
		soft_resp_rx(qp, &p, pk->buf);
}

#define SHM_PERIOD_NS 10000000ull	/* publish counters every 10 ms */

/* The device's counters, with what only the link knows brought up to date
 * (not per QP: the host cannot say whose packets it dropped). */
const struct xport_counters *soft_dev_ctr(struct soft_dev *d)
{
	if (d->link->ops->rx_overflows)
		d->ctr.rcvbuf_drops = d->link->ops->rx_overflows(d->link);
	return &d->ctr;
}

static void publish(struct soft_dev *d)
{
	struct shm_counters *a;
	struct timespec ts;

	if (!d->shm || d->now_ns < d->shm_next_ns)
		return;
	d->shm_next_ns = d->now_ns + SHM_PERIOD_NS;
	a = shm_publish_begin(d->shm);
	clock_gettime(CLOCK_REALTIME, &ts);
	a->updated_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	a->dev = *soft_dev_ctr(d);
	a->nqps = (uint32_t)d->qp_slots;
	for (int i = 0; i < d->qp_slots && i < SHM_MAX_QPS; i++) {
		struct soft_qp *qp = d->qps[i];
		struct shm_qp *s = &a->qps[i];

		s->used = qp != NULL;
		if (!qp)
			continue;
		s->qpn = qp->qpn;
		s->peer_qpn = qp->peer_qpn;
		memcpy(s->peer_ip, qp->peer.ip, 16);
		s->peer_port = qp->peer.port;
		s->rate_gbps = qp->cc.limited ? qp->cc.rc_gbps : 0;
		s->c = qp->ctr;
	}
	shm_publish_end(d->shm);
}

void soft_progress(struct soft_dev *d)
{
	int n, rounds = 0;

	d->now_ns = soft_now_ns();
	/* A budget: under a flood, timers, ACKs and our own data still run
	 * every SOFT_RX_ROUNDS receive calls (late ACKs make peers time out). */
	do {
		n = d->link->ops->recv(d->link, d->rx, SOFT_BATCH);
		for (int i = 0; i < n; i++)
			dispatch(d, &d->rx[i]);
	} while (n == SOFT_BATCH && ++rounds < SOFT_RX_ROUNDS);
	for (int i = 0; i < d->qp_slots; i++) {
		struct soft_qp *qp = d->qps[i];

		if (!qp || qp->state == SOFT_QP_RESET)
			continue;
		soft_dcqcn_tick(&qp->cc, d->now_ns);
		soft_resp_transmit(qp);
		soft_req_timers(qp);
		soft_req_transmit(qp);
	}
	soft_tx_flush(d);
	publish(d);
}
