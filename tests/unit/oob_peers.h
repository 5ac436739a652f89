/* SPDX-License-Identifier: MIT */
/*
 * The control-channel tests' peers (test_oob.c, test_oob_peers.c): a
 * thread running the real oob API as a server, a "raw" thread that plays a
 * foreign, older or broken program byte by byte, and small helpers.
 * (Functions are static and marked unused: each test file uses a part.)
 */
#ifndef RDMAKIT_TEST_OOB_PEERS_H
#define RDMAKIT_TEST_OOB_PEERS_H

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "oob.h"
#include "unit.h"

#ifndef RDMAKIT_VERSION
#define RDMAKIT_VERSION "unknown"
#endif

/* Long enough never to fire in a passing run, short enough not to hang CI. */
#define LONG_MS 3000

static __attribute__((unused)) int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static __attribute__((unused)) void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A port nobody listens on right now (bound, read, released). */
static __attribute__((unused)) uint16_t free_port(void)
{
	char err[XPORT_ERR_LEN];
	uint16_t port;
	int fd;

	if (oob_listen("127.0.0.1", 0, &fd, err) < 0)
		return 0;
	port = oob_listen_port(fd);
	close(fd);
	return port;
}

/* One client through a one-off gate (no key, no stop flag), as a server's
 * own gate would take it: 0, or -1 (timed out, or refused) with err. */
static __attribute__((unused)) int accept_one(int lfd, int timeout_ms, struct oob *o, char *err)
{
	struct oob_gate *g = oob_gate_new(lfd, 1, NULL, err);
	int rc = g ? oob_gate_accept(g, timeout_ms, NULL, o, err) : -1;

	oob_gate_free(g);
	o->timeout_ms = timeout_ms;
	return rc == 0 ? 0 : -1;
}

/* --- a peer thread using the oob API ------------------------------------- */

struct srv {
	int lfd;
	uint16_t port;
	void (*fn)(struct srv *s, struct oob *o);
	int rc;			/* -1 when a step failed */
	char err[XPORT_ERR_LEN];
	char peer[OOB_PEER_LEN];
	char peer_version[OOB_VERSION_LEN];
	char params[128];
	uint8_t *buf;		/* scratch, OOB_MAX_PAYLOAD + 1 bytes */
	size_t len;
	struct xport_qp_info qp[8];
	unsigned n_qp;
	pthread_t th;
};

static __attribute__((unused)) void *srv_main(void *arg)
{
	struct srv *s = arg;
	struct oob o;

	s->rc = accept_one(s->lfd, LONG_MS, &o, s->err);
	if (s->rc == 0) {
		snprintf(s->peer, sizeof(s->peer), "%s", o.peer);
		s->fn(s, &o);
		oob_close(&o);
	}
	return NULL;
}

static __attribute__((unused)) int srv_start(struct srv *s, const char *addr, void (*fn)(struct srv *, struct oob *))
{
	char err[XPORT_ERR_LEN];

	memset(s, 0, sizeof(*s));
	s->fn = fn;
	s->buf = calloc(1, OOB_MAX_PAYLOAD + 1);
	if (!s->buf || oob_listen(addr, 0, &s->lfd, err) < 0) {
		printf("# listen on %s: %s\n", addr ? addr : "any", s->buf ? err : "no memory");
		free(s->buf);
		return -1;
	}
	s->port = oob_listen_port(s->lfd);
	if (pthread_create(&s->th, NULL, srv_main, s)) {
		close(s->lfd);
		free(s->buf);
		return -1;
	}
	return 0;
}

static __attribute__((unused)) void srv_join(struct srv *s)
{
	pthread_join(s->th, NULL);
	close(s->lfd);
	free(s->buf);
}

/* --- a raw peer thread: plays a foreign or broken program ----------------- */

struct raw {
	int lfd;		/* accept here; -1: connect to 127.0.0.1:port */
	uint16_t port;
	bool read_first;	/* read the other side's opening before writing */
	const void *bytes;	/* then write these */
	size_t n;
	bool close_now;		/* close right after writing, else wait for EOF */
	uint8_t seen[1024];	/* what the other side sent */
	size_t n_seen;
	pthread_t th;
};

/* Appends what arrives within ms to r->seen; false on EOF or timeout. */
static __attribute__((unused)) bool raw_read(struct raw *r, int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t junk[512];
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return false;
	if (r->n_seen < sizeof(r->seen))
		n = read(fd, r->seen + r->n_seen, sizeof(r->seen) - r->n_seen);
	else
		n = read(fd, junk, sizeof(junk));
	if (n <= 0)
		return false;
	if (r->n_seen < sizeof(r->seen))
		r->n_seen += (size_t)n;
	return true;
}

static __attribute__((unused)) void *raw_main(void *arg)
{
	struct raw *r = arg;
	int fd;

	if (r->lfd >= 0) {
		struct pollfd p = { .fd = r->lfd, .events = POLLIN };

		if (poll(&p, 1, LONG_MS) <= 0)
			return NULL;
		fd = accept(r->lfd, NULL, NULL);
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(r->port),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		return NULL;
	/* Our side always opens with its 16 bytes: read them. */
	while (r->read_first && r->n_seen < OOB_OPENING_LEN && raw_read(r, fd, LONG_MS))
		;
	if (r->n && write(fd, r->bytes, r->n) != (ssize_t)r->n)
		r->n_seen = 0;
	/*
	 * Holding the connection until the other side closes keeps our close
	 * from resetting it while it still reads (which would turn the
	 * behaviour under test into a race).
	 */
	while (!r->close_now && raw_read(r, fd, LONG_MS))
		;
	close(fd);
	return NULL;
}

/* A raw server on 127.0.0.1; its port in r->port. */
static __attribute__((unused)) int raw_serve(struct raw *r, const void *bytes, size_t n, bool read_first,
		     bool close_now)
{
	char err[XPORT_ERR_LEN];

	memset(r, 0, sizeof(*r));
	if (oob_listen("127.0.0.1", 0, &r->lfd, err) < 0) {
		printf("# listen: %s\n", err);
		return -1;
	}
	r->port = oob_listen_port(r->lfd);
	r->bytes = bytes;
	r->n = n;
	r->read_first = read_first;
	r->close_now = close_now;
	return pthread_create(&r->th, NULL, raw_main, r) ? -1 : 0;
}

/* A raw client of 127.0.0.1:port. */
static __attribute__((unused)) int raw_client(struct raw *r, uint16_t port, const void *bytes, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->lfd = -1;
	r->port = port;
	r->bytes = bytes;
	r->n = n;
	return pthread_create(&r->th, NULL, raw_main, r) ? -1 : 0;
}

static __attribute__((unused)) void raw_join(struct raw *r)
{
	pthread_join(r->th, NULL);
	if (r->lfd >= 0)
		close(r->lfd);
}

/* A control message header, as a foreign or broken peer would write it. */
static __attribute__((unused)) size_t mk_hdr(uint8_t *p, const char *magic, uint16_t ver, uint16_t type, uint32_t len)
{
	memcpy(p, magic, 4);
	p[4] = (uint8_t)(ver >> 8);
	p[5] = (uint8_t)ver;
	p[6] = (uint8_t)(type >> 8);
	p[7] = (uint8_t)type;
	p[8] = (uint8_t)(len >> 24);
	p[9] = (uint8_t)(len >> 16);
	p[10] = (uint8_t)(len >> 8);
	p[11] = (uint8_t)len;
	return OOB_HDR_LEN;
}

static __attribute__((unused)) int connect_to(uint16_t port, int ms, struct oob *o, char *err)
{
	return oob_connect("127.0.0.1", port, ms, o, err);
}

#endif
