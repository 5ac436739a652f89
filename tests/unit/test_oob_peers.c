// SPDX-License-Identifier: MIT
/*
 * The control channel against peers that are not a matching rdmakit, over
 * real TCP on loopback: a peer that hangs up mid-header, mid-payload or
 * before the hello; a web server, an SSH server and perftest answering our
 * opening; an rdmakit of another protocol version on either side (an 0.1
 * client told in its own framing); lengths past the limit refused from the
 * header alone.
 */
#include "oob_peers.h"

/* The protocol this build speaks, as text and as the opening's bytes. */
#define PROTO_TEXT "3"
#define PROTO_BYTES "\0\3"
_Static_assert(OOB_PROTO_VERSION == 3, "PROTO_TEXT and PROTO_BYTES follow OOB_PROTO_VERSION");

static void test_peer_closes(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "", buf[200];
	uint8_t msg[OOB_HDR_LEN + 10] = { 0 };
	struct raw r;
	struct oob o;
	size_t len;
	int i, rc = 0;

	/* Mid-payload: 10 of 100 bytes, then close. */
	mk_hdr(msg, "RDMK", OOB_PROTO_VERSION, OOB_PARAMS, 100);
	if (raw_serve(&r, msg, sizeof(msg), false, true) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_recv(&o, OOB_PARAMS, buf, sizeof(buf), &len, err), -1);
	CHECK_HAS(u, err, "peer closed the control connection in the middle of its parameters "
			  "(got 10 of 100 bytes)");
	oob_close(&o);
	raw_join(&r);

	/* Mid-header. */
	if (raw_serve(&r, msg, 7, false, true) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_recv(&o, OOB_PARAMS, buf, sizeof(buf), &len, err), -1);
	CHECK_HAS(u, err, "got 7 of 12 header bytes");
	oob_close(&o);
	raw_join(&r);

	/* Right after accepting, before the hello; then our sends must not SIGPIPE. */
	if (raw_serve(&r, NULL, 0, false, true) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
	raw_join(&r);
	CHECK_EQ(u, oob_recv(&o, OOB_HELLO, buf, sizeof(buf), &len, err), -1);
	CHECK_HAS(u, err, "peer closed the control connection while we waited for its hello");
	for (i = 0; i < 20 && rc == 0; i++) {
		rc = oob_send(&o, OOB_PARAMS, "a=1", 3, err);
		if (rc == 0)
			sleep_ms(10);
	}
	CHECK_EQ(u, rc, -1);
	CHECK_HAS(u, err, "peer closed the control connection before our parameters went out");
	oob_close(&o);
}

static void test_hello_eof(struct unit *u)
{
	char err[XPORT_ERR_LEN] = "";
	struct raw r;
	struct oob o;

	/* A program that reads what we send and hangs up (an rdmakit 0.1 server does). */
	if (raw_serve(&r, NULL, 0, true, true) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), -1);
	CHECK_HAS(u, err, "closed the connection after rdmakit's opening: it runs an older "
			  "rdmakit (control protocol 1)");
	oob_close(&o);
	raw_join(&r);
	/* It read exactly the opening: perftest's version text, the marker, the protocol. */
	CHECK_EQ(u, r.n_seen, OOB_OPENING_LEN);
	CHECK(u, memcmp(r.seen, "6.06\0\0\0\0RDMK" PROTO_BYTES "\0\0", 16) == 0);
}

static void test_not_rdmakit(struct unit *u)
{
	static const char http[] = "HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
	static const char perftest[16] = "6.21";
	char err[XPORT_ERR_LEN] = "", want[128];
	struct raw r;
	struct oob o;

	/* Our client meets a web server. */
	if (raw_serve(&r, http, strlen(http), true, false) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), -1);
	snprintf(want, sizeof(want),
		 "peer at 127.0.0.1:%u is not rdmakit (got \"HTTP/1.0 400 Bad Req\"...; "
		 "it looks like a web server)", r.port);
	CHECK_HAS(u, err, want);
	oob_close(&o);
	raw_join(&r);

	/* ... and a perftest server, which answers with its version. */
	if (raw_serve(&r, perftest, sizeof(perftest), true, false) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), -1);
	CHECK_HAS(u, err, "(got \"6.21\\x00\\x00");
	CHECK_HAS(u, err, "it looks like perftest");
	oob_close(&o);
	raw_join(&r);
	/* Our server meeting foreign clients: test_gate.c. */
}

/* The opening of an rdmakit that speaks control protocol 99. */
static void future_opening(uint8_t *p)
{
	memset(p, 0, OOB_OPENING_LEN);
	memcpy(p, "6.06", 4);
	memcpy(p + 8, "RDMK", 4);
	p[13] = 99;
}

static void test_wrong_version(struct unit *u)
{
	uint8_t msg[OOB_OPENING_LEN], old[OOB_HDR_LEN + OOB_HELLO_LEN] = { 0 };
	char err[XPORT_ERR_LEN] = "", want[256];
	struct raw r;
	struct oob o;
	int lfd;

	future_opening(msg);
	/* As the client. */
	if (raw_serve(&r, msg, sizeof(msg), true, false) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_hello(&o, false, err), -1);
	snprintf(want, sizeof(want),
		 "peer at 127.0.0.1:%u speaks rdmakit control protocol 99, we speak %d; use the "
		 "same rdmakit version on both sides (we run %s)", r.port, OOB_PROTO_VERSION,
		 RDMAKIT_VERSION);
	CHECK_STR(u, err, want);
	oob_close(&o);
	raw_join(&r);

	/* As the server: it answers with its own opening so the client can tell. */
	CHECK_EQ(u, oob_listen("127.0.0.1", 0, &lfd, err), 0);
	if (raw_client(&r, oob_listen_port(lfd), msg, sizeof(msg)) < 0) {
		u->failures++;
		close(lfd);
		return;
	}
	CHECK_EQ(u, accept_one(lfd, LONG_MS, &o, err), -1);
	CHECK_HAS(u, err, "speaks rdmakit control protocol 99, this server " PROTO_TEXT ": use the same "
			  "rdmakit version on both sides");
	raw_join(&r);
	CHECK_EQ(u, r.n_seen, OOB_OPENING_LEN);
	CHECK(u, memcmp(r.seen, "6.06\0\0\0\0RDMK" PROTO_BYTES "\0\0", 16) == 0);

	/* An rdmakit 0.1 client (a protocol 1 HELLO) is told in its own framing. */
	mk_hdr(old, "RDMK", 1, OOB_HELLO, OOB_HELLO_LEN);
	old[OOB_HDR_LEN + 1] = 1;
	memcpy(old + OOB_HDR_LEN + 4, "0.1.0", 5);
	if (raw_client(&r, oob_listen_port(lfd), old, sizeof(old)) < 0) {
		u->failures++;
		close(lfd);
		return;
	}
	CHECK_EQ(u, accept_one(lfd, LONG_MS, &o, err), -1);
	CHECK_HAS(u, err, "runs an older rdmakit (control protocol 1)");
	raw_join(&r);
	close(lfd);
	CHECK(u, r.n_seen > OOB_HDR_LEN && memcmp(r.seen, "RDMK\0\1\0\6", 8) == 0);
	r.seen[r.n_seen < sizeof(r.seen) ? r.n_seen : sizeof(r.seen) - 1] = 0;
	CHECK_HAS(u, (const char *)r.seen + OOB_HDR_LEN, "(control protocol " PROTO_TEXT "): use "
							  "the same rdmakit version on both sides");
}

/* A length field past the limit is refused from the header alone, at once. */
static void test_oversize(struct unit *u)
{
	static const uint32_t lens[] = { 0xFFFFFFFF, OOB_MAX_PAYLOAD + 1 };
	char err[XPORT_ERR_LEN] = "", buf[64], want[128];
	uint8_t msg[OOB_HDR_LEN];
	struct raw r;
	struct oob o;
	int64_t t0;
	size_t len, i;

	for (i = 0; i < 2; i++) {
		mk_hdr(msg, "RDMK", OOB_PROTO_VERSION, OOB_PARAMS, lens[i]);
		if (raw_serve(&r, msg, sizeof(msg), false, false) < 0) {
			u->failures++;
			return;
		}
		CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
		t0 = now_ms();
		CHECK_EQ(u, oob_recv(&o, OOB_PARAMS, buf, sizeof(buf), &len, err), -1);
		/* Did not sit waiting for payload bytes that will never come. */
		CHECK(u, now_ms() - t0 < 1000);
		snprintf(want, sizeof(want),
			 "peer announced a %u-byte parameters, over the 65536-byte limit", lens[i]);
		CHECK_HAS(u, err, want);
		oob_close(&o);
		raw_join(&r);
	}

	/* An unknown type with a sane length. */
	mk_hdr(msg, "RDMK", OOB_PROTO_VERSION, 77, 0);
	if (raw_serve(&r, msg, sizeof(msg), false, false) < 0) {
		u->failures++;
		return;
	}
	CHECK_EQ(u, connect_to(r.port, LONG_MS, &o, err), 0);
	CHECK_EQ(u, oob_recv(&o, OOB_PARAMS, buf, sizeof(buf), &len, err), -1);
	CHECK_HAS(u, err, "unknown type 77");
	oob_close(&o);
	raw_join(&r);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_peer_closes);
	RUN(&u, test_hello_eof);
	RUN(&u, test_not_rdmakit);
	RUN(&u, test_wrong_version);
	RUN(&u, test_oversize);
	return unit_done(&u);
}
