// SPDX-License-Identifier: MIT
/*
 * Flow accounting for capture diagnosis: retransmissions (a PSN seen
 * again), gaps, NAKs by kind, duplicate ACKs, CNPs, CE marks, ICRC
 * failures, and request-to-response delays matched by PSN across the two
 * directions of a connection.
 */
#include <arpa/inet.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flows.h"

void flows_init(struct flow_table *t)
{
	memset(t, 0, sizeof(*t));
	/* Without a working libsodium (no entropy at all) the key stays zero:
	 * the table still works, only unkeyed. */
	if (sodium_init() >= 0)
		randombytes_buf(t->hash_key, sizeof(t->hash_key));
}

void flows_free(struct flow_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->order[i]);
	free(t->slots);
	free(t->order);
	memset(t, 0, sizeof(*t));
}

bool flow_is_response(uint8_t opcode)
{
	uint8_t op = opcode & 0x1F;

	return opcode != OP_CNP && (opcode >> 5) != WIRE_TR_UD && op >= 0x0D && op <= 0x12;
}

bool flow_unreliable(const struct flow_key *k)
{
	return k->service == WIRE_TR_UC || k->service == WIRE_TR_UD;
}

bool flow_src_qp_unknown(const struct flow_key *k)
{
	return k->service == WIRE_TR_UD && k->dqpn == FLOW_SRC_QP_UNKNOWN;
}

/*
 * RC and UC: a flow is one direction of a connection (addresses and the
 * destination QP).  UD: PSNs run per sending QP across every destination
 * it sends to, so a flow is the source address and the DETH's source QP.
 */
void flow_key_of(const struct wire_pkt *p, struct flow_key *k)
{
	uint8_t tr = p->bth.opcode >> 5;

	memset(k, 0, sizeof(*k));
	k->dqpn = p->bth.dqpn;
	if (p->op && (tr == WIRE_TR_UC || tr == WIRE_TR_UD))
		k->service = tr;
	if (p->layers & WIRE_L_IPV4) {
		k->family = 4;
		k->src[10] = k->src[11] = k->dst[10] = k->dst[11] = 0xFF;
		memcpy(k->src + 12, p->ip4.src, 4);
		memcpy(k->dst + 12, p->ip4.dst, 4);
	} else if (p->layers & WIRE_L_IPV6) {
		k->family = 6;
		memcpy(k->src, p->ip6.src, 16);
		memcpy(k->dst, p->ip6.dst, 16);
	} else if (p->layers & WIRE_L_GRH) {
		k->family = 6;
		memcpy(k->src, p->grh.sgid, 16);
		memcpy(k->dst, p->grh.dgid, 16);
	} else {
		k->family = 0;
		wire_put16(k->src + 14, p->lrh.slid);
		wire_put16(k->dst + 14, p->lrh.dlid);
	}
	if (k->service == WIRE_TR_UD) {
		/* Cut before its DETH: no source QP to key it on. */
		k->dqpn = p->ext & WIRE_X_DETH ? p->deth.srcqp : FLOW_SRC_QP_UNKNOWN;
		memset(k->dst, 0, sizeof(k->dst));
	}
}

void flow_addr_str(const struct flow_key *k, bool dst, char *out, size_t cap)
{
	const uint8_t *a = dst ? k->dst : k->src;
	static const uint8_t v4mapped[12] = { [10] = 0xFF, [11] = 0xFF };

	if (k->family == 0) {
		snprintf(out, cap, "lid 0x%04x", wire_get16(a + 14));
	} else if (memcmp(a, v4mapped, 12) == 0) {
		inet_ntop(AF_INET, a + 12, out, (socklen_t)cap);
	} else {
		inet_ntop(AF_INET6, a, out, (socklen_t)cap);
	}
}

/* SipHash-2-4 (libsodium's crypto_shorthash) under the table's random key. */
static uint64_t hash_key(const struct flow_table *t, const struct flow_key *k)
{
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t v;

	crypto_shorthash(h, (const uint8_t *)k, sizeof(*k), t->hash_key);
	memcpy(&v, h, sizeof(v));
	return v;
}

static bool grow(struct flow_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct flow **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = hash_key(t, &t->order[i]->key) & (cap - 1);

		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = t->order[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return true;
}

static struct flow *lookup(struct flow_table *t, const struct flow_key *k, bool create)
{
	size_t j;

	if (t->cap) {
		for (j = hash_key(t, k) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1))
			if (memcmp(&t->slots[j]->key, k, sizeof(*k)) == 0)
				return t->slots[j];
	}
	if (!create)
		return NULL;
	if ((t->n + 1) * 2 > t->cap && !grow(t))
		return NULL;
	if (t->n == t->order_cap) {
		size_t cap = t->order_cap ? t->order_cap * 2 : 64;
		struct flow **order = realloc(t->order, cap * sizeof(*order));

		if (!order)
			return NULL;
		t->order = order;
		t->order_cap = cap;
	}
	struct flow *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->key = *k;
	hist_init(&f->ack_delay);
	for (j = hash_key(t, k) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1))
		;
	t->slots[j] = f;
	t->order[t->n++] = f;
	return f;
}

/* A flow whose packets so far are all responses (ACKs, read responses). */
static bool flow_is_response_opcount(const struct flow *f)
{
	uint64_t responses = 0;

	for (int op = 0x0D; op <= 0x12; op++)
		responses += f->opcodes[op];
	return f->packets && responses == f->packets;
}

static bool seen_get(const struct flow *f, uint32_t psn)
{
	uint32_t i = psn % FLOW_PSN_WINDOW;

	return f->seen[i / 8] & (1u << (i % 8));
}

static void seen_set(struct flow *f, uint32_t psn, bool v)
{
	uint32_t i = psn % FLOW_PSN_WINDOW;

	if (v)
		f->seen[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		f->seen[i / 8] &= (uint8_t)~(1u << (i % 8));
}

/* Sequence accounting of request PSNs (and of read-response PSNs). */
static void track_psn(struct flow *f, uint32_t psn, bool read_request)
{
	int32_t d;

	if (!f->psn_valid) {
		f->psn_valid = true;
		f->max_psn = psn;
		seen_set(f, psn, true);
		f->jump_ok = read_request;
		return;
	}
	d = wire_psn_diff(psn, f->max_psn);
	if (d >= FLOW_RESTART_JUMP || d <= -FLOW_RESTART_JUMP) {
		f->restarts++;
		memset(f->seen, 0, sizeof(f->seen));
		f->max_psn = psn;
		seen_set(f, psn, true);
		f->jump_ok = read_request;
		return;
	}
	if (d > 0) {
		if (d > 1 && !f->jump_ok)
			f->psn_gaps += (uint64_t)d - 1;
		/* Forget the PSNs that slide out of the window. */
		for (int32_t i = 1; i <= d && i <= FLOW_PSN_WINDOW; i++)
			seen_set(f, wire_psn_add(f->max_psn, (uint32_t)i), false);
		f->max_psn = psn;
		seen_set(f, psn, true);
		f->jump_ok = read_request;
	} else if (-d < FLOW_PSN_WINDOW && seen_get(f, psn)) {
		f->retransmits++;
	} else {
		f->out_of_order++;
		seen_set(f, psn, true);
	}
}

static void pending_push(struct flow *f, uint32_t psn, uint64_t ts)
{
	size_t tail = (f->pending_head + f->pending_len) % FLOW_PENDING;

	if (f->pending_len == FLOW_PENDING) {	/* drop the oldest */
		f->pending_head = (f->pending_head + 1) % FLOW_PENDING;
		f->pending_len--;
		tail = (f->pending_head + f->pending_len) % FLOW_PENDING;
	}
	f->pending[tail] = (struct flow_pending){ psn, ts };
	f->pending_len++;
}

static bool pending_has(const struct flow *f, uint32_t psn)
{
	for (size_t i = 0; i < f->pending_len; i++)
		if (f->pending[(f->pending_head + i) % FLOW_PENDING].psn == psn)
			return true;
	return false;
}

/* A response covering PSNs up to psn: every pending request at or before
 * it is answered (ACKs coalesce). */
static void pending_answer(struct flow *req, uint32_t psn, uint64_t ts)
{
	while (req->pending_len) {
		struct flow_pending *e = &req->pending[req->pending_head];

		if (wire_psn_diff(e->psn, psn) > 0)
			break;
		if (ts >= e->ts_ns)
			hist_record(&req->ack_delay, ts - e->ts_ns);
		req->pending_head = (req->pending_head + 1) % FLOW_PENDING;
		req->pending_len--;
	}
}

/* The request flow a response belongs to: same addresses reversed, with a
 * request pending at this PSN, or else the only flow in that direction.
 * Learned once, then kept. */
static struct flow *find_peer(struct flow_table *t, struct flow *resp, uint32_t psn)
{
	struct flow *only = NULL;
	int reverse = 0;

	if (resp->peer)
		return resp->peer;
	for (size_t i = 0; i < t->n; i++) {
		struct flow *f = t->order[i];

		if (f == resp || memcmp(f->key.src, resp->key.dst, 16) ||
		    memcmp(f->key.dst, resp->key.src, 16) || flow_is_response_opcount(f))
			continue;
		reverse++;
		only = f;
		if (pending_has(f, psn)) {
			reverse = 1;
			break;
		}
	}
	if (reverse != 1)
		return NULL;
	resp->peer = only;
	only->peer = resp;
	return only;
}

static void account_response(struct flow_table *t, struct flow *f, const struct wire_pkt *p,
			     uint64_t ts)
{
	uint8_t op = p->bth.opcode & 0x1F;
	struct flow *req = find_peer(t, f, p->bth.psn);

	if (p->ext & WIRE_X_AETH) {
		uint8_t syn = p->aeth.syndrome;

		switch (wire_aeth_kind(syn)) {
		case WIRE_AETH_NAK:
			if (wire_aeth_value(syn) < FLOW_NAK_CODES)
				f->naks[wire_aeth_value(syn)]++;
			else
				f->naks_other++;
			return;
		case WIRE_AETH_RNR_NAK:
			f->rnr_naks++;
			return;
		default:
			break;
		}
		if (op == 0x11) {	/* plain ACK: duplicates repeat PSN and MSN */
			if (f->ack_valid && f->last_ack_psn == p->bth.psn &&
			    f->last_ack_msn == p->aeth.msn && f->last_ack_syndrome == syn)
				f->dup_acks++;
			f->ack_valid = true;
			f->last_ack_psn = p->bth.psn;
			f->last_ack_msn = p->aeth.msn;
			f->last_ack_syndrome = syn;
		}
	}
	if (op >= 0x0D && op <= 0x10)	/* read responses carry data PSNs */
		track_psn(f, p->bth.psn, false);
	if (req)
		pending_answer(req, p->bth.psn, ts);
}

static void account_request(struct flow *f, const struct wire_pkt *p, uint64_t ts)
{
	uint8_t op = p->bth.opcode & 0x1F;
	bool read = op == 0x0C;
	bool atomic = op == 0x13 || op == 0x14;

	/* UD packets of unknown source QP may be any senders': no sequence. */
	if (flow_src_qp_unknown(&f->key))
		return;
	track_psn(f, p->bth.psn, read);
	if (f->key.service == WIRE_TR_UD)
		f->qkey = p->deth.qkey;
	/* Reads and atomics are always answered; others when A is set.  UC
	 * and UD are never answered: nothing to wait for. */
	if (!flow_unreliable(&f->key) && (p->bth.ackreq || read || atomic))
		pending_push(f, p->bth.psn, ts);
}

bool flows_add(struct flow_table *t, const struct wire_pkt *p, uint64_t ts_ns,
	       size_t wire_len, enum crc_verdict icrc, bool from_gso)
{
	struct flow_key k;
	struct flow *f;
	uint8_t ecn;

	flow_key_of(p, &k);
	f = lookup(t, &k, t->n < (t->max_flows ? t->max_flows : FLOWS_DEFAULT_MAX));
	if (!f && t->n < (t->max_flows ? t->max_flows : FLOWS_DEFAULT_MAX))
		return false;	/* out of memory */
	if (!t->packets || ts_ns < t->first_ns)
		t->first_ns = ts_ns;
	if (ts_ns > t->last_ns)
		t->last_ns = ts_ns;
	t->packets++;
	t->bytes += wire_len;
	if (!f) {
		/* Memory stays bounded: a flow past the limit is counted only. */
		t->untracked_packets++;
		t->icrc_bad += icrc == CRC_BAD;
		t->icrc_unchecked += icrc == CRC_UNCHECKED;
		return true;
	}
	if (!f->packets || ts_ns < f->first_ns)
		f->first_ns = ts_ns;
	if (ts_ns > f->last_ns)
		f->last_ns = ts_ns;
	f->packets++;
	f->bytes += wire_len;
	f->opcodes[p->bth.opcode]++;
	if (p->op && p->op->payload)
		f->payload_bytes += p->payload_len;
	ecn = p->layers & WIRE_L_IPV6 ? p->ip6.ecn : (p->layers & WIRE_L_IPV4 ? p->ip4.ecn : 0);
	if (ecn == WIRE_CE)
		f->ce_marked++;
	if (icrc == CRC_BAD) {
		f->icrc_bad++;
		t->icrc_bad++;
	} else if (icrc == CRC_UNCHECKED) {
		t->icrc_unchecked++;
	}
	if (from_gso)
		f->gso_aggregates++;
	if (p->bth.opcode == OP_CNP)
		f->cnps++;
	else if (icrc == CRC_BAD || !p->op)
		;	/* its fields cannot be trusted for sequencing */
	else if (flow_is_response(p->bth.opcode))
		account_response(t, f, p, ts_ns);
	else
		account_request(f, p, ts_ns);
	return true;
}
