// SPDX-License-Identifier: MIT
/*
 * rdmakit top as a Prometheus exporter: --listen serves /metrics over HTTP
 * (libmicrohttpd), read on each scrape; --textfile writes the exposition
 * for node_exporter's textfile collector every interval.  Rendering is
 * lib/stats/prom.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "prom.h"
#include "top.h"

#define HOME_PAGE                                                                   \
	"<html><head><title>rdmakit top</title></head><body>\n"                     \
	"<h1>rdmakit top</h1>\n"                                                    \
	"<p>RDMA port, PFC, ECN/CNP, retransmission and soft-engine counters for "  \
	"Prometheus: <a href=\"/metrics\">/metrics</a> (text format 0.0.4, or "     \
	"OpenMetrics 1.0 when the scraper asks for it). man rdmakit-top lists the " \
	"metrics.</p>\n</body></html>\n"

struct exporter {
	struct top_state *st;
	pthread_mutex_t lock;		/* one sample at a time: scrapes and textfile */
	unsigned long long errors;
};

/* Samples the counters now and renders them: a malloc'd buffer, or NULL. */
static char *expose(struct exporter *x, enum prom_format f, size_t *len)
{
	struct prom_scrape sc = { 0 };
	char *buf = NULL;
	uint64_t t0;
	FILE *out;

	pthread_mutex_lock(&x->lock);
	t0 = top_now_ns();
	sc.ok = top_sample(x->st) == 0;
	sc.duration_s = (double)(top_now_ns() - t0) / 1e9;
	if (!sc.ok)
		x->errors++;
	sc.errors = x->errors;
	out = open_memstream(&buf, len);
	if (out) {
		prom_write(out, f, sc.ok ? &x->st->cur : NULL, &sc);
		if (fclose(out)) {
			free(buf);
			buf = NULL;
		}
	}
	pthread_mutex_unlock(&x->lock);
	return buf;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, void *body, size_t len,
			     enum MHD_ResponseMemoryMode mode, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result rc;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **req_cls)
{
	struct exporter *x = cls;
	enum prom_format f;
	size_t len = 0;
	char *body;

	(void)version, (void)upload_data, (void)req_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		struct MHD_Response *r = MHD_create_response_from_buffer(9, "only GET\n",
									 MHD_RESPMEM_PERSISTENT);
		enum MHD_Result rc;

		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
		rc = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return rc;
	}
	(void)upload_size;	/* GET and HEAD carry no body */
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, HOME_PAGE, sizeof(HOME_PAGE) - 1,
			     MHD_RESPMEM_PERSISTENT, "text/html; charset=utf-8");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n", 39,
			     MHD_RESPMEM_PERSISTENT, "text/plain");
	f = prom_negotiate(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"));
	body = expose(x, f, &len);
	if (!body)
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", 14,
			     MHD_RESPMEM_PERSISTENT, "text/plain");
	return reply(c, MHD_HTTP_OK, body, len, MHD_RESPMEM_MUST_FREE,
		     f == PROM_OPENMETRICS_100 ? PROM_CONTENT_TYPE_OM : PROM_CONTENT_TYPE_004);
}

/*
 * --listen [ADDR][:PORT]: "127.0.0.1", ":18525", "0.0.0.0:9000", "::1",
 * "[::1]:9000".
 */
int top_parse_listen(struct top_opts *o)
{
	const char *spec = o->listen;
	struct sockaddr_storage *sa = &o->listen_addr;
	char addr[INET6_ADDRSTRLEN + 2] = "", a[INET6_ADDRSTRLEN];
	const char *port = NULL, *colon = strrchr(spec, ':');
	unsigned long p = TOP_EXPORT_PORT;
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
	char *end;

	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close == spec + 1 || (close[1] && close[1] != ':') ||
		    (size_t)(close - spec - 1) >= sizeof(addr))
			goto bad;
		memcpy(addr, spec + 1, (size_t)(close - spec - 1));
		port = close[1] ? close + 2 : NULL;
	} else if (colon && strchr(spec, ':') == colon) {	/* ADDR:PORT or :PORT */
		if ((size_t)(colon - spec) >= sizeof(addr))
			goto bad;
		memcpy(addr, spec, (size_t)(colon - spec));
		port = colon + 1;
	} else {						/* ADDR alone (IPv6 too) */
		if (strlen(spec) >= sizeof(addr))
			goto bad;
		strcpy(addr, spec);
	}
	if (port) {
		errno = 0;
		p = strtoul(port, &end, 10);
		if (*port < '0' || *port > '9' || *end || errno || p < 1 || p > 65535)
			return usage_error("top", "invalid port in --listen '%s': expected 1-65535, "
					   "e.g. --listen 127.0.0.1:%d", spec, TOP_EXPORT_PORT);
	}
	memset(sa, 0, sizeof(*sa));
	if (!addr[0] || !strcmp(addr, "localhost"))
		strcpy(addr, "127.0.0.1");
	if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)p);
		o->listen_len = sizeof(*v4);
		snprintf(o->listen_text, sizeof(o->listen_text), "%s:%lu",
			 inet_ntop(AF_INET, &v4->sin_addr, a, sizeof(a)), p);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)p);
		o->listen_len = sizeof(*v6);
		snprintf(o->listen_text, sizeof(o->listen_text), "[%s]:%lu",
			 inet_ntop(AF_INET6, &v6->sin6_addr, a, sizeof(a)), p);
		return 0;
	}
bad:
	return usage_error("top", "invalid address in --listen '%s': expected [ADDR][:PORT] with "
			   "an IP address, e.g. 127.0.0.1:%d, :%d or [::1]:%d", spec, TOP_EXPORT_PORT,
			   TOP_EXPORT_PORT, TOP_EXPORT_PORT);
}

/* The listening socket, bound here so that a port in use is said as such. */
static int listen_on(const struct sockaddr_storage *sa, socklen_t salen, const char *spec)
{
	int one = 1, fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -runtime_error("top", "--listen %s: %s", spec, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)sa, salen) < 0 || listen(fd, 64) < 0) {
		int e = errno;

		close(fd);
		return -runtime_error("top", "--listen %s: %s%s", spec, strerror(e),
				      e == EADDRINUSE ? "; another program serves that port: give "
				      "another with --listen ADDR:PORT" : "");
	}
	return fd;
}

/* The 0.0.4 exposition into PATH, atomically: written beside it, renamed. */
static int write_textfile(struct exporter *x, const char *path)
{
	char tmp[4096];
	size_t len = 0;
	char *body = expose(x, PROM_TEXT_004, &len);
	FILE *f = NULL;
	int ok, fd;

	if (!body)
		return runtime_error("top", "--textfile %s: out of memory", path);
	/* Not *.prom: node_exporter must never read a half-written file.  A
	 * new file, never a link someone left there. */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0 && !(f = fdopen(fd, "w")))
		close(fd);
	ok = f && fwrite(body, 1, len, f) == len;
	if (f && (fflush(f) || fsync(fileno(f))))
		ok = 0;
	if (f && fclose(f))
		ok = 0;
	free(body);
	if (!ok || rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		return runtime_error("top", "--textfile %s: %s; give a file in a writable "
				     "directory", path, strerror(e));
	}
	return 0;
}

int top_export(struct top_state *st)
{
	const struct top_opts *o = st->o;
	struct exporter x = { .st = st };
	struct MHD_Daemon *d = NULL;
	int rc = EXIT_OK, fd = -1;

	cmd_catch_stop(false);	/* SIGINT, SIGTERM: stop serving cleanly */
	pthread_mutex_init(&x.lock, NULL);
	if (o->listen) {
		fd = listen_on(&o->listen_addr, o->listen_len, o->listen);
		if (fd < 0) {
			pthread_mutex_destroy(&x.lock);
			return -fd;
		}
		/* poll(), not select(): the counter files top keeps open put new
		 * sockets above FD_SETSIZE on a host with many ports. */
		d = MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD, 0, NULL, NULL, handle, &x,
				     MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
				     (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				     MHD_OPTION_END);
		if (!d) {
			close(fd);
			pthread_mutex_destroy(&x.lock);
			return runtime_error("top", "--listen %s: the HTTP server did not start",
					     o->listen);
		}
		fprintf(stderr, "rdmakit top: serving http://%s/metrics\n", o->listen_text);
	}
	for (uint64_t i = 0, next = top_now_ns(); !cmd_stop && (!o->iterations || i < o->iterations);
	     i++) {
		/* A failed write (a full disk) is said and tried again next time;
		 * the exit status keeps it. */
		if (o->textfile && write_textfile(&x, o->textfile))
			rc = EXIT_RUNTIME;
		next += (uint64_t)(o->delay_s * 1e9);
		top_sleep_until(next);
	}
	if (d)
		MHD_stop_daemon(d);
	pthread_mutex_destroy(&x.lock);
	return rc;
}
