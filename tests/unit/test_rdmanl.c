// SPDX-License-Identifier: MIT
/*
 * lib/stats/counters_rdmanl.c: the RDMA netlink statistics readers.
 *
 * The replies are written here by a small writer of our own (not libmnl),
 * laid out as drivers/infiniband/core/nldev.c lays them out: no family
 * header, the device handle (DEV_INDEX, DEV_NAME), u64 values put with
 * nla_put_u64_64bit (a zero-length PAD of type 0 before some of them),
 * nests without NLA_F_NESTED (nla_nest_start_noflag) as well as with it.
 * The ABI numbers are spelled out and checked against the UAPI header, so
 * that a wrong constant in the code under test cannot hide behind the same
 * constant here.  rxe offers no QP counters and no optional counters:
 * those replies are mlx5's as its counter modes make them.  Then every
 * truncation and random corruptions of each reply (the SANITIZE=1 build
 * shows any read out of bounds).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters_nl.h"
#include "unit.h"

_Static_assert(NETLINK_RDMA == 20, "NETLINK_RDMA");
_Static_assert(RDMA_NL_NLDEV == 5 && RDMA_NLDEV_CMD_GET == 1 && RDMA_NLDEV_CMD_STAT_GET == 17 &&
	       RDMA_NLDEV_CMD_STAT_GET_STATUS == 24, "nldev commands");
_Static_assert(RDMA_NLDEV_ATTR_DEV_INDEX == 1 && RDMA_NLDEV_ATTR_DEV_NAME == 2 &&
	       RDMA_NLDEV_ATTR_PORT_INDEX == 3 && RDMA_NLDEV_ATTR_FW_VERSION == 5, "handle");
_Static_assert(RDMA_NLDEV_ATTR_RES_QP == 19 && RDMA_NLDEV_ATTR_RES_QP_ENTRY == 20 &&
	       RDMA_NLDEV_ATTR_RES_LQPN == 21 && RDMA_NLDEV_ATTR_RES_TYPE == 26, "res attrs");
_Static_assert(RDMA_NLDEV_ATTR_STAT_MODE == 74 && RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK == 76 &&
	       RDMA_NLDEV_ATTR_STAT_COUNTER == 77 && RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY == 78 &&
	       RDMA_NLDEV_ATTR_STAT_COUNTER_ID == 79, "counter attrs");
_Static_assert(RDMA_NLDEV_ATTR_STAT_HWCOUNTERS == 80 && RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY == 81 &&
	       RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME == 82 &&
	       RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE == 83 &&
	       RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX == 94 &&
	       RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC == 95, "hwcounter attrs");
_Static_assert(RDMA_COUNTER_MODE_AUTO == 1 && RDMA_COUNTER_MODE_MANUAL == 2, "modes");

#define SEQ 0x5eed0100u
#define T_GET 5121		/* (5 << 10) + 1 */
#define T_STAT 5137		/* (5 << 10) + 17 */
#define T_STATUS 5144		/* (5 << 10) + 24 */
#define F_MULTI 0x2
#define F_DUMP_INTR 0x10

/* ---- a writer of netlink messages, host byte order ------------------------ */

struct w {
	uint8_t *b;
	size_t len, cap;
	size_t msg;		/* offset of the open message */
	size_t nest[8];
	int depth;
};

static void w_init(struct w *w)
{
	w->cap = 1 << 20;
	w->b = calloc(1, w->cap);
	w->len = 0;
	w->depth = 0;
}

static void w_put(struct w *w, const void *p, size_t n)
{
	memcpy(w->b + w->len, p, n);
	w->len += n;
	while (w->len % 4)
		w->b[w->len++] = 0;
}

static void w_msg(struct w *w, uint16_t type, uint16_t flags, uint32_t seq)
{
	uint32_t len = 16, pid = 0;

	w->msg = w->len;
	memcpy(w->b + w->len, &len, 4);
	memcpy(w->b + w->len + 4, &type, 2);
	memcpy(w->b + w->len + 6, &flags, 2);
	memcpy(w->b + w->len + 8, &seq, 4);
	memcpy(w->b + w->len + 12, &pid, 4);
	w->len += 16;
}

static void w_end(struct w *w)
{
	uint32_t len = (uint32_t)(w->len - w->msg);

	memcpy(w->b + w->msg, &len, 4);
}

static void w_attr(struct w *w, uint16_t type, const void *p, size_t n)
{
	uint16_t len = (uint16_t)(4 + n);

	memcpy(w->b + w->len, &len, 2);
	memcpy(w->b + w->len + 2, &type, 2);
	w->len += 4;
	if (n)
		w_put(w, p, n);
}

static void w_u8(struct w *w, uint16_t type, uint8_t v) { w_attr(w, type, &v, 1); }
static void w_u32(struct w *w, uint16_t type, uint32_t v) { w_attr(w, type, &v, 4); }
static void w_str(struct w *w, uint16_t type, const char *s) { w_attr(w, type, s, strlen(s) + 1); }

/* nla_put_u64_64bit on a machine that pads: PAD (type 0) when the value
 * would not be 8-aligned; `pad` false writes it 4-aligned as x86 does. */
static void w_u64(struct w *w, uint16_t type, uint64_t v, bool pad)
{
	if (pad && (w->len + 4) % 8)
		w_attr(w, 0, NULL, 0);
	w_attr(w, type, &v, 8);
}

static void w_nest(struct w *w, uint16_t type, bool flag)
{
	w->nest[w->depth++] = w->len;
	w_attr(w, (uint16_t)(type | (flag ? 0x8000 : 0)), NULL, 0);
}

static void w_close(struct w *w)
{
	size_t at = w->nest[--w->depth];
	uint16_t len = (uint16_t)(w->len - at);

	memcpy(w->b + at, &len, 2);
}

static void w_error(struct w *w, uint32_t seq, int err)
{
	w_msg(w, 2, 0, seq);
	w_put(w, &err, 4);
	w_msg(w, T_STAT, 1, seq);	/* the request's header, echoed */
	w->msg -= 20;
	w_end(w);
}

static void w_done(struct w *w, uint32_t seq)
{
	int zero = 0;

	w_msg(w, 3, F_MULTI, seq);
	w_put(w, &zero, 4);
	w_end(w);
}

static void w_handle(struct w *w, uint32_t index, const char *name)
{
	w_u32(w, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	w_str(w, RDMA_NLDEV_ATTR_DEV_NAME, name);
}

static void w_entry(struct w *w, const char *name, uint64_t v, bool pad)
{
	w_nest(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, false);
	w_str(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
	w_u64(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, v, pad);
	w_close(w);
}

/* ---- the replies ------------------------------------------------------------ */

static const char *const rxe_names[] = {
	"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
	"send_rnr_err", "rcvd_seq_err", "ack_deferred", "retry_exceeded_err",
	"retry_rnr_exceeded_err", "completer_retry_err", "send_err", "link_downed",
	"rdma_sends", "rdma_recvs",
};
#define RXE_N (sizeof(rxe_names) / sizeof(rxe_names[0]))

static uint64_t rxe_value(size_t i)
{
	return i == 0 ? 0x123456789abcULL : i * 1000 + 7;
}

/* STAT_GET for rxe0 port 1 (index 3), as stat_get_doit_default_counter. */
static void rxe_stat(struct w *w, bool pad)
{
	w_msg(w, T_STAT, 0, SEQ);
	w_handle(w, 3, "rxe0");
	w_u32(w, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	w_nest(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
	for (size_t i = 0; i < RXE_N; i++)
		w_entry(w, rxe_names[i], rxe_value(i), pad);
	w_close(w);
	w_end(w);
}

/* mlx5_0 port 1 with the optional congestion counters enabled: STAT_GET
 * lists them with the others; STAT_GET_STATUS says which are optional
 * (DYNAMIC 1 enabled, 0 disabled: a disabled one is not in STAT_GET). */
static void mlx5_stat(struct w *w)
{
	w_msg(w, T_STAT, 0, SEQ);
	w_handle(w, 0, "mlx5_0");
	w_u32(w, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	w_nest(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
	w_entry(w, "rx_write_requests", 5000, true);
	w_entry(w, "np_ecn_marked_roce_packets", 77, true);
	w_entry(w, "cc_rx_ce_pkts", 77, true);
	w_entry(w, "cc_tx_cnp_pkts", 12, true);
	w_close(w);
	w_end(w);
}

static void mlx5_status(struct w *w)
{
	static const struct { const char *name; int dyn; } s[] = {
		{ "rx_write_requests", -1 }, { "np_ecn_marked_roce_packets", -1 },
		{ "cc_rx_ce_pkts", 1 }, { "cc_rx_cnp_pkts", 0 }, { "cc_tx_cnp_pkts", 1 },
	};

	w_msg(w, T_STATUS, 0, SEQ);
	w_handle(w, 0, "mlx5_0");
	w_u32(w, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	w_nest(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		w_nest(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, true);
		w_str(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, s[i].name);
		w_u32(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX, (uint32_t)i);
		if (s[i].dyn >= 0)
			w_u8(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC, (uint8_t)s[i].dyn);
		w_close(w);
	}
	w_close(w);
	w_end(w);
}

/* One STAT_COUNTER_ENTRY as fill_res_counter_entry writes it (auto mode by
 * QP type: STAT_MODE, AUTO_MODE_MASK... then RES_TYPE). */
static void qp_counter(struct w *w, uint32_t port, uint32_t id, const uint32_t *qpns, size_t nq,
		       uint64_t base)
{
	w_nest(w, RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY, false);
	w_u32(w, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	w_u32(w, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, id);
	w_u32(w, RDMA_NLDEV_ATTR_STAT_MODE, 1);
	w_u8(w, RDMA_NLDEV_ATTR_RES_TYPE, 2);	/* IB_QPT_RC */
	w_nest(w, RDMA_NLDEV_ATTR_RES_QP, false);
	for (size_t i = 0; i < nq; i++) {
		w_nest(w, RDMA_NLDEV_ATTR_RES_QP_ENTRY, false);
		w_u32(w, RDMA_NLDEV_ATTR_RES_LQPN, qpns[i]);
		w_close(w);
	}
	w_close(w);
	w_nest(w, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, false);
	w_entry(w, "rx_write_requests", base, false);
	w_entry(w, "out_of_sequence", base / 100, true);
	w_close(w);
	w_close(w);
}

static void qp_msg_begin(struct w *w, uint16_t flags)
{
	w_msg(w, T_STAT, (uint16_t)(F_MULTI | flags), SEQ);
	w_handle(w, 0, "mlx5_0");
	w_nest(w, RDMA_NLDEV_ATTR_STAT_COUNTER, false);
}

static void qp_msg_end(struct w *w)
{
	w_close(w);
	w_end(w);
}

/* ---- helpers ------------------------------------------------------------------ */

/* Parsers on an exactly sized heap copy, so ASan sees any overread. */
static int stat_parse(const uint8_t *b, size_t len, const char *dev, struct ctr_set *set)
{
	uint8_t *c = malloc(len ? len : 1);
	int r, e;

	memcpy(c, b, len);
	errno = 0;
	r = ctr_parse_nldev_stat_reply(c, len, SEQ, dev, 1, set);
	e = errno;
	free(c);
	errno = e;
	return r;
}

static int qp_parse(const uint8_t *b, size_t len, struct ctr_set *set, struct ctr_qp_counter **q,
		    size_t *nq, size_t *left)
{
	uint8_t *c = malloc(len ? len : 1);
	int r, e;

	memcpy(c, b, len);
	errno = 0;
	r = ctr_parse_nldev_qp_dump(c, len, SEQ, "mlx5_0", 1, set, q, nq, left);
	e = errno;
	free(c);
	errno = e;
	return r;
}

static const struct ctr_counter *find(const struct ctr_set *s, enum ctr_src src, const char *n)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].src == src && !strcmp(s->c[i].name, n))
			return &s->c[i];
	return NULL;
}

/* ---- valid replies --------------------------------------------------------------- */

static void stat_rxe(struct unit *u)
{
	for (int pad = 0; pad < 2; pad++) {
		struct w w;
		struct ctr_set set = { 0 };

		w_init(&w);
		rxe_stat(&w, pad);
		CHECK_EQ(u, stat_parse(w.b, w.len, "rxe0", &set), 0);
		CHECK_EQ(u, set.n, RXE_N);
		for (size_t i = 0; i < RXE_N && i < set.n; i++) {
			const struct ctr_counter *c = find(&set, CTR_SRC_NLDEV, rxe_names[i]);

			CHECK(u, c && c->value == rxe_value(i));
		}
		ctr_set_free(&set);
		free(w.b);
	}
}

static void stat_optional(struct unit *u)
{
	struct w w;
	struct ctr_set set = { 0 };
	const struct ctr_counter *c;

	w_init(&w);
	mlx5_stat(&w);
	CHECK_EQ(u, stat_parse(w.b, w.len, "mlx5_0", &set), 0);
	CHECK_EQ(u, set.n, 4);
	w.len = 0;
	mlx5_status(&w);
	CHECK_EQ(u, ctr_parse_nldev_status_reply(w.b, w.len, SEQ, "mlx5_0", 1, &set), 0);
	c = find(&set, CTR_SRC_NLDEV_OPT, "cc_rx_ce_pkts");
	CHECK(u, c && c->value == 77);
	CHECK(u, find(&set, CTR_SRC_NLDEV_OPT, "cc_tx_cnp_pkts") != NULL);
	CHECK(u, find(&set, CTR_SRC_NLDEV, "rx_write_requests") != NULL);
	CHECK(u, find(&set, CTR_SRC_NLDEV, "np_ecn_marked_roce_packets") != NULL);
	/* Disabled and absent from STAT_GET: nothing to mark, nothing added. */
	CHECK_EQ(u, set.n, 4);
	/* The optional twin of an ECN counter means nothing: no double count. */
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_NLDEV, "np_ecn_marked_roce_packets"), CTR_M_ECN_MARKED);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_NLDEV_OPT, "cc_rx_ce_pkts"), CTR_M_NONE);
	CHECK_EQ(u, ctr_meaning_of(CTR_SRC_NLDEV_QP, "5/out_of_sequence"), CTR_M_NONE);
	ctr_set_free(&set);
	free(w.b);
}

static void stat_refusals(struct unit *u)
{
	struct w w;
	struct ctr_set set = { 0 };

	w_init(&w);
	/* The index now names another device: ESTALE, to list afresh. */
	rxe_stat(&w, true);
	CHECK_EQ(u, stat_parse(w.b, w.len, "rxe1", &set), -1);
	CHECK_EQ(u, errno, ESTALE);
	ctr_set_free(&set);
	/* Another port than asked. */
	CHECK_EQ(u, ctr_parse_nldev_stat_reply(w.b, w.len, SEQ, "rxe0", 2, &set), -1);
	CHECK_EQ(u, errno, EPROTO);
	ctr_set_free(&set);
	/* The kernel's no: a device without hw stats answers -EINVAL. */
	w.len = 0;
	w_error(&w, SEQ, -EINVAL);
	CHECK_EQ(u, stat_parse(w.b, w.len, "rxe0", &set), -1);
	CHECK_EQ(u, errno, EINVAL);
	CHECK_EQ(u, set.n, 0);
	/* A STAT_GET_STATUS answer where STAT_GET's is wanted. */
	w.len = 0;
	mlx5_status(&w);
	CHECK_EQ(u, stat_parse(w.b, w.len, "mlx5_0", &set), -1);
	CHECK_EQ(u, errno, EPROTO);
	ctr_set_free(&set);
	/* An entry without its value; a value of 4 bytes. */
	for (int k = 0; k < 2; k++) {
		w.len = 0;
		w_msg(&w, T_STAT, 0, SEQ);
		w_handle(&w, 3, "rxe0");
		w_u32(&w, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
		w_nest(&w, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, true);
		w_nest(&w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, false);
		w_str(&w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "sent_pkts");
		if (k)
			w_u32(&w, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 5);
		w_close(&w);
		w_close(&w);
		w_end(&w);
		CHECK_EQ(u, stat_parse(w.b, w.len, "rxe0", &set), -1);
		CHECK_EQ(u, errno, EPROTO);
		ctr_set_free(&set);
	}
	free(w.b);
}

static void dev_list(struct unit *u)
{
	struct w w;
	struct ctr_rdma_dev *devs = NULL;
	size_t n = 0;
	const char *fw = "16.35.2000";

	w_init(&w);
	w_msg(&w, T_GET, F_MULTI, SEQ);
	w_handle(&w, 0, "mlx5_0");
	w_str(&w, RDMA_NLDEV_ATTR_FW_VERSION, fw);
	w_u32(&w, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	w_end(&w);
	w_msg(&w, T_GET, F_MULTI, SEQ);
	w_handle(&w, 7, "rxe0");
	w_end(&w);
	/* The first datagram: the dump goes on. */
	CHECK_EQ(u, ctr_parse_nldev_dev_dump(w.b, w.len, SEQ, &devs, &n), 1);
	CHECK_EQ(u, n, 2);
	w.len = 0;
	w_done(&w, SEQ);
	CHECK_EQ(u, ctr_parse_nldev_dev_dump(w.b, w.len, SEQ, &devs, &n), 0);
	CHECK(u, n == 2 && !strcmp(devs[0].name, "mlx5_0") && devs[0].index == 0);
	CHECK(u, n == 2 && !strcmp(devs[1].name, "rxe0") && devs[1].index == 7);
	/* A name too long for a device, and a device without its index. */
	w.len = 0;
	w_msg(&w, T_GET, F_MULTI, SEQ);
	w_u32(&w, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
	w_str(&w, RDMA_NLDEV_ATTR_DEV_NAME,
	      "a-device-name-of-more-than-sixty-four-bytes-is-no-ib-device-name-at-all");
	w_end(&w);
	CHECK_EQ(u, ctr_parse_nldev_dev_dump(w.b, w.len, SEQ, &devs, &n), -1);
	CHECK_EQ(u, errno, EPROTO);
	w.len = 0;
	w_msg(&w, T_GET, F_MULTI, SEQ);
	w_str(&w, RDMA_NLDEV_ATTR_DEV_NAME, "rxe9");
	w_end(&w);
	CHECK_EQ(u, ctr_parse_nldev_dev_dump(w.b, w.len, SEQ, &devs, &n), -1);
	CHECK_EQ(u, errno, EPROTO);
	/* The table changed under the dump. */
	w.len = 0;
	w_msg(&w, T_GET, F_MULTI | F_DUMP_INTR, SEQ);
	w_handle(&w, 8, "rxe1");
	w_end(&w);
	CHECK_EQ(u, ctr_parse_nldev_dev_dump(w.b, w.len, SEQ, &devs, &n), -1);
	CHECK_EQ(u, errno, EAGAIN);
	free(devs);
	free(w.b);
}

static void qp_counters(struct unit *u)
{
	static const uint32_t q1[] = { 0x11a, 0x11b }, q2[] = { 0x2c0 };
	uint32_t many[12];
	struct w w;
	struct ctr_set set = { 0 };
	struct ctr_qp_counter *q = NULL;
	size_t nq = 0, left = 0;
	const struct ctr_counter *c;

	for (int i = 0; i < 12; i++)
		many[i] = 0x300 + (uint32_t)i;
	w_init(&w);
	qp_msg_begin(&w, 0);
	qp_counter(&w, 1, 5, q1, 2, 123400);
	qp_counter(&w, 2, 6, q2, 1, 999);	/* port 2: not asked about */
	qp_msg_end(&w);
	CHECK_EQ(u, qp_parse(w.b, w.len, &set, &q, &nq, &left), 1);
	w.len = 0;
	qp_msg_begin(&w, 0);
	qp_counter(&w, 1, 9, many, 12, 800);
	qp_msg_end(&w);
	w_done(&w, SEQ);
	CHECK_EQ(u, qp_parse(w.b, w.len, &set, &q, &nq, &left), 0);
	CHECK_EQ(u, nq, 2);
	CHECK_EQ(u, left, 0);
	if (nq == 2) {
		CHECK(u, q[0].id == 5 && q[0].mode == 1 && q[0].nqps == 2 && q[0].qpn[1] == 0x11b);
		CHECK(u, q[1].id == 9 && q[1].nqps == 12 && q[1].qpn[CTR_QPC_QPNS - 1] == 0x307);
	}
	c = find(&set, CTR_SRC_NLDEV_QP, "5/rx_write_requests");
	CHECK(u, c && c->value == 123400);
	c = find(&set, CTR_SRC_NLDEV_QP, "9/out_of_sequence");
	CHECK(u, c && c->value == 8);
	CHECK(u, find(&set, CTR_SRC_NLDEV_QP, "6/rx_write_requests") == NULL);
	CHECK_EQ(u, set.n, 4);
	ctr_set_free(&set);
	free(q);
	free(w.b);
}

/* A host with more QP counters than kept: the first CTR_MAX_QP_COUNTERS,
 * the rest counted; over many messages, as the kernel splits a dump. */
static void qp_counters_capped(struct unit *u)
{
	const size_t total = CTR_MAX_QP_COUNTERS + 6;
	struct w w;
	struct ctr_set set = { 0 };
	struct ctr_qp_counter *q = NULL;
	size_t nq = 0, left = 0;
	uint32_t qpn = 0x400;

	w_init(&w);
	for (size_t i = 0; i < total; i++) {
		if (i % 100 == 0) {
			if (i)
				qp_msg_end(&w);
			qp_msg_begin(&w, 0);
		}
		qp_counter(&w, 1, (uint32_t)i + 1, &qpn, 1, i);
	}
	qp_msg_end(&w);
	w_done(&w, SEQ);
	CHECK_EQ(u, qp_parse(w.b, w.len, &set, &q, &nq, &left), 0);
	CHECK_EQ(u, nq, CTR_MAX_QP_COUNTERS);
	CHECK_EQ(u, left, 6);
	CHECK_EQ(u, set.n, 2 * CTR_MAX_QP_COUNTERS);
	ctr_set_free(&set);
	free(q);
	free(w.b);
}

/* ---- hostile input ---------------------------------------------------------------- */

/* Every cut of each reply, with the header unchanged and with nlmsg_len
 * set to the cut, and random corruptions: 0/1 or -1 with an errno. */
static void cuts_and_mutations(struct unit *u)
{
	struct w r[4];
	uint32_t x = 88172645u;
	int bad = 0;

	for (int k = 0; k < 4; k++)
		w_init(&r[k]);
	rxe_stat(&r[0], true);
	mlx5_status(&r[1]);
	qp_msg_begin(&r[2], 0);
	{
		static const uint32_t qs[] = { 1, 2, 3 };

		qp_counter(&r[2], 1, 5, qs, 3, 1000);
	}
	qp_msg_end(&r[2]);
	w_done(&r[2], SEQ);
	w_msg(&r[3], T_GET, F_MULTI, SEQ);
	w_handle(&r[3], 1, "rxe0");
	w_end(&r[3]);
	w_done(&r[3], SEQ);
	for (int it = 0; it < 40000; it++) {
		int k = it % 4;
		size_t len = r[k].len;
		uint8_t *b = malloc(len);
		struct ctr_set set = { 0 };
		struct ctr_qp_counter *q = NULL;
		struct ctr_rdma_dev *d = NULL;
		size_t nq = 0, nd = 0;
		int rc;

		memcpy(b, r[k].b, len);
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		if (it < 4 * 400) {
			len = x % len;		/* a cut */
			if (x & 1 && len >= 4) {
				uint32_t l = (uint32_t)len;

				memcpy(b, &l, 4);
			}
		} else {
			for (int f = 0; f < 1 + (int)(x % 4); f++) {
				x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				b[x % len] = (uint8_t)(x >> 8);
			}
		}
		errno = 0;
		rc = k == 0 ? ctr_parse_nldev_stat_reply(b, len, SEQ, "rxe0", 1, &set)
		   : k == 1 ? ctr_parse_nldev_status_reply(b, len, SEQ, "mlx5_0", 1, &set)
		   : k == 2 ? ctr_parse_nldev_qp_dump(b, len, SEQ, "mlx5_0", 1, &set, &q, &nq, NULL)
			    : ctr_parse_nldev_dev_dump(b, len, SEQ, &d, &nd);
		if (rc < 0 ? (errno <= 0 || errno > 4095) : rc > 1)
			bad++;
		ctr_set_free(&set);
		free(q);
		free(d);
		free(b);
	}
	CHECK_EQ(u, bad, 0);
	for (int k = 0; k < 4; k++)
		free(r[k].b);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, stat_rxe);
	RUN(&u, stat_optional);
	RUN(&u, stat_refusals);
	RUN(&u, dev_list);
	RUN(&u, qp_counters);
	RUN(&u, qp_counters_capped);
	RUN(&u, cuts_and_mutations);
	return unit_done(&u);
}
