// SPDX-License-Identifier: MIT
/*
 * The control channel's sockets (see oob.h): listening on one socket for
 * IPv6 and IPv4, connecting within a deadline while the server comes up,
 * and naming peers for messages.  Every socket is non-blocking for its
 * whole life; the waits are oob.c's, bounded by a deadline.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "oob.h"
#include "oob_int.h"

/* Pause between connection attempts while the server is not up yet. */
#define CONNECT_RETRY_MS 50

static void fmt_peer(char *out, const char *host, uint16_t port)
{
	if (strchr(host, ':'))
		snprintf(out, OOB_PEER_LEN, "[%s]:%u", host, port);
	else
		snprintf(out, OOB_PEER_LEN, "%s:%u", host, port);
}

void oob_fmt_sockaddr(char *out, const struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN] = "?";
	uint16_t port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
		port = ntohs(s->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;

		/* A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d. */
		if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr))
			inet_ntop(AF_INET, &s->sin6_addr.s6_addr[12], host, sizeof(host));
		else
			inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
		port = ntohs(s->sin6_port);
	}
	fmt_peer(out, host, port);
}

void oob_init(struct oob *o, int fd, int timeout_ms)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->timeout_ms = timeout_ms;
	o->stop = NULL;
}

/*
 * Control messages are small request/response exchanges: without
 * TCP_NODELAY, Nagle plus delayed ACKs can hold a barrier for 40 ms.
 */
void oob_set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* --- listen / accept / connect ------------------------------------------- */

static int listen_explain(const char *what, uint16_t port, int e, char *err)
{
	if (e == EADDRINUSE)
		oob_errf(err, "control port %u is already in use on %s (another rdmakit server?); "
			  "stop it or pick another -p/--port", port, what);
	else if (e == EADDRNOTAVAIL)
		oob_errf(err, "cannot listen on %s: it is not an address of this host; "
			  "check the bind address", what);
	else if (e == EACCES)
		oob_errf(err, "cannot listen on %s port %u: permission denied; "
			  "ports below 1024 need root, pick another -p/--port", what, port);
	else
		oob_errf(err, "cannot listen on %s port %u: %s", what, port, strerror(e));
	return -1;
}

/* socket + SO_REUSEADDR + bind + listen: the fd, or -1 with errno set. */
static int listen_on(const struct sockaddr *sa, socklen_t salen, bool dual_stack)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, zero = 0, e;

	if (fd < 0)
		return -1;
	/* A server restarted right after a run must not wait out TIME_WAIT. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	/* One socket for IPv6 and IPv4 clients, whatever net.ipv6.bindv6only says. */
	if (dual_stack && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0)
		goto fail;
	if (bind(fd, sa, salen) < 0 || listen(fd, 256) < 0)
		goto fail;
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int oob_listen(const char *bind_addr, uint16_t port, int *listen_fd, char *err)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *res, *ai;
	char svc[8];
	int fd, rc, e = 0;

	*listen_fd = -1;
	if (!bind_addr) {
		struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
					   .sin6_addr = IN6ADDR_ANY_INIT };
		struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(port),
					  .sin_addr.s_addr = htonl(INADDR_ANY) };

		fd = listen_on((struct sockaddr *)&s6, sizeof(s6), true);
		/* No IPv6 on this host (ipv6.disable=1): IPv4 alone will do. */
		if (fd < 0 && errno != EADDRINUSE && errno != EACCES)
			fd = listen_on((struct sockaddr *)&s4, sizeof(s4), false);
		if (fd < 0)
			return listen_explain("all addresses", port, errno, err);
		*listen_fd = fd;
		return 0;
	}

	snprintf(svc, sizeof(svc), "%u", port);
	rc = getaddrinfo(bind_addr, svc, &hints, &res);
	if (rc) {
		oob_errf(err, "cannot resolve bind address %s: %s; give an IP address of this host",
		     bind_addr, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}
	fd = -1;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = listen_on(ai->ai_addr, ai->ai_addrlen, false);
		if (fd < 0)
			e = errno;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return listen_explain(bind_addr, port, e, err);
	*listen_fd = fd;
	return 0;
}

uint16_t oob_listen_port(int listen_fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(listen_fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/*
 * One non-blocking connect() to ai, bounded by the deadline: the fd, or
 * -1 with *e the reason (ETIMEDOUT when our deadline passed first).
 */
static int try_connect(const struct addrinfo *ai, const struct addrinfo *src, int64_t deadline,
		       int *e)
{
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof(*e);
	int w;

	if (fd < 0) {
		*e = errno;
		return -1;
	}
	if (src && bind(fd, src->ai_addr, src->ai_addrlen) < 0) {
		*e = errno;
		goto fail;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS && errno != EINTR) {
		*e = errno;
		goto fail;
	}
	w = oob_wait_fd(NULL, fd, POLLOUT, deadline);
	if (w <= 0) {
		*e = w == 0 ? ETIMEDOUT : errno;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, e, &len) < 0)
		*e = errno;
	if (*e == 0)
		return fd;
fail:
	close(fd);
	return -1;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int oob_connect(const char *host, uint16_t port, int timeout_ms, struct oob *o, char *err)
{
	return oob_connect_from(host, port, NULL, timeout_ms, o, err);
}

int oob_connect_from(const char *host, uint16_t port, const char *source, int timeout_ms,
		     struct oob *o, char *err)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV,
	};
	int64_t deadline = oob_deadline_after(timeout_ms);
	struct addrinfo *res, *ai, *src = NULL;
	char svc[8], t[16];
	int rc, fd = -1, e = 0;
	/* Sticky: the last try may be cut short by the deadline instead. */
	bool refused = false;

	oob_init(o, -1, timeout_ms);
	fmt_peer(o->peer, host, port);
	snprintf(svc, sizeof(svc), "%u", port);
	/* getaddrinfo() has no timeout of its own; literals and /etc/hosts are instant. */
	rc = getaddrinfo(host, svc, &hints, &res);
	if (rc) {
		oob_errf(err, "cannot resolve %s: %s; check the host name or give an IP address", host,
		     rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}
	if (source) {
		struct addrinfo sh = { .ai_family = res->ai_family, .ai_socktype = SOCK_STREAM,
				       .ai_flags = AI_NUMERICHOST | AI_PASSIVE };

		if (getaddrinfo(source, "0", &sh, &src) != 0) {
			oob_errf(err, "invalid source address '%s': give a local address of the same "
				      "family as %s", source, host);
			freeaddrinfo(res);
			return -1;
		}
	}
	for (;;) {
		bool refused_now = false;
		int other = 0;

		for (ai = res; ai && fd < 0; ai = ai->ai_next) {
			fd = try_connect(ai, src, deadline, &e);
			if (fd >= 0)
				break;
			if (e == ECONNREFUSED)
				refused = refused_now = true;
			else if (e == ETIMEDOUT)
				break;
			else
				other = e;
			if (e == EADDRNOTAVAIL && src)
				break;
		}
		if (fd >= 0)
			break;
		if (e == ETIMEDOUT || (deadline >= 0 && oob_now_ns() >= deadline)) {
			if (refused)
				oob_errf(err, "no rdmakit server at %s after %s s (connection refused); "
					  "start the server side there first, or check -p/--port",
				     o->peer, oob_secs(timeout_ms, t, sizeof(t)));
			else
				oob_errf(err, "timed out after %s s connecting to %s; check the address, "
					  "the route, and that no firewall drops TCP port %u",
				     oob_secs(timeout_ms, t, sizeof(t)), o->peer, port);
			freeaddrinfo(res);
			if (src)
				freeaddrinfo(src);
			return -1;
		}
		/*
		 * Only "refused" is worth retrying: it is what a client started a
		 * moment before its server sees.  Unreachable networks and the
		 * like will not fix themselves within a test's timeout.
		 */
		if (!refused_now) {
			if (other == EADDRNOTAVAIL && src)
				oob_errf(err, "%s is not an address of this host: give --bind_source_ip "
					      "one of its addresses", source);
			else
				oob_errf(err, "cannot connect to %s: %s; check the address and the route",
				     o->peer, strerror(other));
			freeaddrinfo(res);
			if (src)
				freeaddrinfo(src);
			return -1;
		}
		if (deadline < 0) {
			sleep_ms(CONNECT_RETRY_MS);
		} else {
			int64_t left = (deadline - oob_now_ns()) / 1000000;

			sleep_ms(left < CONNECT_RETRY_MS ? (left > 0 ? left : 0) : CONNECT_RETRY_MS);
		}
	}
	freeaddrinfo(res);
	if (src)
		freeaddrinfo(src);
	oob_set_nodelay(fd);
	o->fd = fd;
	return 0;
}

void oob_close(struct oob *o)
{
	if (o && o->fd >= 0) {
		close(o->fd);
		o->fd = -1;
	}
}

/* The numeric address (no port) at one end of a connected socket. */
void oob_socket_addr(int fd, bool local, char *out, size_t cap)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int rc = local ? getsockname(fd, (struct sockaddr *)&ss, &len)
		       : getpeername(fd, (struct sockaddr *)&ss, &len);

	out[0] = '\0';
	if (rc < 0)
		return;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		/* A v4 client on a dual-stack listener shows up v4-mapped. */
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
			inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], out, (socklen_t)cap);
		else
			inet_ntop(AF_INET6, &s6->sin6_addr, out, (socklen_t)cap);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, out, (socklen_t)cap);
	}
}
