// SPDX-License-Identifier: MIT
/* The probe's UDP endpoint (see probe_int.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe_int.h"

int probe_link_open(struct probe_link *l, const char *addr, char *err)
{
	int one = 1, pmtu = IP_PMTUDISC_DO, tos = WIRE_ECT0;
	uint16_t ports[2] = { ROCEV2_UDP_PORT, 0 };
	socklen_t alen = sizeof(l->local);

	memset(l, 0, sizeof(*l));
	l->local.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &l->local.sin_addr) != 1)
		return snprintf(err, XPORT_ERR_LEN, "the probe reaches its remote from %s, and "
				"probes run over IPv4 only: give an IPv4 HOST", addr), -1;
	l->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return snprintf(err, XPORT_ERR_LEN, "UDP socket: %s", strerror(errno)), -1;
	/* ECT(0) as a RoCEv2 sender's data packets carry it; DF, so ID 0. */
	if (setsockopt(l->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0 ||
	    setsockopt(l->fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0 ||
	    setsockopt(l->fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) < 0 ||
	    setsockopt(l->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0) {
		snprintf(err, XPORT_ERR_LEN, "UDP socket options: %s", strerror(errno));
		probe_link_close(l);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		l->local.sin_port = htons(ports[i]);
		if (bind(l->fd, (struct sockaddr *)&l->local, sizeof(l->local)) == 0)
			break;
		if (errno != EADDRINUSE || i == 1) {
			snprintf(err, XPORT_ERR_LEN, "binding UDP %s:%u: %s", addr, ports[i],
				 strerror(errno));
			probe_link_close(l);
			return -1;
		}
	}
	getsockname(l->fd, (struct sockaddr *)&l->local, &alen);
	/* A remote's stream (cnp_reaction) comes in bursts faster than one
	 * recvmsg a packet drains: room for a few MiB, as far as the host's
	 * net.core.rmem_max lets (a smaller buffer only costs retransmissions). */
	setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &(int){ 4 << 20 }, sizeof(int));
	return 0;
}

void probe_link_close(struct probe_link *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int probe_link_recv(struct probe_link *l, uint8_t *buf, size_t cap, size_t *len,
		    struct sockaddr_in *from, uint64_t *t_ns, uint8_t *tos, uint64_t wait_us)
{
	struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
	/* ppoll: a pacing wait of 100 us must not round up to poll's 1 ms. */
	const struct timespec wait = { .tv_sec = (time_t)(wait_us / 1000000u),
				       .tv_nsec = (long)(wait_us % 1000000u) * 1000 };
	char cbuf[256];
	struct iovec iov = { buf, cap };
	struct msghdr mh = {
		.msg_name = from, .msg_namelen = sizeof(*from), .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	ssize_t n;
	int rc = ppoll(&pfd, 1, &wait, NULL);

	if (rc <= 0)
		return rc < 0 && errno != EINTR ? -1 : 0;
	n = recvmsg(l->fd, &mh, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	*len = (size_t)n;
	*t_ns = realtime_ns();
	*tos = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			*t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		} else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS) {
			*tos = *(uint8_t *)CMSG_DATA(cm);
		}
	}
	return 1;
}

int probe_link_send(struct probe_link *l, const void *buf, size_t len,
		    const struct sockaddr_in *to, uint8_t ecn)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = {
		.msg_name = (void *)to, .msg_namelen = sizeof(*to), .msg_iov = &iov, .msg_iovlen = 1,
	};
	struct cmsghdr *cm;
	int tos = ecn & 3;

	/* The socket's own ToS is ECT(0); anything else goes with the packet. */
	if (ecn != WIRE_ECT0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_TOS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &tos, sizeof(tos));
	}
	return sendmsg(l->fd, &mh, 0) < 0 ? -1 : 0;
}

/* The send side's clock is the receive timestamps' (CLOCK_REALTIME). */
uint64_t probe_link_now_ns(void)
{
	return realtime_ns();
}

uint64_t probe_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t probe_deadline_ms(uint64_t ms)
{
	return probe_mono_us() / 1000u + ms;
}

int probe_ms_left(uint64_t deadline)
{
	uint64_t now = probe_deadline_ms(0);

	return now >= deadline ? 0 : (int)(deadline - now);
}
