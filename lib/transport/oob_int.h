/* SPDX-License-Identifier: MIT */
/*
 * Inside the control channel: the bounded I/O helpers of oob.c that the
 * opening and the accept gate (oob_gate.c) share.  Not for lib/perf.
 */
#ifndef RDMAKIT_OOB_INT_H
#define RDMAKIT_OOB_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "oob.h"

/* Outcomes of the low-level I/O helpers (>= 0 means bytes or success). */
enum {
	IO_TIMEOUT = -1,
	IO_STOP = -2,	/* interrupted and o->stop set */
	IO_ERR = -3,	/* errno says why */
	IO_CLOSED = -4,	/* EPIPE / ECONNRESET on write */
};

void oob_errf(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int64_t oob_now_ns(void);
/* -1: no deadline (wait forever). */
int64_t oob_deadline_after(int timeout_ms);
const char *oob_secs(int timeout_ms, char *buf, size_t cap);
int oob_wait_fd(const struct oob *o, int fd, short events, int64_t deadline);
ssize_t oob_read_some(struct oob *o, void *p, size_t n, int64_t deadline);
int oob_read_exact(struct oob *o, void *buf, size_t n, int64_t deadline, size_t *got,
		   bool *eof);
int oob_write_all(struct oob *o, struct iovec *iov, int cnt, int64_t deadline);
bool oob_type_valid(uint32_t t);
void oob_sanitize(char *out, size_t cap, const uint8_t *in, size_t n);
void oob_fmt_sockaddr(char *out, const struct sockaddr_storage *ss);
void oob_init(struct oob *o, int fd, int timeout_ms);
void oob_set_nodelay(int fd);
int oob_send_deadline(struct oob *o, enum oob_type type, const void *buf, size_t len,
		      int64_t deadline, char *err);
const char *oob_greeting_hint(const uint8_t *b, size_t n);
int oob_not_rdmakit(struct oob *o, const uint8_t *hdr, size_t got, char *err);

/* Big-endian fields of the framing (the opening, headers, HELLO, QP_INFO). */
static inline void oob_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void oob_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t oob_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t oob_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A message header (oob.h): magic, version, type, payload length. */
static inline void oob_put_header(uint8_t hdr[OOB_HDR_LEN], uint16_t version,
				  enum oob_type type, uint32_t len)
{
	memcpy(hdr, OOB_MAGIC, 4);
	oob_put16(hdr + 4, version);
	oob_put16(hdr + 6, (uint16_t)type);
	oob_put32(hdr + 8, len);
}

/* The client's half of the opening and authentication (oob_gate.c). */
int oob_open_client(struct oob *o, char *err);

#endif
