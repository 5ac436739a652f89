// SPDX-License-Identifier: MIT
/*
 * The soft engine's UDP link on loopback: what the host drops because our
 * receive buffer was full is counted exactly (the kernel's SO_RXQ_OVFL
 * count), so a loss the engine repairs is never a mystery; and a UD
 * receive's GRH area is the IP header the kernel delivered the datagram
 * with, IPv4 and IPv6, DSCP and ECN included (the in-memory wire of the
 * other soft-engine tests is IPv4 alone, and carries no ToS); and a QP's
 * socket sends anywhere, marks what is not ECT(0) data, and outlives a
 * peer's ICMP errors.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "soft.h"
#include "unit.h"
#include "wire.h"

#define DGRAM_BYTES 1400
#define DGRAMS 160000		/* ~2 KiB of buffer each: over twice 64 MiB x 2 */
#define SEND_BATCH 512

/* Sends DGRAMS datagrams to 127.0.0.1:port; returns how many left. */
static long flood(uint16_t port)
{
	static uint8_t payload[DGRAM_BYTES];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct mmsghdr msgs[SEND_BATCH];
	struct iovec iov = { payload, sizeof(payload) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	long sent = 0;

	if (fd < 0)
		return -1;
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < SEND_BATCH; i++)
		msgs[i].msg_hdr = (struct msghdr){ .msg_name = &to, .msg_namelen = sizeof(to),
						   .msg_iov = &iov, .msg_iovlen = 1 };
	while (sent < DGRAMS) {
		int n = sendmmsg(fd, msgs, SEND_BATCH, 0);

		if (n <= 0)
			break;
		sent += n;
	}
	close(fd);
	return sent;
}

static void test_rcvbuf_overflow_counted(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "";
	struct soft_link *l = soft_udp_open("127.0.0.1", 0, false, err);
	struct soft_pkt *pkts = calloc(SOFT_BATCH, sizeof(*pkts));
	long sent, got = 0;
	int n, idle = 0;

	CHECK(u, l != NULL);
	if (!l || !pkts) {
		printf("#   %s\n", err);
		free(pkts);
		return;
	}
	sent = flood(l->local.port);
	CHECK(u, sent >= DGRAMS);
	/* Drain: loopback delivers synchronously, so everything not dropped
	 * is queued by now. */
	while (idle < 3) {
		n = l->ops->recv(l, pkts, SOFT_BATCH);
		got += n;
		idle = n ? 0 : idle + 1;
	}
	printf("# sent %ld, received %ld, counted as dropped %llu\n", sent, got,
	       (unsigned long long)l->ops->rx_overflows(l));
	CHECK(u, l->ops->rx_overflows(l) > 0);
	CHECK_EQ(u, (long long)l->ops->rx_overflows(l), sent - got);
	l->ops->close(l);
	free(pkts);
}

/* One side of a UD pair over real UDP sockets. */
struct ud_side {
	struct soft_dev *dev;
	void *cq;
	struct soft_qp *qp;
	uint8_t buf[8192];
	struct xport_mr mr;
};

static bool ud_side_open(struct ud_side *s, const char *addr, uint8_t tos, char *err)
{
	struct xport_qp_attr a = { .max_send_wr = 16, .max_recv_wr = 16, .mtu = 1024,
				   .type = XPORT_QPT_UD, .tos = tos };
	struct soft_link *l = soft_udp_open(addr, 0, false, err);

	memset(s->buf, 0, sizeof(s->buf));
	if (!l)
		return false;
	if (!(s->dev = soft_dev_open(l, err))) {
		l->ops->close(l);
		return false;
	}
	s->cq = soft_engine_ops.create_cq(s->dev, 64, err);
	s->qp = s->cq ? soft_engine_ops.create_qp(s->dev, s->cq, s->cq, &a, err) : NULL;
	s->mr = (struct xport_mr){ .addr = s->buf, .length = sizeof(s->buf),
				   .access = XPORT_ACCESS_LOCAL_WRITE };
	return s->qp && soft_engine_ops.reg_mr(s->dev, &s->mr, err) == 0;
}

static void ud_side_close(struct ud_side *s)
{
	if (s->qp)
		soft_engine_ops.destroy_qp(s->qp);
	if (s->cq)
		soft_engine_ops.destroy_cq(s->cq);
	if (s->dev)
		soft_dev_close(s->dev);
}

/* The IPv6 hop limit (or IPv4 TTL) loopback sends with, from the sysctl. */
static int default_hops(bool v6)
{
	FILE *f = fopen(v6 ? "/proc/sys/net/ipv6/conf/lo/hop_limit" : "/proc/sys/net/ipv4/ip_default_ttl",
			"r");
	int v = -1;

	if (f && fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* A UD SEND from a to b over addr with DSCP 26: b's GRH area holds the
 * header it came with. */
static void ud_grh_over(struct unit *u, const char *addr, bool v6)
{
	struct ud_side *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char err[XPORT_ERR_LEN] = "";
	struct xport_qp_info ia, ib;
	struct xport_recv_wr rr;
	struct xport_send_wr wr;
	struct xport_wc wc = { 0 };
	const uint8_t tos = 26 << 2, payload = 200;
	const uint8_t *g;
	int n = 0;

	if (!a || !b || !ud_side_open(a, addr, tos, err) || !ud_side_open(b, addr, tos, err)) {
		char why[600];

		snprintf(why, sizeof(why), "no UD QP over %s: %s", addr, err);
		unit_skip_running(u, why);
		goto out;
	}
	soft_engine_ops.qp_info(a->qp, &ia);
	soft_engine_ops.qp_info(b->qp, &ib);
	CHECK_EQ(u, soft_engine_ops.connect(a->qp, &ib, err), 0);
	CHECK_EQ(u, soft_engine_ops.connect(b->qp, &ia, err), 0);
	for (int i = 0; i < payload; i++)
		a->buf[i] = (uint8_t)(i * 7 + 1);
	rr = (struct xport_recv_wr){ 1, { (uint64_t)(uintptr_t)b->buf, 1024 + XPORT_GRH_LEN,
					  b->mr.lkey } };
	CHECK_EQ(u, soft_engine_ops.post_recv(b->qp, &rr, err), 0);
	wr = (struct xport_send_wr){ .wr_id = 2, .opcode = XPORT_WR_SEND, .signaled = true,
				     .sge = { (uint64_t)(uintptr_t)a->buf, payload, a->mr.lkey } };
	CHECK_EQ(u, soft_engine_ops.post_send(a->qp, &wr, NULL, err), 0);
	for (uint64_t end = soft_now_ns() + 5000000000ull; n == 0 && soft_now_ns() < end;) {
		soft_engine_ops.poll_cq(a->cq, NULL, 0);
		soft_progress(a->dev);
		n = soft_engine_ops.poll_cq(b->cq, &wc, 1);
	}
	CHECK_EQ(u, n, 1);
	CHECK_EQ(u, wc.status, XPORT_WC_SUCCESS);
	CHECK(u, wc.grh);
	CHECK_EQ(u, wc.byte_len, XPORT_GRH_LEN + payload);
	CHECK(u, memcmp(b->buf + XPORT_GRH_LEN, a->buf, payload) == 0);
	g = b->buf;
	if (v6) {
		static const uint8_t lo6[16] = { [15] = 1 };
		uint8_t tclass = (uint8_t)((g[0] & 0x0F) << 4 | g[1] >> 4);

		CHECK_EQ(u, g[0] >> 4, 6);
		CHECK_EQ(u, tclass >> 2, 26);
		CHECK_EQ(u, tclass & 3, WIRE_ECT0);	/* the engine sends ECT(0) */
		/* UDP, BTH, DETH, the data, ICRC */
		CHECK_EQ(u, wire_get16(g + 4), 8 + 12 + 8 + payload + 4);
		CHECK_EQ(u, g[6], 17);
		CHECK_EQ(u, g[7], default_hops(true));
		CHECK(u, memcmp(g + 8, lo6, 16) == 0 && memcmp(g + 24, lo6, 16) == 0);
	} else {
		static const uint8_t zero[20];
		const uint8_t *ip = g + 20;

		CHECK(u, memcmp(g, zero, 20) == 0);
		CHECK_EQ(u, ip[0], 0x45);
		CHECK_EQ(u, ip[1] >> 2, 26);
		CHECK_EQ(u, ip[1] & 3, WIRE_ECT0);
		CHECK_EQ(u, wire_get16(ip + 2), 20 + 8 + 12 + 8 + payload + 4);
		CHECK_EQ(u, ip[8], default_hops(false));
		CHECK_EQ(u, ip[9], 17);
		CHECK_EQ(u, wire_ipv4_csum(ip, 20), 0);
		CHECK(u, ip[12] == 127 && ip[15] == 1 && ip[16] == 127 && ip[19] == 1);
	}
out:
	if (a)
		ud_side_close(a);
	if (b)
		ud_side_close(b);
	free(a);
	free(b);
}

/* A bare RoCEv2 packet of one QP slot: an ACK-sized BTH and its ICRC room. */
static void bare_pkt(struct soft_pkt *pk, const struct soft_link *from, uint16_t sport,
		     const struct soft_link *to, uint8_t ecn, uint8_t tag)
{
	memset(pk, 0, sizeof(*pk));
	pk->buf[0] = tag;
	pk->len = WIRE_BTH_LEN + WIRE_ICRC_LEN;
	pk->src = from->local;
	pk->src.port = sport;
	pk->dst = to->local;
	pk->ecn = ecn;
}

/* Receives into pkts until n arrived or a second passed. */
static int recv_some(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	int got = 0;

	for (uint64_t end = soft_now_ns() + 1000000000ull; got < n && soft_now_ns() < end;)
		got += l->ops->recv(l, pkts + got, n - got);
	return got;
}

/* A QP's socket: ECT(0) data leaves with the socket's own TOS, other
 * packets with theirs, to any destination, and after a peer's port
 * closes (an ICMP port unreachable) later sends still leave.  (Which IPv4
 * ID the kernel wrote only a capture sees: tests/perf_netns.bats checks
 * every packet's ICRC on the wire.) */
static void test_qp_socket_destinations(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "";
	struct soft_link *l = soft_udp_open("127.0.0.1", 0, false, err);
	struct soft_link *r1 = soft_udp_open("127.0.0.1", 0, false, err);
	struct soft_link *r2 = soft_udp_open("127.0.0.1", 0, false, err);
	struct soft_link *gone = soft_udp_open("127.0.0.1", 0, false, err);
	struct soft_pkt *tx = calloc(4, sizeof(*tx)), *rx = calloc(8, sizeof(*rx));
	const uint8_t dscp = 26 << 2;
	int sport;

	if (!l || !r1 || !r2 || !gone || !tx || !rx) {
		char why[600];

		snprintf(why, sizeof(why), "no UDP link on 127.0.0.1: %s", err);
		unit_skip_running(u, why);
		goto out;
	}
	sport = l->ops->qp_open(l, 0, dscp, err);
	CHECK(u, sport > 0);
	if (sport <= 0)
		goto out;
	bare_pkt(&tx[0], l, (uint16_t)sport, r1, WIRE_ECT0, 1);	/* data */
	bare_pkt(&tx[1], l, (uint16_t)sport, r1, WIRE_NOT_ECT, 2);	/* an ACK's TOS */
	bare_pkt(&tx[2], l, (uint16_t)sport, r2, WIRE_ECT0, 3);	/* elsewhere */
	CHECK_EQ(u, l->ops->send(l, tx, 3), 3);
	CHECK_EQ(u, recv_some(r1, rx, 2), 2);
	CHECK_EQ(u, rx[0].rx_bytes ? rx[0].rx_bytes[0] : 0, 1);
	CHECK_EQ(u, rx[0].tos, dscp | WIRE_ECT0);
	CHECK_EQ(u, rx[0].ecn, WIRE_ECT0);
	CHECK_EQ(u, rx[1].rx_bytes ? rx[1].rx_bytes[0] : 0, 2);
	CHECK_EQ(u, rx[1].tos, dscp | WIRE_NOT_ECT);
	CHECK_EQ(u, rx[1].ecn, WIRE_NOT_ECT);
	CHECK_EQ(u, recv_some(r2, rx, 1), 1);
	CHECK_EQ(u, rx[0].rx_bytes ? rx[0].rx_bytes[0] : 0, 3);
	CHECK_EQ(u, rx[0].tos, dscp | WIRE_ECT0);

	/* Slot 1 sends to a port that then closes. */
	sport = l->ops->qp_open(l, 1, dscp, err);
	CHECK(u, sport > 0);
	if (sport <= 0)
		goto out;
	bare_pkt(&tx[0], l, (uint16_t)sport, gone, WIRE_ECT0, 4);
	tx[0].qp_slot = 1;
	CHECK_EQ(u, l->ops->send(l, tx, 1), 1);
	CHECK_EQ(u, recv_some(gone, rx, 1), 1);
	gone->ops->close(gone);
	gone = NULL;
	/* To the closed port (loopback answers with an ICMP port unreachable
	 * at once), then twice to r1, named: each of those sends leaves. */
	CHECK_EQ(u, l->ops->send(l, tx, 1), 1);
	for (int i = 0; i < 2; i++) {
		bare_pkt(&tx[0], l, (uint16_t)sport, r1, WIRE_ECT0, (uint8_t)(5 + i));
		tx[0].qp_slot = 1;
		CHECK_EQ(u, l->ops->send(l, tx, 1), 1);
		CHECK_EQ(u, recv_some(r1, rx, 1), 1);
		CHECK_EQ(u, rx[0].rx_bytes ? rx[0].rx_bytes[0] : 0, 5 + i);
	}
out:
	if (l)
		l->ops->close(l);
	if (r1)
		r1->ops->close(r1);
	if (r2)
		r2->ops->close(r2);
	if (gone)
		gone->ops->close(gone);
	free(tx);
	free(rx);
}

static void test_ud_grh_ipv4(struct unit *u) { ud_grh_over(u, "127.0.0.1", false); }
static void test_ud_grh_ipv6(struct unit *u) { ud_grh_over(u, "::1", true); }

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_rcvbuf_overflow_counted);
	RUN(&u, test_qp_socket_destinations);
	RUN(&u, test_ud_grh_ipv4);
	RUN(&u, test_ud_grh_ipv6);
	return unit_done(&u);
}
