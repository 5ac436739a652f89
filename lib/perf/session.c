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

#include "ctl.h"
#include "pt_int.h"

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

int perf_end_open(struct perf_session *s, struct perf_end *e, char *err)
{
	const struct perf_opts *o = &s->o;
	struct xport_qp_attr a = {
		.max_send_wr = o->tx_depth + 8, .max_recv_wr = o->rx_depth + 8, .mtu = o->mtu,
		.max_rd_atomic = (uint8_t)(o->outs ? o->outs : 16), .timeout = o->qp_timeout,
		.retry_cnt = o->retry_cnt, .rnr_retry = o->rnr_retry, .min_rnr_timer = 1,
		.tos = o->tos, .max_inline_data = o->inline_size, .type = o->conn,
	};

	/* Two halves per QP: what this side sends (and receives SENDs into,
	 * behind the GRH area on UD), and where a latency echo lands. */
	e->half = slot_len(perf_recv_buf_bytes(o->conn, s->max_size));
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

void perf_end_close(struct perf_session *s, struct perf_end *e)
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

int perf_open_dev(struct perf_session *s, const char *bind, char *err)
{
	struct xport_dev_attr a = { .engine = s->o.engine, .bind = bind,
				    .udp_port = s->o.udp_port, .ib_dev = s->o.ib_dev,
				    .ib_port = s->o.ib_port, .gid_index = s->o.gid_index,
				    .dcqcn = s->o.dcqcn };

	snprintf(s->local_addr, sizeof(s->local_addr), "%s", bind);
	return xport_open(&a, &s->dev, err);
}

/*
 * The server adopts the test a client sets (a JSON text, see ctl.h): in the
 * ranges its own command line accepts, within its --max-memory, and in
 * agreement with what it was told itself.
 */
static int adopt_params(struct perf_session *s, const char *text, char *err)
{
	struct perf_opts *o = &s->o, t = s->o;
	uint64_t max_size = 0;
	json_t *m = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	int rc = m ? ctl_test_parse(m, &t, &max_size, err) : -1;
	char why[XPORT_ERR_LEN];

	json_decref(m);
	if (rc < 0) {
		snprintf(why, sizeof(why), "%s", m ? err : "not JSON");
		snprintf(err, XPORT_ERR_LEN, "the client sent test parameters this rdmakit cannot "
			 "use (%.200s): use the same rdmakit version on both sides", why);
		return -1;
	}
	/* Memory before anything else: a client must not make a server
	 * allocate (and zero) more than it allows. */
	{
		uint64_t limit = o->max_memory ? o->max_memory : perf_default_max_memory();
		uint64_t need = 2 * (uint64_t)slot_len(max_size) * t.qps;

		if (need > limit) {
			snprintf(err, XPORT_ERR_LEN, "the client's test needs %" PRIu64 " MiB of "
				 "buffers (2 x %" PRIu64 " bytes x %u QPs), more than this server's "
				 "--max-memory of %" PRIu64 " MiB: use fewer QPs or smaller messages, "
				 "or raise --max-memory on the server", (need + (1 << 20) - 1) >> 20,
				 max_size, t.qps, limit >> 20);
			return -1;
		}
	}
	/* What this server was told itself must agree with the client. */
	if ((o->explicit_set & PERF_SET_OP) && (o->op != t.op ||
						 (t.op == PERF_ATOMIC && o->atomic_cas != t.atomic_cas))) {
		snprintf(err, XPORT_ERR_LEN, "the client asked for --op %s, this server was started "
			 "with --op %s: give it on one side only, or the same on both",
			 perf_op_name(t.op), perf_op_name(o->op));
		return -1;
	}
	if ((o->explicit_set & PERF_SET_SIZE) && o->size != t.size) {
		snprintf(err, XPORT_ERR_LEN, "the client asked for -s %" PRIu64 ", this server was "
			 "started with -s %" PRIu64 ": give it on one side only, or the same on both",
			 t.size, o->size);
		return -1;
	}
	if ((o->explicit_set & PERF_SET_QPS) && o->qps != t.qps) {
		snprintf(err, XPORT_ERR_LEN, "the client asked for -q %u, this server was started "
			 "with -q %u: give it on one side only, or the same on both", t.qps, o->qps);
		return -1;
	}
	if ((o->explicit_set & PERF_SET_ITERS) && o->iters != t.iters) {
		if (t.iters)
			snprintf(err, XPORT_ERR_LEN, "the client asked for -n %" PRIu64 ", this server "
				 "was started with -n %" PRIu64 ": give it on one side only, or the same "
				 "on both", t.iters, o->iters);
		else
			snprintf(err, XPORT_ERR_LEN, "the client asked for -D, this server was started "
				 "with -n %" PRIu64 ": give it on one side only", o->iters);
		return -1;
	}
	if ((o->explicit_set & PERF_SET_RDMA_CM) && !t.rdma_cm) {
		snprintf(err, XPORT_ERR_LEN, "this server was started with -R/--rdma-cm, the client "
			 "without: give -R to the client (the server follows it)");
		return -1;
	}
	if ((o->explicit_set & PERF_SET_CONN) && o->conn != t.conn) {
		snprintf(err, XPORT_ERR_LEN, "the client asked for -c %s, this server was started "
			 "with -c %s: give it on one side only, or the same on both",
			 perf_conn_name(t.conn), perf_conn_name(o->conn));
		return -1;
	}
	if ((o->explicit_set & PERF_SET_BIDIR) && !t.bidirectional) {
		snprintf(err, XPORT_ERR_LEN, "this server was started with -b/--bidirectional, the "
			 "client without: give -b to the client (the server follows it)");
		return -1;
	}
	/* The client's test, with this side's own engine, addresses and keys;
	 * the MTU is the smaller of the two sides' wishes. */
	{
		uint32_t mtu = t.mtu && (!o->mtu || t.mtu < o->mtu) ? t.mtu : o->mtu;

		*o = t;
		o->mtu = mtu;
	}
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

	oob_socket_addr(s->oob.fd, true, local, sizeof(local));
	*token = cm_token();
	return xport_cm_listen(s->dev, local, s->o.port, &s->cm, err);
}

static int cm_connect_all(struct perf_session *s, uint16_t port, uint32_t token, char *err)
{
	char peer[64], local[64];

	oob_socket_addr(s->oob.fd, false, peer, sizeof(peer));
	oob_socket_addr(s->oob.fd, true, local, sizeof(local));
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

/* This side's memory for the peer and (server, --rdma-cm) where and how
 * to connect. */
static json_t *mem_json(const struct perf_session *s, uint32_t token)
{
	struct ctl_mem m = { .va = (uint64_t)(uintptr_t)s->a.buf, .rkey = s->a.mr->rkey,
			     .slot = s->a.slot, .cm_port = s->cm ? s->o.port : 0,
			     .cm_token = token };

	return ctl_mem_json(&m);
}

/* The peer's QPs and memory, one message each way (the client first, as
 * perftest does). */
static int swap_info(struct perf_session *s, bool is_server, uint32_t token,
		     struct xport_qp_info *mine, struct xport_qp_info *theirs, struct ctl_mem *mem,
		     char *err)
{
	json_t *msg, *in;
	unsigned n = 0;
	int rc;

	for (unsigned i = 0; i < s->o.qps; i++)
		xport_qp_info(s->a.qp[i], &mine[i]);
	msg = ctl_qps_json(mine, s->o.qps);
	if (msg)
		json_object_update_new(msg, mem_json(s, token));
	if (!is_server && ctl_send(&s->oob, OOB_PARAMS, msg, err) < 0)
		return -1;
	if (!(in = ctl_recv(&s->oob, OOB_PARAMS, err))) {
		if (is_server)
			json_decref(msg);
		return -1;
	}
	rc = ctl_qps_parse(in, theirs, PERF_MAX_QPS, &n, err) < 0 ||
	     ctl_mem_parse(in, mem, err) < 0 ? -1 : 0;
	json_decref(in);
	if (rc == 0 && n != s->o.qps) {
		snprintf(err, XPORT_ERR_LEN, "the peer sent %u QPs, expected %u", n, s->o.qps);
		rc = -1;
	}
	if (is_server)
		return rc < 0 ? (json_decref(msg), -1) : ctl_send(&s->oob, OOB_PARAMS, msg, err);
	return rc;
}

/* Exchanges QP info and each side's buffer address and rkey, then
 * connects the QPs: with that info, or through the RDMA CM. */
static int exchange(struct perf_session *s, bool is_server, char *err)
{
	struct xport_qp_info mine[PERF_MAX_QPS], theirs[PERF_MAX_QPS];
	struct ctl_mem mem;
	uint32_t token = 0;

	/* The server listens for the CM before it answers, so the client's
	 * requests always find it. */
	if (is_server && s->o.rdma_cm && cm_listen(s, &token, err) < 0) {
		oob_send_error(&s->oob, err);
		return -1;
	}
	if (swap_info(s, is_server, token, mine, theirs, &mem, err) < 0)
		return -1;
	s->a.remote_va = mem.va;
	s->a.remote_rkey = mem.rkey;
	s->a.peer_slot = (size_t)mem.slot;
	s->eff_mtu = theirs[0].mtu < mine[0].mtu ? theirs[0].mtu : mine[0].mtu;
	if (is_server)
		return s->o.rdma_cm ? cm_accept_all(s, token, err) :
				      connect_qps(&s->a, theirs, s->o.qps, err);
	if (!s->o.rdma_cm)
		return connect_qps(&s->a, theirs, s->o.qps, err);
	if (!mem.cm_port) {
		snprintf(err, XPORT_ERR_LEN, "the server offered no RDMA CM port for -R/--rdma-cm "
			 "(an rdmakit without it?)");
		return -1;
	}
	return cm_connect_all(s, mem.cm_port, mem.cm_token, err);
}

static int open_loopback(struct perf_session *s, char *err)
{
	struct xport_qp_info ia[PERF_MAX_QPS], ib[PERF_MAX_QPS];

	if (perf_open_dev(s, s->o.bind ? s->o.bind : "127.0.0.1", err) < 0 ||
	    perf_end_open(s, &s->a, err) < 0 || perf_end_open(s, &s->b, err) < 0)
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
	char local[64];
	int rc;

	if (oob_connect_from(s->o.host, s->o.port, s->o.bind_source, s->o.timeout_s * 1000, &s->oob,
			     err) < 0)
		return -1;
	s->oob.stop = s->o.stop;
	s->oob.key = s->o.auth_key;
	s->oob.accept_perftest = true;
	s->oob.plain_opening = s->o.perftest;
	s->oob.announce = s->o.perftest_version;
	rc = oob_hello(&s->oob, false, err);
	if (rc == OOB_PEER_PERFTEST)
		return pt_open_client(s, err);
	if (rc < 0) {
		oob_close(&s->oob);	/* no session to end: no "end", no goodbye */
		return -1;
	}
	if (ctl_send(&s->oob, OOB_PARAMS, ctl_test_json(&s->o, s->max_size), err) < 0)
		return -1;
	oob_socket_addr(s->oob.fd, true, local, sizeof(local));
	if (perf_open_dev(s, s->o.bind ? s->o.bind : local, err) < 0 || perf_end_open(s, &s->a, err) < 0)
		return -1;
	return exchange(s, false, err);
}

static int open_server(struct perf_session *s, char *err)
{
	char text[2048], local[64];
	struct oob_gate *gate;
	size_t len;
	int rc;

	if ((s->o.bind && perf_check_bind(s->o.bind, err) < 0) ||
	    oob_listen(NULL, s->o.port, &s->listen_fd, err) < 0)
		return -1;
	/* Ctrl-C ends the wait; a refused client is that client's failure. */
	gate = oob_gate_new(s->listen_fd, 1, s->o.auth_key, err);
	if (gate)
		oob_gate_accept_perftest(gate, s->o.perftest);
	/* A refused client (a wrong key, perftest, an older rdmakit) was told
	 * why; the others opening at the same time keep their places. */
	while (gate && (rc = oob_gate_accept(gate, -1, s->o.stop, &s->oob, err)) == OOB_GATE_REFUSED)
		if (s->o.on_refused)
			s->o.on_refused(s->o.refused_ctx, err);
	oob_gate_free(gate);
	if (!gate || rc < 0)
		return -1;
	/* From here a failure is this client's: the server may serve the next. */
	s->oob.timeout_ms = s->o.timeout_s * 1000;
	s->oob.stop = s->o.stop;
	if (s->oob.peer_perftest)
		return pt_open_server(s, err) < 0 ? PERF_CLIENT_FAILED : 0;
	if (oob_hello(&s->oob, true, err) < 0 ||
	    oob_recv(&s->oob, OOB_PARAMS, text, sizeof(text) - 1, &len, err) < 0)
		return PERF_CLIENT_FAILED;
	text[len] = '\0';
	if (adopt_params(s, text, err) < 0) {
		oob_send_error(&s->oob, err);
		return PERF_CLIENT_FAILED;
	}
	oob_socket_addr(s->oob.fd, true, local, sizeof(local));
	/* The device is the server's own (a bad --bind, no device, no random
	 * numbers): fatal.  The buffers are what the client asked for. */
	if (perf_open_dev(s, s->o.bind ? s->o.bind : local, err) < 0) {
		oob_send_error(&s->oob, err);
		return -1;
	}
	if (perf_end_open(s, &s->a, err) < 0) {
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
	if (rc == 0 && o->report_counters) {
		char dev[64];
		int port;

		if (!xport_host_port(s->dev, dev, sizeof(dev), &port)) {
			snprintf(err, XPORT_ERR_LEN, "-W/--report-counters reads an RDMA port's counters "
				 "(--engine verbs); the soft engine's own are in the JSON \"counters\"");
			rc = -1;
		}
	}
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
	if (s->pt) {
		pt_close(s);
		free(s->pt);
		s->pt = NULL;
	}
	if (s->oob.fd >= 0) {
		if (s->role == PERF_CLIENT)
			ctl_send(&s->oob, OOB_PARAMS, ctl_run_json(0), err);
		oob_bye(&s->oob, err);
		oob_close(&s->oob);
	}
	if (s->listen_fd >= 0)
		close_fd(s->listen_fd);
	perf_end_close(s, &s->a);
	xport_cm_close(s->cm);
	perf_end_close(s, &s->b);
	xport_close(s->dev);
	free(s->samples);
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

void perf_peer_protocol(const struct perf_session *s, struct perf_peer_proto *p)
{
	memset(p, 0, sizeof(*p));
	if (!s->pt)
		return;
	p->perftest = true;
	memcpy(p->version, s->pt->peer_version, sizeof(p->version));
	p->negotiated = s->pt->negotiated;
	p->struct_len = (unsigned)s->pt->neg_len;
}

bool perf_serves_as_runner(const struct perf_session *s)
{
	return s->pt != NULL;
}

bool perf_runs_once(const struct perf_session *s)
{
	return s->pt && s->role == PERF_SERVER &&
	       (pt_is_passive_bw(s) || (s->o.latency && (s->o.op == PERF_READ ||
							  s->o.op == PERF_ATOMIC)));
}

const char *perf_advisory(const struct perf_session *s)
{
	return s->pt ? s->pt->advisory : NULL;
}

const char *perf_local_addr(const struct perf_session *s)
{
	return s->local_addr;
}

uint32_t perf_mtu(const struct perf_session *s)
{
	return s->eff_mtu;
}

enum xport_qp_type perf_connection(const struct perf_session *s)
{
	return s->o.conn;
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
