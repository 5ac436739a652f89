// SPDX-License-Identifier: MIT
/*
 * The incast picture, from the coordinator's `incast -j` document: each
 * flow's goodput (bars, in flow order; flows that failed as crosses at 0)
 * and the flows' completion times as a CDF, with Jain's index, the
 * aggregate goodput and the counters that moved in the caption.
 * (Goodput over time needs per-flow interval samples, which incast does
 * not record yet.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"

#define num plot_num

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

int plot_build_incast(struct plot_layout *l, const struct plot_input *in, size_t nin, char *err)
{
	static const double share[] = { 0.5, 0.5 };
	double fmax_gbps = 0, nmax = 1, tlo = INFINITY, thi = 0;
	struct plot_series *failed = NULL;	/* one for every file's */
	size_t total = 0;

	for (size_t f = 0; f < nin; f++)
		total += json_array_size(json_object_get(json_object_get(in[f].doc, "results"),
							 "flows"));

	l->npanels = 2;
	l->panels[0].x.scale = PLOT_LINEAR;
	snprintf(l->panels[0].x.label, sizeof(l->panels[0].x.label), "flow");
	l->panels[0].y.scale = PLOT_LINEAR;
	snprintf(l->panels[0].y.label, sizeof(l->panels[0].y.label), "goodput (Gb/s)");
	l->panels[1].x.scale = PLOT_LOG10;	/* linear when within a decade, below */
	snprintf(l->panels[1].x.label, sizeof(l->panels[1].x.label), "flow completion time (us)");
	l->panels[1].y.scale = PLOT_LINEAR;
	snprintf(l->panels[1].y.label, sizeof(l->panels[1].y.label), "fraction of flows");
	for (size_t f = 0; f < nin; f++) {
		const json_t *res = json_object_get(in[f].doc, "results");
		const json_t *flows = json_object_get(res, "flows"), *fl;
		size_t n = json_array_size(flows), i, nfct = 0;
		struct plot_series *bars, *cdf;
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
		bars = plot_add_series(&l->panels[0], label, PLOT_BARS, (int)f, n, err);
		cdf = bars ? plot_add_series(&l->panels[1], label, PLOT_CDF, (int)f, n, err) : NULL;
		fct = cdf ? calloc(n, sizeof(*fct)) : NULL;
		if (!fct) {
			if (cdf)
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

			bars->p[bars->n++] = (struct plot_point){ .x = x, .y = ok && g >= 0 ? g : 0,
								  .xw = w };
			if (!ok) {
				if (!failed && !(failed = plot_add_series(&l->panels[0], "failed flows",
									  PLOT_MARKS, 5, total, err))) {
					free(fct);
					return -1;
				}
				failed->marker = PLOT_CROSS;
				failed->p[failed->n++] = (struct plot_point){ .x = x };
			} else if (t > 0) {
				fct[nfct++] = t;
			}
			fmax_gbps = fmax(fmax_gbps, ok && g > 0 ? g : 0);
		}
		qsort(fct, nfct, sizeof(*fct), cmp_double);
		for (i = 0; i < nfct; i++) {
			cdf->p[cdf->n++] = (struct plot_point){ .x = fct[i],
								.y = (double)(i + 1) / (double)n };
			tlo = fmin(tlo, fct[i]);
			thi = fmax(thi, fct[i]);
		}
		free(fct);
		nmax = fmax(nmax, (double)n);
	}
	plot_axis_fit(&l->panels[0].x, 0, nmax + 1);
	plot_axis_fit(&l->panels[0].y, 0, fmax_gbps > 0 ? fmax_gbps : 1);
	/* FCTs within a decade read better on a linear axis. */
	if (isfinite(tlo) && thi < 10 * tlo) {
		l->panels[1].x.scale = PLOT_LINEAR;
		tlo = 0;
	}
	plot_axis_fit(&l->panels[1].x, isfinite(tlo) ? tlo : 1, thi > 0 ? thi : 10);
	plot_axis_fit(&l->panels[1].y, 0, 1);
	plot_arrange(l, share);
	return 0;
}
