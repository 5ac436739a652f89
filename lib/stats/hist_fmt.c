// SPDX-License-Identifier: MIT
/* Percentile-distribution and bar-chart renderings of struct hist. */
#include <inttypes.h>
#include <math.h>

#include "hist_fmt.h"

#define TICKS_PER_HALF_DISTANCE 5

/* Values at or below v, walking the buckets. */
static uint64_t count_upto(const struct hist *h, uint64_t v)
{
	struct hist_iter it;
	uint64_t lo, hi, n, total = 0;

	hist_iter_init(&it, h);
	while (hist_iter_next(&it, &lo, &hi, &n) && lo <= v)
		total += n;
	return total;
}

void hist_write_hgrm(FILE *out, const struct hist *h)
{
	uint64_t count = hist_count(h);
	double p = 0;

	fprintf(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
		"1/(1-Percentile)");
	while (count) {
		uint64_t v = hist_percentile(h, p);
		double frac = p / 100;

		if (p >= 100 || (1 - frac) * (double)count < 1) {
			fprintf(out, "%12.3f %14.12f %10" PRIu64 "\n", (double)hist_max(h) / 1e3, 1.0,
				count);
			break;
		}
		fprintf(out, "%12.3f %14.12f %10" PRIu64 " %14.2f\n", (double)v / 1e3, frac,
			count_upto(h, v), 1 / (1 - frac));
		/* Halve the distance to 100% every TICKS_PER_HALF_DISTANCE rows. */
		p += 100.0 / (TICKS_PER_HALF_DISTANCE *
			      pow(2, floor(log2(100 / (100 - p))) + 1));
	}
	fprintf(out, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", hist_mean(h) / 1e3,
		hist_stdev(h) / 1e3);
	fprintf(out, "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n",
		(double)hist_max(h) / 1e3, count);
	fprintf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", (int)HIST_BUCKETS,
		(int)HIST_SUB_COUNT);
}

void hist_write_bars(FILE *out, const struct hist *h, unsigned rows)
{
	uint64_t lo_v = hist_min(h), hi_v = hist_max(h), peak = 0, counts[64] = { 0 };
	double l0, l1, step;
	struct hist_iter it;
	uint64_t lo, hi, n;

	if (!hist_count(h) || rows == 0)
		return;
	if (rows > 64)
		rows = 64;
	l0 = log((double)(lo_v ? lo_v : 1));
	l1 = log((double)(hi_v > lo_v ? hi_v : lo_v + 1));
	step = (l1 - l0) / rows;
	hist_iter_init(&it, h);
	while (hist_iter_next(&it, &lo, &hi, &n)) {
		double x = log((double)(lo < lo_v ? lo_v : lo ? lo : 1));
		unsigned r = step > 0 ? (unsigned)((x - l0) / step) : 0;

		counts[r >= rows ? rows - 1 : r] += n;
	}
	for (unsigned r = 0; r < rows; r++)
		if (counts[r] > peak)
			peak = counts[r];
	fprintf(out, " %12s %12s %10s\n", "from[usec]", "to[usec]", "count");
	for (unsigned r = 0; r < rows; r++) {
		int bar = (int)((double)counts[r] * 40 / (double)peak + 0.5);

		fprintf(out, " %12.3f %12.3f %10" PRIu64 " %.*s\n", exp(l0 + step * r) / 1e3,
			exp(l0 + step * (r + 1)) / 1e3, counts[r], bar,
			"########################################");
	}
}
