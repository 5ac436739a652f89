/* SPDX-License-Identifier: MIT */
/*
 * rdmakit's side of perftest's exchange (lib/perf/pt_session.c) against a
 * scripted perftest over real TCP on loopback: the peer's messages laid
 * out byte by byte from ../shared/reference/perftest-oob.md §3-§11, some
 * split into two writes (a short read must not break us), a peer that
 * closes early, the 6.28+ negotiation (a mismatch named, a 312-byte
 * struct measured and answered), and 26.01.5's unconditional one against
 * a 6.06 announcement.  The soft engine opens QPs on loopback; no data
 * moves (the scripted peer has no QPs).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"
#include "pt_wire.h"
#include "unit.h"

#define STEP_MS 3000

enum kind { RD, WR, WR_SPLIT, CLOSE, RD_EOF };

struct step {
	enum kind kind;
	size_t len;
	const void *bytes;		/* WR: what to send (NULL: zeros) */
};

struct peer {
	bool is_server;			/* listens (the test runs an rdmakit client) */
	uint16_t port;
	int lfd;
	const struct step *steps;
	size_t nsteps;
	uint8_t got[4096];		/* everything read, in order */
	size_t ngot;
	int failed_step;		/* -1: all done */
	pthread_t th;
};

static bool read_n(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, STEP_MS) <= 0)
			return false;
		r = recv(fd, buf + got, n - got, 0);
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	int fd;

	if (p->is_server) {
		struct pollfd pl = { .fd = p->lfd, .events = POLLIN };

		fd = poll(&pl, 1, STEP_MS) > 0 ? accept(p->lfd, NULL, NULL) : -1;
	} else {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p->port) };

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		for (int i = 0; i < 100 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0; i++) {
			struct timespec ts = { 0, 20000000 };

			close(fd);
			fd = socket(AF_INET, SOCK_STREAM, 0);
			nanosleep(&ts, NULL);
		}
	}
	p->failed_step = fd < 0 ? 0 : -1;
	for (size_t i = 0; fd >= 0 && i < p->nsteps && p->failed_step < 0; i++) {
		const struct step *s = &p->steps[i];
		uint8_t zeros[512] = { 0 };
		const uint8_t *b = s->bytes ? s->bytes : zeros;
		bool ok = true;

		switch (s->kind) {
		case RD:
			ok = p->ngot + s->len <= sizeof(p->got) && read_n(fd, p->got + p->ngot, s->len);
			p->ngot += ok ? s->len : 0;
			break;
		case WR:
			ok = send(fd, b, s->len, MSG_NOSIGNAL) == (ssize_t)s->len;
			break;
		case WR_SPLIT: {	/* two segments, 20 ms apart */
			struct timespec ts = { 0, 20000000 };

			ok = send(fd, b, 3, MSG_NOSIGNAL) == 3;
			nanosleep(&ts, NULL);
			ok = ok && send(fd, b + 3, s->len - 3, MSG_NOSIGNAL) == (ssize_t)(s->len - 3);
			break;
		}
		case CLOSE:
			close(fd);
			fd = -1;
			break;
		case RD_EOF: {
			uint8_t junk[64];
			struct pollfd pf = { .fd = fd, .events = POLLIN };

			ok = poll(&pf, 1, STEP_MS) > 0 && recv(fd, junk, sizeof(junk), 0) == 0;
			break;
		}
		}
		if (!ok)
			p->failed_step = (int)i;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int peer_start(struct peer *p, bool is_server, uint16_t port, const struct step *steps,
		      size_t n)
{
	char err[XPORT_ERR_LEN];

	memset(p, 0, sizeof(*p));
	p->is_server = is_server;
	p->port = port;
	p->steps = steps;
	p->nsteps = n;
	p->lfd = -1;
	if (is_server) {
		if (oob_listen("127.0.0.1", 0, &p->lfd, err) < 0)
			return -1;
		p->port = oob_listen_port(p->lfd);
	}
	return pthread_create(&p->th, NULL, peer_main, p);
}

static void peer_join(struct peer *p)
{
	pthread_join(p->th, NULL);
	if (p->lfd >= 0)
		close(p->lfd);
}

/* A free UDP port for the soft engine (tests may run side by side). */
static uint16_t free_udp_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	uint16_t port = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void base_opts(struct perf_opts *o, bool latency)
{
	memset(o, 0, sizeof(*o));
	o->op = PERF_WRITE;
	o->latency = latency;
	o->size = latency ? 2 : 65536;
	o->iters = 1000;
	o->qps = 1;
	o->tx_depth = 16;
	o->rx_depth = 16;
	o->outs = 16;
	o->qp_timeout = 14;
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->timeout_s = 3;
	o->engine = "soft";
	o->bind = "127.0.0.1";
	o->udp_port = free_udp_port();
	o->gid_index = -1;
	o->host = "127.0.0.1";
}

/* A perftest key for a QP of "ours" (no QP really behind it). */
static const char *fake_key(void)
{
	static char k[PT_KEY_LEN_GID];
	struct pt_key key = { .out_reads = 1, .qpn = 0x11, .psn = 0x123456, .rkey = 0x3a3,
			      .vaddr = 0x7f7b93a32000ULL,
			      .gid = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1 } };

	pt_key_build(&key, true, k);
	return k;
}

static const uint8_t v606[16] = "6.06", v629[16] = "6.29", v628[16] = "6.28";
static const uint8_t page[4] = { 0, 0, 0x10, 0 }, line[4] = { 0, 0, 0, 64 }, mtu3[2] = "3";

/* The prefix of §3 up to the MTU, as a perftest server answers it. */
#define PREFIX(version)                                                              \
	{ RD, 16, NULL }, { WR_SPLIT, 16, version }, { RD, 4, NULL }, { WR, 4, page },    \
	{ RD, 4, NULL }, { WR, 4, line }, { RD, 2, NULL }, { WR, 2, mtu3 }
#define KEY_XCHG { RD, PT_KEY_LEN_GID, NULL }, { WR, PT_KEY_LEN_GID, NULL /* set below */ }

/* ib_write_bw 6.06 as the server (§9.1): K(1), K(1), S; at the end S, R, S. */
static void test_client_write_bw_606(struct unit *u)
{
	struct step steps[] = {
		PREFIX(v606), KEY_XCHG, KEY_XCHG, KEY_XCHG,
		KEY_XCHG,	/* the closing S ... */
		{ RD, 8, NULL }, { WR, 8, NULL }, { RD, 8, NULL }, { WR, 8, NULL },
		{ RD, 8, NULL }, { WR, 8, NULL }, { RD, 8, NULL }, { WR, 8, NULL },
		{ RD, 8, NULL }, { WR, 8, NULL },	/* R */
		KEY_XCHG,	/* X */
		{ WR, 5, "done" },	/* 6.06's trailing "done\0", never read */
		{ RD_EOF, 0, NULL },
	};
	struct perf_session *s = NULL;
	struct perf_peer_proto pp;
	char err[XPORT_ERR_LEN] = "";
	struct perf_opts o;
	struct peer p;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i].kind == WR && steps[i].len == PT_KEY_LEN_GID)
			steps[i].bytes = fake_key();
	base_opts(&o, false);
	if (peer_start(&p, true, 0, steps, sizeof(steps) / sizeof(steps[0])) < 0) {
		u->failures++;
		return;
	}
	o.port = p.port;
	CHECK_EQ(u, perf_open(&s, PERF_CLIENT, &o, err), 0);
	if (s) {
		perf_peer_protocol(s, &pp);
		CHECK(u, pp.perftest && !pp.negotiated);
		CHECK_STR(u, pp.version, "6.06");
		CHECK(u, perf_advisory(s) != NULL);
		perf_close(s);
	}
	peer_join(&p);
	CHECK_EQ(u, p.failed_step, -1);
	if (p.failed_step != -1)
		printf("#   err: %s\n", err);
	/* Our opening: "6.06", NULs, and rdmakit's marker in the padding. */
	CHECK(u, !memcmp(p.got, "6.06\0\0\0\0RDMK", 12));
	/* The system data big-endian, the MTU a digit and a NUL (soft on lo: 4096). */
	CHECK(u, p.got[16] == 0 && p.got[17] == 0 && (p.got[18] || p.got[19]));
	CHECK(u, p.got[24 + 1] == 0);
	/* Every key is 108 bytes of perftest's GID format, the same QP 0 key each time. */
	{
		const char *k0 = (const char *)p.got + 26;
		struct pt_key k;

		CHECK_EQ(u, pt_key_parse(k0, PT_KEY_LEN_GID, true, &k, err), 0);
		CHECK(u, pt_gid_v4mapped(k.gid) && k.gid[12] == 127);
		CHECK_EQ(u, k.out_reads, 1);
		for (int i = 1; i < 4; i++)
			CHECK(u, !memcmp(k0, k0 + i * PT_KEY_LEN_GID, PT_KEY_LEN_GID));
	}
}

/* A server whose GID is IPv6 where ours is IPv4-mapped: perftest would
 * refuse the pair too ("Incompatibility issue with GID types"); we name
 * the fix and close without waiting. */
static void test_client_gid_family(struct unit *u)
{
	static char v6key[PT_KEY_LEN_GID];
	struct pt_key key = { .out_reads = 1, .qpn = 0x11, .psn = 1, .rkey = 1, .vaddr = 0x1000,
			      .gid = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 } };
	const struct step steps[] = { PREFIX(v606), { RD, PT_KEY_LEN_GID, NULL },
				      { WR, PT_KEY_LEN_GID, v6key }, { RD_EOF, 0, NULL } };
	struct perf_session *s = NULL;
	char err[XPORT_ERR_LEN] = "";
	struct perf_opts o;
	struct peer p;

	pt_key_build(&key, true, v6key);
	base_opts(&o, false);
	if (peer_start(&p, true, 0, steps, sizeof(steps) / sizeof(steps[0])) < 0) {
		u->failures++;
		return;
	}
	o.port = p.port;
	CHECK_EQ(u, perf_open(&s, PERF_CLIENT, &o, err), -1);
	CHECK_HAS(u, err, "uses an IPv6 GID and this side an IPv4 one");
	CHECK_HAS(u, err, "-x INDEX or --ipv6");
	peer_join(&p);
	CHECK_EQ(u, p.failed_step, -1);
}

/* A server that hangs up after the version (a 26.01.5 or a crash): one
 * line, no hang. */
static void test_client_peer_closes(struct unit *u)
{
	const struct step steps[] = { { RD, 16, NULL }, { WR, 16, v606 }, { RD, 4, NULL },
				      { CLOSE, 0, NULL } };
	struct perf_session *s = NULL;
	char err[XPORT_ERR_LEN] = "";
	struct perf_opts o;
	struct peer p;

	base_opts(&o, false);
	if (peer_start(&p, true, 0, steps, 4) < 0) {
		u->failures++;
		return;
	}
	o.port = p.port;
	CHECK_EQ(u, perf_open(&s, PERF_CLIENT, &o, err), -1);
	CHECK_HAS(u, err, "perftest peer at 127.0.0.1");
	CHECK_HAS(u, err, "closed the connection");
	peer_join(&p);
}

/* perftest-26.01.5 negotiates whatever the peer announced: it reads a
 * struct where our 6.06 client sends its first key, then gives up. */
static void test_client_vs_2601(struct unit *u)
{
	const struct step steps[] = { PREFIX(v628), { RD, PT_KEY_LEN_GID, NULL }, { CLOSE, 0, NULL } };
	struct perf_session *s = NULL;
	char err[XPORT_ERR_LEN] = "";
	struct perf_opts o;
	struct peer p;

	base_opts(&o, false);
	if (peer_start(&p, true, 0, steps, sizeof(steps) / sizeof(steps[0])) < 0) {
		u->failures++;
		return;
	}
	o.port = p.port;
	CHECK_EQ(u, perf_open(&s, PERF_CLIENT, &o, err), -1);
	CHECK_HAS(u, err, "closed the connection");
	peer_join(&p);
	CHECK_EQ(u, p.failed_step, -1);
}

/* 6.29 both sides: the struct goes out (320 bytes by default) and a
 * server that runs another size is named with the option to change. */
static void test_client_negotiation_mismatch(struct unit *u)
{
	struct pt_negotiate n = { .verb = PT_VERB_WRITE, .tst = PT_TST_BW, .report_fmt = 1,
				  .size = 4096, .iters = 1000, .num_of_qps = 1, .duration = 5 };
	uint8_t theirs[PT_NEGOTIATE_LEN_DV];
	const struct step steps[] = { PREFIX(v629), { RD, PT_NEGOTIATE_LEN_DV, NULL },
				      { WR, PT_NEGOTIATE_LEN_DV, theirs }, { RD_EOF, 0, NULL } };
	struct perf_session *s = NULL;
	char err[XPORT_ERR_LEN] = "";
	struct pt_negotiate mine;
	struct perf_opts o;
	struct peer p;

	pt_negotiate_build(&n, sizeof(theirs), theirs);
	base_opts(&o, false);
	o.perftest_version = "6.29";
	if (peer_start(&p, true, 0, steps, sizeof(steps) / sizeof(steps[0])) < 0) {
		u->failures++;
		return;
	}
	o.port = p.port;
	CHECK_EQ(u, perf_open(&s, PERF_CLIENT, &o, err), -1);
	CHECK_HAS(u, err, "size: this side 65536, the peer 4096");
	CHECK_HAS(u, err, "give -s/-a the same on both sides");
	peer_join(&p);
	CHECK_EQ(u, p.failed_step, -1);
	CHECK(u, !memcmp(p.got, "6.29", 5));
	/* What we negotiated: write bw, 64 KiB, 1000 per QP, MB/s. */
	pt_negotiate_parse(p.got + 26, &mine);
	CHECK_EQ(u, mine.verb, PT_VERB_WRITE);
	CHECK_EQ(u, mine.tst, PT_TST_BW);
	CHECK_EQ(u, mine.size, 65536);
	CHECK_EQ(u, mine.iters, 1000);
	CHECK_EQ(u, mine.num_of_qps, 1);
	CHECK_EQ(u, mine.duration, 5);
	CHECK_EQ(u, mine.report_fmt, 1);
}

/* An rdmakit server and a 6.29 client built without mlx5dv (312 bytes):
 * the size is measured, the test adopted, the answer 312 bytes with the
 * client's 80 bytes of parameters echoed; then ib_send_lat's K(1), S, K(1). */
static void test_server_adopts_312(struct unit *u)
{
	struct pt_negotiate n = { .verb = PT_VERB_SEND, .tst = PT_TST_LAT, .report_fmt = 1,
				  .size = 64, .iters = 300, .num_of_qps = 1, .duration = 5,
				  .max_qp_rd_atom = 8 };
	uint8_t mine[PT_NEGOTIATE_LEN];
	struct step steps[] = {
		{ WR, 16, v629 }, { RD, 16, NULL }, { WR, 4, page }, { RD, 4, NULL },
		{ WR, 4, line }, { RD, 4, NULL }, { WR, 2, mtu3 }, { RD, 2, NULL },
		{ WR, PT_NEGOTIATE_LEN, mine }, { RD, PT_NEGOTIATE_LEN, NULL },
		{ WR, PT_KEY_LEN_GID, NULL }, { RD, PT_KEY_LEN_GID, NULL },	/* K(1) */
		{ WR, PT_KEY_LEN_GID, NULL }, { RD, PT_KEY_LEN_GID, NULL },	/* S */
		{ WR, PT_KEY_LEN_GID, NULL }, { RD, PT_KEY_LEN_GID, NULL },	/* K(1) */
		{ CLOSE, 0, NULL },
	};
	struct perf_session *s = NULL;
	char err[XPORT_ERR_LEN] = "";
	struct pt_negotiate back;
	struct perf_opts o;
	struct peer p;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (steps[i].kind == WR && steps[i].len == PT_KEY_LEN_GID)
			steps[i].bytes = fake_key();
	pt_negotiate_build(&n, sizeof(mine), mine);
	base_opts(&o, true);
	o.host = NULL;
	{
		int fd;

		/* A port for the server (released, then taken by perf_open). */
		if (oob_listen("127.0.0.1", 0, &fd, err) < 0) {
			u->failures++;
			return;
		}
		o.port = oob_listen_port(fd);
		close(fd);
	}
	if (peer_start(&p, false, o.port, steps, sizeof(steps) / sizeof(steps[0])) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, perf_open(&s, PERF_SERVER, &o, err), 0);
	if (s) {
		struct perf_peer_proto pp;

		perf_peer_protocol(s, &pp);
		CHECK(u, pp.perftest && pp.negotiated);
		CHECK_EQ(u, pp.struct_len, PT_NEGOTIATE_LEN);
		perf_close(s);
	}
	/* What the server adopted. */
	CHECK_EQ(u, o.op, PERF_SEND);
	CHECK_EQ(u, o.size, 64);
	CHECK_EQ(u, o.iters, 300);
	peer_join(&p);
	CHECK_EQ(u, p.failed_step, -1);
	if (p.failed_step != -1)
		printf("#   err: %s\n", err);
	CHECK(u, !memcmp(p.got, "6.29", 5));	/* the client's version echoed */
	CHECK(u, !memcmp(p.got + 26, mine, 80));
	pt_negotiate_parse(p.got + 26, &back);
	CHECK_EQ(u, back.max_qp_rd_atom, 16);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_client_write_bw_606);
	RUN(&u, test_client_peer_closes);
	RUN(&u, test_client_gid_family);
	RUN(&u, test_client_vs_2601);
	RUN(&u, test_client_negotiation_mismatch);
	RUN(&u, test_server_adopts_312);
	return unit_done(&u);
}
