// SPDX-License-Identifier: MIT
/*
 * The sequence graph of one QP from a capture's JSON lines (capture -j), in
 * the style of tcptrace: PSN (relative to the first request's, unwrapped
 * across 2^24) against time, the requests and what came back (ACKs, READ
 * responses), with retransmissions, NAKs by kind, RNR NAKs, CNPs and
 * CE-marked requests as marks of their own.
 *
 * The data flow is (src, dst, dest_qp) of request packets; what answers it
 * travels dst -> src to the requester's QP, which no request names: it is
 * the destination QP that most response packets from dst to src carry.  A
 * retransmission is a request whose PSN was seen before, as capture counts
 * them (lib/capture/flows.c); packets whose ICRC failed are left out, as
 * capture leaves them out of its accounting.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"

#define PSN_MOD (1 << 24)

/* ---- reading a capture's JSON lines --------------------------------------- */

json_t *plot_read_documents(const char *buf, size_t len, const char *name, char *err)
{
	json_t *packets = NULL, *summary = NULL, *first = NULL;
	size_t off = 0, n = 0;
	json_error_t je;

	for (;;) {
		json_t *doc;

		while (off < len && (buf[off] == ' ' || buf[off] == '\n' || buf[off] == '\r' ||
				     buf[off] == '\t'))
			off++;
		if (off == len)
			break;
		doc = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
		if (!doc) {
			snprintf(err, PLOT_ERR_LEN, "%s: not JSON (%s at byte %zu)", name, je.text,
				 off + je.position);
			goto fail;
		}
		off += je.position;
		if (n++ == 0) {
			first = doc;
			continue;
		}
		if (n == 2) {	/* several documents: a capture's lines, or nothing */
			if (!json_object_get(first, "frame") || !json_object_get(first, "opcode")) {
				json_decref(doc);
				snprintf(err, PLOT_ERR_LEN, "%s: several JSON documents, not the JSON "
					 "lines of 'rdmakit -j capture'", name);
				goto fail;
			}
			packets = json_array();
			json_array_append_new(packets, first);
			first = NULL;
		}
		if (json_object_get(doc, "summary")) {
			json_decref(summary);
			summary = doc;
		} else if (json_array_size(packets) >= PLOT_MAX_PACKETS) {
			json_decref(doc);
			snprintf(err, PLOT_ERR_LEN, "%s: more than %d packets: plot a part of the "
				 "capture (capture -c N, or a filter)", name, PLOT_MAX_PACKETS);
			goto fail;
		} else {
			json_array_append_new(packets, doc);
		}
	}
	if (n == 0) {
		snprintf(err, PLOT_ERR_LEN, "%s: empty, not a JSON document (plot what "
			 "'rdmakit -j bw|lat|capture' wrote)", name);
		return NULL;
	}
	if (first && json_object_get(first, "frame") && json_object_get(first, "opcode")) {
		packets = json_array();		/* a capture of one packet */
		json_array_append_new(packets, first);
		first = NULL;
	}
	if (first)
		return first;
	return json_pack("{s:o, s:o}", "capture_packets", packets, "capture_summary",
			 summary ? summary : json_object());
fail:
	json_decref(first);
	json_decref(packets);
	json_decref(summary);
	return NULL;
}

/* ---- one packet ---------------------------------------------------------- */

struct pkt {
	long long t_ns;			/* capture time, ns (time_ns, else time) */
	bool icrc_bad;			/* left out, as capture's accounting does */
	const char *src, *dst;
	long long qp, psn;
	int op;
	const char *ecn, *aeth_kind, *aeth_text;
};

static bool read_pkt(const json_t *j, struct pkt *p)
{
	const json_t *aeth = json_object_get(j, "aeth");

	/* time_ns is exact; time, a double of seconds since 1970, is not. */
	double secs = json_number_value(json_object_get(j, "time"));

	p->t_ns = json_is_integer(json_object_get(j, "time_ns"))
			  ? json_integer_value(json_object_get(j, "time_ns"))
			  : secs >= 0 && secs < 4e9 ? llround(secs * 1e9) : -1;
	p->src = json_string_value(json_object_get(j, "src"));
	p->dst = json_string_value(json_object_get(j, "dst"));
	p->qp = json_integer_value(json_object_get(j, "dest_qp"));
	p->psn = json_integer_value(json_object_get(j, "psn")) & (PSN_MOD - 1);
	p->op = (int)json_integer_value(json_object_get(j, "opcode"));
	p->ecn = json_string_value(json_object_get(j, "ecn"));
	p->aeth_kind = json_string_value(json_object_get(aeth, "kind"));
	p->aeth_text = json_string_value(json_object_get(aeth, "text"));
	p->icrc_bad = json_string_value(json_object_get(j, "icrc")) &&
		      !strcmp(json_string_value(json_object_get(j, "icrc")), "bad");
	/* Times within 2^62 ns (146 years) keep every difference in range. */
	return p->src && p->dst && p->t_ns >= 0 && p->t_ns < (1LL << 62) &&
	       json_is_number(json_object_get(j, "time")) &&
	       json_is_integer(json_object_get(j, "dest_qp")) &&
	       json_is_integer(json_object_get(j, "psn")) &&
	       json_is_integer(json_object_get(j, "opcode"));
}

/* IBTA opcodes of reliable and unreliable connections: requests carry
 * data or ask for it; responses (13..18) answer. */
static bool is_request(int op)
{
	int t = op >> 5, c = op & 0x1f;

	return (t == 0 || t == 1) && (c <= 12 || c == 19 || c == 20 || c == 22 || c == 23);
}

static bool is_response(int op)
{
	return op >> 5 == 0 && (op & 0x1f) >= 13 && (op & 0x1f) <= 18;
}

#define OP_CNP 0x81

/* a - b as PSNs: in [-2^23, 2^23). */
static long long psn_diff(long long a, long long b)
{
	long long d = ((a - b) % PSN_MOD + PSN_MOD) % PSN_MOD;

	return d >= PSN_MOD / 2 ? d - PSN_MOD : d;
}

/* ---- choosing the flow -------------------------------------------------- */

struct flow_pick {
	const char *src, *dst;
	long long qp, reply_qp;
	size_t packets;
};

/* Flows counted in one pass: (src, dst, QP) and their packets. */
#define MAX_FLOWS 4096

struct flow_count {
	const char *src, *dst;
	long long qp;
	size_t n;
};

/* The busiest flow of the packets `want` picks (at most MAX_FLOWS kept;
 * later ones are not counted): false when none. */
static bool busiest(const json_t *pkts, bool (*want)(const struct pkt *, const void *),
		    const void *ctx, struct flow_count *best)
{
	struct flow_count *t = calloc(MAX_FLOWS, sizeof(*t));
	size_t nt = 0, i, k;
	const json_t *j;
	struct pkt p;

	memset(best, 0, sizeof(*best));
	if (!t)
		return false;
	json_array_foreach(pkts, i, j) {
		if (!read_pkt(j, &p) || p.icrc_bad || !want(&p, ctx))
			continue;
		for (k = 0; k < nt; k++)
			if (t[k].qp == p.qp && !strcmp(t[k].src, p.src) && !strcmp(t[k].dst, p.dst))
				break;
		if (k == nt) {
			if (nt == MAX_FLOWS)
				continue;
			t[nt++] = (struct flow_count){ p.src, p.dst, p.qp, 0 };
		}
		if (++t[k].n > best->n)
			*best = t[k];
	}
	free(t);
	return best->n > 0;
}

static bool want_request(const struct pkt *p, const void *ctx)
{
	const long *qp = ctx;

	return is_request(p->op) && (*qp < 0 || p->qp == *qp);
}

/* What answers a flow: responses and CNPs from its destination to its source. */
static bool want_answer(const struct pkt *p, const void *ctx)
{
	const struct flow_pick *f = ctx;

	return (is_response(p->op) || p->op == OP_CNP) && !strcmp(p->src, f->dst) &&
	       !strcmp(p->dst, f->src);
}

/* The request flow to draw: of QP `qp` (or the busiest), by packets, and
 * the requester's QP: the one most answers to it carry. */
static bool pick_flow(const json_t *pkts, long qp, struct flow_pick *f)
{
	struct flow_count best;

	memset(f, 0, sizeof(*f));
	if (!busiest(pkts, want_request, &qp, &best))
		return false;
	*f = (struct flow_pick){ best.src, best.dst, best.qp, -1, best.n };
	if (busiest(pkts, want_answer, f, &best))
		f->reply_qp = best.qp;
	return true;
}

/* ---- the series ------------------------------------------------------------ */

enum mark {
	M_REQUEST, M_RESPONSE, M_ACK, M_RETRANSMIT, M_RNR, M_CNP, M_CE, M_NAK0,
	M_COUNT = M_NAK0 + 6
};

struct seq_build {
	struct plot_series *s[M_COUNT];
	char nak_text[6][48];
	size_t nnak;
	size_t cap;
	struct plot_panel *panel;
};

static const struct {
	const char *label;
	enum plot_marker marker;
	int color;
} marks[M_NAK0] = {
	[M_REQUEST] = { "requests", PLOT_DOT, 0 },
	[M_RESPONSE] = { "READ/atomic responses", PLOT_DOT, 2 },
	[M_ACK] = { "ACKs", PLOT_PLUS, 4 },
	[M_RETRANSMIT] = { "retransmissions", PLOT_CROSS, 5 },
	[M_RNR] = { "RNR NAKs", PLOT_SQUARE, 3 },
	[M_CNP] = { "CNPs", PLOT_TRIANGLE, 1 },
	[M_CE] = { "CE-marked requests", PLOT_DIAMOND, 6 },
};

/* Adds a point to series m, creating it on first use. */
static int add(struct seq_build *b, int m, double t, double psn, char *err)
{
	struct plot_series *s = b->s[m];

	if (!s) {
		char label[64];
		static const enum plot_marker nak_marker[] = {
			PLOT_CROSS, PLOT_PLUS, PLOT_TRIANGLE, PLOT_SQUARE, PLOT_DIAMOND, PLOT_DOT,
		};

		/* capture names them "NAK PSN sequence error", ... */
		if (m >= M_NAK0)
			snprintf(label, sizeof(label), "%s%.48s",
				 strncmp(b->nak_text[m - M_NAK0], "NAK", 3) ? "NAK: " : "",
				 b->nak_text[m - M_NAK0]);
		/* NAKs in black, one shape per kind. */
		s = plot_add_series(b->panel, m >= M_NAK0 ? label : marks[m].label, PLOT_MARKS,
				    m >= M_NAK0 ? 7 : marks[m].color, b->cap, err);
		if (!s)
			return -1;
		s->marker = m >= M_NAK0 ? nak_marker[m - M_NAK0] : marks[m].marker;
		b->s[m] = s;
	}
	s->p[s->n++] = (struct plot_point){ .x = t, .y = psn };
	return 0;
}

/* The series of a NAK of this kind (by its AETH text): M_NAK0 + i. */
static int nak_series(struct seq_build *b, const char *text)
{
	for (size_t i = 0; i < b->nnak; i++)
		if (!strcmp(b->nak_text[i], text))
			return M_NAK0 + (int)i;
	if (b->nnak == 6)
		return M_NAK0 + 5;	/* the sixth and later kinds share */
	snprintf(b->nak_text[b->nnak], sizeof(b->nak_text[0]), "%s", text);
	return M_NAK0 + (int)b->nnak++;
}

/* The PSN of a request seen before, within the last 2^16 PSNs? */
struct seen {
	unsigned char *bits;	/* PSN_MOD bits */
};

static bool seen_test_set(struct seen *s, long long psn)
{
	long long i = ((psn % PSN_MOD) + PSN_MOD) % PSN_MOD;
	bool was = s->bits[i / 8] & (1u << (i % 8));

	s->bits[i / 8] |= (unsigned char)(1u << (i % 8));
	return was;
}

int plot_build_seq(struct plot_layout *l, const struct plot_input *in, long qp, char *err)
{
	const json_t *pkts = json_object_get(in->doc, "capture_packets"), *j;
	struct seq_build b = { .cap = json_array_size(pkts), .panel = &l->panels[0] };
	struct seen seen = { calloc(PSN_MOD / 8, 1) };
	static const double share[] = { 1.0 };
	struct flow_pick f;
	long long last_raw = 0, last_u = 0;
	long long t0 = 0;
	double tmax = 0, ylo = 0, yhi = 0;
	bool started = false;
	int rc = -1;
	size_t i;

	if (!seen.bits) {
		snprintf(err, PLOT_ERR_LEN, "out of memory");
		return -1;
	}
	if (!pick_flow(pkts, qp, &f)) {
		if (qp >= 0)
			snprintf(err, PLOT_ERR_LEN, "%s: no request packets to QP %ld (--qp: a "
				 "destination QP of the capture's requests)", in->name, qp);
		else
			snprintf(err, PLOT_ERR_LEN, "%s: no RDMA request packets to draw", in->name);
		goto out;
	}
	l->npanels = 1;
	l->panels[0].x.scale = PLOT_LINEAR;
	snprintf(l->panels[0].x.label, sizeof(l->panels[0].x.label), "time (s)");
	l->panels[0].y.scale = PLOT_LINEAR;
	snprintf(l->panels[0].y.label, sizeof(l->panels[0].y.label), "PSN (from the first request)");
	json_array_foreach(pkts, i, j) {
		struct pkt p;
		bool fwd, back;
		long long u;
		double t;

		if (!read_pkt(j, &p) || p.icrc_bad)
			continue;
		fwd = is_request(p.op) && p.qp == f.qp && !strcmp(p.src, f.src) && !strcmp(p.dst, f.dst);
		back = (is_response(p.op) || p.op == OP_CNP) && p.qp == f.reply_qp &&
		       !strcmp(p.src, f.dst) && !strcmp(p.dst, f.src);
		if (!fwd && !(back && started))
			continue;
		if (!started) {
			started = true;
			t0 = p.t_ns;
			last_raw = p.psn;
		}
		t = (double)(p.t_ns - t0) / 1e9;
		/* Unwrapped against the latest request: near it, either side. */
		u = last_u + psn_diff(p.psn, last_raw);
		if (p.op == OP_CNP)
			u = last_u;	/* a CNP carries no PSN of ours */
		if (fwd) {
			bool again = seen_test_set(&seen, p.psn);

			if (add(&b, M_REQUEST, t, (double)u, err) < 0 ||
			    (again && add(&b, M_RETRANSMIT, t, (double)u, err) < 0) ||
			    (p.ecn && !strcmp(p.ecn, "ce") && add(&b, M_CE, t, (double)u, err) < 0))
				goto out;
			if (psn_diff(p.psn, last_raw) > 0 || u == 0) {
				last_raw = p.psn;
				last_u = u;
			}
		} else {
			int m = p.op == OP_CNP ? M_CNP
				: p.aeth_kind && !strcmp(p.aeth_kind, "nak")
					? nak_series(&b, p.aeth_text ? p.aeth_text : "NAK")
				: p.aeth_kind && !strcmp(p.aeth_kind, "rnr_nak") ? M_RNR
				: (p.op & 0x1f) == 17 ? M_ACK : M_RESPONSE;

			if (add(&b, m, t, (double)u, err) < 0)
				goto out;
		}
		tmax = fmax(tmax, t);
		ylo = fmin(ylo, (double)u);
		yhi = fmax(yhi, (double)u);
	}
	plot_axis_fit(&l->panels[0].x, 0, tmax > 0 ? tmax : 1e-6);
	plot_axis_fit(&l->panels[0].y, ylo, yhi > ylo ? yhi : ylo + 1);
	plot_arrange(l, share);
	snprintf(l->title, sizeof(l->title), "rdmakit seq: QP %lld, %.40s -> %.40s", f.qp, f.src,
		 f.dst);
	plot_utf8_trim(l->title);
	if (f.reply_qp >= 0)
		snprintf(l->subtitle, sizeof(l->subtitle), "%.80s: %zu requests; answers to QP %lld",
			 in->name, f.packets, f.reply_qp);
	else
		snprintf(l->subtitle, sizeof(l->subtitle), "%.80s: %zu requests; no answers captured",
			 in->name, f.packets);
	rc = 0;
out:
	free(seen.bits);
	return rc;
}
