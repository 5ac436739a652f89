/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram; see hist.h for the bucket layout.
 */
#include "hist.h"

#include <float.h>
#include <math.h>
#include <string.h>

_Static_assert((HIST_MAX_VALUE >> HIST_MAX_EXP) == 1,
	       "HIST_MAX_EXP must be floor(log2(HIST_MAX_VALUE))");
_Static_assert(HIST_MAX_EXP >= HIST_SUB_BITS, "range below one octave");
_Static_assert(sizeof(struct hist) < 64 * 1024, "struct hist too large");

/*
 * Or-ing in HIST_SUB_COUNT makes every v < 2^HIST_SUB_BITS (0 included) take
 * shift 0 and land in bucket v, and keeps clz away from 0.
 */
static inline size_t bucket_index(uint64_t v)
{
	int top = 63 - __builtin_clzll(v | HIST_SUB_COUNT);
	unsigned int s = (unsigned int)top - HIST_SUB_BITS;

	return ((size_t)s << HIST_SUB_BITS) + (size_t)(v >> s);
}

/* Inverse of bucket_index(): the bucket's lowest value and its width. */
static void bucket_range(size_t i, uint64_t *lo, uint64_t *width)
{
	unsigned int s = 0;

	if (i >= 2 * HIST_SUB_COUNT)
		s = (unsigned int)(i >> HIST_SUB_BITS) - 1;
	*lo = (uint64_t)(i - ((size_t)s << HIST_SUB_BITS)) << s;
	*width = 1ULL << s;
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void hist_reset(struct hist *h)
{
	hist_init(h);
}

void hist_record_n(struct hist *h, uint64_t v, uint64_t count)
{
	if (!count)
		return;
	if (v > HIST_MAX_VALUE) {
		v = HIST_MAX_VALUE;
		h->overflow += count;
	}
	h->buckets[bucket_index(v)] += count;
	h->count += count;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += (hist_u128)v * count;
	/* v <= 2^37, so v * v cannot overflow before the count multiply. */
	h->sumsq += (hist_u128)v * v * count;
}

void hist_record(struct hist *h, uint64_t v)
{
	hist_record_n(h, v, 1);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	size_t i;

	/* Element-wise, so dst == src is fine (it doubles). */
	for (i = 0; i < HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->overflow += src->overflow;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	/* An empty src has min UINT64_MAX and max 0, so this is a no-op. */
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t hist_count(const struct hist *h)
{
	return h->count;
}

uint64_t hist_overflow(const struct hist *h)
{
	return h->overflow;
}

uint64_t hist_min(const struct hist *h)
{
	return h->count ? h->min : 0;
}

uint64_t hist_max(const struct hist *h)
{
	return h->max;
}

double hist_mean(const struct hist *h)
{
	uint64_t q, r;

	if (!h->count)
		return 0;
	/* q <= HIST_MAX_VALUE < 2^53 converts exactly; one rounding in r/n. */
	q = (uint64_t)(h->sum / h->count);
	r = (uint64_t)(h->sum % h->count);
	return (double)q + (double)r / (double)h->count;
}

double hist_stdev(const struct hist *h)
{
	uint64_t n = h->count, q, r;
	hist_u128 d;
	long double nvar;

	if (!n)
		return 0;
	/*
	 * With sum = q * n + r, n * var = sumsq - sum^2 / n
	 *                            = (sumsq - q^2 n - 2 q r) - r^2 / n.
	 * The bracket is exact in 128 bits and never negative (q <= mean, so
	 * q^2 n <= sumsq); only the small r^2 / n < n term is inexact, so no
	 * digits are lost to cancellation when stdev << mean.
	 */
	q = (uint64_t)(h->sum / n);
	r = (uint64_t)(h->sum % n);
	d = h->sumsq - (hist_u128)q * q * n - (hist_u128)2 * q * r;
	nvar = (long double)d - (long double)r * r / n;
	if (nvar <= 0)
		return 0;
	return (double)sqrtl(nvar / n);
}

/*
 * 1-based rank ceil(p / 100 * n) for 0 < p < 100.  A decimal p is off by up
 * to half an ulp in binary, which can push an exact integer product just
 * above it (99.9 / 100 * 1000 = 999.0000000000001); shaving a few ulps
 * restores the intended rank.
 */
static uint64_t rank_of(double p, uint64_t n)
{
	long double x = (long double)p / 100 * n;
	long double k;

	x -= x * (4 * DBL_EPSILON);
	k = ceill(x);
	if (k < 1)
		return 1;
	if (k >= n)
		return n;
	return (uint64_t)k;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, width, v;
	size_t i;

	if (!h->count)
		return 0;
	if (!(p > 0))
		return h->min;
	if (p >= 100)
		return h->max;
	rank = rank_of(p, h->count);
	if (rank == h->count)
		return h->max;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	/* Unreachable unless the struct was corrupted; stay in range. */
	if (i == HIST_BUCKETS)
		return h->max;
	bucket_range(i, &lo, &width);
	v = lo + width / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

void hist_iter_init(struct hist_iter *it, const struct hist *h)
{
	it->h = h;
	it->idx = 0;
}

bool hist_iter_next(struct hist_iter *it, uint64_t *value_lo,
		    uint64_t *value_hi, uint64_t *count)
{
	uint64_t lo, width;

	while (it->idx < HIST_BUCKETS && !it->h->buckets[it->idx])
		it->idx++;
	if (it->idx == HIST_BUCKETS)
		return false;
	bucket_range(it->idx, &lo, &width);
	*value_lo = lo;
	*value_hi = lo + (width - 1);
	if (*value_hi > HIST_MAX_VALUE)
		*value_hi = HIST_MAX_VALUE;
	*count = it->h->buckets[it->idx];
	it->idx++;
	return true;
}
