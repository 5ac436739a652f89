// SPDX-License-Identifier: MIT
/*
 * The kernel's own UDP ceiling for RoCEv2-sized packets, the floor the soft
 * engine is measured against (bench/perf.sh): a sender process and a
 * receiver process, nothing else.
 *
 *   udp_ceiling [--mtu 1024|4096] [--small | --packets N] [--seconds S] [--addr A]
 *
 * Default (GSO): each send is one UDP_SEGMENT send of up to 64 KiB whose
 * segments are the size of a RoCEv2 WRITE Only packet's UDP payload (BTH 12
 * + RETH 16 + MTU + ICRC 4: 1056 at MTU 1024, 4128 at 4096), and the
 * receiver takes UDP GRO aggregates, as the engine does.  --small: 36-byte
 * datagrams (a 2-byte WRITE Only: BTH, RETH, 2 bytes padded to 4, ICRC),
 * 128 per sendmmsg and up to 64 per recvmmsg, no GSO: the message-rate floor.
 * --packets N (2..64): messages shaped like N-packet RDMA WRITEs of full
 * packets (FIRST with its RETH, then N - 1 packets 16 bytes shorter), sent
 * as the soft engine sends them: FIRST and the next packet as one UDP GSO
 * send, the other N - 2 as a second (only the last segment of a GSO send
 * may be shorter, so a WRITE shares a send with no other and FIRST ends
 * its run), 128 / N WRITEs per sendmmsg: the kernel's own floor for that
 * shape, one or two skbs per message.
 *
 * The receiver counts the segments it got from its first packet to the
 * sender's end marker (a 1-byte datagram); payload is counted as RDMA
 * payload (MTU bytes per segment, 2 per small datagram) so it compares with
 * rdmakit's BW.  One JSON line on stdout, with both processes' CPU seconds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROCE_HDRS (12 + 16 + 4)		/* BTH + RETH + ICRC */
#define SMALL_BYTES (ROCE_HDRS + 4)	/* 2 bytes of payload, padded to 4 */
#define BATCH 128			/* packets per sendmmsg, as the soft engine */
#define RX_MSGS 64			/* per recvmmsg, as the soft engine */
#define RX_BUF 65536
#define MAX_SEND 65000			/* bytes of one GSO send, below 64 KiB */

struct opts {
	unsigned mtu;
	int small;
	unsigned packets;		/* --packets: segments per WRITE-shaped send */
	double seconds;
	const char *addr;
};

/* What the receiver tells the parent through a pipe. */
struct rx_result {
	unsigned long long segments, bytes;
	double seconds, cpu_s;
	int gro_seen;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int die(const char *what)
{
	fprintf(stderr, "udp_ceiling: %s: %s\n", what, strerror(errno));
	exit(3);
}

/* The GRO segment size of a message, 0 when not an aggregate: UDP_GRO is
 * the only control message this socket asks for. */
static int gro_size(struct msghdr *h)
{
	struct cmsghdr *c = CMSG_FIRSTHDR(h);
	int v = 0;

	if (c && c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
		memcpy(&v, CMSG_DATA(c), sizeof(v));
	return v;
}

static void receive(int fd, int out, unsigned seg_bytes)
{
	static unsigned char bufs[RX_MSGS][RX_BUF];
	static union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl[RX_MSGS];
	struct mmsghdr msgs[RX_MSGS];
	struct iovec iov[RX_MSGS];
	struct rx_result r = { 0 };
	double t0 = 0, cpu0 = cpu_s();
	int done = 0;

	while (!done) {
		int n;

		for (int i = 0; i < RX_MSGS; i++) {
			iov[i] = (struct iovec){ bufs[i], RX_BUF };
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_control = ctl[i].buf;
			msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
		}
		n = recvmmsg(fd, msgs, RX_MSGS, MSG_WAITFORONE, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recvmmsg");
		if (!t0)
			t0 = now_s();
		for (int i = 0; i < n; i++) {
			unsigned len = msgs[i].msg_len;
			int seg = gro_size(&msgs[i].msg_hdr);

			if (len == 1) {
				done = 1;
				break;
			}
			r.gro_seen |= seg > 0;
			if (seg <= 0)
				seg = (int)seg_bytes;
			r.segments += (len + (unsigned)seg - 1) / (unsigned)seg;
			r.bytes += len;
		}
	}
	r.seconds = now_s() - t0;
	r.cpu_s = cpu_s() - cpu0;
	if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r))
		die("write");
}

static void send_for(int fd, const struct sockaddr_in *to, const struct opts *o, unsigned seg_bytes)
{
	static unsigned char buf[MAX_SEND];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl[2];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	/* A WRITE of N packets leaves as the soft engine sends it: FIRST (with
	 * its RETH) and one packet 16 bytes shorter as one GSO send, then the
	 * other N - 2 as a second (only a GSO send's last segment may be
	 * shorter).  The plain GSO mode: one 64 KiB send of equal segments. */
	unsigned writes = o->packets ? BATCH / o->packets : 0;
	unsigned per_write = o->packets > 2 ? 2 : 1;
	int per_call = o->small ? BATCH : o->packets ? (int)(writes * per_write) : 1;
	size_t sizes[2] = { o->small ? seg_bytes : (MAX_SEND / seg_bytes) * seg_bytes, 0 };
	uint16_t gso[2] = { (uint16_t)seg_bytes, (uint16_t)(seg_bytes - 16) };
	double end = now_s() + o->seconds;
	unsigned char one = 0;

	if (o->packets) {
		sizes[0] = 2 * (size_t)seg_bytes - 16;
		sizes[1] = (size_t)(o->packets - 2) * (seg_bytes - 16);
	}
	memset(buf, 0xA5, sizeof(buf));
	for (int i = 0; i < per_call; i++) {
		int part = o->packets ? (int)((unsigned)i % per_write) : 0;

		iov[i] = (struct iovec){ buf, sizes[part] };
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_name = (void *)to;
		msgs[i].msg_hdr.msg_namelen = sizeof(*to);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		if (!o->small) {
			/* Messages of one part share one copy of their control bytes. */
			struct cmsghdr *c;

			msgs[i].msg_hdr.msg_control = ctl[part].buf;
			msgs[i].msg_hdr.msg_controllen = sizeof(ctl[part].buf);
			c = CMSG_FIRSTHDR(&msgs[i].msg_hdr);
			c->cmsg_level = SOL_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(gso[part]));
			memcpy(CMSG_DATA(c), &gso[part], sizeof(gso[part]));
		}
	}
	while (now_s() < end) {
		/* GSO: one 64 KiB send per call; small and WRITE-shaped: a
		 * batch per call. */
		int rc = per_call > 1 ? sendmmsg(fd, msgs, (unsigned)per_call, 0)
				      : (int)sendmsg(fd, &msgs[0].msg_hdr, 0);

		if (rc < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			die(o->small ? "sendmmsg" : "sendmsg (UDP GSO)");
	}
	/* The end marker, a few times: the receiver may be dropping. */
	for (int i = 0; i < 50; i++) {
		sendto(fd, &one, 1, 0, (const struct sockaddr *)to, sizeof(*to));
		usleep(2000);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: udp_ceiling [--mtu 1024|4096] [--small | --packets 2..64] "
		"[--seconds S] [--addr IPV4]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .mtu = 4096, .seconds = 5, .addr = "127.0.0.1" };
	struct sockaddr_in to = { .sin_family = AF_INET };
	socklen_t len = sizeof(to);
	struct rx_result r;
	int rx, tx, pfd[2], one = 1, big = 64 << 20, status;
	unsigned seg_bytes;
	double tx_cpu0;
	pid_t pid;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--small"))
			o.small = 1;
		else if (!strcmp(argv[i], "--packets") && i + 1 < argc) {
			char *endp;
			unsigned long v = strtoul(argv[++i], &endp, 10);

			if (*endp || v < 2 || v > 64)	/* the fewest GSO segments a kernel takes */
				return usage();
			o.packets = (unsigned)v;
		}
		else if (!strcmp(argv[i], "--mtu") && i + 1 < argc)
			o.mtu = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			o.seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--addr") && i + 1 < argc)
			o.addr = argv[++i];
		else
			return usage();
	}
	if ((o.mtu != 1024 && o.mtu != 4096) || o.seconds <= 0 ||
	    (o.packets && (o.small ||
			   (size_t)(o.packets - 2) * (o.mtu + ROCE_HDRS - 16) > MAX_SEND)) ||
	    inet_pton(AF_INET, o.addr, &to.sin_addr) != 1)
		return usage();
	seg_bytes = o.small ? SMALL_BYTES : o.mtu + ROCE_HDRS;
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	if (rx < 0 || bind(rx, (struct sockaddr *)&to, sizeof(to)) < 0 ||
	    getsockname(rx, (struct sockaddr *)&to, &len) < 0)
		die("receiving socket");
	if (setsockopt(rx, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (!o.small)
		setsockopt(rx, SOL_UDP, UDP_GRO, &one, sizeof(one));
	if (pipe(pfd) < 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(pfd[0]);
		receive(rx, pfd[1], seg_bytes);
		_exit(0);
	}
	close(pfd[1]);
	close(rx);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (tx < 0)
		die("sending socket");
	if (setsockopt(tx, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	tx_cpu0 = cpu_s();
	usleep(100000);		/* the receiver is in recvmmsg */
	send_for(tx, &to, &o, seg_bytes);
	if (read(pfd[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		die("the receiver's result");
	waitpid(pid, &status, 0);
	{
		double payload = (double)r.segments * (o.small ? 2 : o.mtu);
		double tx_cpu = cpu_s() - tx_cpu0;

		printf("{\"mode\":\"%s\",\"mtu\":%u,\"segment_bytes\":%u,\"seconds\":%.3f,"
		       "\"segments\":%llu,\"gro\":%s,\"payload_gbps\":%.3f,\"mpps\":%.4f,"
		       "\"cpu_s\":%.3f,\"cpu_s_per_gb\":%.3f}\n",
		       o.small ? "small" : o.packets ? "write" : "gso", o.mtu,
		       seg_bytes, r.seconds, r.segments, r.gro_seen ? "true" : "false",
		       payload * 8 / r.seconds / 1e9, (double)r.segments / r.seconds / 1e6,
		       r.cpu_s + tx_cpu, payload > 0 ? (r.cpu_s + tx_cpu) / (payload / 1e9) : 0);
	}
	return 0;
}
