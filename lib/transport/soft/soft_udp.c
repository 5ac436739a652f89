// SPDX-License-Identifier: MIT
/*
 * The soft engine's UDP link.  One socket bound to ADDR:4791 receives
 * every packet (recvmmsg, with the ToS and destination address of each);
 * each QP sends from a socket of its own bound to an ephemeral port, so
 * the UDP source port carries per-QP entropy for ECMP, as RNICs do.  The
 * sending sockets set DF, which makes the kernel write IPv4 ID 0 — the
 * value the ICRC was computed with.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "soft.h"

#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif

#define SOCK_BUF_BYTES (8 << 20)

struct udp_link {
	struct soft_link pub;
	int rx_fd;
	int qp_fd[SOFT_MAX_QPS];
	uint8_t qp_tos[SOFT_MAX_QPS];	/* DSCP bits; ECN is per packet */
	struct mmsghdr msgs[SOFT_BATCH];
	struct iovec iov[SOFT_BATCH];
	struct sockaddr_storage names[SOFT_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(int)) * 2];
		struct cmsghdr align;
	} ctl[SOFT_BATCH];
};

static void to_sockaddr(const struct soft_addr *a, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (a->v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(a->port);
		memcpy(&s6->sin6_addr, a->ip, 16);
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(a->port);
		memcpy(&s4->sin_addr, a->ip + 12, 4);
		*len = sizeof(*s4);
	}
}

static void from_sockaddr(const struct sockaddr_storage *ss, struct soft_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		memcpy(a->ip, &s6->sin6_addr, 16);
		a->port = ntohs(s6->sin6_port);
		a->v6 = true;
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		a->ip[10] = a->ip[11] = 0xFF;
		memcpy(a->ip + 12, &s4->sin_addr, 4);
		a->port = ntohs(s4->sin_port);
	}
}

static int set_int(int fd, int level, int opt, int v)
{
	return setsockopt(fd, level, opt, &v, sizeof(v));
}

static int udp_qp_open(struct soft_link *l, int slot, uint8_t tos, char *err)
{
	struct udp_link *u = (struct udp_link *)l;
	struct sockaddr_storage ss;
	socklen_t len;
	struct soft_addr any = l->local;
	int fd;

	any.port = 0;
	fd = socket(l->local.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, XPORT_ERR_LEN, "cannot create a UDP socket: %s", strerror(errno));
		return -1;
	}
	set_int(fd, SOL_SOCKET, SO_SNDBUF, SOCK_BUF_BYTES);
	if (l->local.v6)
		set_int(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO);
	else
		set_int(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO);
	to_sockaddr(&any, &ss, &len);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		snprintf(err, XPORT_ERR_LEN, "cannot bind a UDP socket for a QP: %s", strerror(errno));
		close(fd);
		return -1;
	}
	from_sockaddr(&ss, &any);
	u->qp_fd[slot] = fd;
	u->qp_tos[slot] = tos & 0xFC;
	return any.port;
}

static void udp_qp_close(struct soft_link *l, int slot)
{
	struct udp_link *u = (struct udp_link *)l;

	if (u->qp_fd[slot] >= 0)
		close(u->qp_fd[slot]);
	u->qp_fd[slot] = -1;
}

/* Sends the run of packets from one QP that starts the batch. */
static int udp_send(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	struct udp_link *u = (struct udp_link *)l;
	int slot = pkts[0].qp_slot, run = 0, sent;

	for (run = 0; run < n && pkts[run].qp_slot == slot; run++) {
		struct msghdr *h = &u->msgs[run].msg_hdr;
		struct cmsghdr *c;
		socklen_t namelen;

		to_sockaddr(&pkts[run].dst, &u->names[run], &namelen);
		u->iov[run] = (struct iovec){ pkts[run].buf, pkts[run].len };
		memset(h, 0, sizeof(*h));
		h->msg_name = &u->names[run];
		h->msg_namelen = namelen;
		h->msg_iov = &u->iov[run];
		h->msg_iovlen = 1;
		h->msg_control = u->ctl[run].buf;
		h->msg_controllen = CMSG_SPACE(sizeof(int));
		c = CMSG_FIRSTHDR(h);
		c->cmsg_level = l->local.v6 ? IPPROTO_IPV6 : IPPROTO_IP;
		c->cmsg_type = l->local.v6 ? IPV6_TCLASS : IP_TOS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		*(int *)(void *)CMSG_DATA(c) = u->qp_tos[slot] | pkts[run].ecn;
	}
	sent = sendmmsg(u->qp_fd[slot], u->msgs, (unsigned)run, 0);
	if (sent < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? 0 : -1;
	return sent;
}

static void parse_cmsgs(struct msghdr *h, struct soft_pkt *pk)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
			pk->ecn = *(uint8_t *)CMSG_DATA(c) & 3;
		else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS)
			pk->ecn = (uint8_t)(*(int *)(void *)CMSG_DATA(c) & 3);
		else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memcpy(pk->dst.ip + 12, &pi.ipi_addr, 4);
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memcpy(pk->dst.ip, &pi.ipi6_addr, 16);
		}
	}
}

static int udp_recv(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	struct udp_link *u = (struct udp_link *)l;
	int got;

	if (n > SOFT_BATCH)
		n = SOFT_BATCH;
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &u->msgs[i].msg_hdr;

		u->iov[i] = (struct iovec){ pkts[i].buf, sizeof(pkts[i].buf) };
		memset(h, 0, sizeof(*h));
		h->msg_name = &u->names[i];
		h->msg_namelen = sizeof(u->names[i]);
		h->msg_iov = &u->iov[i];
		h->msg_iovlen = 1;
		h->msg_control = u->ctl[i].buf;
		h->msg_controllen = sizeof(u->ctl[i].buf);
	}
	got = recvmmsg(u->rx_fd, u->msgs, (unsigned)n, MSG_DONTWAIT, NULL);
	if (got <= 0)
		return 0;
	for (int i = 0; i < got; i++) {
		struct soft_pkt *pk = &pkts[i];

		pk->len = u->msgs[i].msg_len;
		from_sockaddr(&u->names[i], &pk->src);
		pk->dst = l->local;
		pk->ecn = 0;
		parse_cmsgs(&u->msgs[i].msg_hdr, pk);
		if (u->msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
			pk->len = 0;	/* larger than any RoCE packet: dropped */
	}
	return got;
}

static void udp_close(struct soft_link *l)
{
	struct udp_link *u = (struct udp_link *)l;

	for (int i = 0; i < SOFT_MAX_QPS; i++)
		if (u->qp_fd[i] >= 0)
			close(u->qp_fd[i]);
	if (u->rx_fd >= 0)
		close(u->rx_fd);
	free(u);
}

static const struct soft_link_ops udp_link_ops = {
	.qp_open = udp_qp_open,
	.qp_close = udp_qp_close,
	.send = udp_send,
	.recv = udp_recv,
	.close = udp_close,
};

static int parse_addr(const char *s, struct soft_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->ip + 12) == 1) {
		a->ip[10] = a->ip[11] = 0xFF;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->ip) == 1) {
		a->v6 = true;
		return 0;
	}
	return -1;
}

struct soft_link *soft_udp_open(const char *bind_addr, uint16_t port, char *err)
{
	struct udp_link *u = calloc(1, sizeof(*u));
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	if (!u) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	for (int i = 0; i < SOFT_MAX_QPS; i++)
		u->qp_fd[i] = -1;
	u->rx_fd = -1;
	u->pub.ops = &udp_link_ops;
	if (parse_addr(bind_addr, &u->pub.local) < 0) {
		snprintf(err, XPORT_ERR_LEN, "invalid address '%s' for the soft engine: give a "
			 "local IPv4 or IPv6 address", bind_addr);
		goto fail;
	}
	u->pub.local.port = port;
	fd = socket(u->pub.local.v6 ? AF_INET6 : AF_INET,
		    SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, XPORT_ERR_LEN, "cannot create a UDP socket: %s", strerror(errno));
		goto fail;
	}
	u->rx_fd = fd;
	set_int(fd, SOL_SOCKET, SO_RCVBUF, SOCK_BUF_BYTES);
	if (u->pub.local.v6) {
		set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1);
		set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
		set_int(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
		/* rxe and RNICs send a zero UDP checksum over IPv6 too. */
		set_int(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, 1);
	} else {
		set_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
		set_int(fd, IPPROTO_IP, IP_RECVTOS, 1);
	}
	to_sockaddr(&u->pub.local, &ss, &len);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		if (errno == EADDRINUSE)
			snprintf(err, XPORT_ERR_LEN, "UDP port %u on %s is in use (another rdmakit, "
				 "or a kernel RoCE stack, owns it): bind another local address with "
				 "--bind", port, bind_addr);
		else if (errno == EADDRNOTAVAIL)
			snprintf(err, XPORT_ERR_LEN, "%s is not an address of this host: give one "
				 "of the addresses 'rdmakit devices' lists to --bind", bind_addr);
		else
			snprintf(err, XPORT_ERR_LEN, "cannot bind UDP %s port %u: %s", bind_addr, port,
				 strerror(errno));
		goto fail;
	}
	return &u->pub;
fail:
	udp_close(&u->pub);
	return NULL;
}
