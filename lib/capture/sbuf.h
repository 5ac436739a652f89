/* SPDX-License-Identifier: MIT */
/*
 * Bounded string appenders for the capture renderers' hot path: constant
 * strings by memcpy, decimal and hex by hand, never past the buffer.
 */
#ifndef RDMAKIT_SBUF_H
#define RDMAKIT_SBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The hot path's small appenders stay inline even in long renderers, where
 * GCC's size heuristics would otherwise make each a call. */
#define SB_INLINE static inline __attribute__((always_inline))

/*
 * A bounded appender: never overflows, keeps at most cap - 1 characters
 * (room for the NUL), and remembers whether anything was cut.
 */
struct sbuf {
	char *buf;
	size_t cap, len;
	bool cut;
};

static inline void sb_put_slow(struct sbuf *s, const char *p, size_t n)
{
	size_t room = s->cap - 1 - s->len;	/* len <= cap - 1 always */

	s->cut = true;
	memcpy(s->buf + s->len, p, room < n ? room : n);
	s->len += room < n ? room : n;
}

SB_INLINE void sb_put(struct sbuf *s, const char *p, size_t n)
{
	if (s->len + n < s->cap) {
		memcpy(s->buf + s->len, p, n);
		s->len += n;
	} else {
		sb_put_slow(s, p, n);
	}
}

static inline void sb_str(struct sbuf *s, const char *str)
{
	sb_put(s, str, strlen(str));
}

/* A string literal, its length known at compile time. */
#define SB_LIT(s, lit) sb_put((s), "" lit, sizeof(lit) - 1)

static const char digits2[201] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const char hexdigits[17] = "0123456789abcdef";

/* Writes v in decimal so that it ends just before end; returns its length. */
SB_INLINE size_t fmt_u64(char *end, uint64_t v)
{
	char *p = end;

	while (v >= 100) {
		size_t i = (size_t)(v % 100) * 2;

		v /= 100;
		p -= 2;
		memcpy(p, digits2 + i, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digits2 + v * 2, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return (size_t)(end - p);
}

/* printf's %u / %zu / %" PRIu64 ". */
SB_INLINE void sb_u64(struct sbuf *s, uint64_t v)
{
	char tmp[20];
	size_t n = fmt_u64(tmp + sizeof(tmp), v);

	sb_put(s, tmp + sizeof(tmp) - n, n);
}

/* JSON integers as jansson prints them: signed 64-bit, so clamped. */
SB_INLINE void sb_jint(struct sbuf *s, uint64_t v)
{
	sb_u64(s, v > INT64_MAX ? INT64_MAX : v);
}

/* printf's %0<width>x (width 0: %x), lower case. */
static inline void sb_hex(struct sbuf *s, uint64_t v, unsigned width)
{
	char tmp[16];
	unsigned n = 0;

	do {
		tmp[15 - n++] = hexdigits[v & 15];
		v >>= 4;
	} while (v);
	while (n < width && n < 16)
		tmp[15 - n++] = '0';
	sb_put(s, tmp + 16 - n, n);
}

static inline void sb_bool01(struct sbuf *s, bool b)
{
	sb_put(s, b ? "1" : "0", 1);
}

/* A literal, then a value: " psn " and 123, ",\"psn\":" and 123. */
#define SB_U(s, lit, v) (SB_LIT(s, lit), sb_u64((s), (v)))
#define SB_X(s, lit, v, width) (SB_LIT(s, lit), sb_hex((s), (v), (width)))
#define SB_01(s, lit, b) (SB_LIT(s, lit), sb_bool01((s), (b)))

#endif
