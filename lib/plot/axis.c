// SPDX-License-Identifier: MIT
/*
 * Axes: ranges at round values, ticks and where a value falls on the page.
 * Linear axes step by 1, 2 or 5 times a power of ten; log2 axes put ticks
 * at powers of two (every one, or every second, fourth, ... so that about
 * ten remain); the "nines" axis of percentiles maps p to -log10(1 - p), as
 * HdrHistogram's plotter does, so 90, 99, 99.9 and 99.99 lie evenly.
 */
#include <math.h>
#include <stdio.h>

#include "plot.h"

/* Percentiles this close to 100 are drawn at the axis's end. */
#define NINES_MAX 6.0

static double nines(double percent)
{
	double left = 1.0 - percent / 100.0;

	return left <= pow(10, -NINES_MAX) ? NINES_MAX : -log10(left);
}

void plot_size_label(double bytes, char *out, size_t cap)
{
	static const char units[] = { 0, 'K', 'M', 'G', 'T' };
	int u = 0;

	while (u < 4 && bytes >= 1024 && fmod(bytes, 1024) == 0) {
		bytes /= 1024;
		u++;
	}
	if (u)
		snprintf(out, cap, "%.0f%c", bytes, units[u]);
	else
		snprintf(out, cap, "%.0f", bytes);
}

/* 1, 2 or 5 times a power of ten, about span/target. */
static double round_step(double span, int target)
{
	double raw = span / target, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void add_tick(struct plot_axis *a, double v, const char *label)
{
	if (a->nticks == PLOT_MAX_TICKS)
		return;
	a->ticks[a->nticks].value = v;
	snprintf(a->ticks[a->nticks].label, sizeof(a->ticks[0].label), "%s", label);
	a->nticks++;
}

static void fit_linear(struct plot_axis *a, double lo, double hi)
{
	double step;
	char label[16];

	if (!isfinite(lo) || !isfinite(hi))
		lo = 0, hi = 1;
	if (!(hi > lo))
		hi = lo + (lo ? fabs(lo) : 1);
	step = round_step(hi - lo, 5);
	a->min = floor(lo / step) * step;
	a->max = ceil(hi / step) * step;
	for (int i = 0; i < PLOT_MAX_TICKS && a->min + i * step <= a->max + step * 1e-9; i++) {
		double v = a->min + i * step;

		snprintf(label, sizeof(label), "%g", fabs(v) < step * 1e-9 ? 0.0 : v);
		add_tick(a, v, label);
	}
}

static void fit_log2(struct plot_axis *a, double lo, double hi)
{
	int e0, e1, every = 1;
	char label[16];

	if (!(lo > 0) || !isfinite(lo))
		lo = 1;
	if (!(hi > lo) || !isfinite(hi))
		hi = lo * 2;
	e0 = (int)floor(log2(lo));
	e1 = (int)ceil(log2(hi));
	while ((e1 - e0) / every > 10)
		every *= 2;
	a->min = ldexp(1, e0);
	a->max = ldexp(1, e1);
	for (int e = e0; e <= e1; e += every) {
		plot_size_label(ldexp(1, e), label, sizeof(label));
		add_tick(a, ldexp(1, e), label);
	}
}

static void fit_nines(struct plot_axis *a, double hi)
{
	int n = (int)ceil(nines(hi > 0 ? hi : 90) - 1e-9);
	char label[16];

	if (n < 1)
		n = 1;
	if (n > NINES_MAX)
		n = (int)NINES_MAX;
	a->min = 0;
	a->max = 100.0 * (1.0 - pow(10, -n));
	for (int i = 0; i <= n; i++) {
		double p = 100.0 * (1.0 - pow(10, -i));

		snprintf(label, sizeof(label), "%.*f%%", i > 2 ? i - 2 : 0, p);
		add_tick(a, p, label);
	}
}

static void fit_log10(struct plot_axis *a, double lo, double hi)
{
	static const double mult[] = { 1, 2, 5 };
	char label[16];

	if (!isfinite(hi) || !(hi > 0))
		hi = 1;
	/* Twelve decades at most: far smaller values sit at the bottom. */
	if (!(lo > 0) || !isfinite(lo) || lo < hi * 1e-12)
		lo = lo > 0 && isfinite(lo) ? hi * 1e-12 : hi / 10;
	if (!(hi > lo))
		hi = lo * 10;
	/* The range ends at 1, 2 or 5 times a power of ten around the data. */
	a->min = pow(10, floor(log10(lo)));
	for (int i = 2; i >= 1; i--)
		if (a->min * mult[i] <= lo)
			a->min *= mult[i], i = 0;
	a->max = pow(10, ceil(log10(hi)));
	for (int i = 1; i <= 2; i++)
		if (a->max / 10 * mult[i] >= hi) {
			a->max = a->max / 10 * mult[i];
			break;
		}
	for (double dec = pow(10, floor(log10(a->min) + 1e-9));
	     dec > 0 && dec < a->max * 1.0001 && a->nticks < PLOT_MAX_TICKS; dec *= 10)
		for (int i = 0; i < 3; i++) {
			double v = dec * mult[i];

			if (v > a->max * 1.0001)
				break;
			if (v < a->min * 0.9999)
				continue;
			snprintf(label, sizeof(label), "%g", v);
			add_tick(a, v, label);
		}
}

void plot_axis_fit(struct plot_axis *a, double lo, double hi)
{
	a->nticks = 0;
	switch (a->scale) {
	case PLOT_LOG10:
		fit_log10(a, lo, hi);
		break;
	case PLOT_LINEAR:
		fit_linear(a, lo, hi);
		break;
	case PLOT_LOG2:
		fit_log2(a, lo, hi);
		break;
	case PLOT_NINES:
		fit_nines(a, hi);
		break;
	}
}

/* A value as a fraction of the axis, 0 at min and 1 at max. */
static double fraction(const struct plot_axis *a, double v)
{
	switch (a->scale) {
	case PLOT_LOG2:
		if (!(v > 0))
			return 0;
		return (log2(v) - log2(a->min)) / (log2(a->max) - log2(a->min));
	case PLOT_NINES:
		return nines(v) / nines(a->max);
	case PLOT_LOG10:
		if (!(v > 0))
			return 0;
		return (log10(v) - log10(a->min)) / (log10(a->max) - log10(a->min));
	case PLOT_LINEAR:
	default:
		return a->max > a->min ? (v - a->min) / (a->max - a->min) : 0;
	}
}

double plot_axis_map(const struct plot_axis *a, double v, double p0, double p1)
{
	return p0 + fraction(a, v) * (p1 - p0);
}

void plot_axis_place(struct plot_axis *a, double p0, double p1)
{
	for (size_t i = 0; i < a->nticks; i++)
		a->ticks[i].page = plot_axis_map(a, a->ticks[i].value, p0, p1);
}
