// SPDX-License-Identifier: MIT
/*
 * inject: an off-path attacker for tests/offpath_netns.bats.  Sends RoCEv2
 * RDMA WRITE Only packets with valid ICRCs (built by the wire codec) from a
 * raw IPv4 socket, so the source address can be anyone's, at a soft engine:
 *
 *   inject SRC DST QPN SECONDS PPS [ud QKEY BYTES]
 *
 * With "ud": UD SEND Onlys of BYTES bytes of 0x66 under Q_Key QKEY (from a
 * guessed source QP) instead, which a UD QP takes from anyone.
 * QPN: the destination QP (a number, or "random" for a fresh guess per
 * packet); the rkey, the PSN and the address are guessed per packet.  It
 * prints one line, "sent N" (the packets the kernel took), and exits 0; 2
 * on bad arguments, 3 when the raw socket cannot be had (it needs
 * CAP_NET_RAW).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64: guesses, not secrets. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	uint8_t frame[8192], payload[4096];
	size_t payload_len = 64;
	bool ud = false;
	unsigned long qkey = 0;
	struct in_addr src;
	uint64_t seed = (uint64_t)now_ns() | 1, end, start, sent = 0, failed = 0;
	double seconds, pps;
	bool random_qpn;
	unsigned long qpn = 0;
	int fd, one = 1;

	if (argc == 9 && !strcmp(argv[6], "ud")) {
		ud = true;
		qkey = strtoul(argv[7], NULL, 0);
		payload_len = strtoul(argv[8], NULL, 0);
	}
	if ((argc != 6 && !ud) || inet_pton(AF_INET, argv[1], &src) != 1 ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1 ||
	    (seconds = atof(argv[4])) <= 0 || (pps = atof(argv[5])) <= 0 ||
	    payload_len > sizeof(payload)) {
		fprintf(stderr, "usage: inject SRC DST QPN|random SECONDS PPS [ud QKEY BYTES]\n");
		return 2;
	}
	random_qpn = !strcmp(argv[3], "random");
	if (!random_qpn)
		qpn = strtoul(argv[3], NULL, 0) & WIRE_PSN_MASK;
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)) < 0) {
		fprintf(stderr, "inject: no raw socket: %s (needs CAP_NET_RAW)\n", strerror(errno));
		return 3;
	}
	memset(payload, 0x66, sizeof(payload));
	start = now_ns();
	end = start + (uint64_t)(seconds * 1e9);
	for (uint64_t t = start; t < end; t = now_ns()) {
		struct wire_pkt p;
		size_t n;

		/* Paced: packet k leaves no earlier than k / pps after the start. */
		if ((double)(t - start) * pps / 1e9 < (double)(sent + failed))
			continue;
		memset(&p, 0, sizeof(p));
		p.encap = WIRE_ENCAP_ROCEV2;
		p.layers = WIRE_L_IPV4;
		p.ip4.frag = 0x4000;			/* DF, as RoCEv2 senders do */
		p.ip4.id = (uint16_t)(sent | 1);	/* nonzero: the kernel keeps it, and the ICRC covers it */
		p.ip4.ttl = 64;
		p.ip4.ecn = WIRE_ECT0;
		memcpy(p.ip4.src, &src, 4);
		memcpy(p.ip4.dst, &dst.sin_addr, 4);
		p.udp.sport = (uint16_t)(49152 + (next(&seed) & 0x3FFF));
		p.udp.dport = ROCEV2_UDP_PORT;
		p.bth.opcode = ud ? OP_UD_SEND_ONLY : OP_RC_WRITE_ONLY;
		p.bth.pkey = WIRE_DEFAULT_PKEY;
		p.bth.dqpn = random_qpn ? (uint32_t)(next(&seed) & WIRE_PSN_MASK) : (uint32_t)qpn;
		p.bth.psn = (uint32_t)(next(&seed) & WIRE_PSN_MASK);
		p.bth.ackreq = !ud;
		if (ud) {
			p.deth.qkey = (uint32_t)qkey;
			p.deth.srcqp = (uint32_t)(next(&seed) & WIRE_PSN_MASK);
		} else {
			p.reth.va = next(&seed) & 0x00007FFFFFFFF000ULL;
			p.reth.rkey = (uint32_t)next(&seed);
			p.reth.dmalen = (uint32_t)payload_len;
		}
		n = wire_build(frame, sizeof(frame), &p, payload, payload_len);
		if (n && sendto(fd, frame, n, 0, (struct sockaddr *)&dst, sizeof(dst)) == (ssize_t)n)
			sent++;
		else if (n)
			failed++, fprintf(stderr, "inject: sendto: %s\n", strerror(errno));
	}
	printf("sent %llu\n", (unsigned long long)sent);
	close(fd);
	return 0;
}
