/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram for nanosecond samples.
 *
 * Values below 2 * HIST_SUB_COUNT (256 ns) get one bucket each, so they are
 * stored exactly (0 included).  Above that, every power of two [2^e, 2^e+1)
 * is split into HIST_SUB_COUNT (128) equal buckets of width 2^(e-7), so a
 * bucket is never wider than 1/128 of its lower bound; reporting its midpoint
 * keeps the relative error of any percentile within 1/256 (~0.39%).
 *
 * The range ends at HIST_MAX_VALUE (100 s).  Larger values are clamped to
 * HIST_MAX_VALUE everywhere (bucket, min, max, sums) and also counted in
 * 'overflow', so every statistic stays consistent and callers can tell that
 * it saturated.
 *
 * Fixed size, no allocation: embed it or put it on the stack.  Not
 * thread-safe; keep one per thread and hist_merge() them.
 */
#ifndef RDMAKIT_HIST_H
#define RDMAKIT_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)	/* buckets per power of two */
#define HIST_MAX_VALUE 100000000000ULL		/* 100 s in ns */
#define HIST_MAX_EXP 36				/* floor(log2(max value)) */

/*
 * A value v >= 2^HIST_SUB_BITS with s = floor(log2 v) - HIST_SUB_BITS goes to
 * bucket (s << HIST_SUB_BITS) + (v >> s); smaller values to bucket v.  The
 * array ends with the bucket that holds HIST_MAX_VALUE.
 */
#define HIST_BUCKETS                                                        \
	(((HIST_MAX_EXP - HIST_SUB_BITS) << HIST_SUB_BITS) +                \
	 (size_t)(HIST_MAX_VALUE >> (HIST_MAX_EXP - HIST_SUB_BITS)) + 1)

/* Exact 128-bit sums; __extension__ keeps -pedantic quiet. */
__extension__ typedef unsigned __int128 hist_u128;

struct hist {
	uint64_t count;		/* samples recorded, overflowed ones included */
	uint64_t overflow;	/* samples above HIST_MAX_VALUE */
	uint64_t min;		/* UINT64_MAX while empty; use hist_min() */
	uint64_t max;
	/*
	 * Exact sums of the (clamped) values and of their squares, so mean and
	 * stdev need no bucket approximation.  sumsq stays exact while the sum
	 * of squares fits 128 bits: at least 2^54 samples of 100 s.
	 */
	hist_u128 sum;
	hist_u128 sumsq;
	uint64_t buckets[HIST_BUCKETS];
};

struct hist_iter {
	const struct hist *h;
	size_t idx;		/* next bucket to look at */
};

void hist_init(struct hist *h);
void hist_reset(struct hist *h);

/* O(1).  A count of 0 is a no-op. */
void hist_record(struct hist *h, uint64_t value_ns);
void hist_record_n(struct hist *h, uint64_t value_ns, uint64_t count);

/* Adds src into dst; same result as recording src's samples into dst. */
void hist_merge(struct hist *dst, const struct hist *src);

uint64_t hist_count(const struct hist *h);
uint64_t hist_overflow(const struct hist *h);
uint64_t hist_min(const struct hist *h);	/* exact; 0 when empty */
uint64_t hist_max(const struct hist *h);	/* exact; 0 when empty */

/* Exact (from the 128-bit sum), rounded once to double; 0 when empty. */
double hist_mean(const struct hist *h);

/*
 * Population standard deviation from the exact sums of values and squares
 * (not from bucket midpoints), computed without cancellation loss, so it
 * is exact up to final rounding even when stdev << mean.  0 when empty.
 */
double hist_stdev(const struct hist *h);

/*
 * Value at percentile p in [0, 100]: the smallest recorded value v with at
 * least ceil(p / 100 * count) samples <= v.  p <= 0 (or NaN) gives min,
 * p >= 100 gives max, both exact; otherwise the midpoint of v's bucket
 * clamped into [min, max], within 1/256 of v.  The rank tolerates the few
 * ulps by which a decimal p such as 99.9 is off in binary, so p = 99.9 of
 * 1000 samples is rank 999, not 1000.  O(HIST_BUCKETS); 0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double p);

/*
 * Visits non-empty buckets in increasing value order.  [value_lo, value_hi]
 * is the inclusive range of values the bucket holds (the top bucket ends
 * at HIST_MAX_VALUE).  Returns false when done.
 */
void hist_iter_init(struct hist_iter *it, const struct hist *h);
bool hist_iter_next(struct hist_iter *it, uint64_t *value_lo,
		    uint64_t *value_hi, uint64_t *count);

#endif
