// SPDX-License-Identifier: MIT
/*
 * The soft engine's UDP link.  One socket bound to ADDR:4791 receives
 * every packet (recvmmsg, with the ToS and destination address of each);
 * each QP sends from a socket of its own bound to an ephemeral port, so
 * the UDP source port carries per-QP entropy for ECMP, as RNICs do.  That
 * socket holds the data's TOS (ECT(0)), so a data send carries no TOS of
 * its own.  It is never connect()ed: a connected socket's DF packets take
 * IPv4 IDs from a per-socket counter that starts at random, not the 0 (k
 * for GSO segment k) that each packet's ICRC is computed with.
 *
 * Speed comes from batching: runs of same-size packets of one QP go out
 * as one UDP GSO send (every segment a complete RoCEv2 packet, all but the
 * last exactly gso_size bytes), and the receiving socket takes UDP GRO
 * aggregates, split here at gso_size.  A run leaves as one contiguous
 * buffer: the kernel's cost per iovec dwarfs a userspace copy (a 64 KiB
 * GSO send of 62 one-packet iovecs costs the kernel about twice the CPU of
 * the same send as one iovec).  That copy is the payload's only one: the
 * engine leaves it in its region, and each packet is written and sealed
 * straight into the run.  The sending sockets set DF, so the
 * kernel writes IPv4 ID 0 on a plain send and ID k on segment k of a GSO
 * send: each packet's ICRC is computed with the ID it will carry, and the
 * receiver tries segment k's ICRC with ID k first.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <time.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devinfo.h"
#include "soft.h"

#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO 11	/* linux/in6.h, which clashes with netinet/in.h */
#endif

#define SOCK_BUF_BYTES (8 << 20)
/* The receiving socket holds what peers may have in flight towards us:
 * windows of up to SOFT_WINDOW_BYTES or SOFT_WINDOW_PKTS and READ
 * responses, which the kernel charges at about twice their size at MTU
 * 1024 and up (skb overhead; more at smaller MTUs, hence the packet cap):
 * about four peers' full windows.  More peers fill it only when they all
 * run at full window at once, and the losses then shrink their windows.
 * Past net.core.rmem_max only with CAP_NET_ADMIN (SO_RCVBUFFORCE); a full
 * buffer drops packets, which the engine counts (rcvbuf_drops) and repairs
 * as losses. */
#define RX_SOCK_BUF_BYTES (64 << 20)
#define RX_MSGS SOFT_RX_MSGS
#define RX_BUF_BYTES 65536		/* room for a GRO aggregate */

struct udp_link {
	struct soft_link pub;
	int rx_fd;
	int qp_fd[SOFT_MAX_QPS];
	uint8_t qp_tos[SOFT_MAX_QPS];	/* DSCP bits; ECN is per packet */
	struct mmsghdr msgs[SOFT_BATCH];
	struct iovec iov[SOFT_BATCH];
	struct sockaddr_storage names[SOFT_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(int)) * 3];
		struct cmsghdr align;
	} ctl[SOFT_BATCH];
	bool gso, gro;			/* the kernel takes UDP GSO / gives GRO */
	uint8_t *tx_stage;		/* SOFT_BATCH x SOFT_PKT_MAX: runs laid end to end */
	/* Receive side: messages read but not yet split into packets. */
	uint8_t *rx_bufs;		/* RX_MSGS x RX_BUF_BYTES */
	struct mmsghdr rx_msgs[RX_MSGS];
	struct iovec rx_iov[RX_MSGS];
	struct sockaddr_storage rx_names[RX_MSGS];
	union {
		/* PKTINFO, TOS/TCLASS, TTL/HOPLIMIT, FLOWINFO and GRO */
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(int)) * 5];
		struct cmsghdr align;
	} rx_ctl[RX_MSGS];
	int rx_count, rx_next;		/* messages read, next to split */
	int rx_dirty;			/* messages 0.. the kernel may have rewritten */
	size_t rx_off;			/* offset in that message */
	uint16_t rx_seg;		/* segment index in that message */
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
	if (set_int(fd, l->local.v6 ? IPPROTO_IPV6 : IPPROTO_IP, l->local.v6 ? IPV6_TCLASS : IP_TOS,
		    (tos & 0xFC) | WIRE_ECT0) < 0) {
		snprintf(err, XPORT_ERR_LEN, "cannot set a QP socket's traffic class: %s",
			 strerror(errno));
		close(fd);
		return -1;
	}
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

static void add_cmsg_int(struct msghdr *h, struct cmsghdr **c, int level, int type, int v,
			 size_t size)
{
	*c = *c ? CMSG_NXTHDR(h, *c) : CMSG_FIRSTHDR(h);
	(*c)->cmsg_level = level;
	(*c)->cmsg_type = type;
	(*c)->cmsg_len = CMSG_LEN(size);
	if (size == sizeof(uint16_t)) {
		uint16_t v16 = (uint16_t)v;

		memcpy(CMSG_DATA(*c), &v16, sizeof(v16));
	} else {
		memcpy(CMSG_DATA(*c), &v, sizeof(v));
	}
}

/* One iovec for a run: a lone packet sealed where it is, a GSO run sealed
 * end to end into the staging buffer after what this batch staged before
 * it (each payload copied once, from its region). */
static struct iovec stage_run(struct udp_link *u, struct soft_pkt *pkts, int run,
			      size_t *staged)
{
	uint8_t *start = u->tx_stage + *staged;
	uint32_t pseudo_crc = 0;

	if (run == 1) {
		soft_pkt_seal(&pkts[0], 0);
		return (struct iovec){ pkts[0].buf, pkts[0].len };
	}
	/* The run's packets share addresses and ports, and all but the last
	 * (or a WRITE's FIRST) their length: one pass over the pseudo-header
	 * per length. */
	for (int k = 0; k < run; k++) {
		if (k == 0 || pkts[k].len != pkts[k - 1].len)
			pseudo_crc = soft_pkt_pseudo_crc(&pkts[k]);
		*staged += soft_pkt_stage(&pkts[k], u->tx_stage + *staged,
					  u->pub.local.v6 ? 0 : (uint16_t)k, pseudo_crc);
	}
	return (struct iovec){ start, (size_t)(u->tx_stage + *staged - start) };
}

/* Sends the run of packets from one QP that starts the batch. */
static int udp_send(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	struct udp_link *u = (struct udp_link *)l;
	int slot = pkts[0].qp_slot, sent, taken = 0, planned;
	size_t staged = 0;
	struct soft_send_msg plan[SOFT_BATCH];
	int nmsg = soft_plan_send(pkts, n < SOFT_BATCH ? n : SOFT_BATCH, u->gso, plan, &planned);

	for (int m = 0; m < nmsg; m++) {
		struct msghdr *h = &u->msgs[m].msg_hdr;
		int i = plan[m].first, run = plan[m].count;
		struct cmsghdr *c = NULL;
		socklen_t namelen;
		bool tos_cmsg;

		u->iov[m] = stage_run(u, &pkts[i], run, &staged);
		to_sockaddr(&pkts[i].dst, &u->names[m], &namelen);
		memset(h, 0, sizeof(*h));
		h->msg_name = &u->names[m];
		h->msg_namelen = namelen;
		h->msg_iov = &u->iov[m];
		h->msg_iovlen = 1;
		/* The socket's own TOS is the data's (ECT(0)): only other
		 * packets (ACKs, NAKs, CNPs) carry theirs as a control message. */
		tos_cmsg = pkts[i].ecn != WIRE_ECT0;
		h->msg_controllen = (tos_cmsg ? CMSG_SPACE(sizeof(int)) : 0) +
				    (run > 1 ? CMSG_SPACE(sizeof(uint16_t)) : 0);
		h->msg_control = h->msg_controllen ? u->ctl[m].buf : NULL;
		if (tos_cmsg)
			add_cmsg_int(h, &c, l->local.v6 ? IPPROTO_IPV6 : IPPROTO_IP,
				     l->local.v6 ? IPV6_TCLASS : IP_TOS,
				     u->qp_tos[slot] | pkts[i].ecn, sizeof(int));
		if (run > 1)
			add_cmsg_int(h, &c, SOL_UDP, UDP_SEGMENT, (int)pkts[i].len, sizeof(uint16_t));
	}
	sent = sendmmsg(u->qp_fd[slot], u->msgs, (unsigned)nmsg, 0);
	if (sent < 0 && u->gso && (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT)) {
		u->gso = false;	/* no UDP GSO here (old kernel, or a device without it) */
		return 0;
	}
	if (sent < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? 0 : -1;
	if (sent > 0)
		taken = plan[sent - 1].first + plan[sent - 1].count;
	return taken;
}

static void parse_cmsgs(struct msghdr *h, struct soft_pkt *pk)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		int v;

		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
			pk->tos = *(uint8_t *)CMSG_DATA(c);
			pk->ecn = pk->tos & 3;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			pk->tos = (uint8_t)v;
			pk->ecn = pk->tos & 3;
		} else if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
			   (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			pk->ttl = (uint8_t)v;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_FLOWINFO) {
			uint32_t fl;

			memcpy(&fl, CMSG_DATA(c), sizeof(fl));
			pk->flow_label = ntohl(fl) & 0xFFFFF;
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
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

/* The GRO segment size of a received message, 0 when not an aggregate. */
static int gro_size(struct msghdr *h)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return v;
		}
	return 0;
}

/* Readies receive message i for the kernel to fill. */
static void ready_rx_msg(struct udp_link *u, int i)
{
	struct msghdr *h = &u->rx_msgs[i].msg_hdr;

	u->rx_iov[i] = (struct iovec){ u->rx_bufs + (size_t)i * RX_BUF_BYTES, RX_BUF_BYTES };
	memset(h, 0, sizeof(*h));
	h->msg_name = &u->rx_names[i];
	h->msg_namelen = sizeof(u->rx_names[i]);
	h->msg_iov = &u->rx_iov[i];
	h->msg_iovlen = 1;
	h->msg_control = u->rx_ctl[i].buf;
	h->msg_controllen = sizeof(u->rx_ctl[i].buf);
}

static int read_batch(struct udp_link *u)
{
	int got = recvmmsg(u->rx_fd, u->rx_msgs, RX_MSGS, MSG_DONTWAIT, NULL);

	u->rx_count = got > 0 ? got : 0;
	u->rx_next = 0;
	u->rx_off = 0;
	u->rx_seg = 0;
	/* The kernel rewrote the lengths and flags of the messages it filled
	 * (and perhaps of the one it stopped at): only those are readied
	 * again, by udp_recv before the next call. */
	u->rx_dirty = u->rx_count < RX_MSGS ? u->rx_count + 1 : RX_MSGS;
	return u->rx_count;
}

/* Splits read messages (GRO aggregates at their segment size) into packets. */
static int udp_recv(struct soft_link *l, struct soft_pkt *pkts, int n)
{
	struct udp_link *u = (struct udp_link *)l;
	struct soft_pkt meta;	/* only its addresses and IP fields */
	int out = 0;

	while (out < n) {
		struct msghdr *h;
		size_t len, seg;

		if (u->rx_next == u->rx_count) {
			if (out)
				break;
			for (int i = 0; i < u->rx_dirty; i++)
				ready_rx_msg(u, i);
			if (read_batch(u) == 0)
				break;
		}
		h = &u->rx_msgs[u->rx_next].msg_hdr;
		len = u->rx_msgs[u->rx_next].msg_len;
		seg = (size_t)gro_size(h);
		if (!seg || seg > len)
			seg = len;
		/* What the segments of one aggregate share, parsed once. */
		from_sockaddr(&u->rx_names[u->rx_next], &meta.src);
		meta.dst = l->local;
		meta.ecn = meta.tos = meta.ttl = 0;
		meta.flow_label = 0;
		parse_cmsgs(h, &meta);
		while (out < n && u->rx_off < len) {
			struct soft_pkt *pk = &pkts[out++];
			size_t this = len - u->rx_off < seg ? len - u->rx_off : seg;

			if (this > sizeof(pk->buf) || (h->msg_flags & MSG_TRUNC))
				this = 0;	/* larger than any RoCE packet: dropped */
			/* Handled where it lies, before the next read_batch. */
			pk->rx_bytes = (uint8_t *)u->rx_iov[u->rx_next].iov_base + u->rx_off;
			pk->len = this;
			pk->src = meta.src;
			pk->dst = meta.dst;
			pk->ecn = meta.ecn;
			pk->tos = meta.tos;
			pk->ttl = meta.ttl;
			pk->flow_label = meta.flow_label;
			pk->ip_id = u->rx_seg++;
			u->rx_off += seg;
		}
		if (u->rx_off >= len) {
			u->rx_next++;
			u->rx_off = 0;
			u->rx_seg = 0;
		}
	}
	return out;
}

static uint32_t udp_qp_backlog(struct soft_link *l, int slot)
{
	struct udp_link *u = (struct udp_link *)l;
	int queued = 0;

	/* SIOCOUTQ on UDP: bytes of ours still in the socket and the qdisc. */
	if (u->qp_fd[slot] < 0 || ioctl(u->qp_fd[slot], SIOCOUTQ, &queued) < 0 || queued < 0)
		return 0;
	return (uint32_t)queued;
}

/* SO_MEMINFO: the socket's own drop count (sk_drops), as ss -m shows it. */
static uint64_t udp_rx_overflows(struct soft_link *l)
{
	struct udp_link *u = (struct udp_link *)l;
	uint32_t mem[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mem);

	if (u->rx_fd < 0 || getsockopt(u->rx_fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 ||
	    len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
		return 0;
	return mem[SK_MEMINFO_DROPS];
}

static void udp_wait(struct soft_link *l, uint64_t timeout_ns)
{
	struct udp_link *u = (struct udp_link *)l;
	struct pollfd p = { .fd = u->rx_fd, .events = POLLIN };
	struct timespec ts = { (time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u) };

	if (u->rx_next < u->rx_count)
		return;		/* read but not yet handed out */
	ppoll(&p, 1, &ts, NULL);
}

static void udp_close(struct soft_link *l)
{
	struct udp_link *u = (struct udp_link *)l;

	for (int i = 0; i < SOFT_MAX_QPS; i++)
		if (u->qp_fd[i] >= 0)
			close(u->qp_fd[i]);
	if (u->rx_fd >= 0)
		close(u->rx_fd);
	free(u->rx_bufs);
	free(u->tx_stage);
	free(u);
}

static const struct soft_link_ops udp_link_ops = {
	.qp_open = udp_qp_open,
	.qp_close = udp_qp_close,
	.send = udp_send,
	.recv = udp_recv,
	.qp_backlog = udp_qp_backlog,
	.rx_overflows = udp_rx_overflows,
	.wait = udp_wait,
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

/* The RoCE MTU the interface holding addr can carry (0 if unknown). */
static uint32_t interface_roce_mtu(const struct soft_addr *addr)
{
	struct ifaddrs *all, *i;
	uint32_t mtu = 0;

	if (getifaddrs(&all) < 0)
		return 0;
	for (i = all; i; i = i->ifa_next) {
		struct soft_addr a;
		struct ifreq ifr;
		int fd;

		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET &&
				     i->ifa_addr->sa_family != AF_INET6))
			continue;
		from_sockaddr((const struct sockaddr_storage *)(void *)i->ifa_addr, &a);
		if (memcmp(a.ip, addr->ip, 16))
			continue;
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->ifa_name);
		if (fd >= 0 && ioctl(fd, SIOCGIFMTU, &ifr) == 0)
			mtu = devinfo_roce_mtu((unsigned)ifr.ifr_mtu, addr->v6 ? AF_INET6 : AF_INET);
		if (fd >= 0)
			close(fd);
		break;
	}
	freeifaddrs(all);
	return mtu;
}

struct soft_link *soft_udp_open(const char *bind_addr, uint16_t port, bool port_fixed, char *err)
{
	struct udp_link *u = calloc(1, sizeof(*u));
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, rc;

	if (!u) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	for (int i = 0; i < SOFT_MAX_QPS; i++)
		u->qp_fd[i] = -1;
	u->rx_fd = -1;
	u->rx_dirty = RX_MSGS;
	u->pub.ops = &udp_link_ops;
	u->rx_bufs = malloc((size_t)RX_MSGS * RX_BUF_BYTES);
	u->tx_stage = malloc((size_t)SOFT_BATCH * SOFT_PKT_MAX);
	if (!u->rx_bufs || !u->tx_stage) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		goto fail;
	}
	u->gso = true;
	if (parse_addr(bind_addr, &u->pub.local) < 0) {
		snprintf(err, XPORT_ERR_LEN, "invalid address '%s' for the soft engine: give a "
			 "local IPv4 or IPv6 address", bind_addr);
		goto fail;
	}
	u->pub.local.port = port;
	u->pub.max_mtu = interface_roce_mtu(&u->pub.local);
	fd = socket(u->pub.local.v6 ? AF_INET6 : AF_INET,
		    SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, XPORT_ERR_LEN, "cannot create a UDP socket: %s", strerror(errno));
		goto fail;
	}
	u->rx_fd = fd;
	if (set_int(fd, SOL_SOCKET, SO_RCVBUFFORCE, RX_SOCK_BUF_BYTES) < 0)
		set_int(fd, SOL_SOCKET, SO_RCVBUF, RX_SOCK_BUF_BYTES);
	if (u->pub.local.v6) {
		set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1);
		set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
		set_int(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
		/* UD receives rebuild the GRH from these (soft_ud.c). */
		set_int(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1);
		set_int(fd, IPPROTO_IPV6, IPV6_FLOWINFO, 1);
		/* rxe and RNICs send a zero UDP checksum over IPv6 too. */
		set_int(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, 1);
	} else {
		set_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
		set_int(fd, IPPROTO_IP, IP_RECVTOS, 1);
		set_int(fd, IPPROTO_IP, IP_RECVTTL, 1);
	}
	/* GRO: the kernel hands over runs of packets as one aggregate. */
	u->gro = set_int(fd, SOL_UDP, UDP_GRO, 1) == 0;
	to_sockaddr(&u->pub.local, &ss, &len);
	rc = bind(fd, (struct sockaddr *)&ss, len);
	if (rc < 0 && errno == EADDRINUSE && !port_fixed) {
		/* Another soft engine owns 4791 on this address: take a free
		 * port, which the control channel advertises to the peer (a
		 * soft engine; RNICs only ever send to 4791). */
		u->pub.local.port = 0;
		to_sockaddr(&u->pub.local, &ss, &len);
		rc = bind(fd, (struct sockaddr *)&ss, len);
	}
	/* The port actually bound (port 0 asks for any free one). */
	if (rc == 0 && getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
		from_sockaddr(&ss, &u->pub.local);
	if (rc < 0) {
		if (errno == EADDRINUSE)
			snprintf(err, XPORT_ERR_LEN, "UDP port %u on %s is in use (another rdmakit, "
				 "or a kernel RoCE stack, owns it): pick another --udp-port, or bind "
				 "another local address with --bind", port, bind_addr);
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
