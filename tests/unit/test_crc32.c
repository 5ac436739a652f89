/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 (ICRC) and CRC-16 (VCRC) engines: known vectors, chaining, and
 * the CRC-32 against zlib's crc32() over deterministic random
 * buffers.  Buffers are malloc'ed to their exact size so ASan catches any
 * read past the end, and are offset to exercise misaligned loads.
 */
#include "crc32.h"
#include "icrc.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef uint32_t (*crc_fn)(uint32_t crc, const void *buf, size_t len);

/* Stop printing after this many mismatches in one test. */
#define MAX_REPORTED 8

/* splitmix64 with a fixed seed: the same buffers on every run. */
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_fill(unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)rng_next();
}

static uint32_t zlib_crc(uint32_t crc, const void *buf, size_t len)
{
	return (uint32_t)crc32(crc, buf, (uInt)len);
}

/* Bitwise reference for the VCRC: reflected poly bitrev16(0x100B). */
static uint16_t ref_vcrc(const unsigned char *p, size_t len)
{
	uint16_t c = 0xffff;
	size_t i;
	int b;

	for (i = 0; i < len; i++) {
		c ^= p[i];
		for (b = 0; b < 8; b++)
			c = (c & 1) ? (uint16_t)((c >> 1) ^ 0xd008) : c >> 1;
	}
	return (uint16_t)~c;
}

static const char check_str[] = "123456789";
static const char fox_str[] = "The quick brown fox jumps over the lazy dog";

static void check_known(struct unit *u, crc_fn fn)
{
	size_t mib = 1 << 20;
	unsigned char *zeros = calloc(1, mib);

	CHECK_EQ(u, fn(0, check_str, 9), 0xcbf43926u);
	CHECK_EQ(u, fn(0, fox_str, strlen(fox_str)), 0x414fa339u);
	CHECK_EQ(u, fn(0, "", 0), 0);
	CHECK_EQ(u, fn(0, NULL, 0), 0);
	CHECK_EQ(u, fn(0xdeadbeef, NULL, 0), 0xdeadbeefu);
	CHECK(u, zeros != NULL);
	if (zeros) {
		CHECK_EQ(u, fn(0, zeros, mib), 0xa738ea1cu);
		CHECK_EQ(u, fn(0, zeros, mib), zlib_crc(0, zeros, mib));
	}
	free(zeros);
}

/* Every split point of one buffer, then a run of uneven pieces. */
static void check_chaining(struct unit *u, crc_fn fn)
{
	enum { LEN = 1000 };
	unsigned char buf[LEN];
	uint32_t whole, c;
	size_t i, off;

	rng_seed(7);
	rng_fill(buf, LEN);
	whole = zlib_crc(0, buf, LEN);
	CHECK_EQ(u, fn(0, buf, LEN), whole);
	for (i = 0; i <= LEN && u->failures < MAX_REPORTED; i++)
		CHECK_EQ(u, fn(fn(0, buf, i), buf + i, LEN - i), whole);

	c = 0;
	for (off = 0; off < LEN; ) {
		size_t n = (size_t)(rng_next() % 150);

		if (n > LEN - off)
			n = LEN - off;
		c = fn(c, buf + off, n);
		off += n;
	}
	CHECK_EQ(u, c, whole);
}

/* One case: exact-size allocation, data at offset off, random start crc. */
static void check_one(struct unit *u, crc_fn fn, size_t len, size_t off,
		      uint32_t init)
{
	unsigned char *mem = malloc(off + len ? off + len : 1);
	uint32_t want, got;

	CHECK(u, mem != NULL);
	if (!mem)
		return;
	rng_fill(mem, off + len);
	want = zlib_crc(init, mem + off, len);
	got = fn(init, mem + off, len);
	if (got != want) {
		printf("#   len %zu off %zu init 0x%08x\n", len, off, init);
		CHECK_EQ(u, got, want);
	}
	free(mem);
}

static void check_vs_zlib(struct unit *u, crc_fn fn)
{
	size_t len;
	int i;

	rng_seed(42);
	for (len = 0; len <= 300 && u->failures < MAX_REPORTED; len++) {
		check_one(u, fn, len, len % 16, 0);
		check_one(u, fn, len, (size_t)(rng_next() % 64),
			  (uint32_t)rng_next());
	}
	for (i = 0; i < 400 && u->failures < MAX_REPORTED; i++) {
		size_t n = (size_t)(rng_next() % (64 * 1024 + 1));
		size_t off = (size_t)(rng_next() % 64);

		check_one(u, fn, n, off, i & 1 ? (uint32_t)rng_next() : 0);
	}
	/* Lengths around every multiple of 16 up to a packet: the edges of
	 * whatever block sizes the library folds in. */
	for (len = 64; len <= 4096 + 64 && u->failures < MAX_REPORTED;
	     len += 16) {
		check_one(u, fn, len - 1, 1, 0);
		check_one(u, fn, len, 3, 0);
		check_one(u, fn, len + 1, 5, 0);
	}
}

static void test_known(struct unit *u)
{
	check_known(u, crc32_eth);
}

static void test_chaining(struct unit *u)
{
	check_chaining(u, crc32_eth);
}

static void test_vs_zlib(struct unit *u)
{
	check_vs_zlib(u, crc32_eth);
}

static void test_impl_name(struct unit *u)
{
	const char *name = crc32_impl_name();

	CHECK(u, name != NULL && !strncmp(name, "isa-l ", 6));
}

/*
 * 0x0a3d was computed independently, MSB-first with poly 0x100B and the
 * input bytes and the output bit-reversed, which cross-checks the
 * reflected 0xd008 form used by both the library and ref_vcrc().
 */
static void test_vcrc_known(struct unit *u)
{
	unsigned char zeros[64] = {0};
	unsigned char seq[256];
	int i;

	for (i = 0; i < 256; i++)
		seq[i] = (unsigned char)i;
	CHECK_EQ(u, crc16_ib_vcrc(check_str, 9), 0x0a3d);
	CHECK_EQ(u, crc16_ib_vcrc("", 0), 0);
	CHECK_EQ(u, crc16_ib_vcrc(NULL, 0), 0);
	CHECK_EQ(u, crc16_ib_vcrc(zeros, sizeof(zeros)), 0x36fe);
	CHECK_EQ(u, crc16_ib_vcrc(seq, sizeof(seq)), 0xa799);
	CHECK_EQ(u, ref_vcrc((const unsigned char *)check_str, 9), 0x0a3d);
}

static void test_vcrc_random(struct unit *u)
{
	unsigned char *mem;
	size_t len, off;
	int i;

	rng_seed(99);
	for (i = 0; i < 600 && u->failures < MAX_REPORTED; i++) {
		len = i < 300 ? (size_t)i : (size_t)(rng_next() % 9000);
		off = (size_t)(rng_next() % 8);
		mem = malloc(off + len ? off + len : 1);
		CHECK(u, mem != NULL);
		if (!mem)
			return;
		rng_fill(mem, off + len);
		CHECK_EQ(u, crc16_ib_vcrc(mem + off, len),
			 ref_vcrc(mem + off, len));
		free(mem);
	}
}

/* Folding an IPv4 ID into the CRC state after a pseudo-header (8 + 20 +
 * 8 bytes, the ID at 12..13) gives what a pass over the header with that
 * ID gives, for every single bit and for mixed IDs. */
static void test_ipv4_id_delta(struct unit *u)
{
	unsigned char h[36];

	rng_seed(7);
	for (int i = 0; i < 64 && u->failures < MAX_REPORTED; i++) {
		uint16_t id = i < 16 ? (uint16_t)(1u << i) : i < 32 ? (uint16_t)(i - 16) :
			      (uint16_t)rng_next();
		uint32_t crc0;

		rng_fill(h, sizeof(h));
		h[12] = h[13] = 0;
		crc0 = crc32_eth(0, h, sizeof(h));
		h[12] = (unsigned char)(id >> 8);
		h[13] = (unsigned char)id;
		CHECK_EQ(u, crc0 ^ icrc_ipv4_id_delta(id), crc32_eth(0, h, sizeof(h)));
	}
	CHECK_EQ(u, icrc_ipv4_id_delta(0), 0);
}

/* Folding the reserved-byte mask into the state before the BTH gives what
 * a pass over the bytes with that byte read as 0xFF gives, whatever the
 * byte holds, for any state and length. */
static void test_bth_resv_delta(struct unit *u)
{
	unsigned char b[300], masked[300];

	rng_seed(11);
	for (int i = 0; i < 600 && u->failures < MAX_REPORTED; i++) {
		size_t len = 5 + rng_next() % (sizeof(b) - 5);
		uint32_t state = rng_next();

		rng_fill(b, len);
		b[4] = i < 256 ? (unsigned char)i : i < 300 ? 0 : b[4];
		memcpy(masked, b, len);
		masked[4] = 0xFF;
		CHECK_EQ(u, crc32_eth(state ^ icrc_bth_resv_delta(b[4]), b, len),
			 crc32_eth(state, masked, len));
	}
	CHECK_EQ(u, icrc_bth_resv_delta(0xFF), 0);
	/* The zero byte's delta is a constant of its own: the table's XOR. */
	CHECK_EQ(u, icrc_bth_resv_delta(0), icrc_bth_resv_delta(0x0F) ^ icrc_bth_resv_delta(0xF0));
}

int main(void)
{
	struct unit u = {0};

	RUN(&u, test_known);
	RUN(&u, test_chaining);
	RUN(&u, test_vs_zlib);
	RUN(&u, test_impl_name);
	RUN(&u, test_vcrc_known);
	RUN(&u, test_vcrc_random);
	RUN(&u, test_ipv4_id_delta);
	RUN(&u, test_bth_resv_delta);
	return unit_done(&u);
}
