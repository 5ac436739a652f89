// SPDX-License-Identifier: MIT
/*
 * The opening of a control connection and its authentication (see oob.h):
 * the server's gate, which takes many connections through it at once,
 * each on a short deadline, and the client's half.  HMAC-SHA256, the
 * nonces and the constant-time comparison come from libsodium.  Nothing a connection sends before it has passed is trusted with
 * more than the fixed bytes the opening and AUTH need.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oob.h"
#include "oob_int.h"

#ifndef RDMAKIT_VERSION
#define RDMAKIT_VERSION "unknown"
#endif

/* Distinct labels: a MAC the server made cannot be replayed as the client's. */
#define AUTH_LABEL_CLIENT "rdmakit-auth-v2 client"
#define AUTH_LABEL_SERVER "rdmakit-auth-v2 server"
#define AUTH_REPLY_LEN (OOB_AUTH_NONCE_LEN + OOB_AUTH_MAC_LEN)
/* New connections taken per wake-up, so pending ones are served between. */
#define ACCEPTS_PER_PASS 64
/* The first protocol, before the opening existed: its peers get an ERROR
 * framed the way they read it. */
#define OOB_PROTO_FIRST 1

/* --- the key ---------------------------------------------------------------- */

int oob_key_load(const char *path, struct oob_key *key, char *err)
{
	/* O_NONBLOCK: a FIFO must not hang the open (it is refused below). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	size_t got = 0;

	memset(key, 0, sizeof(*key));
	if (fd < 0) {
		oob_errf(err, "cannot read the key file %s: %s; make one with: head -c 32 "
			      "/dev/urandom > FILE && chmod 600 FILE", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		oob_errf(err, "key file %s is not a regular file; make one with: head -c 32 "
			      "/dev/urandom > FILE && chmod 600 FILE", path);
		goto fail;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		oob_errf(err, "key file %s is open to group or others (mode %04o); a shared "
			      "secret must not be: chmod 600 %s", path,
			 (unsigned)(st.st_mode & 07777), path);
		goto fail;
	}
	if (st.st_size < OOB_KEY_MIN || st.st_size > OOB_KEY_MAX) {
		oob_errf(err, "key file %s holds %lld bytes; a key is %d to %d bytes (head -c 32 "
			      "/dev/urandom > FILE)", path, (long long)st.st_size, OOB_KEY_MIN,
			 OOB_KEY_MAX);
		goto fail;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, key->bytes + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			oob_errf(err, "cannot read the key file %s: %s", path,
				 n < 0 ? strerror(errno) : "it shrank while being read");
			goto fail;
		}
		got += (size_t)n;
	}
	key->len = got;
	close(fd);
	return 0;
fail:
	close(fd);
	sodium_memzero(key, sizeof(*key));
	return -1;
}

/* libsodium, once per process (sodium_init is idempotent and thread-safe). */
static int crypto_ready(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

/* Fresh nonce bytes from the system's CSPRNG. */
static int nonce(uint8_t *out, size_t len)
{
	if (crypto_ready() < 0)
		return -1;
	randombytes_buf(out, len);
	return 0;
}

/* HMAC-SHA256(key, label || a || b), a and b nonces. */
static int auth_mac(const struct oob_key *k, const char *label, const uint8_t *a,
		    const uint8_t *b, uint8_t out[OOB_AUTH_MAC_LEN])
{
	crypto_auth_hmacsha256_state st;

	_Static_assert(crypto_auth_hmacsha256_BYTES == OOB_AUTH_MAC_LEN, "HMAC-SHA256 size");
	if (crypto_ready() < 0 ||
	    crypto_auth_hmacsha256_init(&st, k->bytes, k->len) != 0 ||
	    crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, strlen(label)) != 0 ||
	    crypto_auth_hmacsha256_update(&st, a, OOB_AUTH_NONCE_LEN) != 0 ||
	    crypto_auth_hmacsha256_update(&st, b, OOB_AUTH_NONCE_LEN) != 0 ||
	    crypto_auth_hmacsha256_final(&st, out) != 0)
		return -1;
	sodium_memzero(&st, sizeof(st));
	return 0;
}

/* --- the opening ------------------------------------------------------------ */

/* The version text goes first, as perftest reads it; rdmakit's marker
 * after its NUL (plain: none, so we look like perftest). */
static void opening_build(uint8_t out[OOB_OPENING_LEN], uint16_t flags, const char *version,
			  bool plain)
{
	size_t len = version ? strnlen(version, 7) : 0;

	memset(out, 0, OOB_OPENING_LEN);
	if (!len) {
		version = OOB_OPENING_PERFTEST;
		len = strlen(version);
	}
	memcpy(out, version, len);
	if (plain)
		return;
	memcpy(out + 8, OOB_OPENING_MARKER, 4);
	oob_put16(out + 12, OOB_PROTO_VERSION);
	oob_put16(out + 14, flags);
}

/* rdmakit's: the marker in the padding after a NUL-terminated version. */
static bool opening_is_rdmakit(const uint8_t *b)
{
	return !memcmp(b + 8, OOB_OPENING_MARKER, 4) && memchr(b, 0, 8);
}

/* One whole control message into out (cap >= OOB_HDR_LEN + len). */
static size_t frame(uint8_t *out, uint16_t version, enum oob_type type, const void *payload,
		    size_t len)
{
	oob_put_header(out, version, type, (uint32_t)len);
	if (len)
		memcpy(out + OOB_HDR_LEN, payload, len);
	return OOB_HDR_LEN + len;
}

/* --- the server's gate ------------------------------------------------------ */

struct pending {
	int fd;
	int64_t deadline;
	bool opened;			/* its opening passed: now authenticating */
	bool perftest;			/* admitted as a perftest client */
	size_t got;
	uint8_t buf[OOB_HDR_LEN + AUTH_REPLY_LEN];
	uint8_t nonce[OOB_AUTH_NONCE_LEN];
	char peer[OOB_PEER_LEN];
};

struct oob_gate {
	int listen_fd;
	unsigned cap, n;		/* table size, entries in use (oldest first) */
	const struct oob_key *key;
	unsigned long dropped;
	bool accept_perftest, force_perftest;	/* oob_gate_accept_perftest() */
	struct pending *p;
	struct pollfd *pfd;		/* listen_fd, then one per pending */
	int64_t left_ns;		/* when oob_gate_accept() last returned; 0: never */
};

enum step { STEP_WAIT, STEP_ADMIT, STEP_REFUSE, STEP_DROP };

struct oob_gate *oob_gate_new(int listen_fd, unsigned max_pending, const struct oob_key *key,
			      char *err)
{
	struct oob_gate *g = calloc(1, sizeof(*g));

	if (max_pending < OOB_GATE_MIN_PENDING)
		max_pending = OOB_GATE_MIN_PENDING;
	if (g) {
		g->p = calloc(max_pending, sizeof(*g->p));
		g->pfd = calloc(max_pending + 1, sizeof(*g->pfd));
	}
	if (!g || !g->p || !g->pfd) {
		oob_gate_free(g);
		oob_errf(err, "out of memory");
		return NULL;
	}
	g->listen_fd = listen_fd;
	g->cap = max_pending;
	g->key = key && key->len ? key : NULL;
	return g;
}

/* Takes entry i out of the table (oldest-first order kept); closes it if asked. */
static void remove_pending(struct oob_gate *g, unsigned i, bool close_it)
{
	if (close_it)
		close(g->p[i].fd);
	memmove(&g->p[i], &g->p[i + 1], (g->n - i - 1) * sizeof(g->p[0]));
	g->n--;
}

void oob_gate_free(struct oob_gate *g)
{
	if (!g)
		return;
	while (g->p && g->n)
		remove_pending(g, g->n - 1, true);
	free(g->p);
	free(g->pfd);
	free(g);
}

unsigned long oob_gate_dropped(const struct oob_gate *g)
{
	return g->dropped;
}

void oob_gate_accept_perftest(struct oob_gate *g, bool force)
{
	g->accept_perftest = true;
	g->force_perftest = force;
}

/* Best effort and never blocking: the gate waits for no one. */
static bool send_now(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len;
}

static void send_error_now(int fd, uint16_t version, const char *text)
{
	uint8_t m[OOB_HDR_LEN + 256];
	size_t len = strlen(text) < 256 ? strlen(text) : 256;

	send_now(fd, m, frame(m, version, OOB_ERROR, text, len));
}

/* A client's 16 bytes are in: rdmakit, an older rdmakit, perftest or junk. */
static enum step on_opening(struct oob_gate *g, struct pending *p, char *err)
{
	uint8_t out[OOB_OPENING_LEN + OOB_HDR_LEN + OOB_AUTH_NONCE_LEN];
	const uint8_t *b = p->buf;
	size_t n = OOB_OPENING_LEN;
	char version[9];

	if (opening_is_rdmakit(b) && !(g->force_perftest && !g->key)) {
		uint16_t proto = oob_get16(b + 12);

		opening_build(out, g->key ? OOB_OPEN_AUTH : 0, NULL, false);
		if (g->key) {
			if (nonce(p->nonce, sizeof(p->nonce)) < 0) {
				oob_errf(err, "no random numbers for a challenge (libsodium failed "
					      "to start): refused the client at %s", p->peer);
				return STEP_REFUSE;
			}
			n += frame(out + n, OOB_PROTO_VERSION, OOB_AUTH, p->nonce, sizeof(p->nonce));
		}
		if (!send_now(p->fd, out, n))
			return STEP_DROP;
		if (proto != OOB_PROTO_VERSION) {	/* it reads ours and explains */
			oob_errf(err, "client at %s speaks rdmakit control protocol %u, this server "
				      "%d: use the same rdmakit version on both sides", p->peer, proto,
				 OOB_PROTO_VERSION);
			return STEP_REFUSE;
		}
		if (!g->key)
			return STEP_ADMIT;
		p->opened = true;
		p->got = 0;
		return STEP_WAIT;
	}
	if (!memcmp(b, OOB_MAGIC, 4)) {
		char text[200];

		snprintf(text, sizeof(text), "this server runs rdmakit %s (control protocol %d): "
			 "use the same rdmakit version on both sides", RDMAKIT_VERSION,
			 OOB_PROTO_VERSION);
		send_error_now(p->fd, OOB_PROTO_FIRST, text);
		oob_errf(err, "client at %s runs an older rdmakit (control protocol %u); it was told "
			      "to use the same rdmakit version on both sides", p->peer,
			 oob_get16(b + 4));
		return STEP_REFUSE;
	}
	if (strstr(oob_greeting_hint(b, OOB_OPENING_LEN), "perftest")) {
		oob_sanitize(version, sizeof(version), b, 8);
		if (g->accept_perftest && !g->key) {
			p->perftest = true;	/* lib/perf/pt_session.c answers */
			return STEP_ADMIT;
		}
		if (g->key)
			oob_errf(err, "client at %s is perftest (version %s), which cannot "
				      "authenticate: this server requires --auth-key", p->peer, version);
		else
			oob_errf(err, "client at %s is perftest (version %s): this rdmakit does not "
				      "speak perftest's protocol; run rdmakit on both sides", p->peer,
				 version);
		return STEP_REFUSE;
	}
	return STEP_DROP;
}

/* The client's AUTH(Nc || MAC) is in. */
static enum step on_auth(struct oob_gate *g, struct pending *p, char *err)
{
	const uint8_t *h = p->buf, *nc = p->buf + OOB_HDR_LEN;
	uint8_t want[OOB_AUTH_MAC_LEN], proof[OOB_AUTH_MAC_LEN];
	uint8_t out[OOB_HDR_LEN + OOB_AUTH_MAC_LEN];
	bool ok;

	if (memcmp(h, OOB_MAGIC, 4) || oob_get16(h + 4) != OOB_PROTO_VERSION ||
	    oob_get16(h + 6) != OOB_AUTH || oob_get32(h + 8) != AUTH_REPLY_LEN) {
		send_error_now(p->fd, OOB_PROTO_VERSION, "this server requires authentication: "
			       "give the client its key with --auth-key");
		oob_errf(err, "client at %s did not authenticate: this server requires --auth-key",
			 p->peer);
		return STEP_REFUSE;
	}
	ok = auth_mac(g->key, AUTH_LABEL_CLIENT, p->nonce, nc, want) == 0 &&
	     sodium_memcmp(want, nc + OOB_AUTH_NONCE_LEN, OOB_AUTH_MAC_LEN) == 0;
	if (!ok) {
		send_error_now(p->fd, OOB_PROTO_VERSION, "authentication failed: this client's "
			       "--auth-key is not the server's");
		oob_errf(err, "client at %s failed authentication: its --auth-key is not this "
			      "server's", p->peer);
		return STEP_REFUSE;
	}
	if (auth_mac(g->key, AUTH_LABEL_SERVER, nc, p->nonce, proof) < 0 ||
	    !send_now(p->fd, out, frame(out, OOB_PROTO_VERSION, OOB_AUTH, proof, sizeof(proof))))
		return STEP_DROP;
	return STEP_ADMIT;
}

/* Reads what entry p may still take (never past what its step needs). */
static enum step service(struct oob_gate *g, struct pending *p, char *err)
{
	size_t need = p->opened ? OOB_HDR_LEN + AUTH_REPLY_LEN : OOB_OPENING_LEN;
	ssize_t r = recv(p->fd, p->buf + p->got, need - p->got, MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return STEP_WAIT;
	if (r <= 0) {
		if (!p->opened)
			return STEP_DROP;
		oob_errf(err, "client at %s left without authenticating: this server requires "
			      "--auth-key, give the client the same key", p->peer);
		return STEP_REFUSE;
	}
	p->got += (size_t)r;
	if (p->got < need)
		return STEP_WAIT;
	return p->opened ? on_auth(g, p, err) : on_opening(g, p, err);
}

/* Takes in what the listening socket holds; -1 on a system error. */
static int take_new(struct oob_gate *g, int64_t now, char *err)
{
	for (unsigned k = 0; k < ACCEPTS_PER_PASS; k++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct pending *p;
		int fd = accept4(g->listen_fd, (struct sockaddr *)&ss, &len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			/* A client that connected and reset before we got to it. */
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			/* Out of descriptors: the oldest opener makes room. */
			if ((errno == EMFILE || errno == ENFILE) && g->n) {
				remove_pending(g, 0, true);
				g->dropped++;
				continue;
			}
			oob_errf(err, "cannot accept a control connection: %s", strerror(errno));
			return -1;
		}
		if (g->n == g->cap) {
			remove_pending(g, 0, true);
			g->dropped++;
		}
		p = &g->p[g->n++];
		memset(p, 0, sizeof(*p));
		p->fd = fd;
		p->deadline = now + (int64_t)OOB_GATE_DEADLINE_MS * 1000000;
		oob_set_nodelay(fd);
		oob_fmt_sockaddr(p->peer, &ss);
	}
	return 0;
}

int oob_gate_accept(struct oob_gate *g, int timeout_ms, const volatile sig_atomic_t *stop,
		    struct oob *o, char *err)
{
	int64_t deadline = oob_deadline_after(timeout_ms), now = oob_now_ns();
	char t[16];

	/* Time the server spent elsewhere (running a test) does not count
	 * against those waiting; time in here does, however often it returns. */
	for (unsigned i = 0; g->left_ns && i < g->n; i++)
		g->p[i].deadline += now - g->left_ns;
	for (;;) {
		int64_t next = deadline;
		unsigned polled;
		int r, ms;

		now = oob_now_ns();
		g->left_ns = now;
		/* A signal that came while we were busy, not in poll(), counts too. */
		if (stop && *stop) {
			oob_errf(err, "interrupted while waiting for a client");
			return -1;
		}
		for (unsigned i = 0; i < g->n;) {
			if (g->p[i].deadline <= now) {
				remove_pending(g, i, true);
				g->dropped++;
			} else {
				i++;
			}
		}
		if (deadline >= 0 && now >= deadline) {
			oob_errf(err, "no client connected within %s s; start the client side (with "
				      "this host's address) or raise --timeout",
				 oob_secs(timeout_ms, t, sizeof(t)));
			return -1;
		}
		g->pfd[0] = (struct pollfd){ .fd = g->listen_fd, .events = POLLIN };
		for (unsigned i = 0; i < g->n; i++) {
			g->pfd[i + 1] = (struct pollfd){ .fd = g->p[i].fd, .events = POLLIN };
			if (next < 0 || g->p[i].deadline < next)
				next = g->p[i].deadline;
		}
		polled = g->n;
		ms = next < 0 ? -1 : (int)((next - now + 999999) / 1000000);
		r = poll(g->pfd, polled + 1, ms);
		if (r < 0) {
			if (errno != EINTR) {
				oob_errf(err, "cannot wait for a control connection: %s",
					 strerror(errno));
				return -1;
			}
			if (stop && *stop) {
				oob_errf(err, "interrupted while waiting for a client");
				return -1;
			}
			continue;
		}
		/* Newest first, so taking entry i out moves only entries already seen. */
		for (unsigned i = polled; i-- > 0;) {
			enum step s;

			if (!g->pfd[i + 1].revents)
				continue;
			s = service(g, &g->p[i], err);
			if (s == STEP_ADMIT) {
				oob_init(o, g->p[i].fd, -1);
				memcpy(o->peer, g->p[i].peer, sizeof(o->peer));
				if (g->p[i].perftest) {
					o->peer_perftest = true;
					memcpy(o->pt_version, g->p[i].buf, OOB_OPENING_LEN);
				}
				remove_pending(g, i, false);
				return 0;
			}
			if (s == STEP_REFUSE) {
				remove_pending(g, i, true);
				return OOB_GATE_REFUSED;
			}
			if (s == STEP_DROP) {
				remove_pending(g, i, true);
				g->dropped++;
			}
		}
		if ((g->pfd[0].revents & POLLIN) && take_new(g, oob_now_ns(), err) < 0)
			return -1;
	}
}

/* --- the client's half ------------------------------------------------------ */

static int open_failed(struct oob *o, int r, bool eof, size_t got, const uint8_t *theirs,
		       char *err)
{
	char t[16];

	if (eof && got == 0)
		oob_errf(err, "peer at %s closed the connection after rdmakit's opening: it runs "
			      "an older rdmakit (control protocol 1) or another program on that port; "
			      "run the same rdmakit version on both sides", o->peer);
	else if (eof)
		return oob_not_rdmakit(o, theirs, got, err);
	else if (r == IO_TIMEOUT)
		oob_errf(err, "timed out after %s s waiting for the peer's opening; is rdmakit "
			      "(not another program) listening at %s?",
			 oob_secs(o->timeout_ms, t, sizeof(t)), o->peer);
	else if (r == IO_STOP)
		oob_errf(err, "interrupted while waiting for the peer's opening");
	else if (r == IO_CLOSED)
		oob_errf(err, "peer at %s closed the connection before rdmakit's opening went "
			      "out; check that rdmakit listens there", o->peer);
	else
		oob_errf(err, "cannot use the control connection: %s", strerror(errno));
	return -1;
}

/* Proves the key to the server and checks that the server holds it too. */
static int authenticate(struct oob *o, char *err)
{
	uint8_t ns[OOB_AUTH_NONCE_LEN + 1], reply[AUTH_REPLY_LEN], proof[OOB_AUTH_MAC_LEN + 1];
	uint8_t want[OOB_AUTH_MAC_LEN];
	size_t len;

	if (oob_recv(o, OOB_AUTH, ns, sizeof(ns), &len, err) < 0)
		return -1;
	if (len != OOB_AUTH_NONCE_LEN) {
		oob_errf(err, "the server at %s sent a malformed challenge", o->peer);
		return -1;
	}
	if (nonce(reply, OOB_AUTH_NONCE_LEN) < 0 ||
	    auth_mac(o->key, AUTH_LABEL_CLIENT, ns, reply, reply + OOB_AUTH_NONCE_LEN) < 0) {
		oob_errf(err, "cannot compute the authentication (libsodium failed)");
		return -1;
	}
	if (oob_send(o, OOB_AUTH, reply, sizeof(reply), err) < 0 ||
	    oob_recv(o, OOB_AUTH, proof, sizeof(proof), &len, err) < 0)
		return -1;
	if (len != OOB_AUTH_MAC_LEN || auth_mac(o->key, AUTH_LABEL_SERVER, reply, ns, want) < 0 ||
	    sodium_memcmp(want, proof, OOB_AUTH_MAC_LEN) != 0) {
		oob_errf(err, "the server at %s could not prove it holds this client's --auth-key: "
			      "a different key, or not the server you meant", o->peer);
		return -1;
	}
	return 0;
}

int oob_open_client(struct oob *o, char *err)
{
	int64_t deadline = oob_deadline_after(o->timeout_ms);
	uint8_t mine[OOB_OPENING_LEN], theirs[OOB_OPENING_LEN];
	struct iovec iov = { .iov_base = mine, .iov_len = sizeof(mine) };
	bool eof = false, server_auth;
	size_t got = 0;
	int r;

	opening_build(mine, o->key ? OOB_OPEN_AUTH : 0, o->announce, o->plain_opening);
	r = oob_write_all(o, &iov, 1, deadline);
	if (r == 0)
		r = oob_read_exact(o, theirs, sizeof(theirs), deadline, &got, &eof);
	if (r < 0)
		return open_failed(o, r, eof, got, theirs, err);
	if (!opening_is_rdmakit(theirs) || o->plain_opening) {
		/* A perftest server answers with its own version (16 bytes). */
		if (o->accept_perftest && memchr(theirs, 0, OOB_OPENING_LEN) &&
		    strstr(oob_greeting_hint(theirs, OOB_OPENING_LEN), "perftest")) {
			if (o->key) {
				oob_errf(err, "the server at %s is perftest, which cannot "
					      "authenticate: drop --auth-key to test against it",
					 o->peer);
				return -1;
			}
			o->peer_perftest = true;
			memcpy(o->pt_version, theirs, OOB_OPENING_LEN);
			return 0;
		}
		return oob_not_rdmakit(o, theirs, got, err);
	}
	if (oob_get16(theirs + 12) != OOB_PROTO_VERSION) {
		oob_errf(err, "peer at %s speaks rdmakit control protocol %u, we speak %d; use the "
			      "same rdmakit version on both sides (we run %s)", o->peer,
			 oob_get16(theirs + 12), OOB_PROTO_VERSION, RDMAKIT_VERSION);
		return -1;
	}
	server_auth = oob_get16(theirs + 14) & OOB_OPEN_AUTH;
	if (server_auth && !o->key) {
		oob_errf(err, "the server at %s requires authentication: give this client the "
			      "server's key with --auth-key FILE (or RDMAKIT_AUTH_KEY_FILE)", o->peer);
		return -1;
	}
	if (!server_auth && o->key) {
		oob_errf(err, "the server at %s does not authenticate its clients, and this client "
			      "has an --auth-key: give the server the same key (a client with a key "
			      "talks only to a server that proves it holds it)", o->peer);
		return -1;
	}
	return server_auth ? authenticate(o, err) : 0;
}
