// SPDX-License-Identifier: MIT
/*
 * The incast picture, from the coordinator's `incast -j` document: each
 * flow's goodput (bars, in flow order; flows that failed as crosses at 0),
 * or, from a run with --interval, its goodput over time (a line per flow;
 * past PLOT_FLOW_LINES flows, or with several runs overlaid, the sum and
 * the slowest and fastest flow per interval), and the flows' completion
 * times as a CDF, with Jain's index, the aggregate goodput and the
 * counters that moved in the caption.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"

#define num plot_num

/* Flows drawn one line each over time; more read as a tangle. */
#define PLOT_FLOW_LINES 16

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* "Jain 0.954, 12.3 Gb/s, retransmits 12": what a run's caption says. */
static void caption(const json_t *res, char *out, size_t cap)
{
	static const char *const moved[] = { "retransmits", "timeouts", "seq_naks_rx",
					     "rnr_naks_rx", "cnps_rx", "ce_rx", "rcvbuf_drops" };
	const json_t *engine = json_object_get(json_object_get(res, "counters"), "engine");
	double jain = num(res, "fairness_jain");
	double agg = num(json_object_get(res, "aggregate"), "goodput_gbps");
	size_t at;

	at = (size_t)snprintf(out, cap, "Jain's index %.3f, aggregate %.2f Gb/s", jain, agg);
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]) && at < cap; i++) {
		double v = num(engine, moved[i]);

		if (v > 0)
			at += (size_t)snprintf(out + at, cap - at, ", %s %.0f", moved[i], v);
	}
}

/* One line over time: member key of every interval object times scale, or
 * with flow > 0 that flow's; x at the middle of each interval. */
static int time_line(struct plot_panel *p, const json_t *iv, const char *label, int color,
		     const char *key, double scale, json_int_t flow, double *ymax, char *err)
{
	size_t n = json_array_size(iv), k;
	struct plot_series *s = plot_add_series(p, label, PLOT_LINES, color, n, err);
	const json_t *x;

	if (!s)
		return -1;
	json_array_foreach(iv, k, x) {
		const json_t *src = x, *fl;
		size_t j;
		double y;

		if (flow > 0) {
			src = NULL;
			json_array_foreach(json_object_get(x, "flows"), j, fl)
				if (json_integer_value(json_object_get(fl, "flow")) == flow)
					src = fl;
		}
		y = num(src, key) * scale;
		if (!isfinite(y))
			continue;	/* a flow with no sample there: no point */
		s->p[s->n++] = (struct plot_point){ .x = (num(x, "start_s") + num(x, "end_s")) / 2,
						    .y = y };
		*ymax = fmax(*ymax, y);
	}
	return 0;
}

/* Panel 0 from runs with --interval: goodput over time. */
static int over_time(struct plot_layout *l, const struct plot_input *in, size_t nin, char *err)
{
	struct plot_panel *p = &l->panels[0];
	double tmax = 0, ymax = 0;

	snprintf(p->x.label, sizeof(p->x.label), "time (s)");
	snprintf(p->y.label, sizeof(p->y.label), "goodput (Gb/s)");
	for (size_t f = 0; f < nin; f++) {
		const json_t *res = json_object_get(in[f].doc, "results");
		const json_t *iv = json_object_get(res, "intervals"), *flows, *fl;
		size_t n = json_array_size(json_object_get(json_array_get(iv, 0), "flows")), i;
		char label[96];

		if (!json_array_size(iv)) {
			snprintf(err, PLOT_ERR_LEN, "%s: no intervals: every run overlaid over time "
				 "needs incast --interval", in[f].name);
			return -1;
		}
		for (i = 0; i < json_array_size(iv); i++)
			tmax = fmax(tmax, num(json_array_get(iv, i), "end_s"));
		if (nin == 1 && n <= PLOT_FLOW_LINES) {
			flows = json_object_get(res, "flows");
			json_array_foreach(flows, i, fl) {
				const char *who = json_string_value(json_object_get(fl, "sender"));

				snprintf(label, sizeof(label), "flow %lld %.60s",
					 (long long)json_integer_value(json_object_get(fl, "flow")),
					 who ? who : "");
				plot_utf8_trim(label);
				if (time_line(p, iv, label, (int)i, "goodput_gbps", 1,
					      json_integer_value(json_object_get(fl, "flow")), &ymax, err) < 0)
					return -1;
			}
			continue;
		}
		/* Overlaid runs: each its sum; one run of many flows: the mean
		 * flow between its slowest and fastest. */
		if (nin > 1) {
			snprintf(label, sizeof(label), "%.80s: all flows",
				 in[f].label ? in[f].label : in[f].name);
			plot_utf8_trim(label);
			if (time_line(p, iv, label, (int)f, "goodput_gbps", 1, 0, &ymax, err) < 0)
				return -1;
			continue;
		}
		snprintf(label, sizeof(label), "mean of %zu flows", n);
		if (time_line(p, iv, "fastest flow", 1, "fastest_gbps", 1, 0, &ymax, err) < 0 ||
		    time_line(p, iv, label, 0, "goodput_gbps", 1.0 / (double)(n ? n : 1), 0, &ymax,
			      err) < 0 ||
		    time_line(p, iv, "slowest flow", 2, "slowest_gbps", 1, 0, &ymax, err) < 0)
			return -1;
	}
	plot_axis_fit(&p->x, 0, tmax > 0 ? tmax : 1);
	/* Headroom: the legend sits in the top left, above the lines. */
	plot_axis_fit(&p->y, 0, ymax > 0 ? ymax * 1.4 : 1);
	return 0;
}

static bool has_intervals(const struct plot_input *in, size_t nin)
{
	for (size_t f = 0; f < nin; f++)
		if (json_array_size(json_object_get(json_object_get(in[f].doc, "results"),
						    "intervals")))
			return true;
	return false;
}

/* Whether any flow of the runs has a completion time (--bytes). */
static bool has_fct(const struct plot_input *in, size_t nin)
{
	for (size_t f = 0; f < nin; f++) {
		const json_t *fl;
		size_t i;

		json_array_foreach(json_object_get(json_object_get(in[f].doc, "results"), "flows"),
				   i, fl)
			if (num(fl, "fct_us") > 0)
				return true;
	}
	return false;
}

/*
 * The panels: without intervals, per-flow goodput bars above the FCT CDF;
 * with them, goodput over time above the FCT CDF (--bytes) or above the
 * per-flow bars (-D, where there are no completion times).
 */
int plot_build_incast(struct plot_layout *l, const struct plot_input *in, size_t nin, char *err)
{
	static const double share[] = { 0.5, 0.5 };
	bool timed = has_intervals(in, nin), fcts = has_fct(in, nin);
	struct plot_panel *bp = !timed ? &l->panels[0] : fcts ? NULL : &l->panels[1];
	struct plot_panel *cp = !timed || fcts ? &l->panels[1] : NULL;
	double fmax_gbps = 0, nmax = 1, tlo = INFINITY, thi = 0;
	struct plot_series *failed = NULL;	/* one for every file's */
	size_t total = 0;

	for (size_t f = 0; f < nin; f++)
		total += json_array_size(json_object_get(json_object_get(in[f].doc, "results"),
							 "flows"));

	l->npanels = 2;
	if (bp) {
		bp->x.scale = PLOT_LINEAR;
		snprintf(bp->x.label, sizeof(bp->x.label), "flow");
		bp->y.scale = PLOT_LINEAR;
		snprintf(bp->y.label, sizeof(bp->y.label), "goodput (Gb/s)");
	}
	if (cp) {
		cp->x.scale = PLOT_LOG10;	/* linear when within a decade, below */
		snprintf(cp->x.label, sizeof(cp->x.label), "flow completion time (us)");
		cp->y.scale = PLOT_LINEAR;
		snprintf(cp->y.label, sizeof(cp->y.label), "fraction of flows");
	}
	for (size_t f = 0; f < nin; f++) {
		const json_t *res = json_object_get(in[f].doc, "results");
		const json_t *flows = json_object_get(res, "flows"), *fl;
		size_t n = json_array_size(flows), i, nfct = 0;
		struct plot_series *bars = NULL, *cdf = NULL;
		double *fct;
		char label[96];

		if (!n) {
			snprintf(err, PLOT_ERR_LEN, "%s: no flows to draw (a sender's document? plot "
				 "the coordinator's, --serve or rank 0)", in[f].name);
			return -1;
		}
		if (in[f].label)
			snprintf(label, sizeof(label), "%.90s", in[f].label);
		else
			caption(res, label, sizeof(label));
		plot_utf8_trim(label);
		if ((bp && !(bars = plot_add_series(bp, label, PLOT_BARS, (int)f, n, err))) ||
		    (cp && !(cdf = plot_add_series(cp, label, PLOT_CDF, (int)f, n, err))))
			return -1;
		if (!(fct = calloc(n, sizeof(*fct)))) {
			snprintf(err, PLOT_ERR_LEN, "out of memory");
			return -1;
		}
		json_array_foreach(flows, i, fl) {
			const char *status = json_string_value(json_object_get(fl, "status"));
			double g = num(fl, "goodput_gbps"), t = num(fl, "fct_us");
			bool ok = status && !strcmp(status, "ok");

			/* Overlaid runs side by side within each flow's slot. */
			double w = 0.8 / (double)nin, x = (double)(i + 1) + w * ((double)f -
									  (double)(nin - 1) / 2);

			if (ok && t > 0)
				fct[nfct++] = t;
			fmax_gbps = fmax(fmax_gbps, ok && g > 0 ? g : 0);
			if (!bars)
				continue;
			bars->p[bars->n++] = (struct plot_point){ .x = x, .y = ok && g >= 0 ? g : 0,
								  .xw = w };
			if (ok)
				continue;
			if (!failed && !(failed = plot_add_series(bp, "failed flows", PLOT_MARKS, 5,
								  total, err))) {
				free(fct);
				return -1;
			}
			failed->marker = PLOT_CROSS;
			failed->p[failed->n++] = (struct plot_point){ .x = x };
		}
		qsort(fct, nfct, sizeof(*fct), cmp_double);
		for (i = 0; cdf && i < nfct; i++) {
			cdf->p[cdf->n++] = (struct plot_point){ .x = fct[i],
								.y = (double)(i + 1) / (double)n };
			tlo = fmin(tlo, fct[i]);
			thi = fmax(thi, fct[i]);
		}
		free(fct);
		nmax = fmax(nmax, (double)n);
	}
	if (timed && over_time(l, in, nin, err) < 0)
		return -1;
	if (bp) {
		plot_axis_fit(&bp->x, 0, nmax + 1);
		plot_axis_fit(&bp->y, 0, fmax_gbps > 0 ? fmax_gbps : 1);
	}
	if (cp) {
		/* FCTs within a decade read better on a linear axis. */
		if (isfinite(tlo) && thi < 10 * tlo) {
			cp->x.scale = PLOT_LINEAR;
			tlo = 0;
		}
		plot_axis_fit(&cp->x, isfinite(tlo) ? tlo : 1, thi > 0 ? thi : 10);
		plot_axis_fit(&cp->y, 0, 1);
	}
	plot_arrange(l, share);
	return 0;
}
