// SPDX-License-Identifier: MIT
/*
 * The control messages of bw, lat and incast (see ctl.h): built and parsed
 * here only, each parser strict about types (json_unpack) and ranges.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

static int bad(char *err, const char *what, const char *detail)
{
	snprintf(err, XPORT_ERR_LEN, "the peer sent a malformed %s%s%s; use the same rdmakit "
		 "version on both sides", what, detail ? ": " : "", detail ? detail : "");
	return -1;
}

/* --- framing ----------------------------------------------------------------- */

int ctl_send(struct oob *c, enum oob_type type, json_t *msg, char *err)
{
	char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	int rc;

	json_decref(msg);
	if (!text) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return -1;
	}
	if (strlen(text) > OOB_MAX_PAYLOAD) {
		snprintf(err, XPORT_ERR_LEN, "a control message of %zu bytes exceeds the channel's "
			 "%d: fewer QPs (-q) or participants", strlen(text), OOB_MAX_PAYLOAD);
		free(text);
		return -1;
	}
	rc = oob_send(c, type, text, strlen(text), err);
	free(text);
	return rc;
}

json_t *ctl_recv(struct oob *c, enum oob_type type, char *err)
{
	char *buf = malloc(OOB_MAX_PAYLOAD + 1);
	json_error_t je;
	json_t *j;
	size_t len;

	if (!buf) {
		snprintf(err, XPORT_ERR_LEN, "out of memory");
		return NULL;
	}
	if (oob_recv(c, type, buf, OOB_MAX_PAYLOAD + 1, &len, err) < 0) {
		free(buf);
		return NULL;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	free(buf);
	if (!j || !json_is_object(j)) {
		snprintf(err, XPORT_ERR_LEN, "%s sent a malformed %s message: %s", c->peer,
			 oob_type_name(type), j ? "not a JSON object" : je.text);
		json_decref(j);
		return NULL;
	}
	return j;
}

/* --- the test ----------------------------------------------------------------- */

static bool mtu_ok(uint32_t mtu)
{
	return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

int perf_opts_check(const struct perf_opts *o, uint64_t max_size, char *err)
{
#define RANGE(ok, fmt, ...)                                                               \
	do {                                                                              \
		if (!(ok)) {                                                              \
			snprintf(err, XPORT_ERR_LEN, "test parameter " fmt, __VA_ARGS__); \
			return -1;                                                        \
		}                                                                         \
	} while (0)
	RANGE((unsigned)o->op <= PERF_ATOMIC, "op %d is not an operation", (int)o->op);
	RANGE(max_size >= 1 && max_size <= PERF_MAX_SIZE, "max_size %" PRIu64 " is outside "
	      "1..%u", max_size, PERF_MAX_SIZE);
	RANGE(o->size >= 1 && o->size <= max_size, "size %" PRIu64 " is outside 1..%" PRIu64,
	      o->size, max_size);
	RANGE(o->qps >= 1 && o->qps <= PERF_MAX_QPS, "qps %u is outside 1..%d", o->qps,
	      PERF_MAX_QPS);
	RANGE(o->tx_depth >= 1 && o->tx_depth <= PERF_MAX_DEPTH, "tx_depth %u is outside 1..%d",
	      o->tx_depth, PERF_MAX_DEPTH);
	RANGE(o->rx_depth >= 1 && o->rx_depth <= PERF_MAX_DEPTH, "rx_depth %u is outside 1..%d",
	      o->rx_depth, PERF_MAX_DEPTH);
	RANGE(o->outs <= PERF_MAX_OUTS, "outs %u is over %d", o->outs, PERF_MAX_OUTS);
	RANGE(o->mtu == 0 || mtu_ok(o->mtu), "mtu %u is not 256, 512, 1024, 2048 or 4096",
	      o->mtu);
	RANGE(o->iters == 0 || (o->iters >= PERF_MIN_ITERS && o->iters <= PERF_MAX_ITERS),
	      "iters %" PRIu64 " is outside %d..%llu", o->iters, PERF_MIN_ITERS, PERF_MAX_ITERS);
	/* NaN fails every comparison, so it is refused too. */
	RANGE(o->iters || (o->duration >= PERF_MIN_DURATION && o->duration <= PERF_MAX_DURATION),
	      "duration %g s is outside %g..%g", o->duration, PERF_MIN_DURATION,
	      PERF_MAX_DURATION);
	RANGE(o->interval == 0 || (o->interval >= PERF_MIN_INTERVAL &&
				   o->interval <= PERF_MAX_INTERVAL),
	      "interval %g s is outside %g..%g", o->interval, PERF_MIN_INTERVAL,
	      PERF_MAX_INTERVAL);
	RANGE(o->inline_size <= PERF_MAX_INLINE, "inline_size %u is over %u", o->inline_size,
	      PERF_MAX_INLINE);
	RANGE(o->rate_limit == 0 || (o->rate_limit >= PERF_MIN_RATE &&
				     o->rate_limit <= PERF_MAX_RATE),
	      "rate_limit %g is outside %g..%g", o->rate_limit, PERF_MIN_RATE, PERF_MAX_RATE);
	RANGE((unsigned)o->rate_unit <= PERF_RATE_PPS, "rate_unit %d is not a unit",
	      (int)o->rate_unit);
	RANGE((unsigned)o->conn <= XPORT_QPT_UD, "connection %d is not RC, UC or UD",
	      (int)o->conn);
#undef RANGE
	return perf_conn_check(o, err);
}

const char *perf_conn_name(enum xport_qp_type t)
{
	return t == XPORT_QPT_UD ? "UD" : t == XPORT_QPT_UC ? "UC" : "RC";
}

void perf_conn_default_op(struct perf_opts *o)
{
	if (o->conn == XPORT_QPT_UD && !(o->explicit_set & PERF_SET_OP))
		o->op = PERF_SEND;
}

/* What each transport carries (IBTA 9.2), and what rdmakit runs over it. */
int perf_conn_check(const struct perf_opts *o, char *err)
{
	const char *why = NULL;

	if (o->conn == XPORT_QPT_UD && o->op != PERF_SEND)
		why = "carries SEND only (perftest's ib_send_bw/ib_send_lat -c UD): give --op send";
	else if (o->conn == XPORT_QPT_UC && o->op != PERF_SEND && o->op != PERF_WRITE)
		why = "carries SEND and RDMA WRITE only: give --op send or --op write";
	else if (o->conn != XPORT_QPT_RC && o->rdma_cm)
		why = "is connected over the control channel here, not the RDMA CM: drop -R";
	else if (o->conn != XPORT_QPT_RC && o->bidirectional)
		why = "runs one direction in this version: drop -b";
	if (!why)
		return 0;
	snprintf(err, XPORT_ERR_LEN, "-c %s %s", perf_conn_name(o->conn), why);
	return -1;
}

static const char *const op_names[] = { "write", "read", "send", "atomic", NULL };
static const char *const rate_units[] = { "g", "M", "p", NULL };

static int index_of(const char *const *names, const char *s)
{
	for (int i = 0; s && names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

json_t *ctl_test_json(const struct perf_opts *o, uint64_t max_size)
{
	return json_pack("{s:{s:s, s:b, s:I, s:I, s:I, s:f, s:i, s:i, s:i, s:i, s:i, s:b, s:f, "
			 "s:b, s:b, s:i, s:f, s:s, s:b, s:s}}", "test",
			 "op", op_names[o->op], "cas", o->atomic_cas, "size", (json_int_t)o->size,
			 "max_size", (json_int_t)max_size, "iters", (json_int_t)o->iters,
			 "duration_s", o->duration, "qps", (int)o->qps, "tx_depth",
			 (int)o->tx_depth, "rx_depth", (int)o->rx_depth, "outs", (int)o->outs,
			 "mtu", (int)o->mtu, "verify", o->verify, "interval_s", o->interval,
			 "latency", o->latency, "bidirectional", o->bidirectional, "inline_size",
			 (int)o->inline_size, "rate_limit", o->rate_limit, "rate_unit",
			 rate_units[o->rate_unit], "rdma_cm", o->rdma_cm, "connection",
			 perf_conn_name(o->conn));
}

int perf_conn_parse(const char *name)
{
	static const char *const names[] = { "RC", "UC", "UD", NULL };

	return index_of(names, name);
}

int ctl_test_parse(json_t *m, struct perf_opts *o, uint64_t *max_size, char *err)
{
	const char *op = NULL, *unit = NULL, *conn = NULL;
	json_int_t size, max, iters, qps, txd, rxd, outs, mtu, inl;
	int cas, verify, lat, bidir, cm;
	double duration, interval, rate;
	struct perf_opts t = *o;
	json_error_t je;

	/* Integers as json_int_t, range-checked here: "i" would wrap 2^32 + 1 to 1. */
	if (json_unpack_ex(m, &je, 0, "{s:{s:s, s:b, s:I, s:I, s:I, s:F, s:I, s:I, "
			   "s:I, s:I, s:I, s:b, s:F, s:b, s:b, s:I, s:F, s:s, s:b, s:s!}!}", "test",
			   "op", &op, "cas", &cas, "size", &size, "max_size", &max, "iters", &iters,
			   "duration_s", &duration, "qps", &qps, "tx_depth", &txd, "rx_depth", &rxd,
			   "outs", &outs, "mtu", &mtu, "verify", &verify, "interval_s", &interval,
			   "latency", &lat, "bidirectional", &bidir, "inline_size", &inl,
			   "rate_limit", &rate, "rate_unit", &unit, "rdma_cm", &cm, "connection",
			   &conn) < 0)
		return bad(err, "test", je.text);
	if (index_of(op_names, op) < 0 || index_of(rate_units, unit) < 0 || perf_conn_parse(conn) < 0 ||
	    size < 1 ||
	    max < 1 || max > PERF_MAX_SIZE || iters < 0 || qps < 1 || qps > PERF_MAX_QPS ||
	    txd < 1 || txd > PERF_MAX_DEPTH || rxd < 1 || rxd > PERF_MAX_DEPTH || outs < 0 ||
	    outs > PERF_MAX_OUTS || mtu < 0 || mtu > 4096 || inl < 0 || inl > PERF_MAX_INLINE)
		return bad(err, "test", "a value out of range");
	t.op = (enum perf_op)index_of(op_names, op);
	t.atomic_cas = cas;
	t.size = (uint64_t)size;
	t.iters = (uint64_t)iters;
	t.duration = duration;
	t.qps = (unsigned)qps;
	t.tx_depth = (unsigned)txd;
	t.rx_depth = (unsigned)rxd;
	t.outs = (unsigned)outs;
	t.mtu = (uint32_t)mtu;
	t.verify = verify;
	t.interval = interval;
	t.latency = lat;
	t.bidirectional = bidir;
	t.inline_size = (uint32_t)inl;
	t.rate_limit = rate;
	t.rate_unit = (enum perf_rate_unit)index_of(rate_units, unit);
	t.rdma_cm = cm;
	t.conn = (enum xport_qp_type)perf_conn_parse(conn);
	if (perf_opts_check(&t, (uint64_t)max, err) < 0)
		return -1;
	*o = t;
	*max_size = (uint64_t)max;
	return 0;
}

/* --- memory, QPs ------------------------------------------------------------- */

json_t *ctl_mem_json(const struct ctl_mem *m)
{
	return json_pack("{s:{s:I, s:I, s:I, s:i, s:I}}", "mem", "va", (json_int_t)m->va, "rkey",
			 (json_int_t)m->rkey, "slot", (json_int_t)m->slot, "cm_port",
			 (int)m->cm_port, "cm_token", (json_int_t)m->cm_token);
}

int ctl_mem_parse(json_t *j, struct ctl_mem *m, char *err)
{
	json_int_t va, rkey, slot, token, port;
	json_error_t je;

	if (json_unpack_ex(j, &je, 0, "{s:{s:I, s:I, s:I, s:I, s:I!}}", "mem", "va", &va,
			   "rkey", &rkey, "slot", &slot, "cm_port", &port, "cm_token", &token) < 0)
		return bad(err, "memory description", je.text);
	/* va is the peer's virtual address: any 64 bits, carried in a signed int. */
	if (rkey < 0 || rkey > UINT32_MAX || slot < 64 || slot > 2LL * PERF_MAX_SIZE + 128 ||
	    port < 0 || port > 65535 || token < 0 || token > UINT32_MAX)
		return bad(err, "memory description", "a value out of range");
	m->va = (uint64_t)va;
	m->rkey = (uint32_t)rkey;
	m->slot = (uint64_t)slot;
	m->cm_port = (uint16_t)port;
	m->cm_token = (uint32_t)token;
	return 0;
}

json_t *ctl_qp_json(const struct xport_qp_info *q)
{
	char gid[33];

	for (int i = 0; i < 16; i++)
		snprintf(gid + 2 * i, 3, "%02x", q->gid[i]);
	return json_pack("{s:i, s:i, s:s, s:i, s:i, s:i, s:i}", "qpn", (int)q->qpn, "psn",
			 (int)q->psn, "gid", gid, "udp_port", q->udp_port, "lid", q->lid, "mtu",
			 (int)q->mtu, "max_rd_atomic", q->max_rd_atomic);
}

int ctl_qp_parse(json_t *j, struct xport_qp_info *q)
{
	const char *gid = NULL;
	json_int_t qpn, psn, port, lid, mtu, rd;

	if (json_unpack(j, "{s:I, s:I, s:s, s:I, s:I, s:I, s:I!}", "qpn", &qpn, "psn", &psn, "gid",
			&gid, "udp_port", &port, "lid", &lid, "mtu", &mtu, "max_rd_atomic", &rd) < 0 ||
	    strlen(gid) != 32 || strspn(gid, "0123456789abcdef") != 32 || qpn < 0 ||
	    qpn > 0xFFFFFF || psn < 0 || psn > 0xFFFFFF || port < 0 || port > 65535 || lid < 0 ||
	    lid > 65535 || rd < 0 || rd > 255 || mtu < 0 || mtu > 4096 || !mtu_ok((uint32_t)mtu))
		return -1;
	memset(q, 0, sizeof(*q));
	for (int i = 0; i < 16; i++) {
		unsigned byte;

		if (sscanf(gid + 2 * i, "%2x", &byte) != 1)
			return -1;
		q->gid[i] = (uint8_t)byte;
	}
	q->qpn = (uint32_t)qpn;
	q->psn = (uint32_t)psn;
	q->udp_port = (uint16_t)port;
	q->lid = (uint16_t)lid;
	q->mtu = (uint32_t)mtu;
	q->max_rd_atomic = (uint8_t)rd;
	return 0;
}

json_t *ctl_qps_json(const struct xport_qp_info *q, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < n; i++)
		json_array_append_new(a, ctl_qp_json(&q[i]));
	return json_pack("{s:o}", "qps", a);
}

int ctl_qps_parse(json_t *j, struct xport_qp_info *q, unsigned cap, unsigned *n, char *err)
{
	json_t *a = json_object_get(j, "qps");

	/* A QP list travels alone or with the memory description (session.c). */
	if (json_object_size(j) > 1 + (json_object_get(j, "mem") != NULL))
		return bad(err, "QP list", "unknown keys");
	if (!json_is_array(a) || json_array_size(a) > cap)
		return bad(err, "QP list", json_is_array(a) ? "too many QPs" : NULL);
	for (size_t i = 0; i < json_array_size(a); i++)
		if (ctl_qp_parse(json_array_get(a, i), &q[i]) < 0)
			return bad(err, "QP list", "a QP's field is missing or out of range");
	*n = (unsigned)json_array_size(a);
	return 0;
}

/* --- runs and verdicts -------------------------------------------------------- */

json_t *ctl_run_json(uint64_t size)
{
	return size ? json_pack("{s:{s:I}}", "run", "size", (json_int_t)size) :
		      json_pack("{s:b}", "end", 1);
}

int ctl_run_parse(json_t *j, uint64_t *size, char *err)
{
	json_int_t n;
	int end;

	if (json_unpack(j, "{s:b}", "end", &end) == 0 && end && json_object_size(j) == 1) {
		*size = 0;
		return 0;
	}
	if (json_unpack_ex(j, NULL, JSON_STRICT, "{s:{s:I}}", "run", "size", &n) < 0 || n < 1 ||
	    n > PERF_MAX_SIZE)
		return bad(err, "run request", NULL);
	*size = (uint64_t)n;
	return 0;
}

json_t *ctl_done_json(bool stop)
{
	return json_pack("{s:b}", stop ? "stop" : "done", 1);
}

int ctl_done_parse(json_t *j, bool *stop, char *err)
{
	int v;

	if (json_unpack_ex(j, NULL, JSON_STRICT, "{s:b}", "stop", &v) == 0 && v) {
		*stop = true;
		return 0;
	}
	if (json_unpack_ex(j, NULL, JSON_STRICT, "{s:b}", "done", &v) == 0 && v) {
		*stop = false;
		return 0;
	}
	return bad(err, "end of run", NULL);
}

json_t *ctl_sent_json(const struct ctl_sent *c)
{
	return json_pack("{s:{s:I, s:o}}", "sent", "msgs", (json_int_t)c->msgs, "host_tx_drops",
			 c->tx_known ? json_integer((json_int_t)c->host_tx_drops) : json_null());
}

int ctl_sent_parse(json_t *j, struct ctl_sent *c, char *err)
{
	json_int_t msgs;
	json_t *drops;

	if (json_unpack_ex(j, NULL, 0, "{s:{s:I, s:o!}!}", "sent", "msgs", &msgs,
			   "host_tx_drops", &drops) < 0 || msgs < 0 ||
	    !(json_is_null(drops) || (json_is_integer(drops) && json_integer_value(drops) >= 0)))
		return bad(err, "count of messages sent", NULL);
	c->msgs = (uint64_t)msgs;
	c->tx_known = !json_is_null(drops);
	c->host_tx_drops = c->tx_known ? (uint64_t)json_integer_value(drops) : 0;
	return 0;
}

json_t *ctl_verdict_json(const struct ctl_verdict *v)
{
	const struct ctl_received *r = &v->received;

	return json_pack("{s:{s:b, s:I, s:i, s:{s:I, s:I, s:b, s:I, s:I, s:I, s:I}}}", "verdict",
			 "verified", v->verified, "bad_offset", (json_int_t)v->bad_offset,
			 "status", v->status, "received", "msgs", (json_int_t)r->msgs, "bytes",
			 (json_int_t)r->bytes, "drops_known", r->drops_known, "rcvbuf_drops",
			 (json_int_t)r->rcvbuf_drops, "no_recv_drops", (json_int_t)r->no_recv_drops,
			 "qkey_drops", (json_int_t)r->qkey_drops, "uc_msgs_cut",
			 (json_int_t)r->uc_msgs_cut);
}

int ctl_verdict_parse(json_t *j, struct ctl_verdict *v, char *err)
{
	json_int_t off, status, msgs, bytes, rcvbuf, norecv, qkey, cut;
	int ok, known;

	if (json_unpack_ex(j, NULL, 0, "{s:{s:b, s:I, s:I, s:{s:I, s:I, s:b, s:I, s:I, s:I, "
			   "s:I!}!}!}", "verdict", "verified", &ok, "bad_offset", &off, "status",
			   &status, "received", "msgs", &msgs, "bytes", &bytes, "drops_known", &known,
			   "rcvbuf_drops", &rcvbuf, "no_recv_drops", &norecv, "qkey_drops", &qkey,
			   "uc_msgs_cut", &cut) < 0 || off < 0 || status < 0 || status > 255 ||
	    msgs < 0 || bytes < 0 || rcvbuf < 0 || norecv < 0 || qkey < 0 || cut < 0)
		return bad(err, "result", NULL);
	v->verified = ok;
	v->bad_offset = (uint64_t)off;
	v->status = (int)status;
	v->received = (struct ctl_received){ (uint64_t)msgs, (uint64_t)bytes, known,
					     (uint64_t)rcvbuf, (uint64_t)norecv, (uint64_t)qkey,
					     (uint64_t)cut };
	return 0;
}

json_t *ctl_figures_json(const struct perf_bw_result *r)
{
	return json_pack("{s:{s:I, s:f, s:f, s:f, s:f}}", "figures", "iterations",
			 (json_int_t)r->iterations, "seconds", r->seconds, "bw_avg_gbps",
			 r->bw_avg_gbps, "bw_peak_gbps", r->bw_peak_gbps, "msg_rate_mpps",
			 r->msg_rate_mpps);
}

int ctl_figures_parse(json_t *j, struct perf_bw_result *r, char *err)
{
	json_int_t iters;
	double secs, avg, peak, rate;

	if (json_unpack_ex(j, NULL, 0, "{s:{s:I, s:F, s:F, s:F, s:F!}!}", "figures",
			   "iterations", &iters, "seconds", &secs, "bw_avg_gbps", &avg,
			   "bw_peak_gbps", &peak, "msg_rate_mpps", &rate) < 0 || iters < 0 ||
	    !(secs >= 0) || !(avg >= 0) || !(peak >= 0) || !(rate >= 0))
		return bad(err, "-b figures", NULL);
	r->iterations = (uint64_t)iters;
	r->seconds = secs;
	r->bw_avg_gbps = avg;
	r->bw_peak_gbps = peak;
	r->msg_rate_mpps = rate;
	return 0;
}
