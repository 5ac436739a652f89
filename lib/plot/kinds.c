// SPDX-License-Identifier: MIT
/*
 * The kinds of picture, each from the JSON of the command that made it:
 *
 *   bw    (bw -j, best with -a) bandwidth in Gb/s and message rate in Mpps
 *         against message size, two panels sharing a log2 x axis;
 *   lat   (lat -j) latency against percentile on a "nines" axis, one line
 *         per message size, and the latency histogram below it.
 *
 * Every document is checked before a number is taken from it: rdmakit's
 * envelope (rdmakit, command, params, results), and in each result the
 * fields the kind draws.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot_int.h"

static const char *const kind_names[] = {
	[PLOT_KIND_NONE] = "none", [PLOT_KIND_BW] = "bw", [PLOT_KIND_LAT] = "lat",
	[PLOT_KIND_SEQ] = "seq", [PLOT_KIND_INCAST] = "incast",
};

enum plot_kind plot_kind_parse(const char *s)
{
	for (size_t k = PLOT_KIND_BW; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
		if (!strcmp(s, kind_names[k]))
			return (enum plot_kind)k;
	return PLOT_KIND_NONE;
}

const char *plot_kind_name(enum plot_kind k)
{
	return kind_names[k];
}

enum plot_kind plot_kind_of(const json_t *doc, const char *name, char *err)
{
	const char *cmd = json_string_value(json_object_get(doc, "command"));
	enum plot_kind k;

	if (json_is_array(json_object_get(doc, "capture_packets")))
		return PLOT_KIND_SEQ;
	if (!json_is_object(doc) || !json_is_string(json_object_get(doc, "rdmakit")) || !cmd ||
	    !json_is_object(json_object_get(doc, "params")) ||
	    !(json_is_array(json_object_get(doc, "results")) ||
	      json_is_object(json_object_get(doc, "results")))) {
		snprintf(err, PLOT_ERR_LEN,
			 "%s: not a JSON document rdmakit wrote (run 'rdmakit -j "
			 "bw|lat|incast|capture ...' and plot its output)", name);
		return PLOT_KIND_NONE;
	}
	k = !strcmp(cmd, "bw") ? PLOT_KIND_BW : !strcmp(cmd, "lat") ? PLOT_KIND_LAT
		: !strcmp(cmd, "incast") ? PLOT_KIND_INCAST : PLOT_KIND_NONE;
	if (k == PLOT_KIND_NONE)
		snprintf(err, PLOT_ERR_LEN, "%s: plot draws bw, lat and incast runs and captures, "
			 "not '%s'", name, cmd);
	return k;
}

#define num plot_num

static const char *str(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : dflt;
}

/* "WRITE, soft engine, MTU 1024, 1 QP": what a run was, from its params. */
static void describe(const json_t *doc, char *out, size_t cap)
{
	const json_t *p = json_object_get(doc, "params");
	double qps = num(p, "qps"), mtu = num(p, "mtu_bytes");
	char op[32];
	size_t i;

	snprintf(op, sizeof(op), "%s", str(p, "op", "?"));
	for (i = 0; op[i]; i++)
		op[i] = (char)(op[i] >= 'a' && op[i] <= 'z' ? op[i] - 32 : op[i]);
	plot_utf8_trim(op);
	snprintf(out, cap, "%.32s, %.16s engine, MTU %.0f, %.0f QP%s", op, str(p, "engine", "?"),
		 isnan(mtu) ? 0 : mtu, isnan(qps) ? 1 : qps, qps == 1 ? "" : "s");
	plot_utf8_trim(out);
}

/* ", 2026-12-04 20:12 UTC" from params.start_time ("2026-12-04T20:12:33Z"),
 * or "" when the document has none (older rdmakit) or a malformed one. */
static const char *start_time(const json_t *doc, char *out, size_t cap)
{
	const char *t = str(json_object_get(doc, "params"), "start_time", "");
	unsigned y, mo, d, h, mi;
	char tail;

	if (strlen(t) != 20 ||
	    sscanf(t, "%4u-%2u-%2uT%2u:%2u:%*2u%c", &y, &mo, &d, &h, &mi, &tail) != 6 ||
	    tail != 'Z' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59)
		return "";
	snprintf(out, cap, ", %04u-%02u-%02u %02u:%02u UTC", y, mo, d, h, mi);
	return out;
}

static const json_t *results_of(const struct plot_input *in, char *err)
{
	const json_t *r = json_object_get(in->doc, "results");
	const json_t *errors = json_object_get(in->doc, "errors");

	if (json_array_size(r))
		return r;
	if (json_array_size(errors))
		snprintf(err, PLOT_ERR_LEN, "%s: the run failed, nothing to draw: %s", in->name,
			 str(json_array_get(errors, 0), "message", "(no message)"));
	else
		snprintf(err, PLOT_ERR_LEN, "%s: no results to draw (a server's document? plot "
			 "the client's)", in->name);
	return NULL;
}

static void set_axis(struct plot_axis *a, enum plot_scale s, const char *label)
{
	memset(a, 0, sizeof(*a));
	a->scale = s;
	snprintf(a->label, sizeof(a->label), "%s", label);
}

/* A series' name: the run's (--label, or its parameters), then `extra`
 * (a message size); the size alone when the title already names the run. */
static void series_label(const struct plot_input *in, const char *extra, bool size_only,
			 char *out, size_t cap)
{
	char what[96];

	if (size_only && extra[0]) {
		snprintf(out, cap, "%s", extra);
		return;
	}
	/* Cut to fit a series label (96 bytes). */
	if (in->label) {
		snprintf(what, sizeof(what), "%.60s", in->label);
		plot_utf8_trim(what);
		snprintf(out, cap, "%.60s%s%.30s", what, extra[0] ? " " : "", extra);
		return;
	}
	describe(in->doc, what, sizeof(what));
	snprintf(out, cap, "%.60s%s%.30s", what, extra[0] ? ", " : "", extra);
	plot_utf8_trim(out);
}

/* ---- bw ------------------------------------------------------------------- */

/* A result's average bandwidth in Gb/s (--unit MiB writes MiB/s). */
static double bw_gbps(const json_t *r)
{
	double g = num(r, "bw_avg_gbps"), m = num(r, "bw_avg_mibps");

	return !isnan(g) ? g : m * 1048576.0 * 8 / 1e9;	/* NAN stays NAN */
}

static int build_bw(struct plot_layout *l, const struct plot_input *in, size_t nin, char *err)
{
	static const double share[] = { 0.5, 0.5 };
	double xlo = INFINITY, xhi = 0, bwhi = 0, mhi = 0;

	l->npanels = 2;
	set_axis(&l->panels[0].x, PLOT_LOG2, "message size (bytes)");
	set_axis(&l->panels[0].y, PLOT_LINEAR, "bandwidth (Gb/s)");
	set_axis(&l->panels[1].x, PLOT_LOG2, "message size (bytes)");
	set_axis(&l->panels[1].y, PLOT_LINEAR, "message rate (Mpps)");
	for (size_t f = 0; f < nin; f++) {
		const json_t *res = results_of(&in[f], err), *r;
		struct plot_series *sb, *sm;
		char label[96];
		size_t i;

		if (!res)
			return -1;
		series_label(&in[f], "", false, label, sizeof(label));
		sb = plot_add_series(&l->panels[0], label, PLOT_LINES, (int)f, json_array_size(res), err);
		sm = sb ? plot_add_series(&l->panels[1], label, PLOT_LINES, (int)f,
					  json_array_size(res), err) : NULL;
		if (!sm)
			return -1;
		json_array_foreach(res, i, r) {
			double b = num(r, "bytes"), g = bw_gbps(r), m = num(r, "msg_rate_mpps");

			if (!(b >= 1) || b != floor(b) || isnan(g) || isnan(m) || g < 0 || m < 0) {
				snprintf(err, PLOT_ERR_LEN, "%s: result %zu has no bytes, bandwidth and "
					 "message rate to draw", in[f].name, i + 1);
				return -1;
			}
			sb->p[sb->n++] = (struct plot_point){ .x = b, .y = g };
			sm->p[sm->n++] = (struct plot_point){ .x = b, .y = m };
			xlo = fmin(xlo, b);
			xhi = fmax(xhi, b);
			bwhi = fmax(bwhi, g);
			mhi = fmax(mhi, m);
		}
	}
	for (int i = 0; i < 2; i++)
		plot_axis_fit(&l->panels[i].x, xlo, xhi);
	plot_axis_fit(&l->panels[0].y, 0, bwhi);
	plot_axis_fit(&l->panels[1].y, 0, mhi);
	plot_arrange(l, share);
	return 0;
}

/* ---- lat ------------------------------------------------------------------ */

/* Buckets of a result's histogram, checked: their count, or -1. */
static long buckets(const json_t *r, double *total)
{
	const json_t *h = json_object_get(r, "histogram"), *b;
	size_t i;

	*total = 0;
	if (!json_array_size(h))
		return -1;
	json_array_foreach(h, i, b) {
		double from = num(b, "from_us"), to = num(b, "to_us"), c = num(b, "count");

		if (isnan(from) || isnan(to) || !(to >= from) || !(c >= 0))
			return -1;
		*total += c;
	}
	return *total > 0 ? (long)json_array_size(h) : -1;
}

static int lat_series(struct plot_layout *l, const struct plot_input *in, const json_t *r,
		      int color, bool one_size, bool one_file, double *ext, char *err)
{
	const json_t *h = json_object_get(r, "histogram"), *b;
	struct plot_series *sp, *sh;
	double total, cum = 0;
	char label[96], size[32], unit;
	long n = buckets(r, &total);
	double bytes;
	size_t i;

	if (n < 0) {
		snprintf(err, PLOT_ERR_LEN, "%s: a result has no latency histogram to draw "
			 "(buckets of from_us <= to_us and counts, not all 0)", in->name);
		return -1;
	}
	bytes = num(r, "bytes");
	if (!(bytes >= 1) || bytes != floor(bytes)) {
		snprintf(err, PLOT_ERR_LEN, "%s: a result has no message size (bytes) to name",
			 in->name);
		return -1;
	}
	plot_size_label(bytes, size, sizeof(size));
	unit = size[strlen(size) - 1];
	if (unit < '0' || unit > '9') {
		size[strlen(size) - 1] = '\0';
		snprintf(size + strlen(size), sizeof(size) - strlen(size), " %ciB", unit);
	} else {
		snprintf(size + strlen(size), sizeof(size) - strlen(size), " B");
	}
	series_label(in, one_size ? "" : size, one_file && !in->label, label, sizeof(label));
	sp = plot_add_series(&l->panels[0], label, PLOT_STEPS, color, (size_t)n, err);
	sh = sp ? plot_add_series(&l->panels[1], label, PLOT_BARS, color, (size_t)n, err) : NULL;
	if (!sh)
		return -1;
	json_array_foreach(h, i, b) {
		double from = num(b, "from_us"), to = num(b, "to_us"), c = num(b, "count");

		cum += c;
		/* The latency below which cum/total of the samples fall. */
		sp->p[sp->n++] = (struct plot_point){ .x = 100.0 * cum / total, .y = to };
		sh->p[sh->n++] = (struct plot_point){ .x = (from + to) / 2, .y = c,
						      .xw = to - from };
		ext[0] = fmin(ext[0], from);
		ext[1] = fmax(ext[1], to);
		ext[2] = fmax(ext[2], c);
		if (cum < total)
			ext[3] = fmax(ext[3], 100.0 * cum / total);
	}
	return 0;
}

static int build_lat(struct plot_layout *l, const struct plot_input *in, size_t nin, char *err)
{
	static const double share[] = { 0.6, 0.4 };
	double ext[4] = { INFINITY, 0, 0, 90 };	/* latency min, max; count max; percentile max */
	int color = 0;

	l->npanels = 2;
	set_axis(&l->panels[0].x, PLOT_NINES, "percentile");
	set_axis(&l->panels[0].y, PLOT_LOG10, "latency (us)");
	set_axis(&l->panels[1].x, PLOT_LOG10, "latency (us)");
	set_axis(&l->panels[1].y, PLOT_LINEAR, "samples");
	for (size_t f = 0; f < nin; f++) {
		const json_t *res = results_of(&in[f], err), *r;
		size_t i;

		if (!res)
			return -1;
		json_array_foreach(res, i, r)
			if (lat_series(l, &in[f], r, color++, json_array_size(res) == 1, nin == 1,
				       ext, err) < 0)
				return -1;
	}
	plot_axis_fit(&l->panels[0].x, 0, ext[3]);
	plot_axis_fit(&l->panels[0].y, ext[0], ext[1]);
	plot_axis_fit(&l->panels[1].x, ext[0], ext[1]);
	plot_axis_fit(&l->panels[1].y, 0, ext[2]);
	/* Percentiles past the axis (the last samples: 100%) sit at its end. */
	for (size_t s = 0; s < l->panels[0].nseries; s++)
		for (size_t k = 0; k < l->panels[0].series[s].n; k++) {
			struct plot_point *p = &l->panels[0].series[s].p[k];

			p->x = fmin(p->x, l->panels[0].x.max);
		}
	plot_arrange(l, share);
	return 0;
}

int plot_build(struct plot_layout *l, enum plot_kind kind, const struct plot_input *in,
	       size_t nin, double width, double height, const struct plot_options *opt,
	       char *err)
{
	char what[96], when[32];
	int rc;

	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->width = width;
	l->height = height;
	for (size_t f = 0; f < nin; f++) {
		char e[PLOT_ERR_LEN];
		enum plot_kind k = plot_kind_of(in[f].doc, in[f].name, e);

		if (k != kind) {
			if (k == PLOT_KIND_NONE)
				snprintf(err, PLOT_ERR_LEN, "%s", e);
			else
				snprintf(err, PLOT_ERR_LEN, "%s: a %s run cannot be drawn as --kind %s",
					 in[f].name, plot_kind_name(k), plot_kind_name(kind));
			return -1;
		}
	}
	if (kind == PLOT_KIND_SEQ) {
		if (nin > 1) {
			snprintf(err, PLOT_ERR_LEN, "--kind seq draws one capture, not %zu", nin);
			return -1;
		}
		rc = plot_build_seq(l, in, opt ? opt->qp : -1, err);
		if (rc == 0)
			plot_place(l);
		else
			plot_layout_free(l);
		return rc;
	}
	rc = kind == PLOT_KIND_BW ? build_bw(l, in, nin, err)
	     : kind == PLOT_KIND_LAT ? build_lat(l, in, nin, err)
				     : plot_build_incast(l, in, nin, err);
	if (rc < 0) {
		plot_layout_free(l);
		return -1;
	}
	describe(in[0].doc, what, sizeof(what));
	snprintf(l->title, sizeof(l->title), "rdmakit %s: %s%s", plot_kind_name(kind), what,
		 start_time(in[0].doc, when, sizeof(when)));
	snprintf(l->subtitle, sizeof(l->subtitle), "%s%s", in[0].name,
		 nin > 1 ? " and others (see the legend)" : "");
	plot_place(l);
	return 0;
}

int plot_document(const json_t *doc, const char *name, const char *path, char *err)
{
	struct plot_input in = { .doc = (json_t *)doc, .name = name };
	struct plot_options opt = { .qp = -1 };
	enum plot_format fmt = plot_format_of(path);
	struct plot_layout l;
	enum plot_kind kind;
	int rc;

	if (fmt == PLOT_FMT_NONE) {
		snprintf(err, PLOT_ERR_LEN, "%s: name the picture .svg, .png or .pdf", path);
		return -1;
	}
	kind = plot_kind_of(doc, name, err);
	if (kind == PLOT_KIND_NONE ||
	    plot_build(&l, kind, &in, 1, PLOT_DEFAULT_WIDTH, PLOT_DEFAULT_HEIGHT, &opt, err) < 0)
		return -1;
	rc = plot_draw(&l, fmt, path, err);
	plot_layout_free(&l);
	plot_release();
	return rc;
}
