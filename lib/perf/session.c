// SPDX-License-Identifier: MIT
/*
 * Test sessions: resources for one or both ends of a test, and the
 * control-channel handshake in which the client sets the test and the
 * server adopts it.  The soft engine binds the address the control
 * connection uses on each side, so a test between two namespaces or hosts
 * needs no --bind.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf_int.h"

const char *perf_op_name(enum perf_op op)
{
	static const char *const names[] = { "write", "read", "send", "atomic" };

	return names[op];
}

uint64_t perf_default_max_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t quarter = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 4 : 0;

	return quarter && quarter < (1ULL << 30) ? quarter : 1ULL << 30;
}

/* Bytes of buffer per QP: room for the largest message, 64-byte aligned. */
static size_t slot_len(uint64_t max_size)
{
	uint64_t n = max_size < 8 ? 8 : max_size;

	return (size_t)((n + 63) & ~63ULL);
}

static int end_open(struct perf_session *s, struct perf_end *e, char *err)
{
	const struct perf_opts *o = &s->o;
	struct xport_qp_attr a = {
		.max_send_wr = o->tx_depth + 8, .max_recv_wr = o->rx_depth + 8, .mtu = o->mtu,
		.max_rd_atomic = (uint8_t)(o->outs ? o->outs : 16), .timeout = o->qp_timeout,
		.retry_cnt = o->retry_cnt, .rnr_retry = o->rnr_retry, .min_rnr_timer = 1,
		.tos = o->tos, .max_inline_data = o->inline_size,
	};

	/* Two halves per QP: what this side sends (and receives SENDs into),
	 * and where a latency echo lands. */
	e->half = slot_len(s->max_size);
	e->slot = 2 * e->half;
	e->buf_len = e->slot * o->qps;
	if (posix_memalign((void **)&e->buf, 4096, e->buf_len)) {
		snprintf(err, XPORT_ERR_LEN, "cannot allocate %zu bytes of test buffers", e->buf_len);
		return -1;
	}
	memset(e->buf, 0, e->buf_len);
	e->mr = xport_reg_mr(s->dev, e->buf, e->buf_len, XPORT_ACCESS_LOCAL_WRITE |
			     XPORT_ACCESS_REMOTE_WRITE | XPORT_ACCESS_REMOTE_READ |
			     XPORT_ACCESS_REMOTE_ATOMIC, err);
	if (!e->mr)
		return -1;
	e->cq = xport_create_cq(s->dev, (int)((o->tx_depth + o->rx_depth + 16) * o->qps), err);
	if (!e->cq)
		return -1;
	for (unsigned i = 0; i < o->qps; i++) {
		e->qp[i] = xport_create_qp(s->dev, e->cq, e->cq, &a, err);
		if (!e->qp[i])
			return -1;
	}
	return 0;
}

static void end_close(struct perf_session *s, struct perf_end *e)
{
	for (unsigned i = 0; i < PERF_MAX_QPS; i++)
		if (e->qp[i])
			xport_destroy_qp(s->dev, e->qp[i]);
	if (e->cq)
		xport_destroy_cq(s->dev, e->cq);
	if (e->mr)
		xport_dereg_mr(s->dev, e->mr);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

/* Connects end x's QPs to end y's (loopback), or to the peer's info. */
static int connect_qps(struct perf_end *e, const struct xport_qp_info *peer, unsigned n,
		       char *err)
{
	for (unsigned i = 0; i < n; i++)
		if (xport_connect(e->qp[i], &peer[i], err) < 0)
			return -1;
	return 0;
}

int perf_check_bind(const char *addr, char *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST };
	struct addrinfo *ai;
	int fd, rc = -1;

	if (getaddrinfo(addr, "0", &hints, &ai) != 0) {
		snprintf(err, XPORT_ERR_LEN, "invalid address '%s' for --bind: give a local IPv4 "
			 "or IPv6 address", addr);
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		rc = 0;
	else if (errno == EADDRNOTAVAIL)
		snprintf(err, XPORT_ERR_LEN, "%s is not an address of this host: give one of the "
			 "addresses 'rdmakit devices' lists to --bind", addr);
	else
		snprintf(err, XPORT_ERR_LEN, "cannot use --bind %s: %s", addr, strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc;
}

void perf_socket_addr(int fd, bool local, char *out, size_t cap)
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

static int open_dev(struct perf_session *s, const char *bind, char *err)
{
	struct xport_dev_attr a = { .engine = s->o.engine, .bind = bind,
				    .udp_port = s->o.udp_port, .ib_dev = s->o.ib_dev,
				    .ib_port = s->o.ib_port, .gid_index = s->o.gid_index,
				    .dcqcn = s->o.dcqcn };

	snprintf(s->local_addr, sizeof(s->local_addr), "%s", bind);
	return xport_open(&a, &s->dev, err);
}

/* The test the client sets, as the key=value text the server adopts. */
static void params_text(const struct perf_session *s, char *buf, size_t cap)
{
	const struct perf_opts *o = &s->o;

	snprintf(buf, cap, "op=%d cas=%d size=%" PRIu64 " max_size=%" PRIu64 " iters=%" PRIu64
		 " duration=%.9g qps=%u tx_depth=%u rx_depth=%u outs=%u mtu=%u verify=%d "
		 "interval=%.9g engine=%s lat=%d bidir=%d inline=%u rate=%.9g rate_unit=%d cm=%d",
		 o->op, o->atomic_cas, o->size, s->max_size, o->iters, o->duration, o->qps,
		 o->tx_depth, o->rx_depth, o->outs, o->mtu, o->verify, o->interval,
		 o->engine ? o->engine : "auto", o->latency, o->bidirectional, o->inline_size,
		 o->rate_limit, (int)o->rate_unit, o->rdma_cm);
}

/* The fields added after the first release: absent from an older client's
 * text, so they default to off. */
static int adopt_extras(struct perf_opts *o, const char *text)
{
	const char *x = strstr(text, " bidir="), *cm = strstr(text, " cm=");
	int bidir, unit, rdma_cm = 0;
	unsigned inl;
	double rate;

	o->bidirectional = false;
	o->inline_size = 0;
	o->rate_limit = 0;
	o->rdma_cm = false;
	if (cm && sscanf(cm, " cm=%d", &rdma_cm) != 1)
		return -1;
	o->rdma_cm = rdma_cm;
	if (!x)
		return 0;
	if (sscanf(x, " bidir=%d inline=%u rate=%lg rate_unit=%d", &bidir, &inl, &rate, &unit) != 4 ||
	    unit < PERF_RATE_GBPS || unit > PERF_RATE_PPS || rate < 0)
		return -1;
	o->bidirectional = bidir;
	o->inline_size = inl;
	o->rate_limit = rate;
	o->rate_unit = (enum perf_rate_unit)unit;
	return 0;
}

/*
 * What a client may ask of a server: the ranges the server's own command
 * line accepts (cmd/perf_cli.c), since these values size its queues, CQs
 * and buffers.  (NaN fails every comparison, so it is refused too.)
 */
static bool params_in_range(uint64_t size, uint64_t iters, double duration, unsigned txd,
			    unsigned rxd, unsigned outs, unsigned mtu, double interval)
{
	return size >= 1 && txd >= 1 && txd <= 8192 && rxd >= 1 && rxd <= 8192 && outs <= 255 &&
	       (mtu == 0 || (mtu >= 256 && mtu <= 4096)) &&
	       (iters || (duration >= 0.001 && duration <= 86400)) &&
	       (interval == 0 || (interval >= 0.01 && interval <= 3600));
}

static int adopt_params(struct perf_session *s, const char *text, char *err)
{
	struct perf_opts *o = &s->o;
	char engine[16] = "auto";
	int op, cas, verify, lat;
	uint64_t size, max_size, iters;
	unsigned qps, txd, rxd, outs, mtu;
	double duration, interval;

	if (sscanf(text, "op=%d cas=%d size=%" SCNu64 " max_size=%" SCNu64 " iters=%" SCNu64
		   " duration=%lg qps=%u tx_depth=%u rx_depth=%u outs=%u mtu=%u verify=%d "
		   "interval=%lg engine=%15s lat=%d", &op, &cas, &size, &max_size, &iters, &duration,
		   &qps, &txd, &rxd, &outs, &mtu, &verify, &interval, engine, &lat) != 15 ||
	    op < 0 || op > PERF_ATOMIC || qps < 1 || qps > PERF_MAX_QPS ||
	    max_size > PERF_MAX_SIZE || size > max_size ||
	    !params_in_range(size, iters, duration, txd, rxd, outs, mtu, interval) ||
	    adopt_extras(o, text) < 0) {
		snprintf(err, XPORT_ERR_LEN, "the client sent test parameters this rdmakit cannot "
			 "use: %.200s", text);
		return -1;
	}
	/* Memory before anything else: a client must not make a server
	 * allocate (and zero) more than it allows. */
	{
		uint64_t limit = o->max_memory ? o->max_memory : perf_default_max_memory();
		uint64_t need = 2 * (uint64_t)slot_len(max_size) * qps;

		if (need > limit) {
			snprintf(err, XPORT_ERR_LEN, "the client's test needs %" PRIu64 " MiB of "
				 "buffers (2 x %" PRIu64 " bytes x %u QPs), more than this server's "
				 "--max-memory of %" PRIu64 " MiB: use fewer QPs or smaller messages, "
				 "or raise --max-memory on the server", (need + (1 << 20) - 1) >> 20,
				 max_size, qps, limit >> 20);
			return -1;
		}
	}
	/* The engines may differ: a soft engine speaks RoCEv2 to an RNIC or
	 * rxe on the other side.  Each side keeps its own --engine. */
	(void)engine;
	/* What this server was told itself must agree with the client. */
	if ((o->explicit_set & PERF_SET_OP) && (o->op != (enum perf_op)op ||
						 (op == PERF_ATOMIC && o->atomic_cas != cas))) {
		snprintf(err, XPORT_ERR_LEN, "the client asked for --op %s, this server was started "
			 "with --op %s: give it on one side only, or the same on both",
			 perf_op_name((enum perf_op)op), perf_op_name(o->op));
		return -1;
	}
	if ((o->explicit_set & PERF_SET_SIZE) && o->size != size) {
		snprintf(err, XPORT_ERR_LEN, "the client asked for -s %" PRIu64 ", this server was "
			 "started with -s %" PRIu64 ": give it on one side only, or the same on both",
			 size, o->size);
		return -1;
	}
	if ((o->explicit_set & PERF_SET_QPS) && o->qps != qps) {
		snprintf(err, XPORT_ERR_LEN, "the client asked for -q %u, this server was started "
			 "with -q %u: give it on one side only, or the same on both", qps, o->qps);
		return -1;
	}
	if ((o->explicit_set & PERF_SET_ITERS) && o->iters != iters) {
		if (iters)
			snprintf(err, XPORT_ERR_LEN, "the client asked for -n %" PRIu64 ", this server "
				 "was started with -n %" PRIu64 ": give it on one side only, or the same "
				 "on both", iters, o->iters);
		else
			snprintf(err, XPORT_ERR_LEN, "the client asked for -D, this server was started "
				 "with -n %" PRIu64 ": give it on one side only", o->iters);
		return -1;
	}
	if ((o->explicit_set & PERF_SET_RDMA_CM) && !o->rdma_cm) {
		snprintf(err, XPORT_ERR_LEN, "this server was started with -R/--rdma-cm, the client "
			 "without: give -R to the client (the server follows it)");
		return -1;
	}
	if ((o->explicit_set & PERF_SET_BIDIR) && !o->bidirectional) {
		snprintf(err, XPORT_ERR_LEN, "this server was started with -b/--bidirectional, the "
			 "client without: give -b to the client (the server follows it)");
		return -1;
	}
	o->op = (enum perf_op)op;
	o->atomic_cas = cas;
	o->size = size;
	o->iters = iters;
	o->duration = duration;
	o->qps = qps;
	o->tx_depth = txd;
	o->rx_depth = rxd;
	o->outs = outs;
	/* MTU: the smaller of the two sides' wishes. */
	if (mtu && (!o->mtu || mtu < o->mtu))
		o->mtu = mtu;
	o->verify = verify;
	o->latency = lat;
	o->interval = interval;
	s->max_size = max_size;
	return 0;
}

/* A token that ties the CM connect requests to this control session. */
static uint32_t cm_token(void)
{
	uint32_t t;

	if (getrandom(&t, sizeof(t), 0) != sizeof(t))
		t = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
	return t;
}

/*
 * --rdma-cm: the server listens on the control connection's local address
 * and the control port number (in the CM's own port space, as perftest
 * does) before it answers, so the client's requests always find it.
 */
static int cm_listen(struct perf_session *s, uint32_t *token, char *err)
{
	char local[64];

	perf_socket_addr(s->oob.fd, true, local, sizeof(local));
	*token = cm_token();
	return xport_cm_listen(s->dev, local, s->o.port, &s->cm, err);
}

static int cm_connect_all(struct perf_session *s, uint16_t port, uint32_t token, char *err)
{
	char peer[64], local[64];

	perf_socket_addr(s->oob.fd, false, peer, sizeof(peer));
	perf_socket_addr(s->oob.fd, true, local, sizeof(local));
	for (unsigned i = 0; i < s->o.qps; i++)
		if (xport_cm_connect(s->a.qp[i], peer, local, port, token, i,
				     s->o.timeout_s * 1000, err) < 0)
			return -1;
	return 0;
}

static int cm_accept_all(struct perf_session *s, uint32_t token, char *err)
{
	for (unsigned i = 0; i < s->o.qps; i++)
		if (xport_cm_accept(s->cm, s->a.qp[i], token, s->o.timeout_s * 1000, err) < 0)
			return -1;
	return 0;
}

/* This side's memory description: buffer address, rkey, slot size, and
 * (server, --rdma-cm) where and how to connect. */
static void mem_text(const struct perf_session *s, uint32_t token, char *text, size_t cap)
{
	int n = snprintf(text, cap, "va=%" PRIu64 " rkey=%u slot=%zu",
			 (uint64_t)(uintptr_t)s->a.buf, s->a.mr->rkey, s->a.slot);

	if (s->cm && n > 0 && (size_t)n < cap)
		snprintf(text + n, cap - (size_t)n, " cm_port=%u cm_token=%u", s->o.port, token);
}

/* Exchanges QP info and each side's buffer address and rkey, then
 * connects the QPs: with that info, or through the RDMA CM. */
static int exchange(struct perf_session *s, bool is_server, char *err)
{
	struct xport_qp_info mine[PERF_MAX_QPS], theirs[PERF_MAX_QPS];
	char text[256];
	const char *cm;
	size_t n, len;
	uint64_t va;
	uint32_t rkey, token = 0;
	unsigned cm_port;

	for (unsigned i = 0; i < s->o.qps; i++)
		xport_qp_info(s->a.qp[i], &mine[i]);
	if (oob_xchg_qp_info(&s->oob, is_server, mine, s->o.qps, theirs, PERF_MAX_QPS, &n, err) < 0)
		return -1;
	if (n != s->o.qps) {
		snprintf(err, XPORT_ERR_LEN, "the peer sent %zu QPs, expected %u", n, s->o.qps);
		return -1;
	}
	mem_text(s, 0, text, sizeof(text));
	if (!is_server && oob_send(&s->oob, OOB_PARAMS, text, strlen(text), err) < 0)
		return -1;
	if (oob_recv(&s->oob, OOB_PARAMS, text, sizeof(text) - 1, &len, err) < 0)
		return -1;
	text[len] = '\0';
	if (sscanf(text, "va=%" SCNu64 " rkey=%u slot=%zu", &va, &rkey, &s->a.peer_slot) != 3) {
		snprintf(err, XPORT_ERR_LEN, "the peer sent a malformed memory description");
		return -1;
	}
	s->a.remote_va = va;
	s->a.remote_rkey = rkey;
	s->eff_mtu = theirs[0].mtu < mine[0].mtu ? theirs[0].mtu : mine[0].mtu;
	if (is_server) {
		if (s->o.rdma_cm && cm_listen(s, &token, err) < 0) {
			oob_send_error(&s->oob, err);
			return -1;
		}
		mem_text(s, token, text, sizeof(text));
		if (oob_send(&s->oob, OOB_PARAMS, text, strlen(text), err) < 0)
			return -1;
		return s->o.rdma_cm ? cm_accept_all(s, token, err) :
				      connect_qps(&s->a, theirs, s->o.qps, err);
	}
	if (!s->o.rdma_cm)
		return connect_qps(&s->a, theirs, s->o.qps, err);
	cm = strstr(text, " cm_port=");
	if (!cm || sscanf(cm, " cm_port=%u cm_token=%u", &cm_port, &token) != 2 || !cm_port ||
	    cm_port > 65535) {
		snprintf(err, XPORT_ERR_LEN, "the server offered no RDMA CM port for -R/--rdma-cm "
			 "(an rdmakit without it?)");
		return -1;
	}
	return cm_connect_all(s, (uint16_t)cm_port, token, err);
}

static int open_loopback(struct perf_session *s, char *err)
{
	struct xport_qp_info ia[PERF_MAX_QPS], ib[PERF_MAX_QPS];

	if (open_dev(s, s->o.bind ? s->o.bind : "127.0.0.1", err) < 0 ||
	    end_open(s, &s->a, err) < 0 || end_open(s, &s->b, err) < 0)
		return -1;
	for (unsigned i = 0; i < s->o.qps; i++) {
		xport_qp_info(s->a.qp[i], &ia[i]);
		xport_qp_info(s->b.qp[i], &ib[i]);
	}
	s->eff_mtu = ia[0].mtu < ib[0].mtu ? ia[0].mtu : ib[0].mtu;
	if (connect_qps(&s->a, ib, s->o.qps, err) < 0 || connect_qps(&s->b, ia, s->o.qps, err) < 0)
		return -1;
	s->a.remote_va = (uint64_t)(uintptr_t)s->b.buf;
	s->a.remote_rkey = s->b.mr->rkey;
	s->b.remote_va = (uint64_t)(uintptr_t)s->a.buf;
	s->b.remote_rkey = s->a.mr->rkey;
	s->a.peer_slot = s->b.slot;
	s->b.peer_slot = s->a.slot;
	return 0;
}

static int open_client(struct perf_session *s, char *err)
{
	char text[512], local[64];

	if (oob_connect(s->o.host, s->o.port, s->o.timeout_s * 1000, &s->oob, err) < 0)
		return -1;
	s->oob.stop = s->o.stop;
	if (oob_hello(&s->oob, false, err) < 0)
		return -1;
	params_text(s, text, sizeof(text));
	if (oob_send(&s->oob, OOB_PARAMS, text, strlen(text), err) < 0)
		return -1;
	perf_socket_addr(s->oob.fd, true, local, sizeof(local));
	if (open_dev(s, s->o.bind ? s->o.bind : local, err) < 0 || end_open(s, &s->a, err) < 0)
		return -1;
	return exchange(s, false, err);
}

static int open_server(struct perf_session *s, char *err)
{
	char text[1024], local[64];
	size_t len;

	if ((s->o.bind && perf_check_bind(s->o.bind, err) < 0) ||
	    oob_listen(NULL, s->o.port, &s->listen_fd, err) < 0)
		return -1;
	s->oob.stop = s->o.stop;	/* Ctrl-C ends the wait for a client */
	if (oob_accept(s->listen_fd, -1, &s->oob, err) < 0)
		return -1;
	/* From here a failure is this client's: the server may serve the next. */
	s->oob.timeout_ms = s->o.timeout_s * 1000;
	s->oob.stop = s->o.stop;
	if (oob_hello(&s->oob, true, err) < 0 ||
	    oob_recv(&s->oob, OOB_PARAMS, text, sizeof(text) - 1, &len, err) < 0)
		return PERF_CLIENT_FAILED;
	text[len] = '\0';
	if (adopt_params(s, text, err) < 0) {
		oob_send_error(&s->oob, err);
		return PERF_CLIENT_FAILED;
	}
	perf_socket_addr(s->oob.fd, true, local, sizeof(local));
	/* The device is the server's own (a bad --bind, no device, no random
	 * numbers): fatal.  The buffers are what the client asked for. */
	if (open_dev(s, s->o.bind ? s->o.bind : local, err) < 0) {
		oob_send_error(&s->oob, err);
		return -1;
	}
	if (end_open(s, &s->a, err) < 0) {
		oob_send_error(&s->oob, err);
		return PERF_CLIENT_FAILED;
	}
	return exchange(s, true, err) < 0 ? PERF_CLIENT_FAILED : 0;
}

int perf_open(struct perf_session **out, enum perf_role role, struct perf_opts *o, char *err)
{
	struct perf_session *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	s->role = role;
	s->o = *o;
	s->oob.fd = -1;
	s->listen_fd = -1;
	s->max_size = o->size;
	if (o->qps < 1 || o->qps > PERF_MAX_QPS) {
		snprintf(err, XPORT_ERR_LEN, "-q/--qp must be 1..%d", PERF_MAX_QPS);
		free(s);
		return -1;
	}
	if (role == PERF_LOOPBACK)
		rc = open_loopback(s, err);
	else if (role == PERF_CLIENT)
		rc = open_client(s, err);
	else
		rc = open_server(s, err);
	if (rc < 0) {
		perf_close(s);
		return rc;
	}
	*o = s->o;	/* what was adopted, for the caller's report */
	*out = s;
	return 0;
}

void perf_close(struct perf_session *s)
{
	char err[XPORT_ERR_LEN];

	if (!s)
		return;
	if (s->oob.fd >= 0) {
		if (s->role == PERF_CLIENT)
			oob_send(&s->oob, OOB_PARAMS, "end", 3, err);
		oob_bye(&s->oob, err);
		oob_close(&s->oob);
	}
	if (s->listen_fd >= 0)
		close_fd(s->listen_fd);
	end_close(s, &s->a);
	xport_cm_close(s->cm);
	end_close(s, &s->b);
	xport_close(s->dev);
	free(s);
}

const char *perf_engine(const struct perf_session *s)
{
	return s->dev ? xport_engine_name(s->dev) : "?";
}

const char *perf_peer(const struct perf_session *s)
{
	return s->oob.peer;
}

const char *perf_local_addr(const struct perf_session *s)
{
	return s->local_addr;
}

uint32_t perf_mtu(const struct perf_session *s)
{
	return s->eff_mtu;
}

int perf_set_size(struct perf_session *s, uint64_t size, char *err)
{
	if (size > s->max_size) {
		snprintf(err, XPORT_ERR_LEN, "size %" PRIu64 " exceeds the buffers set up (%" PRIu64 ")",
			 size, s->max_size);
		return -1;
	}
	s->o.size = size;
	return 0;
}
