// SPDX-License-Identifier: MIT
/*
 * What incast's nodes say to each other, and what the coordinator makes
 * of it: the test (the senders set it, the coordinator adopts what it did
 * not set itself), the flows of a pattern, and the folding of every node's
 * measurements into one result: per-flow goodput, Jain's fairness index,
 * flow completion times, per-message latency and counter deltas.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incast_int.h"

const char *incast_pattern_name(enum incast_pattern p)
{
	return p == INCAST_ALL_TO_ALL ? "all-to-all" : "incast";
}

double incast_jain(const double *x, unsigned n)
{
	double sum = 0, sq = 0;

	for (unsigned i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return n && sq > 0 ? sum * sum / (n * sq) : 0;
}

double incast_link_gbps(const char *addr)
{
	struct ifaddrs *all, *i;
	char name[IF_NAMESIZE + 1] = "", path[64];
	double gbps = 0;
	FILE *f;

	if (getifaddrs(&all) < 0)
		return 0;
	for (i = all; i && !name[0]; i = i->ifa_next) {
		char text[INET6_ADDRSTRLEN] = "";

		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, text,
				  sizeof(text));
		else if (i->ifa_addr->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, text,
				  sizeof(text));
		if (!strcmp(text, addr))
			snprintf(name, sizeof(name), "%s", i->ifa_name);
	}
	freeifaddrs(all);
	if (!name[0])
		return 0;
	/* Mb/s; -1 or unreadable for virtual links without a rate. */
	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", name);
	f = fopen(path, "r");
	if (f) {
		long mbps;

		if (fscanf(f, "%ld", &mbps) == 1 && mbps > 0)
			gbps = (double)mbps / 1000;
		fclose(f);
	}
	return gbps;
}

json_t *incast_test_to_json(const struct incast_opts *o)
{
	const struct perf_opts *p = &o->p;

	return json_pack("{s:s, s:s, s:I, s:f, s:I, s:i, s:i, s:i, s:i, s:b, s:i, s:f, s:s}",
			 "pattern", incast_pattern_name(o->pattern), "op", perf_op_name(p->op),
			 "size", (json_int_t)p->size, "duration_s", p->duration, "flow_bytes",
			 (json_int_t)o->flow_bytes, "qps", p->qps, "tx_depth", p->tx_depth,
			 "rx_depth", p->rx_depth, "mtu", p->mtu, "verify", p->verify, "set",
			 o->p.explicit_set, "interval_s", p->interval, "connection",
			 perf_conn_name(p->conn));
}

int incast_test_from_json(struct incast_opts *o, json_t *t, char *err)
{
	const char *pattern = NULL, *op = NULL, *conn = "RC";
	json_int_t size = 0, bytes = 0;
	int qps = 0, txd = 0, rxd = 0, mtu = 0, verify = 0, set = 0;
	double duration = 0, interval = 0;

	/* interval_s and connection are optional: senders before --interval
	 * and -c do not send them. */
	if (json_unpack(t, "{s:s, s:s, s:I, s:F, s:I, s:i, s:i, s:i, s:i, s:b, s:i, s?F, s?s}",
			"pattern", &pattern, "op", &op, "size", &size, "duration_s", &duration,
			"flow_bytes", &bytes, "qps", &qps, "tx_depth", &txd, "rx_depth", &rxd,
			"mtu", &mtu, "verify", &verify, "set", &set, "interval_s", &interval,
			"connection", &conn) < 0 ||
	    perf_conn_parse(conn) < 0 ||
	    size < 1 || qps < 1 || txd < 1 || rxd < 1 || mtu < 0 || bytes < 0 ||
	    !(duration >= 0) ||
	    (interval != 0 && !(interval >= PERF_MIN_INTERVAL && interval <= PERF_MAX_INTERVAL)) ||
	    (strcmp(op, "write") && strcmp(op, "send")) ||
	    (strcmp(pattern, "incast") && strcmp(pattern, "all-to-all"))) {
		snprintf(err, XPORT_ERR_LEN, "a participant sent test parameters this rdmakit "
			 "cannot use");
		return -1;
	}
	o->pattern = strcmp(pattern, "incast") ? INCAST_ALL_TO_ALL : INCAST_MANY_TO_ONE;
	o->p.op = strcmp(op, "write") ? PERF_SEND : PERF_WRITE;
	o->p.size = (uint64_t)size;
	o->p.duration = duration;
	o->flow_bytes = (uint64_t)bytes;
	o->p.qps = (unsigned)qps;
	o->p.tx_depth = (unsigned)txd;
	o->p.rx_depth = (unsigned)rxd;
	o->p.mtu = (uint32_t)mtu;
	o->p.verify = verify;
	o->p.explicit_set = (unsigned)set;
	o->p.interval = interval;
	o->p.conn = (enum xport_qp_type)perf_conn_parse(conn);
	{
		/* The command line's ranges; a run by --bytes has no duration. */
		struct perf_opts check = o->p;

		if (o->flow_bytes)
			check.duration = 1;
		check.iters = 0;
		if (perf_opts_check(&check, check.size, err) < 0)
			return -1;
	}
	return 0;
}

/* "-s 4096" or "--pattern all-to-all", for messages about a disagreement. */
static void describe(const struct incast_opts *o, unsigned bit, char *buf, size_t cap)
{
	switch (bit) {
	case PERF_SET_OP: snprintf(buf, cap, "--op %s", perf_op_name(o->p.op)); break;
	case PERF_SET_SIZE: snprintf(buf, cap, "-s %" PRIu64, o->p.size); break;
	case PERF_SET_DURATION: snprintf(buf, cap, "-D %g", o->p.duration); break;
	case PERF_SET_QPS: snprintf(buf, cap, "-q %u", o->p.qps); break;
	case INCAST_SET_PATTERN:
		snprintf(buf, cap, "--pattern %s", incast_pattern_name(o->pattern));
		break;
	case INCAST_SET_BYTES: snprintf(buf, cap, "--bytes %" PRIu64, o->flow_bytes); break;
	case PERF_SET_CONN: snprintf(buf, cap, "-c %s", perf_conn_name(o->p.conn)); break;
	}
}

static bool same(const struct incast_opts *a, const struct incast_opts *b, unsigned bit)
{
	switch (bit) {
	case PERF_SET_OP: return a->p.op == b->p.op;
	case PERF_SET_SIZE: return a->p.size == b->p.size;
	case PERF_SET_DURATION: return a->p.duration == b->p.duration;
	case PERF_SET_QPS: return a->p.qps == b->p.qps;
	case INCAST_SET_PATTERN: return a->pattern == b->pattern;
	case INCAST_SET_BYTES: return a->flow_bytes == b->flow_bytes;
	case PERF_SET_CONN: return a->p.conn == b->p.conn;
	}
	return true;
}

int incast_adopt(struct incast_opts *run, const struct incast_opts *theirs, const char *who,
		 bool first, char *err)
{
	static const unsigned bits[] = { PERF_SET_OP, PERF_SET_SIZE, PERF_SET_DURATION,
					 PERF_SET_QPS, INCAST_SET_PATTERN, INCAST_SET_BYTES,
					 PERF_SET_CONN };
	/* Taken whole or not at all: a participant refused changes nothing. */
	struct incast_opts next = *run, *mine = &next;
	char why[XPORT_ERR_LEN];
	/* Set so far: by the coordinator itself, or by an earlier participant
	 * (nothing has run yet, so a later one may still set what is open). */
	unsigned fixed = mine->p.explicit_set, want = theirs->p.explicit_set;

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		char a[64], b[64];

		if (!(fixed & bits[i]) || !(want & bits[i]) || same(mine, theirs, bits[i]))
			continue;
		describe(theirs, bits[i], a, sizeof(a));
		describe(mine, bits[i], b, sizeof(b));
		snprintf(err, XPORT_ERR_LEN, "%s asked for %s, but this run has %s: give it to the "
			 "coordinator only, or the same everywhere", who, a, b);
		return -1;
	}
	if (((fixed & PERF_SET_DURATION) && (want & INCAST_SET_BYTES)) ||
	    ((fixed & INCAST_SET_BYTES) && (want & PERF_SET_DURATION))) {
		snprintf(err, XPORT_ERR_LEN, "%s asked for %s, but this run goes by %s: give -D or "
			 "--bytes to one side only", who, (want & INCAST_SET_BYTES) ? "--bytes" : "-D",
			 (fixed & INCAST_SET_BYTES) ? "--bytes" : "-D");
		return -1;
	}
	if ((want & INCAST_SET_PATTERN) || (first && !(fixed & INCAST_SET_PATTERN)))
		mine->pattern = theirs->pattern;
	if ((want & PERF_SET_OP) || (first && !(fixed & PERF_SET_OP)))
		mine->p.op = theirs->p.op;
	if ((want & PERF_SET_SIZE) || (first && !(fixed & PERF_SET_SIZE)))
		mine->p.size = theirs->p.size;
	if ((want & PERF_SET_QPS) || (first && !(fixed & PERF_SET_QPS)))
		mine->p.qps = theirs->p.qps;
	if ((want & PERF_SET_CONN) || (first && !(fixed & PERF_SET_CONN)))
		mine->p.conn = theirs->p.conn;
	/* -D and --bytes exclude each other: whoever set one decides. */
	if ((want & (PERF_SET_DURATION | INCAST_SET_BYTES)) ||
	    (first && !(fixed & (PERF_SET_DURATION | INCAST_SET_BYTES)))) {
		mine->p.duration = theirs->p.duration;
		mine->flow_bytes = theirs->flow_bytes;
	}
	if (first)
		mine->p.tx_depth = theirs->p.tx_depth;
	if (theirs->p.rx_depth > mine->p.rx_depth)
		mine->p.rx_depth = theirs->p.rx_depth;
	if (theirs->p.mtu && (!mine->p.mtu || theirs->p.mtu < mine->p.mtu))
		mine->p.mtu = theirs->p.mtu;
	mine->p.verify = mine->p.verify || theirs->p.verify;
	/* Sampling costs nothing on the wire: the first who asks sets it. */
	if (!mine->p.interval)
		mine->p.interval = theirs->p.interval;
	mine->p.explicit_set |= want;
	/* What is left must be a test the transport carries (-c UD from one
	 * side, --op write from another). */
	perf_conn_default_op(&mine->p);
	if (perf_conn_check(&mine->p, why) < 0) {
		snprintf(err, XPORT_ERR_LEN, "%s and this run together ask for what cannot run: "
			 "%.200s", who, why);
		return -1;
	}
	*run = next;
	return 0;
}

unsigned incast_flows(enum incast_pattern p, unsigned size, struct incast_flow_def *out,
		      unsigned cap)
{
	unsigned n = 0;

	for (unsigned src = 0; src < size; src++)
		for (unsigned dst = 0; dst < size; dst++) {
			if (src == dst || (p == INCAST_MANY_TO_ONE && dst != 0) || n >= cap)
				continue;
			out[n] = (struct incast_flow_def){ n + 1, src, dst };
			n++;
		}
	return n;
}

bool incast_flow_touches(const struct incast_flow_def *f, unsigned first, unsigned n)
{
	return (f->src >= first && f->src < first + n) || (f->dst >= first && f->dst < first + n);
}

static struct incast_flow *flow_by_id(struct incast_result *r, json_int_t id)
{
	for (unsigned i = 0; i < r->nflows; i++)
		if ((json_int_t)r->flows[i].id == id)
			return &r->flows[i];
	return NULL;
}

static void add_counter(struct incast_result *r, const char *source, const char *name,
			uint64_t delta)
{
	struct incast_counter *c;

	for (unsigned i = 0; i < r->ncounters; i++)
		if (!strcmp(r->counters[i].source, source) && !strcmp(r->counters[i].name, name)) {
			r->counters[i].delta += delta;
			return;
		}
	c = realloc(r->counters, (r->ncounters + 1) * sizeof(*c));
	if (!c)
		return;
	r->counters = c;
	c = &r->counters[r->ncounters++];
	snprintf(c->source, sizeof(c->source), "%s", source);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->delta = delta;
}

/* A flow's interval samples from a node's result: at most
 * INCAST_MAX_INTERVALS, in bins the asked-for interval doubled k times
 * (how a node widens them); none at all is fine. */
static int take_intervals(const struct incast_result *r, struct incast_flow *f, json_t *v)
{
	json_t *b = json_object_get(v, "interval_bytes"), *x;
	json_int_t w = json_integer_value(json_object_get(v, "interval_ns"));
	uint64_t base = (uint64_t)(r->test.interval * 1e9), *got;
	size_t n = json_array_size(b), i;

	if (!b || !base)
		return 0;
	if (!json_is_array(b) || n > INCAST_MAX_INTERVALS || w <= 0)
		return -1;
	while (base < (uint64_t)w && base < (1ULL << 62))
		base *= 2;
	if (base != (uint64_t)w || !(got = calloc(n ? n : 1, sizeof(*got))))
		return -1;
	json_array_foreach(b, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < 0) {
			free(got);
			return -1;
		}
		got[i] = (uint64_t)json_integer_value(x);
	}
	/* Only whole and valid: a flow never holds half of a bad message. */
	free(f->interval_bytes);
	f->interval_bytes = got;
	f->nintervals = (unsigned)n;
	f->interval_ns = (uint64_t)w;
	return 0;
}

/* A count in a participant's result: a non-negative integer, else -1. */
static json_int_t count_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
}

int incast_fold(struct incast_result *r, json_t *res, json_t *seen_hosts, char *err)
{
	json_t *flows = json_object_get(res, "flows"), *recv = json_object_get(res, "received");
	json_t *lat = json_object_get(res, "latency"), *ctrs = json_object_get(res, "counters");
	const char *host = json_string_value(json_object_get(res, "host_id"));
	bool host_new = host && !json_object_get(seen_hosts, host);
	size_t k;
	json_t *v;

	if (!json_is_array(flows) || !json_is_array(recv) || !json_is_object(lat) ||
	    !json_is_array(ctrs)) {
		snprintf(err, XPORT_ERR_LEN, "a participant sent a malformed result");
		return -1;
	}
	if (host_new)
		json_object_set_new(seen_hosts, host, json_true());
	json_array_foreach(flows, k, v) {
		struct incast_flow *f = flow_by_id(r, json_integer_value(json_object_get(v, "flow")));
		const char *e = json_string_value(json_object_get(v, "error"));

		if (!f)
			continue;
		if (count_of(v, "bytes") < 0 || count_of(v, "messages") < 0 || count_of(v, "ns") < 0) {
			snprintf(err, XPORT_ERR_LEN, "a participant sent a malformed result");
			return -1;
		}
		f->sent_known = true;
		f->bytes = (uint64_t)count_of(v, "bytes");
		f->messages = (uint64_t)count_of(v, "messages");
		f->seconds = (double)count_of(v, "ns") / 1e9;
		if (take_intervals(r, f, v) < 0) {
			snprintf(err, XPORT_ERR_LEN, "a participant sent malformed interval samples");
			return -1;
		}
		if (json_is_true(json_object_get(v, "failed"))) {
			f->failed = true;
			snprintf(f->error, sizeof(f->error), "%s", e ? e : "failed");
		}
	}
	json_array_foreach(recv, k, v) {
		struct incast_flow *f = flow_by_id(r, json_integer_value(json_object_get(v, "flow")));

		if (!f)
			continue;
		f->verified = json_is_true(json_object_get(v, "verified"));
		/* UC and UD SEND: what the receiver took in, for the loss. */
		if (r->test.conn != XPORT_QPT_RC && r->test.op == PERF_SEND &&
		    count_of(v, "bytes") >= 0 && count_of(v, "messages") >= 0) {
			f->loss.received_known = true;
			f->loss.received_msgs = (uint64_t)count_of(v, "messages");
			f->loss.received_bytes = (uint64_t)count_of(v, "bytes");
		}
	}
	if (!json_is_true(json_object_get(res, "drops_known")))
		r->drops_unknown = true;
	json_array_foreach(json_object_get(lat, "buckets"), k, v)
		hist_record_n(&r->latency, (uint64_t)json_integer_value(json_array_get(v, 0)),
			      (uint64_t)json_integer_value(json_array_get(v, 1)));
	json_array_foreach(ctrs, k, v) {
		const char *src = json_string_value(json_object_get(v, "source"));
		const char *name = json_string_value(json_object_get(v, "name"));

		/* A host's own counters count once, however many nodes it runs. */
		if (!src || !name || (json_is_true(json_object_get(v, "host")) && !host_new))
			continue;
		add_counter(r, src, name, (uint64_t)json_integer_value(json_object_get(v, "delta")));
	}
	return 0;
}

void incast_fail_ranks(struct incast_result *r, unsigned first, unsigned n, const char *why)
{
	r->drops_unknown = true;	/* their counters never came */
	for (unsigned i = 0; i < r->nflows; i++) {
		struct incast_flow *f = &r->flows[i];

		if (f->src >= first && f->src < first + n && !f->failed) {
			f->failed = true;
			snprintf(f->error, sizeof(f->error), "%s", why);
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
static double nearest_rank(const double *v, unsigned n, double p)
{
	unsigned k = (unsigned)ceil(p / 100 * n);

	return v[k ? k - 1 : 0];
}

/* Brings every flow's samples to the widest bins any node used (nodes
 * widen theirs independently on long runs), so intervals line up; a last
 * interval shorter than a tenth of one (the messages in flight at -D's
 * end completing) joins the one before, as bw's does, so that no sliver
 * reports bytes over a few microseconds as goodput. */
static void common_intervals(struct incast_result *r)
{
	unsigned n = 0;

	r->interval_ns = 0;
	for (unsigned i = 0; i < r->nflows; i++)
		if (r->flows[i].interval_ns > r->interval_ns)
			r->interval_ns = r->flows[i].interval_ns;
	for (unsigned i = 0; i < r->nflows; i++) {
		struct incast_flow *f = &r->flows[i];

		while (f->interval_bytes && f->interval_ns < r->interval_ns) {
			for (unsigned k = 0; k < f->nintervals; k++)
				f->interval_bytes[k / 2] = (k % 2 ? f->interval_bytes[k / 2] : 0) +
							   f->interval_bytes[k];
			f->nintervals = (f->nintervals + 1) / 2;
			f->interval_ns *= 2;
		}
		if (f->interval_bytes && f->nintervals > n)
			n = f->nintervals;
	}
	if (n < 2 || (r->seconds - (n - 1) * (double)r->interval_ns / 1e9) * 10 >=
		     (double)r->interval_ns / 1e9)
		return;
	for (unsigned i = 0; i < r->nflows; i++) {
		struct incast_flow *f = &r->flows[i];

		if (f->interval_bytes && f->nintervals == n) {
			f->interval_bytes[n - 2] += f->interval_bytes[n - 1];
			f->nintervals--;
		}
	}
}

uint64_t incast_flow_delivered_bytes(const struct incast_flow *f)
{
	return f->loss.received_known ? f->loss.received_bytes : f->bytes;
}

uint64_t incast_flow_delivered_msgs(const struct incast_flow *f)
{
	return f->loss.received_known ? f->loss.received_msgs : f->messages;
}

static uint64_t engine_counter(const struct incast_result *r, const char *name)
{
	for (unsigned i = 0; i < r->ncounters; i++)
		if (!strcmp(r->counters[i].source, "engine") && !strcmp(r->counters[i].name, name))
			return r->counters[i].delta;
	return 0;
}

/* UC and UD: each flow's loss from its two ends, and the run's: known
 * when every flow's two ends reported. */
static void account_loss(struct incast_result *r)
{
	uint64_t sent = 0, got = 0, got_bytes = 0, lost = 0;
	bool all_known = r->nflows > 0;
	struct perf_loss *l = &r->loss;

	r->unreliable = r->test.conn != XPORT_QPT_RC;
	if (!r->unreliable)
		return;
	for (unsigned i = 0; i < r->nflows; i++) {
		struct incast_flow *f = &r->flows[i];

		f->loss.received_known = f->loss.received_known && f->sent_known;
		if (f->loss.received_known)
			perf_loss_count(&f->loss, f->messages, f->loss.received_msgs,
					f->loss.received_bytes);
		f->loss.sent_msgs = f->messages;
		all_known = all_known && f->loss.received_known;
		sent += f->messages;
		got += f->loss.received_msgs;
		got_bytes += f->loss.received_bytes;
		lost += f->loss.lost_msgs;
	}
	memset(l, 0, sizeof(*l));
	l->sent_msgs = sent;
	if (all_known) {
		perf_loss_count(l, sent, got, got_bytes);
		l->lost_msgs = lost;	/* a flow that got more cannot hide another's loss */
		l->loss_percent = sent ? 100.0 * (double)lost / (double)sent : 0;
	}
	l->where_known = l->tx_known = !r->drops_unknown;
	l->host_tx_drops = engine_counter(r, "tx_drops");
	l->rcvbuf_drops = engine_counter(r, "rcvbuf_drops");
	l->no_recv_drops = engine_counter(r, "no_recv_drops");
	l->qkey_drops = engine_counter(r, "qkey_drops");
	l->uc_msgs_cut = engine_counter(r, "uc_msgs_cut");
}

void incast_finish_result(struct incast_result *r)
{
	double *good = calloc(r->nflows ? r->nflows : 1, sizeof(double));
	double *fct = calloc(r->nflows ? r->nflows : 1, sizeof(double));
	uint64_t bytes = 0;
	unsigned nfct = 0, ngood = 0;

	r->seconds = 0;
	account_loss(r);
	for (unsigned i = 0; i < r->nflows; i++) {
		struct incast_flow *f = &r->flows[i];
		uint64_t delivered = incast_flow_delivered_bytes(f);

		f->goodput_gbps = f->seconds > 0 ? (double)delivered * 8 / f->seconds / 1e9 : 0;
		f->fct_us = -1;
		if (r->flow_bytes && !f->failed && f->bytes >= r->flow_bytes) {
			f->fct_us = f->seconds * 1e6;
			fct[nfct++] = f->fct_us;
		}
		if (f->seconds > r->seconds)
			r->seconds = f->seconds;
		bytes += delivered;
		/* A failed flow has no goodput to be fair about. */
		if (good && !f->failed)
			good[ngood++] = f->goodput_gbps;
	}
	r->aggregate_gbps = r->seconds > 0 ? (double)bytes * 8 / r->seconds / 1e9 : 0;
	common_intervals(r);
	r->fairness_jain = good ? incast_jain(good, ngood) : 0;
	r->fair_flows = ngood;
	r->has_fct = r->flow_bytes && nfct;
	if (r->has_fct && fct) {
		qsort(fct, nfct, sizeof(double), cmp_double);
		r->fct_p50_us = nearest_rank(fct, nfct, 50);
		r->fct_p99_us = nearest_rank(fct, nfct, 99);
		r->fct_max_us = fct[nfct - 1];
	}
	free(good);
	free(fct);
}

void incast_result_free(struct incast_result *r)
{
	for (unsigned i = 0; r->flows && i < r->nflows; i++)
		free(r->flows[i].interval_bytes);
	free(r->flows);
	free(r->counters);
	memset(r, 0, sizeof(*r));
}

