// SPDX-License-Identifier: MIT
/*
 * Control channel tests (lib/transport/oob.c) over real TCP on loopback.
 * Each test runs one side in the main thread and the other in a thread:
 * either the real oob API (a "server" thread) or a "raw" peer that writes
 * chosen bytes, which is how a foreign program, another protocol version
 * or a broken peer is played.  Ports are ephemeral (port 0), so parallel
 * runs do not collide.  Timeouts are a few hundred ms to keep the whole
 * file well under 5 s; timing checks allow generous slack for sanitizers.
 */
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

#include "ctl.h"
#include "oob.h"
#include "unit.h"

#ifndef RDMAKIT_VERSION
#define RDMAKIT_VERSION "unknown"
#endif

#include "oob_peers.h"

/* --- QP info fixtures --------------------------------------------------- */

static const struct xport_qp_info client_qps[] = {
	/* Largest QPN, first PSN, an IPv6 GID, the largest MTU. */
	{ .qpn = 0xFFFFFF, .psn = 0, .udp_port = 4791, .lid = 0xFFFF, .mtu = 4096,
	  .max_rd_atomic = 255,
	  .gid = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 } },
	/* QPN 0, last PSN, an IPv4-mapped GID (198.18.0.1), the smallest MTU. */
	{ .qpn = 0, .psn = 0xFFFFFF, .udp_port = 0, .lid = 0, .mtu = 256, .max_rd_atomic = 0,
	  .gid = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1 } },
	{ .qpn = 0x123456, .psn = 0xABCDEF, .udp_port = 65535, .lid = 1, .mtu = 1024,
	  .max_rd_atomic = 16,
	  .gid = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		   0xff, 0xff, 0xff } },
	{ .qpn = 0x000011, .psn = 0x800000, .udp_port = 4791, .lid = 0x1234, .mtu = 2048,
	  .max_rd_atomic = 1,
	  .gid = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 } },
};

static const struct xport_qp_info server_qps[] = {
	{ .qpn = 0x000101, .psn = 0x00abcd, .udp_port = 4791, .lid = 0, .mtu = 512,
	  .max_rd_atomic = 8, .gid = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 } },
	{ .qpn = 0x000102, .psn = 0xfffffe, .udp_port = 4791, .lid = 0, .mtu = 4096,
	  .max_rd_atomic = 8, .gid = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 } },
};

#define N_CLIENT (sizeof(client_qps) / sizeof(client_qps[0]))
#define N_SERVER (sizeof(server_qps) / sizeof(server_qps[0]))

static void check_qp_equal(struct unit *u, const struct xport_qp_info *got,
			   const struct xport_qp_info *want)
{
	CHECK_EQ(u, got->qpn, want->qpn);
	CHECK_EQ(u, got->psn, want->psn);
	CHECK(u, memcmp(got->gid, want->gid, 16) == 0);
	CHECK_EQ(u, got->udp_port, want->udp_port);
	CHECK_EQ(u, got->lid, want->lid);
	CHECK_EQ(u, got->mtu, want->mtu);
	CHECK_EQ(u, got->max_rd_atomic, want->max_rd_atomic);
}

/* --- tests --------------------------------------------------------------- */

static const char params_text[] = "op=write\nsize=65536\nqps=4\nmtu=4096\n";
static const char result_text[] = "{\"bw_avg_gbps\": 92.5, \"iterations\": 5000}";

/* The server half of a whole session, mirroring the client in test_session. */
static void srv_session(struct srv *s, struct oob *o)
{
	size_t len;

#define STEP(call)                       \
	do {                             \
		if ((call) < 0) {        \
			s->rc = -1;      \
			return;          \
		}                        \
	} while (0)
	STEP(oob_hello(o, true, s->err));
	snprintf(s->peer_version, sizeof(s->peer_version), "%s", o->peer_version);
	STEP(oob_recv(o, OOB_PARAMS, s->buf, OOB_MAX_PAYLOAD + 1, &s->len, s->err));
	snprintf(s->params, sizeof(s->params), "%s", (char *)s->buf);
	STEP(oob_send(o, OOB_PARAMS, "mtu=1024\n", 9, s->err));
	{
		json_t *m = ctl_recv(o, OOB_PARAMS, s->err);

		STEP(m ? ctl_qps_parse(m, s->qp, 8, &s->n_qp, s->err) : -1);
		json_decref(m);
	}
	STEP(ctl_send(o, OOB_PARAMS, ctl_qps_json(server_qps, N_SERVER), s->err));
	STEP(oob_barrier(o, 1, s->err));
	/* A maximum-size message, echoed back: short reads and writes on the way. */
	STEP(oob_recv(o, OOB_PARAMS, s->buf, OOB_MAX_PAYLOAD, &len, s->err));
	STEP(oob_send(o, OOB_RESULT, s->buf, len, s->err));
	STEP(oob_barrier(o, 0xFFFFFFFF, s->err));
	STEP(oob_send(o, OOB_RESULT, result_text, strlen(result_text), s->err));
	STEP(oob_bye(o, s->err));
#undef STEP
}

static void test_session(struct unit *u)
{
	struct xport_qp_info theirs[8];
	char err[XPORT_ERR_LEN] = "";
	uint8_t *big = malloc(OOB_MAX_PAYLOAD), *back = malloc(OOB_MAX_PAYLOAD + 1);
	char text[256];
	struct srv s;
	struct oob o;
	size_t len = 0, i;
	unsigned n = 0;
	json_t *m;

	CHECK(u, big && back);
	if (!big || !back || srv_start(&s, "127.0.0.1", srv_session) < 0) {
		u->failures++;
		free(big);
		free(back);
		return;
	}
	for (i = 0; i < OOB_MAX_PAYLOAD; i++)
		big[i] = (uint8_t)(i * 7 + (i >> 8));

	CHECK_EQ(u, connect_to(s.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, o.timeout_ms, LONG_MS);
	CHECK_EQ(u, oob_hello(&o, false, err), 0);
	CHECK_STR(u, o.peer_version, RDMAKIT_VERSION);
	CHECK_EQ(u, oob_send(&o, OOB_PARAMS, params_text, strlen(params_text), err), 0);
	CHECK_EQ(u, oob_recv(&o, OOB_PARAMS, text, sizeof(text), &len, err), 0);
	CHECK_EQ(u, len, 9);
	CHECK_STR(u, text, "mtu=1024\n");	/* NUL-terminated for us */
	CHECK_EQ(u, ctl_send(&o, OOB_PARAMS, ctl_qps_json(client_qps, N_CLIENT), err), 0);
	m = ctl_recv(&o, OOB_PARAMS, err);
	CHECK(u, m != NULL);
	CHECK_EQ(u, m ? ctl_qps_parse(m, theirs, 8, &n, err) : -1, 0);
	json_decref(m);
	CHECK_EQ(u, n, N_SERVER);
	for (i = 0; i < n && i < N_SERVER; i++)
		check_qp_equal(u, &theirs[i], &server_qps[i]);
	CHECK_EQ(u, oob_barrier(&o, 1, err), 0);
	CHECK_EQ(u, oob_send(&o, OOB_PARAMS, big, OOB_MAX_PAYLOAD, err), 0);
	CHECK_EQ(u, oob_recv(&o, OOB_RESULT, back, OOB_MAX_PAYLOAD + 1, &len, err), 0);
	CHECK_EQ(u, len, OOB_MAX_PAYLOAD);
	CHECK(u, memcmp(back, big, OOB_MAX_PAYLOAD) == 0);
	CHECK_EQ(u, oob_barrier(&o, 0xFFFFFFFF, err), 0);
	CHECK_EQ(u, oob_recv(&o, OOB_RESULT, text, sizeof(text), &len, err), 0);
	CHECK_STR(u, text, result_text);
	CHECK_EQ(u, oob_bye(&o, err), 0);
	if (err[0])
		printf("#   client: %s\n", err);
	oob_close(&o);
	oob_close(&o);		/* harmless twice */
	srv_join(&s);

	CHECK_EQ(u, s.rc, 0);
	if (s.rc)
		printf("#   server: %s\n", s.err);
	CHECK_STR(u, s.peer_version, RDMAKIT_VERSION);
	CHECK_HAS(u, s.peer, "127.0.0.1:");
	CHECK_EQ(u, s.len, strlen(params_text));
	CHECK_STR(u, s.params, params_text);
	CHECK_EQ(u, s.n_qp, N_CLIENT);
	for (i = 0; i < s.n_qp && i < N_CLIENT; i++)
		check_qp_equal(u, &s.qp[i], &client_qps[i]);
	free(big);
	free(back);
}

/* QP info as JSON (lib/perf/ctl.c): every field round trips, and what the parser refuses. */
static void test_qp_info_codec(struct unit *u)
{
	struct xport_qp_info back[N_CLIENT];
	char err[XPORT_ERR_LEN] = "";
	json_t *m = ctl_qps_json(client_qps, N_CLIENT), *q;
	unsigned n = 0, i;
	char *text;

	CHECK_EQ(u, ctl_qps_parse(m, back, N_CLIENT, &n, err), 0);
	CHECK_EQ(u, n, N_CLIENT);
	for (i = 0; i < n && i < N_CLIENT; i++)
		check_qp_equal(u, &back[i], &client_qps[i]);
	text = json_dumps(json_array_get(json_object_get(m, "qps"), 0), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(u, text, "{\"gid\":\"20010db8000000000000000000000001\",\"lid\":65535,"
			   "\"max_rd_atomic\":255,\"mtu\":4096,\"psn\":0,\"qpn\":16777215,"
			   "\"udp_port\":4791}");
	free(text);
	/* More entries than the caller can take. */
	CHECK_EQ(u, ctl_qps_parse(m, back, 2, &n, err), -1);
	CHECK_HAS(u, err, "too many QPs");
	/* Each field out of its range, or of the wrong type. */
	{
		static const char *const bad[][2] = {
			{ "qpn", "16777216" }, { "psn", "-1" },	       { "mtu", "1500" },
			{ "lid", "65536" },    { "udp_port", "70000" }, { "max_rd_atomic", "256" },
			{ "gid", "\"00\"" },   { "gid", "\"zz010db8000000000000000000000001\"" },
			{ "qpn", "\"1\"" },	 { "mtu", "4294967552" }, { "bogus", "1" },
		};

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			json_t *c = json_deep_copy(m);

			q = json_array_get(json_object_get(c, "qps"), 1);
			json_object_set_new(q, bad[i][0], json_loads(bad[i][1], JSON_DECODE_ANY, NULL));
			if (ctl_qps_parse(c, back, N_CLIENT, &n, err) != -1)
				printf("#   %s=%s accepted\n", bad[i][0], bad[i][1]);
			CHECK_EQ(u, ctl_qps_parse(c, back, N_CLIENT, &n, err), -1);
			json_decref(c);
		}
	}
	json_decref(m);
}

static void srv_gives_up(struct srv *s, struct oob *o)
{
	if (oob_hello(o, true, s->err) < 0) {
		s->rc = -1;
		return;
	}
	oob_send_error(o, "no RDMA device mlx5_9; run rdmakit devices");
}

static void test_error_propagation(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "", buf[64];
	struct srv s;
	struct oob o;
	size_t len = 99;

	if (srv_start(&s, "127.0.0.1", srv_gives_up) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(s.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), 0);
	CHECK_EQ(u, oob_recv(&o, OOB_PARAMS, buf, sizeof(buf), &len, err), -1);
	CHECK_STR(u, err, "peer: no RDMA device mlx5_9; run rdmakit devices");
	CHECK_EQ(u, len, 0);
	oob_close(&o);
	srv_join(&s);
	CHECK_EQ(u, s.rc, 0);
}

/* The server sends a message the client is not waiting for, or a wrong barrier. */
static void srv_out_of_step(struct srv *s, struct oob *o)
{
	if (oob_hello(o, true, s->err) < 0 ||
	    oob_send(o, OOB_RESULT, "{}", 2, s->err) < 0 ||
	    oob_send(o, OOB_BYE, NULL, 0, s->err) < 0) {
		s->rc = -1;
		return;
	}
	/* Both sides see the mismatch. */
	s->rc = oob_barrier(o, 2, s->err);
	oob_recv(o, OOB_BYE, s->buf, 16, &s->len, NULL);
}

static void test_out_of_step(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "", buf[64];
	struct srv s;
	struct oob o;
	size_t len;

	if (srv_start(&s, "127.0.0.1", srv_out_of_step) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(s.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), 0);
	CHECK_EQ(u, oob_recv(&o, OOB_PARAMS, buf, sizeof(buf), &len, err), -1);
	CHECK_HAS(u, err, "peer sent its result while we waited for its parameters");
	CHECK_EQ(u, oob_recv(&o, OOB_QP_INFO, buf, sizeof(buf), &len, err), -1);
	CHECK_HAS(u, err, "peer ended the session while we waited for its QP info");
	CHECK_EQ(u, oob_barrier(&o, 1, err), -1);
	CHECK_HAS(u, err, "peer reached barrier 2 while we are at barrier 1");
	oob_close(&o);
	srv_join(&s);
	CHECK_EQ(u, s.rc, -1);
	CHECK_HAS(u, s.err, "peer reached barrier 1 while we are at barrier 2");
}

/* Too big for the caller's buffer, and the ANY receive. */
static void srv_sends_200(struct srv *s, struct oob *o)
{
	memset(s->buf, 'x', 200);
	if (oob_hello(o, true, s->err) < 0 || oob_send(o, OOB_RESULT, s->buf, 200, s->err) < 0 ||
	    oob_send(o, OOB_RESULT, s->buf, 200, s->err) < 0)
		s->rc = -1;
	oob_recv(o, OOB_BYE, s->buf, 16, &s->len, NULL);
}

static void test_cap_and_any(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "", buf[256];
	enum oob_type type = OOB_ANY;
	struct srv s;
	struct oob o;
	size_t len;

	if (srv_start(&s, "127.0.0.1", srv_sends_200) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(s.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), 0);
	CHECK_EQ(u, oob_recv_msg(&o, &type, buf, 200, &len, err), 0);	/* exact fit */
	CHECK_EQ(u, type, OOB_RESULT);
	CHECK_EQ(u, len, 200);
	CHECK_EQ(u, oob_recv(&o, OOB_RESULT, buf, 100, &len, err), -1);
	CHECK_HAS(u, err, "peer's result is 200 bytes, more than the 100 we accept");
	/* Our own limits. */
	CHECK_EQ(u, oob_send(&o, OOB_PARAMS, buf, OOB_MAX_PAYLOAD + 1, err), -1);
	CHECK_HAS(u, err, "over the 65536-byte limit");
	CHECK_EQ(u, oob_send(&o, (enum oob_type)42, buf, 1, err), -1);
	CHECK_EQ(u, oob_send(&o, OOB_ANY, buf, 1, err), -1);
	oob_close(&o);
	CHECK_EQ(u, oob_send(&o, OOB_BYE, NULL, 0, err), -1);
	CHECK_HAS(u, err, "already closed");
	srv_join(&s);
	CHECK_EQ(u, s.rc, 0);
	CHECK_STR(u, oob_type_name(OOB_QP_INFO), "QP info");
}

/* A peer that never answers: the wait ends at the timeout, not before, not much after. */
static void srv_silent(struct srv *s, struct oob *o)
{
	if (oob_hello(o, true, s->err) < 0) {
		s->rc = -1;
		return;
	}
	/* Waits for a goodbye that never comes: sees the client go instead. */
	s->rc = oob_recv(o, OOB_BYE, s->buf, 16, &s->len, s->err);
}

static void test_timeouts(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "", buf[64];
	struct srv s;
	struct oob o;
	int64_t t0, dt;
	size_t len;
	int lfd;

	if (srv_start(&s, "127.0.0.1", srv_silent) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(s.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), 0);
	o.timeout_ms = 300;
	t0 = now_ms();
	CHECK_EQ(u, oob_recv(&o, OOB_RESULT, buf, sizeof(buf), &len, err), -1);
	dt = now_ms() - t0;
	CHECK(u, dt >= 295 && dt < 1000);
	CHECK_HAS(u, err, "timed out after 0.3 s waiting for the peer's result");
	oob_close(&o);
	srv_join(&s);
	CHECK_EQ(u, s.rc, -1);
	CHECK_HAS(u, s.err, "peer closed the control connection while we waited for its goodbye");

	/* Nobody connects. */
	CHECK_EQ(u, oob_listen("127.0.0.1", 0, &lfd, err), 0);
	t0 = now_ms();
	CHECK_EQ(u, accept_one(lfd, 200, &o, err), -1);
	dt = now_ms() - t0;
	CHECK(u, dt >= 195 && dt < 900);
	CHECK_HAS(u, err, "no client connected within 0.2 s");
	close(lfd);

	/* Nobody listens: refused until the timeout, then one clear line. */
	t0 = now_ms();
	CHECK_EQ(u, connect_to(free_port(), 300, &o, err), -1);
	dt = now_ms() - t0;
	CHECK(u, dt >= 295 && dt < 1000);
	CHECK_HAS(u, err, "no rdmakit server at 127.0.0.1:");
	CHECK_HAS(u, err, "after 0.3 s (connection refused)");
	CHECK_EQ(u, o.fd, -1);

	CHECK_EQ(u, oob_connect("no-such-host.invalid", 1, 300, &o, err), -1);
	CHECK_HAS(u, err, "cannot resolve no-such-host.invalid");
}

/* Client started first: it retries "refused" until the server listens. */
struct early {
	uint16_t port;
	int rc;
	int64_t waited;
	char err[XPORT_ERR_LEN];
};

static void *early_client(void *arg)
{
	struct early *e = arg;
	int64_t t0 = now_ms();
	struct oob o;

	e->rc = connect_to(e->port, LONG_MS, &o, e->err);
	e->waited = now_ms() - t0;
	if (e->rc == 0) {
		e->rc = oob_hello(&o, false, e->err);
		if (e->rc == 0)
			e->rc = oob_barrier(&o, 7, e->err);
		oob_close(&o);
	}
	return NULL;
}

static void test_client_first(struct unit *u)
{
	struct early e = { .port = free_port(), .rc = -1 };
	char err[XPORT_ERR_LEN] = "";
	pthread_t th;
	struct oob o;
	int lfd = -1;

	CHECK(u, e.port != 0);
	if (pthread_create(&th, NULL, early_client, &e)) {
		u->failures++;
		return;
	}
	sleep_ms(300);
	CHECK_EQ(u, oob_listen("127.0.0.1", e.port, &lfd, err), 0);
	CHECK_EQ(u, accept_one(lfd, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, true, err), 0);
	CHECK_EQ(u, oob_barrier(&o, 7, err), 0);
	pthread_join(th, NULL);
	oob_close(&o);
	if (lfd >= 0)
		close(lfd);
	CHECK_EQ(u, e.rc, 0);
	if (e.rc)
		printf("#   client: %s\n", e.err);
	CHECK(u, e.waited >= 250);

	/* SO_REUSEADDR: the port is free again right away for the next run. */
	CHECK_EQ(u, oob_listen("127.0.0.1", e.port, &lfd, err), 0);
	if (lfd >= 0)
		close(lfd);
}

/* A wait interrupted by a signal resumes, unless the caller's stop flag is set. */
static volatile sig_atomic_t stop_flag;

static void on_usr1(int sig)
{
	(void)sig;
}

struct poker {
	pthread_t target;
};

static void *poke(void *arg)
{
	struct poker *p = arg;

	sleep_ms(60);
	pthread_kill(p->target, SIGUSR1);	/* flag clear: the wait goes on */
	sleep_ms(60);
	stop_flag = 1;
	pthread_kill(p->target, SIGUSR1);
	return NULL;
}

static void test_interrupt(struct unit *u)
{
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	char err[XPORT_ERR_LEN] = "", buf[16];
	struct poker p = { .target = pthread_self() };
	struct srv s;
	struct oob o;
	pthread_t th;
	int64_t t0, dt;
	size_t len;

	if (srv_start(&s, "127.0.0.1", srv_silent) < 0) {
		u->failures++;
		return;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);	/* no SA_RESTART: poll() sees EINTR */
	CHECK_EQ(u, connect_to(s.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), 0);
	stop_flag = 0;
	o.stop = &stop_flag;
	o.timeout_ms = 2000;
	t0 = now_ms();
	if (pthread_create(&th, NULL, poke, &p)) {
		u->failures++;
	} else {
		CHECK_EQ(u, oob_recv(&o, OOB_RESULT, buf, sizeof(buf), &len, err), -1);
		dt = now_ms() - t0;
		pthread_join(th, NULL);
		CHECK(u, dt >= 100 && dt < 1500);
		CHECK_HAS(u, err, "interrupted while waiting for the peer's result");
	}
	sigaction(SIGUSR1, &old, NULL);
	oob_close(&o);
	srv_join(&s);
}

static void srv_hello_barrier(struct srv *s, struct oob *o)
{
	if (oob_hello(o, true, s->err) < 0 || oob_barrier(o, 3, s->err) < 0)
		s->rc = -1;
}

static void test_dual_stack_default(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "";
	struct srv s;
	struct oob o;

	/* NULL bind: every address; an IPv4 client shows as a.b.c.d, not ::ffff:. */
	if (srv_start(&s, NULL, srv_hello_barrier) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(s.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), 0);
	CHECK_EQ(u, oob_barrier(&o, 3, err), 0);
	oob_close(&o);
	srv_join(&s);
	CHECK_EQ(u, s.rc, 0);
	CHECK(u, strncmp(s.peer, "127.0.0.1:", 10) == 0);
	if (strncmp(s.peer, "127.0.0.1:", 10))
		printf("#   peer \"%s\"\n", s.peer);
}

static void test_ipv6(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "", want[32];
	struct srv s;
	struct oob o;

	if (srv_start(&s, "::1", srv_hello_barrier) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, oob_connect("::1", s.port, LONG_MS, &o, err), 0);
	snprintf(want, sizeof(want), "[::1]:%u", s.port);
	CHECK_STR(u, o.peer, want);
	CHECK_EQ(u, oob_hello(&o, false, err), 0);
	CHECK_EQ(u, oob_barrier(&o, 3, err), 0);
	oob_close(&o);
	srv_join(&s);
	CHECK_EQ(u, s.rc, 0);
	CHECK(u, strncmp(s.peer, "[::1]:", 6) == 0);
}

static bool have_ipv6_loopback(char *why, size_t cap)
{
	char err[XPORT_ERR_LEN];
	int fd;

	if (oob_listen("::1", 0, &fd, err) < 0) {
		snprintf(why, cap, "no IPv6 loopback here (%s)", err);
		return false;
	}
	close(fd);
	return true;
}

int main(void)
{
	struct unit u = { 0 };
	char why[XPORT_ERR_LEN + 32];

	RUN(&u, test_qp_info_codec);
	RUN(&u, test_session);
	RUN(&u, test_error_propagation);
	RUN(&u, test_out_of_step);
	RUN(&u, test_cap_and_any);
	RUN(&u, test_timeouts);
	RUN(&u, test_client_first);
	RUN(&u, test_interrupt);
	RUN(&u, test_dual_stack_default);
	if (have_ipv6_loopback(why, sizeof(why)))
		RUN(&u, test_ipv6);
	else
		unit_skip(&u, "test_ipv6", why);
	return unit_done(&u);
}
