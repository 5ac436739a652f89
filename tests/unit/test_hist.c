/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for lib/stats/hist: percentiles are compared with exact ones
 * from a sorted copy of the same samples, using the same rank definition
 * (value at 1-based rank ceil(p / 100 * n), p = 0 -> min) but computed in
 * integers, so the library's floating-point rank is checked too.
 */
#include "hist.h"
#include "unit.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define N_SAMPLES 200000

/* p and p * 100 as an integer, so reference ranks need no floating point. */
static const struct {
	double p;
	uint64_t p100;
} pcts[] = {
	{ 0, 0 },	 { 1, 100 },	 { 10, 1000 },	  { 25, 2500 },
	{ 50, 5000 },	 { 75, 7500 },	 { 90, 9000 },	  { 99, 9900 },
	{ 99.9, 9990 },	 { 99.99, 9999 }, { 100, 10000 },
};
#define N_PCTS (sizeof(pcts) / sizeof(pcts[0]))

/* splitmix64: fixed seeds keep every run identical. */
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

static uint64_t rng_u64(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_unit(void)
{
	return (double)(rng_u64() >> 11) * 0x1.0p-53;
}

static uint64_t rng_below(uint64_t n)
{
	return rng_u64() % n;
}

static double rng_normal(double mean, double sd)
{
	double u1 = 1.0 - rng_unit(), u2 = rng_unit();

	return mean + sd * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static uint64_t nonneg(double x)
{
	return x < 0 ? 0 : (uint64_t)llround(x);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t clamp(uint64_t v)
{
	return v > HIST_MAX_VALUE ? HIST_MAX_VALUE : v;
}

/* Reference 1-based rank for p100 / 10000, never below 1. */
static uint64_t ref_rank(uint64_t p100, uint64_t n)
{
	uint64_t k = (uint64_t)(((hist_u128)p100 * n + 9999) / 10000);

	return k ? k : 1;
}

static void fail(struct unit *u, const char *what, double p, double got,
		 double want)
{
	u->failures++;
	printf("#   %s: p=%g got %.17g want %.17g\n", what, p, got, want);
}

/* got within rel of want (both 0 counts as equal). */
static bool close_rel(double got, double want, double rel)
{
	return fabs(got - want) <= rel * fabs(want);
}

/*
 * Checks count, min, max, mean, stdev and all percentiles of h against
 * the sorted (clamped) samples v[0..n).
 */
static void check_sorted(struct unit *u, const struct hist *h,
			 const uint64_t *v, size_t n, const char *what)
{
	long double sum = 0, sq = 0, mean;
	size_t i, k;

	CHECK_EQ(u, hist_count(h), n);
	CHECK_EQ(u, hist_min(h), v[0]);
	CHECK_EQ(u, hist_max(h), v[n - 1]);
	for (i = 0; i < N_PCTS; i++) {
		uint64_t got = hist_percentile(h, pcts[i].p);
		uint64_t want;

		k = ref_rank(pcts[i].p100, n);
		want = v[k - 1];
		if (pcts[i].p == 0 || pcts[i].p == 100 || want < 256) {
			if (got != want)
				fail(u, what, pcts[i].p, got, want);
		} else if (!close_rel(got, want, 0.01)) {
			fail(u, what, pcts[i].p, got, want);
		}
	}
	for (i = 0; i < n; i++)
		sum += v[i];
	mean = sum / n;
	for (i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	if (!close_rel(hist_mean(h), mean, 1e-15))
		fail(u, "mean", 0, hist_mean(h), mean);
	/* Spec says 1%; the exact-sum implementation is far tighter. */
	if (!close_rel(hist_stdev(h), sqrtl(sq / n), 1e-9))
		fail(u, "stdev", 0, hist_stdev(h), sqrtl(sq / n));
}

static void record_all(struct hist *h, uint64_t *v, size_t n)
{
	size_t i;

	hist_init(h);
	for (i = 0; i < n; i++) {
		hist_record(h, v[i]);
		v[i] = clamp(v[i]);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
}

enum dist {
	UNIFORM_SMALL,
	UNIFORM_FULL,
	LOG_UNIFORM,
	NORMAL,
	BIMODAL,
	NARROW,
};

static void fill(uint64_t *v, size_t n, enum dist d)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (d) {
		case UNIFORM_SMALL:
			v[i] = rng_below(1000000);
			break;
		case UNIFORM_FULL:
			v[i] = rng_below(HIST_MAX_VALUE + 1);
			break;
		case LOG_UNIFORM:
			/* 1 ns .. 100 s: exp of uniform [0, ln 1e11]. */
			v[i] = nonneg(exp(rng_unit() * log(1e11)));
			break;
		case NORMAL:
			v[i] = nonneg(rng_normal(100000, 10000));
			break;
		case BIMODAL:
			if (rng_below(100) < 95)
				v[i] = nonneg(rng_normal(2000, 100));
			else
				v[i] = nonneg(rng_normal(500000, 20000));
			break;
		case NARROW:
			/* stdev / mean ~ 1e-10: cancellation trap. */
			v[i] = nonneg(rng_normal(5e10, 3));
			break;
		}
	}
}

static void check_dist(struct unit *u, enum dist d, uint64_t seed,
		       const char *what)
{
	static struct hist h;
	uint64_t *v = malloc(N_SAMPLES * sizeof(*v));

	CHECK(u, v != NULL);
	if (!v)
		return;
	rng_seed(seed);
	fill(v, N_SAMPLES, d);
	record_all(&h, v, N_SAMPLES);
	check_sorted(u, &h, v, N_SAMPLES, what);
	CHECK_EQ(u, hist_overflow(&h), 0);
	free(v);
}

static void test_uniform(struct unit *u)
{
	check_dist(u, UNIFORM_SMALL, 1, "uniform 0..1ms");
	check_dist(u, UNIFORM_FULL, 2, "uniform 0..100s");
}

static void test_log_uniform(struct unit *u)
{
	check_dist(u, LOG_UNIFORM, 3, "log-uniform");
}

static void test_normal(struct unit *u)
{
	check_dist(u, NORMAL, 4, "normal");
	check_dist(u, NARROW, 5, "narrow normal");
}

static void test_bimodal(struct unit *u)
{
	check_dist(u, BIMODAL, 6, "bimodal");
}

static void test_empty(struct unit *u)
{
	struct hist h;
	struct hist_iter it;
	uint64_t lo, hi, c;
	size_t i;

	hist_init(&h);
	CHECK_EQ(u, hist_count(&h), 0);
	CHECK_EQ(u, hist_min(&h), 0);
	CHECK_EQ(u, hist_max(&h), 0);
	CHECK_EQ(u, hist_overflow(&h), 0);
	CHECK(u, hist_mean(&h) == 0);
	CHECK(u, hist_stdev(&h) == 0);
	for (i = 0; i < N_PCTS; i++)
		CHECK_EQ(u, hist_percentile(&h, pcts[i].p), 0);
	hist_iter_init(&it, &h);
	CHECK(u, !hist_iter_next(&it, &lo, &hi, &c));
	hist_record_n(&h, 42, 0);
	CHECK_EQ(u, hist_count(&h), 0);
	CHECK_EQ(u, hist_min(&h), 0);
}

static void test_single(struct unit *u)
{
	static const uint64_t vals[] = {
		0, 1, 127, 128, 255, 256, 257, 1000003, 12345678901ULL,
		HIST_MAX_VALUE - 1, HIST_MAX_VALUE,
	};
	struct hist h;
	size_t i, j;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		hist_init(&h);
		hist_record(&h, vals[i]);
		CHECK_EQ(u, hist_min(&h), vals[i]);
		CHECK_EQ(u, hist_max(&h), vals[i]);
		CHECK(u, hist_mean(&h) == (double)vals[i]);
		CHECK(u, hist_stdev(&h) == 0);
		/* Clamping into [min, max] makes every percentile exact. */
		for (j = 0; j < N_PCTS; j++)
			CHECK_EQ(u, hist_percentile(&h, pcts[j].p), vals[i]);
	}
}

static void test_all_equal(struct unit *u)
{
	static struct hist h;
	size_t i;

	hist_init(&h);
	for (i = 0; i < 100000; i++)
		hist_record(&h, 123456789);
	for (i = 0; i < N_PCTS; i++)
		CHECK_EQ(u, hist_percentile(&h, pcts[i].p), 123456789);
	CHECK(u, hist_mean(&h) == 123456789.0);
	CHECK(u, hist_stdev(&h) == 0);
}

static void test_zeros(struct unit *u)
{
	uint64_t v[3000];
	struct hist h;
	size_t i;

	for (i = 0; i < 3000; i++)
		v[i] = 0;
	record_all(&h, v, 1000);
	check_sorted(u, &h, v, 1000, "zeros");
	CHECK(u, hist_stdev(&h) == 0);

	/* 0, 1, 2 are exact buckets of their own. */
	for (i = 0; i < 3000; i++)
		v[i] = i % 3;
	record_all(&h, v, 3000);
	check_sorted(u, &h, v, 3000, "0/1/2");
	CHECK_EQ(u, hist_percentile(&h, 50), 1);
}

/*
 * Every bucket edge (and the values either side of it), powers of two +/- 1
 * and 0: each bucket of the layout gets samples, so iteration must walk a
 * gap-free sequence of buckets ending at HIST_MAX_VALUE.
 */
static void test_boundaries(struct unit *u)
{
	static uint64_t v[4 * HIST_BUCKETS + 200];
	static struct hist h;
	struct hist_iter it;
	uint64_t lo, hi, c, prev_hi = 0, total = 0;
	size_t n = 0, nb = 0, i;
	unsigned int s, m, e;

	for (s = 0; s + HIST_SUB_BITS <= HIST_MAX_EXP; s++) {
		for (m = HIST_SUB_COUNT; m < 2 * HIST_SUB_COUNT; m++) {
			uint64_t edge = (uint64_t)m << s;

			if (edge > HIST_MAX_VALUE)
				break;
			v[n++] = edge - 1;
			v[n++] = edge;
			v[n++] = edge + 1;
			v[n++] = clamp(edge + (1ULL << s) - 1);
		}
	}
	v[n++] = 0;
	for (i = 0; i < HIST_SUB_COUNT; i++)
		v[n++] = i;
	for (e = 0; e <= HIST_MAX_EXP; e++) {
		v[n++] = (1ULL << e) - 1;
		v[n++] = 1ULL << e;
		v[n++] = (1ULL << e) + 1;
	}
	CHECK(u, n <= sizeof(v) / sizeof(v[0]));
	record_all(&h, v, n);
	check_sorted(u, &h, v, n, "boundaries");

	hist_iter_init(&it, &h);
	while (hist_iter_next(&it, &lo, &hi, &c)) {
		if (nb)
			CHECK_EQ(u, lo, prev_hi + 1);
		else
			CHECK_EQ(u, lo, 0);
		CHECK(u, lo <= hi);
		/* Width bound that gives the error bound. */
		if (lo >= 2 * HIST_SUB_COUNT)
			CHECK(u, (hi - lo + 1) * HIST_SUB_COUNT <= lo);
		else
			CHECK_EQ(u, hi, lo);
		prev_hi = hi;
		total += c;
		nb++;
	}
	CHECK_EQ(u, prev_hi, HIST_MAX_VALUE);
	CHECK_EQ(u, nb, HIST_BUCKETS);
	CHECK_EQ(u, total, n);
}

/*
 * Midpoint error bound, value by value: with one sample at 0 and one at
 * HIST_MAX_VALUE around two copies of v, p50 is v's bucket unclamped.
 */
static void test_error_sweep(struct unit *u)
{
	static struct hist h;
	double worst = 0;
	uint64_t i;

	rng_seed(7);
	for (i = 0; i < 60000; i++) {
		uint64_t v = i < 30000 ? i :
			     nonneg(exp(rng_unit() * log(1e11)));
		uint64_t got;
		double err;

		v = clamp(v);
		hist_reset(&h);
		hist_record(&h, 0);
		hist_record_n(&h, v, 2);
		hist_record(&h, HIST_MAX_VALUE);
		got = hist_percentile(&h, 50);
		err = v ? fabs((double)got - (double)v) / (double)v :
			  (double)got;
		if (err > worst)
			worst = err;
		if (v < 2 * HIST_SUB_COUNT && got != v)
			fail(u, "small exact", 50, got, v);
	}
	printf("# worst relative error %.6f%% (bound %.6f%%)\n", worst * 100,
	       100.0 / (2 * HIST_SUB_COUNT));
	CHECK(u, worst <= 1.0 / (2 * HIST_SUB_COUNT));
}

static void test_overflow(struct unit *u)
{
	struct hist h;
	struct hist_iter it;
	uint64_t lo, hi, c;

	hist_init(&h);
	hist_record(&h, HIST_MAX_VALUE);	/* in range */
	hist_record(&h, HIST_MAX_VALUE + 1);
	hist_record(&h, 200000000000ULL);
	hist_record(&h, UINT64_MAX);
	hist_record_n(&h, UINT64_MAX, 1ULL << 40);
	CHECK_EQ(u, hist_overflow(&h), 3 + (1ULL << 40));
	CHECK_EQ(u, hist_count(&h), 4 + (1ULL << 40));
	CHECK_EQ(u, hist_max(&h), HIST_MAX_VALUE);
	CHECK_EQ(u, hist_min(&h), HIST_MAX_VALUE);
	CHECK_EQ(u, hist_percentile(&h, 50), HIST_MAX_VALUE);
	CHECK_EQ(u, hist_percentile(&h, 100), HIST_MAX_VALUE);
	CHECK(u, hist_mean(&h) == (double)HIST_MAX_VALUE);
	CHECK(u, hist_stdev(&h) == 0);
	hist_iter_init(&it, &h);
	CHECK(u, hist_iter_next(&it, &lo, &hi, &c));
	CHECK(u, lo <= HIST_MAX_VALUE);
	CHECK_EQ(u, hi, HIST_MAX_VALUE);
	CHECK_EQ(u, c, 4 + (1ULL << 40));
	CHECK(u, !hist_iter_next(&it, &lo, &hi, &c));

	/* A small value after overflow still sets min. */
	hist_record(&h, 5);
	CHECK_EQ(u, hist_min(&h), 5);
	CHECK_EQ(u, hist_percentile(&h, 0), 5);
}

struct wv {
	uint64_t v, c;
};

/* Weighted reference percentile over pairs sorted by value. */
static uint64_t ref_weighted(const struct wv *w, size_t n, uint64_t total,
			     uint64_t p100)
{
	uint64_t k = ref_rank(p100, total), seen = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		seen += w[i].c;
		if (seen >= k)
			return w[i].v;
	}
	return w[n - 1].v;
}

static void test_huge_counts(struct unit *u)
{
	static const struct wv w[] = {
		{ 1, (1ULL << 40) - 1 },
		{ 900, 1ULL << 40 },
		{ 1000, (1ULL << 40) + 3 },
		{ 5000000, 1ULL << 39 },
		{ 777777777, 12345 },
		{ 99999999999ULL, 1ULL << 38 },
	};
	const size_t n = sizeof(w) / sizeof(w[0]);
	struct hist h;
	uint64_t total = 0;
	long double sum = 0, sq = 0, mean;
	size_t i;

	hist_init(&h);
	for (i = 0; i < n; i++) {
		hist_record_n(&h, w[i].v, w[i].c);
		total += w[i].c;
		sum += (long double)w[i].v * w[i].c;
	}
	mean = sum / total;
	for (i = 0; i < n; i++) {
		long double dev = (long double)w[i].v - mean;

		sq += dev * dev * w[i].c;
	}
	CHECK_EQ(u, hist_count(&h), total);
	CHECK_EQ(u, hist_min(&h), 1);
	CHECK_EQ(u, hist_max(&h), 99999999999ULL);
	for (i = 0; i < N_PCTS; i++) {
		uint64_t got = hist_percentile(&h, pcts[i].p);
		uint64_t want = ref_weighted(w, n, total, pcts[i].p100);

		if (!close_rel(got, want, 0.01))
			fail(u, "huge counts", pcts[i].p, got, want);
	}
	if (!close_rel(hist_mean(&h), mean, 1e-15))
		fail(u, "huge mean", 0, hist_mean(&h), mean);
	if (!close_rel(hist_stdev(&h), sqrtl(sq / total), 1e-9))
		fail(u, "huge stdev", 0, hist_stdev(&h), sqrtl(sq / total));
}

/*
 * Decimal p is inexact in binary (99.9 / 100 * 1000 = 999.0000000000001):
 * the rank must still be 999, where the outlier is not.
 */
static void test_rank_rounding(struct unit *u)
{
	struct hist h;

	hist_init(&h);
	hist_record_n(&h, 100, 999);
	hist_record(&h, 1000000);
	CHECK_EQ(u, hist_percentile(&h, 99.9), 100);
	CHECK_EQ(u, hist_percentile(&h, 99.91), 1000000);

	hist_init(&h);
	hist_record_n(&h, 10, 9999);
	hist_record(&h, 1000000000);
	CHECK_EQ(u, hist_percentile(&h, 99.99), 10);
	CHECK_EQ(u, hist_percentile(&h, 99.995), 1000000000);

	/* n = 100: p1 is rank 1, p1.0001 is rank 2. */
	hist_init(&h);
	hist_record(&h, 3);
	hist_record_n(&h, 200, 99);
	CHECK_EQ(u, hist_percentile(&h, 1), 3);
	CHECK_EQ(u, hist_percentile(&h, 1.0001), 200);
	CHECK_EQ(u, hist_percentile(&h, 0.0001), 3);

	/* Rank n below p = 100 is the max too, exact, not a bucket midpoint. */
	hist_record(&h, 1003519);	/* top of its 4096-wide bucket */
	CHECK_EQ(u, hist_percentile(&h, 99.5), 1003519);
	hist_init(&h);
	hist_record_n(&h, 200, 99);
	hist_record(&h, 3);

	/* Out-of-range p clamps to min / max; NaN means min. */
	CHECK_EQ(u, hist_percentile(&h, -5), 3);
	CHECK_EQ(u, hist_percentile(&h, 250), 200);
	CHECK_EQ(u, hist_percentile(&h, NAN), 3);
}

static bool same_hist(const struct hist *a, const struct hist *b)
{
	return a->count == b->count && a->overflow == b->overflow &&
	       hist_min(a) == hist_min(b) && a->max == b->max &&
	       a->sum == b->sum && a->sumsq == b->sumsq &&
	       !memcmp(a->buckets, b->buckets, sizeof(a->buckets));
}

static void test_merge(struct unit *u)
{
	static struct hist a, b, all, empty, twice;
	uint64_t *v = malloc(N_SAMPLES * sizeof(*v));
	size_t i;

	CHECK(u, v != NULL);
	if (!v)
		return;
	rng_seed(8);
	fill(v, N_SAMPLES, LOG_UNIFORM);
	v[0] = HIST_MAX_VALUE + 12345;	/* carry an overflow through */
	hist_init(&a);
	hist_init(&b);
	hist_init(&all);
	hist_init(&empty);
	for (i = 0; i < N_SAMPLES; i++) {
		hist_record(rng_below(3) ? &a : &b, v[i]);
		hist_record(&all, v[i]);
	}
	hist_merge(&a, &b);
	CHECK(u, same_hist(&a, &all));
	CHECK_EQ(u, hist_overflow(&a), 1);

	/* Empty on either side changes nothing. */
	hist_merge(&a, &empty);
	CHECK(u, same_hist(&a, &all));
	hist_merge(&empty, &all);
	CHECK(u, same_hist(&empty, &all));

	/* Self-merge doubles every count. */
	hist_init(&twice);
	for (i = 0; i < N_SAMPLES; i++)
		hist_record_n(&twice, v[i], 2);
	hist_merge(&a, &a);
	CHECK(u, same_hist(&a, &twice));

	for (i = 0; i < N_SAMPLES; i++)
		v[i] = clamp(v[i]);
	qsort(v, N_SAMPLES, sizeof(*v), cmp_u64);
	check_sorted(u, &all, v, N_SAMPLES, "merged");
	free(v);
}

/*
 * Iteration on random data: increasing, non-empty, and each bucket's count
 * is exactly the number of samples inside [lo, hi].
 */
static void test_iter(struct unit *u)
{
	static struct hist h;
	struct hist_iter it;
	uint64_t *v = malloc(N_SAMPLES * sizeof(*v));
	uint64_t lo, hi, c, total = 0;
	size_t j = 0, nb = 0;
	bool first = true;
	uint64_t prev_hi = 0;

	CHECK(u, v != NULL);
	if (!v)
		return;
	rng_seed(9);
	fill(v, N_SAMPLES, BIMODAL);
	record_all(&h, v, N_SAMPLES);
	hist_iter_init(&it, &h);
	while (hist_iter_next(&it, &lo, &hi, &c)) {
		size_t in = 0;

		CHECK(u, first || lo > prev_hi);
		CHECK(u, lo <= hi);
		CHECK(u, c > 0);
		/* Samples skipped over would mean a bucket was missed. */
		CHECK(u, j == N_SAMPLES || v[j] >= lo);
		while (j < N_SAMPLES && v[j] <= hi) {
			j++;
			in++;
		}
		CHECK_EQ(u, in, c);
		total += c;
		prev_hi = hi;
		first = false;
		nb++;
	}
	CHECK_EQ(u, j, N_SAMPLES);
	CHECK_EQ(u, total, hist_count(&h));
	CHECK(u, nb > 1);
	free(v);
}

static void test_reset(struct unit *u)
{
	static struct hist h, fresh;

	hist_init(&fresh);
	hist_init(&h);
	hist_record(&h, 77);
	hist_record(&h, UINT64_MAX);
	hist_reset(&h);
	CHECK(u, same_hist(&h, &fresh));
	CHECK_EQ(u, hist_min(&h), 0);
	hist_record(&h, 9);
	CHECK_EQ(u, hist_min(&h), 9);
	CHECK_EQ(u, hist_max(&h), 9);
}

static void test_size(struct unit *u)
{
	printf("# sizeof(struct hist) = %zu, %d buckets\n",
	       sizeof(struct hist), (int)HIST_BUCKETS);
	CHECK(u, sizeof(struct hist) < 64 * 1024);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_size);
	RUN(&u, test_empty);
	RUN(&u, test_single);
	RUN(&u, test_all_equal);
	RUN(&u, test_zeros);
	RUN(&u, test_boundaries);
	RUN(&u, test_error_sweep);
	RUN(&u, test_overflow);
	RUN(&u, test_huge_counts);
	RUN(&u, test_rank_rounding);
	RUN(&u, test_uniform);
	RUN(&u, test_log_uniform);
	RUN(&u, test_normal);
	RUN(&u, test_bimodal);
	RUN(&u, test_merge);
	RUN(&u, test_iter);
	RUN(&u, test_reset);
	return unit_done(&u);
}
