// SPDX-License-Identifier: MIT
/*
 * The Prometheus exposition of a counter snapshot; see prom.h.  Families
 * are written whole (every sample of a family together, as both formats
 * require) and only when they have a sample.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "prom.h"
#include "transport.h"

enum fam_type { FAM_COUNTER, FAM_GAUGE, FAM_INFO, FAM_UNKNOWN };

struct fam {
	const char *name;	/* without _total or _info */
	enum fam_type type;
	const char *help;
};

enum prom_format prom_negotiate(const char *accept)
{
	/* "application/openmetrics-text; version=1.0.0,text/plain;q=0.5": the
	 * scraper names OpenMetrics only when it can read it. */
	return accept && strcasestr(accept, "application/openmetrics-text") ? PROM_OPENMETRICS_100 :
									      PROM_TEXT_004;
}

static const char *suffix(enum fam_type t)
{
	return t == FAM_COUNTER ? "_total" : t == FAM_INFO ? "_info" : "";
}

/* HELP text: backslash and newline escaped (OpenMetrics: the double quote
 * too); bytes outside ASCII become '?', so the text is always UTF-8. */
static void put_help(FILE *o, enum prom_format f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", o);
		else if (*s == '\n')
			fputs("\\n", o);
		else if (*s == '"' && f == PROM_OPENMETRICS_100)
			fputs("\\\"", o);
		else
			fputc((unsigned char)*s < 0x80 ? *s : '?', o);
	}
}

static void family(FILE *o, enum prom_format f, const struct fam *fam)
{
	static const char *const om[] = { "counter", "gauge", "info", "unknown" };
	static const char *const t004[] = { "counter", "gauge", "gauge", "untyped" };
	/* 0.0.4 names a family by its samples' name; OpenMetrics by the stem. */
	const char *sfx = f == PROM_TEXT_004 ? suffix(fam->type) : "";

	fprintf(o, "# HELP %s%s ", fam->name, sfx);
	put_help(o, f, fam->help);
	fprintf(o, "\n# TYPE %s%s %s\n", fam->name, sfx,
		f == PROM_TEXT_004 ? t004[fam->type] : om[fam->type]);
}

/* A label value: backslash, double quote and newline escaped; bytes
 * outside ASCII become '?' (a driver's name need not be UTF-8, and one
 * invalid label value makes Prometheus reject the whole scrape). */
static void put_value(FILE *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", o);
		else if (*s == '"')
			fputs("\\\"", o);
		else if (*s == '\n')
			fputs("\\n", o);
		else
			fputc((unsigned char)*s < 0x80 ? *s : '?', o);
	}
}

/* name{k="v",...}: labels as key/value pairs, NULL-terminated. */
static void sample_start(FILE *o, const struct fam *fam, const char *const *kv)
{
	fprintf(o, "%s%s", fam->name, suffix(fam->type));
	if (!kv[0]) {
		fputc(' ', o);
		return;
	}
	fputc('{', o);
	for (size_t i = 0; kv[i]; i += 2) {
		fprintf(o, "%s%s=\"", i ? "," : "", kv[i]);
		put_value(o, kv[i + 1]);
		fputc('"', o);
	}
	fputs("} ", o);
}

static void sample_u64(FILE *o, const struct fam *fam, const char *const *kv,
		       uint64_t v)
{
	sample_start(o, fam, kv);
	fprintf(o, "%" PRIu64 "\n", v);
}

static void sample_dbl(FILE *o, const struct fam *fam, const char *const *kv,
		       double v)
{
	sample_start(o, fam, kv);
	if (isnan(v))
		fputs("NaN\n", o);
	else
		fprintf(o, "%.15g\n", v);
}

/* The labels every port series has. */
struct port_labels {
	char port[16];
	const char *kv[16];
	size_t n;
};

static void port_labels(struct port_labels *l, const struct ctr_port *p)
{
	snprintf(l->port, sizeof(l->port), "%d", p->port);
	l->n = 0;
	l->kv[l->n++] = "device";
	l->kv[l->n++] = p->device;
	l->kv[l->n++] = "port";
	l->kv[l->n++] = p->device[0] ? l->port : "";
	l->kv[l->n++] = "netdev";
	l->kv[l->n++] = p->netdev;
	l->kv[l->n] = NULL;
}

/* Adds labels after the port's (pairs, NULL-terminated). */
static const char *const *with(struct port_labels *l, const char *k1, const char *v1,
			       const char *k2, const char *v2)
{
	size_t n = l->n;

	if (k1) {
		l->kv[n++] = k1;
		l->kv[n++] = v1;
	}
	if (k2) {
		l->kv[n++] = k2;
		l->kv[n++] = v2;
	}
	l->kv[n] = NULL;
	return l->kv;
}

static bool port_is_up(const struct ctr_port *p)
{
	return !strcasecmp(p->state, "ACTIVE") || !strcasecmp(p->state, "UP");
}

static void port_state(FILE *o, enum prom_format f, const struct ctr_snapshot *s)
{
	static const struct fam info = {
		"rdma_port", FAM_INFO,
		"An RDMA port (or an -i interface): its link layer, state and physical state "
		"as sysfs words them"
	};
	static const struct fam up = {
		"rdma_port_up", FAM_GAUGE, "1 when the port is ACTIVE (an interface: UP), else 0"
	};
	static const struct fam speed = {
		"rdma_port_speed_bytes", FAM_GAUGE,
		"Link speed in bytes per second (sysfs rate: width x lane speed)"
	};
	struct port_labels l;
	bool any_speed = false;

	if (!s->nports)
		return;
	family(o, f, &info);
	for (size_t i = 0; i < s->nports; i++) {
		const struct ctr_port *p = &s->ports[i];
		size_t n;

		port_labels(&l, p);
		n = l.n;
		l.kv[n++] = "link_layer";
		l.kv[n++] = p->link_layer;
		l.kv[n++] = "state";
		l.kv[n++] = p->state;
		l.kv[n++] = "phys_state";
		l.kv[n++] = p->phys_state;
		l.kv[n] = NULL;
		sample_u64(o, &info, l.kv, 1);
	}
	family(o, f, &up);
	for (size_t i = 0; i < s->nports; i++) {
		port_labels(&l, &s->ports[i]);
		sample_u64(o, &up, l.kv, port_is_up(&s->ports[i]));
		any_speed |= s->ports[i].rate_gbps > 0;
	}
	if (!any_speed)
		return;
	family(o, f, &speed);
	for (size_t i = 0; i < s->nports; i++) {
		if (s->ports[i].rate_gbps <= 0)
			continue;
		port_labels(&l, &s->ports[i]);
		sample_dbl(o, &speed, l.kv, s->ports[i].rate_gbps * 1e9 / 8);
	}
}

/* One family per meaning of the semantic map, whatever the driver. */
static const struct {
	enum ctr_meaning m;
	struct fam fam;
} semantic[] = {
	{ CTR_M_RX_BYTES, { "rdma_port_receive_bytes", FAM_COUNTER,
	  "Bytes received: port_rcv_data x 4 (the IB PMA counts 4-byte words), else the "
	  "driver's byte counter" } },
	{ CTR_M_TX_BYTES, { "rdma_port_transmit_bytes", FAM_COUNTER,
	  "Bytes transmitted: port_xmit_data x 4 (the IB PMA counts 4-byte words), else the "
	  "driver's byte counter" } },
	{ CTR_M_RX_PACKETS, { "rdma_port_receive_packets", FAM_COUNTER,
	  "Packets received (port_rcv_packets, or the driver's counter)" } },
	{ CTR_M_TX_PACKETS, { "rdma_port_transmit_packets", FAM_COUNTER,
	  "Packets transmitted (port_xmit_packets, or the driver's counter)" } },
	{ CTR_M_ECN_MARKED, { "rdma_port_ecn_marked_packets", FAM_COUNTER,
	  "RoCE packets received with ECN CE (the notification point's count)" } },
	{ CTR_M_CNP_SENT, { "rdma_port_cnp_sent", FAM_COUNTER,
	  "Congestion notification packets sent (notification point)" } },
	{ CTR_M_CNP_HANDLED, { "rdma_port_cnp_handled", FAM_COUNTER,
	  "Congestion notification packets acted on (reaction point)" } },
	{ CTR_M_CNP_IGNORED, { "rdma_port_cnp_ignored", FAM_COUNTER,
	  "Congestion notification packets ignored" } },
	{ CTR_M_OUT_OF_SEQUENCE, { "rdma_port_out_of_sequence_packets", FAM_COUNTER,
	  "Packets received out of sequence" } },
	{ CTR_M_SEQ_ERR, { "rdma_port_sequence_error_naks", FAM_COUNTER,
	  "NAK sequence errors received: each starts a go-back-N retransmission" } },
	{ CTR_M_TIMEOUT, { "rdma_port_local_ack_timeouts", FAM_COUNTER,
	  "Local ACK timeouts: retransmissions after no answer" } },
	{ CTR_M_RNR, { "rdma_port_rnr_naks", FAM_COUNTER,
	  "Receiver-not-ready NAKs" } },
	{ CTR_M_DUP_REQ, { "rdma_port_duplicate_requests", FAM_COUNTER,
	  "Duplicate requests received" } },
	{ CTR_M_OUT_OF_BUFFER, { "rdma_port_out_of_buffer_drops", FAM_COUNTER,
	  "Packets dropped for lack of a posted receive" } },
};

static void port_semantic(FILE *o, enum prom_format f, const struct ctr_snapshot *s)
{
	struct port_labels l;

	for (size_t k = 0; k < sizeof(semantic) / sizeof(semantic[0]); k++) {
		bool started = false;

		for (size_t i = 0; i < s->nports; i++) {
			uint64_t v;
			double r;

			if (!ctr_port_meaning(&s->ports[i], semantic[k].m, &v, &r, NULL))
				continue;
			if (!started)
				family(o, f, &semantic[k].fam);
			started = true;
			port_labels(&l, &s->ports[i]);
			sample_u64(o, &semantic[k].fam, l.kv, v);
		}
	}
}

static void port_pfc(FILE *o, enum prom_format f, const struct ctr_snapshot *s)
{
	static const struct fam fam = {
		"rdma_port_pfc_pause_frames", FAM_COUNTER,
		"PFC pause frames per priority and direction, from the netdev's ethtool "
		"statistics or DCB"
	};
	static const char *const prios[] = { "0", "1", "2", "3", "4", "5", "6", "7" };
	struct port_labels l;
	bool started = false;

	for (size_t i = 0; i < s->nports; i++) {
		struct ctr_pfc pfc;

		if (!ctr_port_pfc(&s->ports[i], &pfc))
			continue;
		port_labels(&l, &s->ports[i]);
		for (int d = 0; d < 2; d++)
			for (int p = 0; p < CTR_PFC_PRIOS; p++) {
				if (!((d ? pfc.tx_known : pfc.rx_known) & (1u << p)))
					continue;
				if (!started)
					family(o, f, &fam);
				started = true;
				sample_u64(o, &fam, with(&l, "direction", d ? "tx" : "rx",
							    "priority", prios[p]),
					   d ? pfc.tx[p] : pfc.rx[p]);
			}
	}
}

/* Every counter as the kernel names it, unscaled: one family, the source
 * and the name as labels (driver names are not metric names: irdma's have
 * spaces, and they differ by driver and firmware). */
static void port_raw(FILE *o, enum prom_format f, const struct ctr_snapshot *s)
{
	static const struct fam fam = {
		"rdma_port_stat", FAM_UNKNOWN,
		"Every counter of the port as the kernel names it (counter), unscaled, by where "
		"it was read (source: counters, hw_counters, netlink, netlink optional, device "
		"hw_counters, ethtool, dcb, pause stats, statistics)"
	};
	struct port_labels l;
	bool started = false;

	for (size_t i = 0; i < s->nports; i++) {
		const struct ctr_port *p = &s->ports[i];

		port_labels(&l, p);
		for (size_t k = 0; k < p->set.n; k++) {
			const struct ctr_counter *c = &p->set.c[k];

			if (c->src == CTR_SRC_NLDEV_QP)
				continue;	/* port_qp_counters */
			/* One series per name: some drivers repeat ethtool names
			 * (per-queue stats); the set is sorted, repeats adjacent. */
			if (k && c->src == p->set.c[k - 1].src && !strcmp(c->name, p->set.c[k - 1].name))
				continue;
			if (!started)
				family(o, f, &fam);
			started = true;
			sample_u64(o, &fam, with(&l, "source", ctr_src_name((enum ctr_src)c->src),
						    "counter", c->name), c->value);
		}
	}
}

/*
 * The RDMA netlink's QP counters of each port, the first PROM_MAX_QPS of
 * a port: their values (part of the port's, never to be added to them),
 * the QPs bound to each, and how many were left out.
 */
static void port_qp_counters(FILE *o, enum prom_format f, const struct ctr_snapshot *s)
{
	static const struct fam stat = {
		"rdma_port_qp_stat", FAM_UNKNOWN,
		"A QP counter's values (rdma statistic qp show) as the kernel names them "
		"(counter), unscaled; part of the port's own values, not to be added to them"
	};
	static const struct fam qps = {
		"rdma_port_qp_stat_qps", FAM_GAUGE, "QPs bound to a QP counter, by its mode"
	};
	static const struct fam left = {
		"rdma_port_qp_stat_not_exported", FAM_GAUGE,
		"QP counters of the port left out of this exposition (at most 64 per port)"
	};
	const struct fam *fams[] = { &stat, &qps, &left };
	struct port_labels l;
	char id[16];

	for (size_t which = 0; which < 3; which++) {
		bool started = false;

		for (size_t i = 0; i < s->nports; i++) {
			const struct ctr_port *p = &s->ports[i];
			size_t shown = p->nqpc < PROM_MAX_QPS ? p->nqpc : PROM_MAX_QPS;

			if (!p->nldev_known)
				continue;
			port_labels(&l, p);
			if (!started)
				family(o, f, fams[which]);
			started = true;
			if (which == 2) {
				sample_u64(o, &left, with(&l, NULL, NULL, NULL, NULL),
					   p->nqpc - shown + p->qpc_left_out);
				continue;
			}
			for (size_t q = 0; q < shown; q++) {
				size_t plen = (size_t)snprintf(id, sizeof(id), "%u/", p->qpc[q].id);

				if (which == 1) {
					id[plen - 1] = '\0';
					sample_u64(o, &qps, with(&l, "counter_id", id, "mode",
								 ctr_qp_counter_mode(p->qpc[q].mode)),
						   p->qpc[q].nqps);
					continue;
				}
				for (size_t k = 0; k < p->set.n; k++) {
					const struct ctr_counter *c = &p->set.c[k];

					if (c->src != CTR_SRC_NLDEV_QP || strncmp(c->name, id, plen))
						continue;
					id[plen - 1] = '\0';
					sample_u64(o, &stat, with(&l, "counter_id", id, "counter",
								  c->name + plen), c->value);
					id[plen - 1] = '/';
				}
			}
		}
	}
}

static void host_ecn(FILE *o, enum prom_format f, const struct ctr_snapshot *s)
{
	static const struct fam fam = {
		"rdma_host_ecn_received_packets", FAM_COUNTER,
		"IP packets this host received by ECN codepoint (/proc/net/netstat IpExt)"
	};
	static const char *const names[][2] = {
		{ "InCEPkts", "ce" }, { "InECT0Pkts", "ect0" }, { "InECT1Pkts", "ect1" },
		{ "InNoECTPkts", "not_ect" },
	};
	bool started = false;

	for (size_t i = 0; s->have_netstat && i < 4; i++) {
		const struct ctr_counter *c = ctr_find(&s->netstat, CTR_SRC_NETSTAT, names[i][0]);

		if (!c)
			continue;
		if (!started)
			family(o, f, &fam);
		started = true;
		sample_u64(o, &fam, (const char *const[]){ "codepoint", names[i][1], NULL },
			   c->value);
	}
}

/* "soft 127.0.0.1:4791" -> "127.0.0.1:4791". */
static const char *engine_address(const struct ctr_engine *e)
{
	const char *sp = strchr(e->name, ' ');

	return sp ? sp + 1 : e->name;
}

/* Per-QP counters are named "qp 0xNNNNNN/NAME", sorted, so QPs come in
 * order.  The engine's QP count, and in last the name prefix of the last
 * QP exported ("" when all are). */
static size_t qp_cutoff(const struct ctr_engine *e, char *last, size_t cap)
{
	const char *prev = NULL;
	size_t prev_len = 0, n = 0;

	last[0] = '\0';
	for (size_t k = 0; k < e->set.n; k++) {
		const char *c = e->set.c[k].name, *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : 0;

		if (strncmp(c, "qp ", 3) || !slash || (prev && len == prev_len && !strncmp(c, prev, len)))
			continue;
		prev = c;
		prev_len = len;
		if (++n == PROM_MAX_QPS)
			snprintf(last, cap, "%.*s", (int)len, c);
	}
	if (n <= PROM_MAX_QPS)
		last[0] = '\0';
	return n;
}

/* Whether counter k is counter `name` of an exported QP; its qpn label. */
static bool qp_counter(const struct ctr_engine *e, size_t k, const char *name, const char *last,
		       char *qpn, size_t cap)
{
	const char *c = e->set.c[k].name, *slash = strchr(c, '/');
	size_t len = slash ? (size_t)(slash - c) : 0;

	if (strncmp(c, "qp ", 3) || !slash || strcmp(slash + 1, name))
		return false;
	if (last[0] && (len != strlen(last) || strncmp(c, last, len) > 0))
		return false;
	snprintf(qpn, cap, "%.*s", (int)(len - 3), c + 3);
	return true;
}

static void engines(FILE *o, enum prom_format f, const struct ctr_snapshot *s)
{
	static const struct fam info = {
		"rdma_soft_engine", FAM_INFO,
		"A running rdmakit soft engine: its address and process id"
	};
	static const struct fam dropped = {
		"rdma_soft_engine_qps_not_exported", FAM_GAUGE,
		"QPs of the engine beyond the per-engine cap, whose series are left out"
	};
	char pid[16], qpn[32], name[96], help[160], last[CTR_MAX_ENGINES][32];
	size_t nqps[CTR_MAX_ENGINES];

	if (!s->nengines)
		return;
	for (size_t i = 0; i < s->nengines && i < CTR_MAX_ENGINES; i++)
		nqps[i] = qp_cutoff(&s->engines[i], last[i], sizeof(last[i]));
	family(o, f, &info);
	for (size_t i = 0; i < s->nengines; i++) {
		snprintf(pid, sizeof(pid), "%d", s->engines[i].pid);
		sample_u64(o, &info, (const char *const[]){ "address",
			   engine_address(&s->engines[i]), "pid", pid, NULL }, 1);
	}
	for (size_t c = 0; c < xport_counter_count(); c++) {
		const char *cn = xport_counter_name(c);
		struct fam fam = { name, FAM_COUNTER, help };
		bool started = false;

		snprintf(name, sizeof(name), "rdma_soft_engine_%s", cn);
		snprintf(help, sizeof(help), "The soft engine's %s, all its QPs", cn);
		for (size_t i = 0; i < s->nengines; i++) {
			const struct ctr_counter *v = ctr_find(&s->engines[i].set, CTR_SRC_ENGINE, cn);

			if (!v)
				continue;
			if (!started)
				family(o, f, &fam);
			started = true;
			sample_u64(o, &fam, (const char *const[]){ "address",
				   engine_address(&s->engines[i]), NULL }, v->value);
		}
		snprintf(name, sizeof(name), "rdma_soft_qp_%s", cn);
		snprintf(help, sizeof(help), "The soft engine's %s, per QP (at most %d QPs each)",
			 cn, PROM_MAX_QPS);
		started = false;
		for (size_t i = 0; i < s->nengines && i < CTR_MAX_ENGINES; i++) {
			const struct ctr_engine *e = &s->engines[i];

			for (size_t k = 0; k < e->set.n; k++) {
				if (!qp_counter(e, k, cn, last[i], qpn, sizeof(qpn)))
					continue;
				if (!started)
					family(o, f, &fam);
				started = true;
				sample_u64(o, &fam, (const char *const[]){ "address",
					   engine_address(e), "qpn", qpn, NULL }, e->set.c[k].value);
			}
		}
	}
	family(o, f, &dropped);
	for (size_t i = 0; i < s->nengines && i < CTR_MAX_ENGINES; i++)
		sample_u64(o, &dropped, (const char *const[]){ "address",
			   engine_address(&s->engines[i]), NULL },
			   nqps[i] > PROM_MAX_QPS ? nqps[i] - PROM_MAX_QPS : 0);
}

static void scrape(FILE *o, enum prom_format f, const struct prom_scrape *sc)
{
	static const struct fam build = {
		"rdmakit_build", FAM_INFO, "The rdmakit that serves these metrics"
	};
	static const struct fam dur = {
		"rdmakit_scrape_duration_seconds", FAM_GAUGE,
		"Seconds this scrape spent reading the counters"
	};
	static const struct fam ok = {
		"rdmakit_scrape_success", FAM_GAUGE, "1 when this scrape read the counters, else 0"
	};
	static const struct fam err = {
		"rdmakit_scrape_errors", FAM_COUNTER,
		"Scrapes whose reading failed (a device removed under it: the other ports are "
		"still served)"
	};
	static const char *const none[] = { NULL };

	family(o, f, &build);
	sample_u64(o, &build, (const char *const[]){ "version", RDMAKIT_VERSION, NULL }, 1);
	family(o, f, &dur);
	sample_dbl(o, &dur, none, sc->duration_s);
	family(o, f, &ok);
	sample_u64(o, &ok, none, sc->ok);
	family(o, f, &err);
	sample_u64(o, &err, none, sc->errors);
}

void prom_write(FILE *out, enum prom_format f, const struct ctr_snapshot *s,
		const struct prom_scrape *sc)
{
	if (s) {
		port_state(out, f, s);
		port_semantic(out, f, s);
		port_pfc(out, f, s);
		port_raw(out, f, s);
		port_qp_counters(out, f, s);
		host_ecn(out, f, s);
		engines(out, f, s);
	}
	scrape(out, f, sc);
	if (f == PROM_OPENMETRICS_100)
		fputs("# EOF\n", out);
}
