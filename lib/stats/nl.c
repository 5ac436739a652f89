// SPDX-License-Identifier: MIT
/*
 * Netlink on libmnl for the counter readers: strict reply walks and one
 * kept socket per bus with a deadline per question (nl.h says why strict).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nl.h"

/* ---- walks --------------------------------------------------------------- */

const void *nl_aligned(const void *buf, size_t len, void **copy)
{
	*copy = NULL;
	if (!buf && len) {
		errno = EPROTO;
		return NULL;
	}
	if (((uintptr_t)buf & 3) == 0)
		return buf;
	*copy = malloc(len ? len : 1);
	if (!*copy) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(*copy, buf, len);
	return *copy;
}

int nl_cb_proto(void)
{
	errno = EPROTO;
	return MNL_CB_ERROR;
}

/* The bytes from `at` to `end` that no whole message or attribute took:
 * nothing, or the padding of the last one, is well formed. */
static bool leftover_ok(const void *at, const void *end)
{
	return (const char *)at >= (const char *)end;
}

/* mnl_nlmsg_ok, and nlmsg_len not past what is left: libmnl compares it
 * as an int, so a length of 2^31 or more would pass and walk off. */
static bool msg_ok(const struct nlmsghdr *nlh, int left)
{
	return mnl_nlmsg_ok(nlh, left) && nlh->nlmsg_len <= (uint32_t)left;
}

/* An NLMSG_ERROR answer as errno: -1 always (an ACK, error 0, is no answer
 * to a request sent without NLM_F_ACK; an error is -1 .. -4095). */
static int answer_error(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e) || e->error >= 0 || e->error < -4095)
		errno = EPROTO;
	else
		errno = -e->error;
	return -1;
}

int nl_find_answer(const void *buf, size_t len, uint32_t seq, const struct nlmsghdr **ans)
{
	const struct nlmsghdr *nlh = buf, *first = NULL;
	int left = len > (size_t)INT32_MAX ? -1 : (int)len;

	if (!buf || left <= 0) {
		errno = EPROTO;
		return -1;
	}
	for (; msg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		if (!first && nlh->nlmsg_seq == seq && nlh->nlmsg_type != NLMSG_NOOP)
			first = nlh;
	if (left > 0) {
		errno = EPROTO;
		return -1;
	}
	if (!first)
		return 0;
	if (first->nlmsg_type == NLMSG_ERROR)
		return answer_error(first);
	if (first->nlmsg_type < NLMSG_MIN_TYPE) {	/* DONE, OVERRUN */
		errno = EPROTO;
		return -1;
	}
	*ans = first;
	return 1;
}

int nl_dump_walk(const void *buf, size_t len, uint32_t seq,
		 int (*each)(const struct nlmsghdr *nlh, void *ctx), void *ctx)
{
	const struct nlmsghdr *nlh = buf;
	int left = len > (size_t)INT32_MAX ? -1 : (int)len;
	bool done = false;

	if (!buf || left <= 0) {
		errno = EPROTO;
		return -1;
	}
	/* Framing first, so that a broken datagram hands nothing on. */
	for (; msg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		;
	if (left > 0) {
		errno = EPROTO;
		return -1;
	}
	left = (int)len;
	for (nlh = buf; !done && msg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_seq != seq || nlh->nlmsg_type == NLMSG_NOOP)
			continue;
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
			errno = EAGAIN;		/* the table changed under the dump */
			return -1;
		}
		switch (nlh->nlmsg_type) {
		case NLMSG_ERROR:
			return answer_error(nlh);
		case NLMSG_DONE:
			done = true;
			break;
		case NLMSG_OVERRUN:
			errno = EPROTO;
			return -1;
		default:
			if (each(nlh, ctx) < 0)
				return -1;
		}
	}
	return done ? 0 : 1;
}

int nl_attrs(const void *payload, size_t len, mnl_attr_cb_t cb, void *data)
{
	const struct nlattr *attr;
	const char *end = (const char *)payload + len;

	if (len > UINT16_MAX * 16u) {
		errno = EPROTO;
		return -1;
	}
	mnl_attr_for_each_payload(payload, len) {
		if (cb(attr, data) < MNL_CB_OK) {
			if (!errno)
				errno = EPROTO;
			return -1;
		}
	}
	if (!leftover_ok(attr, end)) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

int nl_msg_attrs(const struct nlmsghdr *nlh, size_t hdrlen, mnl_attr_cb_t cb, void *data)
{
	size_t plen = mnl_nlmsg_get_payload_len(nlh), skip = MNL_ALIGN(hdrlen);

	if (plen < hdrlen) {
		errno = EPROTO;
		return -1;
	}
	if (skip >= plen)
		return 0;
	return nl_attrs((const char *)mnl_nlmsg_get_payload(nlh) + skip, plen - skip, cb, data);
}

int nl_nest_attrs(const struct nlattr *nest, mnl_attr_cb_t cb, void *data)
{
	return nl_attrs(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), cb, data);
}

static int get_fixed(const struct nlattr *a, enum mnl_attr_data_type t, void *v, size_t n)
{
	if (mnl_attr_validate(a, t) < 0) {
		errno = EPROTO;
		return -1;
	}
	memcpy(v, mnl_attr_get_payload(a), n);
	return 0;
}

int nl_get_u8(const struct nlattr *a, uint8_t *v)
{
	return get_fixed(a, MNL_TYPE_U8, v, sizeof(*v));
}

int nl_get_u16(const struct nlattr *a, uint16_t *v)
{
	return get_fixed(a, MNL_TYPE_U16, v, sizeof(*v));
}

int nl_get_u32(const struct nlattr *a, uint32_t *v)
{
	return get_fixed(a, MNL_TYPE_U32, v, sizeof(*v));
}

int nl_get_u64(const struct nlattr *a, uint64_t *v)
{
	return get_fixed(a, MNL_TYPE_U64, v, sizeof(*v));
}

int nl_get_str(const struct nlattr *a, char *out, size_t cap)
{
	size_t n = mnl_attr_get_payload_len(a);

	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0 || n > cap ||
	    memchr(mnl_attr_get_payload(a), '\0', n) != (const char *)mnl_attr_get_payload(a) + n - 1) {
		errno = EPROTO;
		return -1;
	}
	memcpy(out, mnl_attr_get_payload(a), n);
	return 0;
}

/* ---- a socket ------------------------------------------------------------ */

void nl_conn_init(struct nl_conn *c, int bus)
{
	*c = (struct nl_conn){ .bus = bus, .seq = (uint32_t)time(NULL) };
}

void nl_conn_close(struct nl_conn *c)
{
	if (c->sock)
		mnl_socket_close(c->sock);
	c->sock = NULL;
	free(c->buf);
	c->buf = NULL;
}

static void conn_drop(struct nl_conn *c)
{
	if (c->sock)
		mnl_socket_close(c->sock);
	c->sock = NULL;
}

/* Opens the socket unless it is open: 0, or -1 with errno. */
static int conn_ready(struct nl_conn *c)
{
	int e;

	if (c->sock)
		return 0;
	if (!c->buf && !(c->buf = malloc(NL_RECV_BUF))) {
		errno = ENOMEM;
		return -1;
	}
	c->sock = mnl_socket_open2(c->bus, SOCK_CLOEXEC);
	if (!c->sock)
		return -1;
	if (mnl_socket_bind(c->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		e = errno;
		conn_drop(c);
		errno = e;
		return -1;
	}
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int nl_conn_talk(struct nl_conn *c, struct nlmsghdr *req, nl_parse_fn parse, void *ctx)
{
	int64_t deadline;
	ssize_t n;
	int e;

	if (conn_ready(c) < 0)
		return -1;
	req->nlmsg_seq = ++c->seq;
	deadline = mono_ms() + NL_TIMEOUT_MS;
	do
		n = mnl_socket_sendto(c->sock, req, req->nlmsg_len);
	while (n < 0 && errno == EINTR);
	if (n < 0 || (size_t)n != req->nlmsg_len) {
		e = n < 0 ? errno : EIO;
		goto broken;
	}
	for (;;) {
		struct pollfd pfd = { .fd = mnl_socket_get_fd(c->sock), .events = POLLIN };
		int64_t left = deadline - mono_ms();
		int rc;

		/* The whole question has its deadline, however many datagrams. */
		if (left <= 0 || (rc = poll(&pfd, 1, (int)left)) == 0) {
			e = ETIMEDOUT;
			goto broken;
		}
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			goto broken;
		}
		n = mnl_socket_recvfrom(c->sock, c->buf, NL_RECV_BUF);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* ENOSPC: the datagram did not fit (MSG_TRUNC). */
			e = errno == ENOSPC ? EPROTO
			    : errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
			goto broken;
		}
		rc = parse(c->buf, (size_t)n, req->nlmsg_seq, ctx);
		if (rc <= 0)
			return rc;
	}
broken:
	conn_drop(c);
	errno = e;
	return -1;
}

int nl_parse_given(const void *buf, size_t len, uint32_t seq, void *ctx, nl_parse_fn parse,
		   bool dump)
{
	void *copy;
	const void *b = nl_aligned(buf, len, &copy);
	int r = b ? parse(b, len, seq, ctx) : -1, e = errno;

	free(copy);
	if (r > 0 && !dump) {
		r = -1;
		e = EPROTO;
	}
	errno = e;
	return r;
}
