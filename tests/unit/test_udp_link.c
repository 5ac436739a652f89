// SPDX-License-Identifier: MIT
/*
 * The soft engine's UDP link on loopback: what the host drops because our
 * receive buffer was full is counted exactly (the kernel's SO_RXQ_OVFL
 * count), so a loss the engine repairs is never a mystery.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "soft.h"
#include "unit.h"

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

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_rcvbuf_overflow_counted);
	return unit_done(&u);
}
