// SPDX-License-Identifier: MIT
/*
 * The TCP control channel (see oob.h for the wire format): bounded reads
 * and writes, messages, the hello, barriers and the goodbye.  The sockets
 * themselves are oob_sock.c's, the opening and the gate oob_gate.c's.
 *
 * Sockets stay non-blocking for their whole life and every wait goes
 * through poll() against one deadline per call, so no read, write, accept
 * or connect can hang past the caller's timeout, whatever the peer does.
 * Everything read from the peer is untrusted: the header is checked
 * (magic, version, length, type) before a payload byte is read, and a
 * payload is only ever read into a buffer already known to be big enough.
 */
#include "oob.h"
#include "oob_int.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef RDMAKIT_VERSION
#define RDMAKIT_VERSION "unknown"
#endif

/* How long oob_send_error() may block: the real error is already known. */
#define ERROR_SEND_MS 1000
/* Bytes of a non-rdmakit greeting quoted back to the user. */
#define GREETING_SHOW 20
/* Longest ERROR text we send or show. */
#define ERROR_TEXT_MAX (XPORT_ERR_LEN - 16)

/* Why oob_recv failed, for the helpers that word things differently. */
enum fail { F_OTHER, F_EOF, F_TIMEOUT, F_VERSION };

void oob_errf(char *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, XPORT_ERR_LEN, fmt, ap);
	va_end(ap);
}

int64_t oob_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* -1: no deadline (wait forever). */
int64_t oob_deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : oob_now_ns() + (int64_t)timeout_ms * 1000000;
}

/* "10", "0.3": the timeout as the user gave it (--timeout is in seconds). */
const char *oob_secs(int timeout_ms, char *buf, size_t cap)
{
	snprintf(buf, cap, "%g", timeout_ms / 1000.0);
	return buf;
}

static bool stopped(const struct oob *o)
{
	return o && o->stop && *o->stop;
}

/*
 * Waits until fd has one of events or the deadline passes: 1 ready (an
 * error or hangup counts: the next call reports it), 0 timed out, IO_STOP,
 * IO_ERR.  EINTR resumes with the remaining time unless o->stop is set.
 */
int oob_wait_fd(const struct oob *o, int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ms, r;

	for (;;) {
		if (deadline < 0) {
			ms = -1;
		} else {
			int64_t left = deadline - oob_now_ns();

			if (left <= 0)
				return 0;
			/* Round up so we never wake just before the deadline and spin. */
			left = (left + 999999) / 1000000;
			ms = left > 1000000000 ? 1000000000 : (int)left;
		}
		r = poll(&p, 1, ms);
		if (r > 0)
			return 1;
		if (r < 0) {
			if (errno != EINTR)
				return IO_ERR;
			if (stopped(o))
				return IO_STOP;
		}
		/* r == 0 or EINTR: loop, the deadline check decides. */
	}
}

/* One recv() that waits for data first if needed: bytes, 0 on EOF, or IO_*. */
ssize_t oob_read_some(struct oob *o, void *p, size_t n, int64_t deadline)
{
	for (;;) {
		ssize_t r = recv(o->fd, p, n, 0);
		int w;

		if (r >= 0)
			return r;
		if (errno == EINTR) {
			if (stopped(o))
				return IO_STOP;
			continue;
		}
		/* A reset is the peer going away, same as a close to the user. */
		if (errno == ECONNRESET)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return IO_ERR;
		w = oob_wait_fd(o, o->fd, POLLIN, deadline);
		if (w == 0)
			return IO_TIMEOUT;
		if (w < 0)
			return w;
	}
}

/* Reads exactly n bytes; *got says how far it came.  0 or 0-on-EOF/IO_*. */
int oob_read_exact(struct oob *o, void *buf, size_t n, int64_t deadline, size_t *got,
		      bool *eof)
{
	uint8_t *p = buf;

	*got = 0;
	*eof = false;
	while (*got < n) {
		ssize_t r = oob_read_some(o, p + *got, n - *got, deadline);

		if (r == 0) {
			*eof = true;
			return -1;
		}
		if (r < 0)
			return (int)r;
		*got += (size_t)r;
	}
	return 0;
}

/* Writes every byte of iov[0..cnt) (which it consumes): 0 or IO_*. */
int oob_write_all(struct oob *o, struct iovec *iov, int cnt, int64_t deadline)
{
	while (cnt > 0) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)cnt };
		ssize_t w;

		if (iov->iov_len == 0) {
			iov++;
			cnt--;
			continue;
		}
		/* MSG_NOSIGNAL: a vanished peer is an error to report, not SIGPIPE. */
		w = sendmsg(o->fd, &mh, MSG_NOSIGNAL);
		if (w < 0) {
			int r;

			if (errno == EINTR) {
				if (stopped(o))
					return IO_STOP;
				continue;
			}
			if (errno == EPIPE || errno == ECONNRESET)
				return IO_CLOSED;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return IO_ERR;
			r = oob_wait_fd(o, o->fd, POLLOUT, deadline);
			if (r == 0)
				return IO_TIMEOUT;
			if (r < 0)
				return r;
			continue;
		}
		/* Short write: skip what went out, resume mid-buffer. */
		while (w > 0 && cnt > 0) {
			size_t take = (size_t)w < iov->iov_len ? (size_t)w : iov->iov_len;

			iov->iov_base = (uint8_t *)iov->iov_base + take;
			iov->iov_len -= take;
			w -= (ssize_t)take;
			if (iov->iov_len == 0) {
				iov++;
				cnt--;
			}
		}
	}
	return 0;
}

const char *oob_type_name(enum oob_type type)
{
	switch (type) {
	case OOB_ANY: return "message";
	case OOB_HELLO: return "hello";
	case OOB_PARAMS: return "parameters";
	case OOB_QP_INFO: return "QP info";
	case OOB_BARRIER: return "barrier";
	case OOB_RESULT: return "result";
	case OOB_ERROR: return "error report";
	case OOB_BYE: return "goodbye";
	case OOB_AUTH: return "authentication";
	}
	return "unknown message";
}

bool oob_type_valid(uint32_t t)
{
	return t >= OOB_HELLO && t <= OOB_AUTH;
}

/* Copies peer text for display: printable ASCII only, stops at NUL. */
void oob_sanitize(char *out, size_t cap, const uint8_t *in, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n && in[i] && k + 1 < cap; i++)
		out[k++] = (in[i] >= 0x20 && in[i] < 0x7f) ? (char)in[i] : '?';
	out[k] = '\0';
}

/* --- messages ------------------------------------------------------------- */

int oob_send_deadline(struct oob *o, enum oob_type type, const void *buf, size_t len,
			 int64_t deadline, char *err)
{
	uint8_t hdr[OOB_HDR_LEN];
	struct iovec iov[2];
	char t[16];
	int r;

	if (!oob_type_valid((uint32_t)type)) {
		oob_errf(err, "internal error: cannot send control message type %d", (int)type);
		return -1;
	}
	if (len > OOB_MAX_PAYLOAD) {
		oob_errf(err, "our %s is %zu bytes, over the %d-byte limit of a control message",
		     oob_type_name(type), len, OOB_MAX_PAYLOAD);
		return -1;
	}
	if (o->fd < 0) {
		oob_errf(err, "the control connection is already closed");
		return -1;
	}
	oob_put_header(hdr, OOB_PROTO_VERSION, type, (uint32_t)len);
	iov[0] = (struct iovec){ .iov_base = hdr, .iov_len = sizeof(hdr) };
	iov[1] = (struct iovec){ .iov_base = (void *)buf, .iov_len = buf ? len : 0 };
	r = oob_write_all(o, iov, 2, deadline);
	if (r == 0)
		return 0;
	if (r == IO_CLOSED)
		oob_errf(err, "peer closed the control connection before our %s went out; "
			  "check its output", oob_type_name(type));
	else if (r == IO_TIMEOUT)
		oob_errf(err, "timed out after %s s sending our %s; the peer stopped reading "
			  "(raise --timeout if it is busy)", oob_secs(o->timeout_ms, t, sizeof(t)),
		     oob_type_name(type));
	else if (r == IO_STOP)
		oob_errf(err, "interrupted while sending our %s", oob_type_name(type));
	else
		oob_errf(err, "cannot send our %s on the control connection: %s",
		     oob_type_name(type), strerror(errno));
	return -1;
}

int oob_send(struct oob *o, enum oob_type type, const void *buf, size_t len, char *err)
{
	if (len && !buf) {
		oob_errf(err, "internal error: %zu-byte %s without a buffer", len, oob_type_name(type));
		return -1;
	}
	return oob_send_deadline(o, type, buf, len, oob_deadline_after(o->timeout_ms), err);
}

/* "looks like ..." for greetings users are likely to hit on a wrong port. */
const char *oob_greeting_hint(const uint8_t *b, size_t n)
{
	size_t i = 0;

	if (n >= 5 && !memcmp(b, "HTTP/", 5))
		return "; it looks like a web server";
	if (n >= 4 && !memcmp(b, "SSH-", 4))
		return "; it looks like an SSH server";
	/* perftest opens with its version, e.g. "6.21", NUL-padded to 16 bytes. */
	while (i < n && b[i] >= '0' && b[i] <= '9')
		i++;
	if (i > 0 && i < n && b[i] == '.') {
		for (i++; i < n && ((b[i] >= '0' && b[i] <= '9') || b[i] == '.'); i++)
			;
		if (i == n || b[i] == '\0')
			return "; it looks like perftest";
	}
	return "";
}

/* The peer's first bytes are not our magic: say what it sent instead. */
int oob_not_rdmakit(struct oob *o, const uint8_t *hdr, size_t got, char *err)
{
	uint8_t b[GREETING_SHOW + 1];
	char shown[GREETING_SHOW * 4 + 8];
	size_t n = got, i, k = 0;
	ssize_t r;

	memcpy(b, hdr, got);
	/* Whatever else already arrived, for a more telling quote; no waiting. */
	r = recv(o->fd, b + n, sizeof(b) - n, MSG_DONTWAIT);
	if (r > 0)
		n += (size_t)r;
	for (i = 0; i < n && i < GREETING_SHOW; i++) {
		uint8_t c = b[i];

		if (c == '\r' || c == '\n') {
			shown[k++] = '\\';
			shown[k++] = c == '\r' ? 'r' : 'n';
		} else if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			shown[k++] = (char)c;
		} else {
			k += (size_t)snprintf(shown + k, sizeof(shown) - k, "\\x%02x", c);
		}
	}
	shown[k] = '\0';
	oob_errf(err, "peer at %s is not rdmakit (got \"%s\"%s%s); check the host and -p/--port, "
		  "and run rdmakit on both sides",
	     o->peer, shown, n > GREETING_SHOW ? "..." : "", oob_greeting_hint(b, n));
	return -1;
}

/* The rdmakit version text out of a HELLO payload ("" if malformed). */
static void hello_version(const uint8_t *p, size_t len, char *out)
{
	out[0] = '\0';
	if (len > 4)
		oob_sanitize(out, OOB_VERSION_LEN, p + 4, len - 4);
}

/*
 * Reads and drops the payload of a well-formed message we refuse, so the
 * stream stays in step (the caller may still send an ERROR and read the
 * peer's next message).  Best effort: the refusal is the error to report.
 */
static void discard(struct oob *o, size_t len, int64_t deadline)
{
	uint8_t junk[4096];
	size_t got;
	bool eof;

	while (len > 0) {
		size_t n = len < sizeof(junk) ? len : sizeof(junk);

		if (oob_read_exact(o, junk, n, deadline, &got, &eof) < 0)
			return;
		len -= n;
	}
}

/* Reports a peer's ERROR message: reads (a bounded part of) its text. */
static int peer_error(struct oob *o, uint32_t len, int64_t deadline, char *err)
{
	uint8_t text[ERROR_TEXT_MAX];
	char shown[ERROR_TEXT_MAX];
	size_t want = len < sizeof(text) ? len : sizeof(text), got = 0;
	bool eof;

	/* Whatever part of the text arrives is worth showing; errors here don't matter. */
	if (oob_read_exact(o, text, want, deadline, &got, &eof) == 0)
		discard(o, len - want, deadline);
	oob_sanitize(shown, sizeof(shown), text, got);
	if (shown[0])
		oob_errf(err, "peer: %s", shown);
	else
		oob_errf(err, "peer: gave up without saying why; check its output");
	return -1;
}

/*
 * The one receive path.  hello: word EOF and timeouts for the first
 * message, when the other end may not be rdmakit at all.
 */
static int recv_impl(struct oob *o, enum oob_type expect, enum oob_type *type_out, void *buf,
		     size_t cap, size_t *len_out, char *err, enum fail *why, bool hello)
{
	int64_t deadline = oob_deadline_after(o->timeout_ms);
	const char *what = oob_type_name(expect);
	uint8_t hdr[OOB_HDR_LEN];
	uint32_t version, type, len;
	size_t got = 0;
	bool eof;
	char t[16];
	int r;

	*why = F_OTHER;
	*len_out = 0;
	if (o->fd < 0) {
		oob_errf(err, "the control connection is already closed");
		return -1;
	}

	/*
	 * Header, checking the magic as soon as its first bytes arrive: a
	 * foreign server's short greeting must not leave us waiting for 12.
	 */
	while (got < OOB_HDR_LEN) {
		ssize_t n = oob_read_some(o, hdr + got, OOB_HDR_LEN - got, deadline);

		if (n > 0) {
			got += (size_t)n;
			if (memcmp(hdr, OOB_MAGIC, got < 4 ? got : 4))
				return oob_not_rdmakit(o, hdr, got, err);
			continue;
		}
		if (n == 0 && got == 0) {
			*why = F_EOF;
			if (hello)
				oob_errf(err, "peer at %s closed the control connection during the hello; "
					  "is it rdmakit, and the same version? check its output",
				     o->peer);
			else
				oob_errf(err, "peer closed the control connection while we waited for its %s; "
					  "it exited or failed, check its output", what);
		} else if (n == 0) {
			oob_errf(err, "peer closed the control connection in the middle of a message "
				  "(got %zu of %d header bytes); check its output", got, OOB_HDR_LEN);
		} else if (n == IO_TIMEOUT && got == 0) {
			*why = F_TIMEOUT;
			if (hello)
				oob_errf(err, "timed out after %s s waiting for the peer's hello; is rdmakit "
					  "(not another program) listening at %s?",
				     oob_secs(o->timeout_ms, t, sizeof(t)), o->peer);
			else
				oob_errf(err, "timed out after %s s waiting for the peer's %s; the peer is "
					  "gone or stuck (raise --timeout if it needs longer)",
				     oob_secs(o->timeout_ms, t, sizeof(t)), what);
		} else if (n == IO_TIMEOUT) {
			oob_errf(err, "timed out after %s s in the middle of the peer's message header "
				  "(got %zu of %d bytes); the peer or the network stalled",
			     oob_secs(o->timeout_ms, t, sizeof(t)), got, OOB_HDR_LEN);
		} else if (n == IO_STOP) {
			oob_errf(err, "interrupted while waiting for the peer's %s", what);
		} else {
			oob_errf(err, "cannot read the control connection: %s", strerror(errno));
		}
		return -1;
	}
	version = oob_get16(hdr + 4);
	type = oob_get16(hdr + 6);
	len = oob_get32(hdr + 8);

	if (version != OOB_PROTO_VERSION) {
		uint8_t hp[OOB_HELLO_LEN];
		char pv[OOB_VERSION_LEN] = "";

		/*
		 * The header and HELLO layouts never change, so the peer's
		 * rdmakit version can be read whatever protocol it speaks.
		 */
		if (type == OOB_HELLO && len >= 4 && len <= OOB_MAX_PAYLOAD) {
			size_t want = len < sizeof(hp) ? len : sizeof(hp);

			if (oob_read_exact(o, hp, want, deadline, &got, &eof) == 0)
				hello_version(hp, want, pv);
		}
		*why = F_VERSION;
		oob_errf(err, "peer speaks rdmakit control protocol %u, we speak %d; use the same "
			  "rdmakit version on both sides (peer runs %s, we run %s)",
		     version, OOB_PROTO_VERSION, pv[0] ? pv : "an unknown version", RDMAKIT_VERSION);
		return -1;
	}
	/* Checked before anything is read or sized from it. */
	if (len > OOB_MAX_PAYLOAD) {
		oob_errf(err, "peer announced a %u-byte %s, over the %d-byte limit of a control "
			  "message; the peer is broken, check its version",
		     len, oob_type_valid(type) ? oob_type_name(type) : "message", OOB_MAX_PAYLOAD);
		return -1;
	}
	if (!oob_type_valid(type)) {
		oob_errf(err, "peer sent a control message of unknown type %u; use the same rdmakit "
			  "version on both sides", type);
		return -1;
	}
	if (type == OOB_ERROR && expect != OOB_ERROR)
		return peer_error(o, len, deadline, err);
	if (expect != OOB_ANY && type != expect) {
		if (type == OOB_BYE)
			oob_errf(err, "peer ended the session while we waited for its %s; "
				  "check its output", what);
		else
			oob_errf(err, "peer sent its %s while we waited for its %s; run the same "
				  "command and options on both sides",
			     oob_type_name(type), what);
		discard(o, len, deadline);
		return -1;
	}
	what = oob_type_name(type);
	if (len > cap) {
		oob_errf(err, "peer's %s is %u bytes, more than the %zu we accept; run the same "
			  "rdmakit version and options on both sides", what, len, cap);
		discard(o, len, deadline);
		return -1;
	}
	r = oob_read_exact(o, buf, len, deadline, &got, &eof);
	if (r < 0) {
		if (eof)
			oob_errf(err, "peer closed the control connection in the middle of its %s "
				  "(got %zu of %u bytes); check its output", what, got, len);
		else if (r == IO_TIMEOUT)
			oob_errf(err, "timed out after %s s in the middle of the peer's %s (got %zu of "
				  "%u bytes); the peer or the network stalled",
			     oob_secs(o->timeout_ms, t, sizeof(t)), what, got, len);
		else if (r == IO_STOP)
			oob_errf(err, "interrupted while receiving the peer's %s", what);
		else
			oob_errf(err, "cannot read the control connection: %s", strerror(errno));
		return -1;
	}
	if (cap > len)
		((uint8_t *)buf)[len] = 0;
	*type_out = (enum oob_type)type;
	*len_out = len;
	return 0;
}

int oob_recv(struct oob *o, enum oob_type expect_type, void *buf, size_t cap, size_t *len,
	     char *err)
{
	enum oob_type type;
	enum fail why;

	return recv_impl(o, expect_type, &type, buf, cap, len, err, &why, false);
}

int oob_recv_msg(struct oob *o, enum oob_type *type, void *buf, size_t cap, size_t *len,
		 char *err)
{
	enum fail why;

	return recv_impl(o, OOB_ANY, type, buf, cap, len, err, &why, false);
}

/* --- helpers ---------------------------------------------------------------- */

/*
 * HELLO is padded to OOB_HELLO_LEN bytes on purpose: a perftest server
 * (the likeliest wrong program on port 18515) first reads a fixed 16-byte
 * version string, older ones a fixed key message of up to 108 bytes.  A
 * HELLO longer than both always completes that read, so perftest answers
 * or hangs up at once and the user gets "not rdmakit" instead of a timeout.
 */
static int send_hello(struct oob *o, int64_t deadline, char *err)
{
	uint8_t p[OOB_HELLO_LEN] = { 0 };
	size_t vlen = strlen(RDMAKIT_VERSION);

	if (vlen > OOB_VERSION_LEN - 1)
		vlen = OOB_VERSION_LEN - 1;
	oob_put16(p, OOB_PROTO_VERSION);
	oob_put16(p + 2, 0);		/* flags: none yet */
	memcpy(p + 4, RDMAKIT_VERSION, vlen);
	return oob_send_deadline(o, OOB_HELLO, p, sizeof(p), deadline, err);
}

static int recv_hello(struct oob *o, char *err, enum fail *why)
{
	uint8_t p[OOB_HELLO_LEN];
	enum oob_type type;
	size_t len;

	if (recv_impl(o, OOB_HELLO, &type, p, sizeof(p), &len, err, why, true) < 0)
		return -1;
	if (len < 5 || oob_get16(p) != OOB_PROTO_VERSION) {
		oob_errf(err, "peer at %s sent a malformed hello; use the same rdmakit version on "
			  "both sides", o->peer);
		return -1;
	}
	hello_version(p, len, o->peer_version);
	return 0;
}

int oob_hello(struct oob *o, bool is_server, char *err)
{
	enum fail why;

	o->peer_version[0] = '\0';
	if (!is_server) {
		if (oob_open_client(o, err) < 0)
			return -1;
		if (o->peer_perftest)
			return OOB_PEER_PERFTEST;
		if (send_hello(o, oob_deadline_after(o->timeout_ms), err) < 0)
			return -1;
		return recv_hello(o, err, &why);
	}
	if (recv_hello(o, err, &why) < 0) {
		/*
		 * Still tell a client of another version who we are: it then
		 * reports the mismatch itself instead of a closed connection.
		 */
		if (why == F_VERSION)
			send_hello(o, oob_deadline_after(ERROR_SEND_MS), NULL);
		return -1;
	}
	return send_hello(o, oob_deadline_after(o->timeout_ms), err);
}

int oob_barrier(struct oob *o, uint32_t id, char *err)
{
	uint8_t p[8];
	size_t len;

	oob_put32(p, id);
	if (oob_send(o, OOB_BARRIER, p, 4, err) < 0)
		return -1;
	if (oob_recv(o, OOB_BARRIER, p, sizeof(p), &len, err) < 0)
		return -1;
	if (len != 4) {
		oob_errf(err, "peer's barrier is %zu bytes, not 4; use the same rdmakit version on "
			  "both sides", len);
		return -1;
	}
	if (oob_get32(p) != id) {
		oob_errf(err, "peer reached barrier %u while we are at barrier %u; the two sides are "
			  "out of step, run the same command and options on both", oob_get32(p), id);
		return -1;
	}
	return 0;
}

void oob_send_error(struct oob *o, const char *text)
{
	int ms = o->timeout_ms >= 0 && o->timeout_ms < ERROR_SEND_MS ? o->timeout_ms : ERROR_SEND_MS;
	size_t len = text ? strnlen(text, ERROR_TEXT_MAX - 1) : 0;

	if (o->fd >= 0)
		oob_send_deadline(o, OOB_ERROR, text, len, oob_deadline_after(ms), NULL);
}

int oob_bye(struct oob *o, char *err)
{
	uint8_t p[1];
	enum oob_type type;
	enum fail why;
	size_t len;

	if (oob_send(o, OOB_BYE, NULL, 0, err) < 0)
		return -1;
	if (recv_impl(o, OOB_BYE, &type, p, sizeof(p), &len, err, &why, false) == 0)
		return 0;
	/* A peer that closed right after its last message is done too. */
	return why == F_EOF ? 0 : -1;
}

/* --- perftest's unframed messages ------------------------------------------- */

static int raw_failed(struct oob *o, int r, bool eof, size_t got, size_t len, const char *what,
		      char *err)
{
	char t[16];

	if (eof)
		oob_errf(err, "the perftest peer at %s closed the connection %s (after %zu of %zu "
			      "bytes); perftest exits on any mismatch: its own output says which "
			      "option differs", o->peer, what, got, len);
	else if (r == IO_TIMEOUT)
		oob_errf(err, "timed out after %s s %s from the perftest peer at %s; check that it "
			      "runs the same test (--timeout sets the wait)",
			 oob_secs(o->timeout_ms, t, sizeof(t)), what, o->peer);
	else if (r == IO_STOP)
		oob_errf(err, "interrupted %s", what);
	else if (r == IO_CLOSED)
		oob_errf(err, "the perftest peer at %s reset the connection %s; perftest exits on "
			      "any mismatch: its own output says which option differs", o->peer, what);
	else
		oob_errf(err, "cannot use the connection to %s: %s", o->peer, strerror(errno));
	return -1;
}

int oob_send_raw(struct oob *o, const void *buf, size_t len, char *err)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	int r = oob_write_all(o, &iov, 1, oob_deadline_after(o->timeout_ms));

	return r < 0 ? raw_failed(o, r, false, 0, len, "while sending", err) : 0;
}

int oob_recv_raw(struct oob *o, void *buf, size_t len, char *err)
{
	size_t got;
	bool eof;
	int r = oob_read_exact(o, buf, len, oob_deadline_after(o->timeout_ms), &got, &eof);

	return r < 0 || eof ? raw_failed(o, r, eof, got, len, "while waiting for its message",
					 err) : 0;
}

int oob_recv_raw_within(struct oob *o, void *buf, size_t len, int timeout_ms, char *err)
{
	size_t got;
	bool eof;
	int r = oob_read_exact(o, buf, len, oob_deadline_after(timeout_ms), &got, &eof);

	if (r == IO_TIMEOUT && !eof && got == 0)
		return 0;
	return r < 0 || eof ? raw_failed(o, r, eof, got, len, "while waiting for its message",
					 err) : 1;
}
