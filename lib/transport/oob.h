/* SPDX-License-Identifier: MIT */
/*
 * The control channel: one TCP connection between the two rdmakit
 * processes of a test (perftest's "out-of-band" exchange), used to agree
 * on parameters, swap QP connection info, line up the start of a test
 * with barriers and hand results back.
 *
 * Wire format (all integers in network byte order):
 *
 *   offset 0  magic    "RDMK"            4 bytes
 *          4  version  u16                OOB_PROTO_VERSION
 *          6  type     u16                enum oob_type
 *          8  length   u32                payload bytes, <= OOB_MAX_PAYLOAD
 *         12  payload
 *
 * The header and the HELLO payload are frozen across protocol versions so
 * that any two rdmakit builds can always tell each other which version
 * they speak; everything else may change with OOB_PROTO_VERSION.
 *
 * Payloads:
 *   HELLO     u16 protocol version, u16 flags (0), rdmakit version text
 *             (1..OOB_VERSION_LEN-1 bytes, no NUL), zero padding up to
 *             OOB_HELLO_LEN bytes in all
 *   PARAMS    opaque key=value text defined by the commands
 *   QP_INFO   u32 count, then count entries of OOB_QP_INFO_WIRE_LEN bytes:
 *             qpn u32, psn u32, gid[16], udp_port u16, lid u16, mtu u32,
 *             max_rd_atomic u8
 *   BARRIER   u32 id
 *   RESULT    opaque bytes (JSON text, for instance)
 *   ERROR     text: why the sender gives up
 *   BYE       empty
 *
 * Every wait (accept, connect, each read and write) is bounded by a
 * timeout; nothing here prints, exits or keeps global state.  Failures
 * return -1 with one line naming the problem and the fix in the caller's
 * err buffer (XPORT_ERR_LEN bytes).
 *
 * After oob_recv() refuses a well-formed message (unexpected type, too big
 * for the buffer, the peer's ERROR) its payload has been read and dropped,
 * so the stream is still in step.  After any other failure (timeout, EOF,
 * bad header) it is not: send an ERROR if you like, then oob_close().
 */
#ifndef RDMAKIT_OOB_H
#define RDMAKIT_OOB_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define OOB_DEFAULT_PORT 18515		/* perftest's default, so firewalls already allow it */
#define OOB_PROTO_VERSION 1
#define OOB_MAGIC "RDMK"
#define OOB_HDR_LEN 12
#define OOB_MAX_PAYLOAD (64 * 1024)	/* bytes, inclusive */
#define OOB_VERSION_LEN 48		/* rdmakit version text, NUL included */
#define OOB_HELLO_LEN 128		/* see oob.c: why HELLO is padded */
#define OOB_QP_INFO_WIRE_LEN 33
#define OOB_MAX_QP_INFO ((OOB_MAX_PAYLOAD - 4) / OOB_QP_INFO_WIRE_LEN)
#define OOB_PEER_LEN 64			/* "[v6addr%scope]:port" */

enum oob_type {
	OOB_ANY = 0,		/* oob_recv_msg(): accept any type */
	OOB_HELLO = 1,
	OOB_PARAMS = 2,
	OOB_QP_INFO = 3,
	OOB_BARRIER = 4,
	OOB_RESULT = 5,
	OOB_ERROR = 6,
	OOB_BYE = 7,
};

struct oob {
	int fd;				/* connected TCP socket (non-blocking), -1 when closed */
	int timeout_ms;			/* bound on each send/recv; < 0 waits forever */
	/*
	 * Optional: when set and *stop is non-zero, a wait interrupted by a
	 * signal (EINTR) gives up with "interrupted" instead of resuming, so
	 * a Ctrl-C handler can end a wait on the peer.  NULL after
	 * oob_accept()/oob_connect().
	 */
	const volatile sig_atomic_t *stop;
	char peer[OOB_PEER_LEN];	/* "HOST:PORT" for messages */
	char peer_version[OOB_VERSION_LEN];	/* after oob_hello(): the peer's rdmakit version */
};

/*
 * Listening socket on bind_addr (NULL: every address, IPv6 and IPv4) and
 * port (0: the kernel picks one, see oob_listen_port()).  SO_REUSEADDR, so
 * a server restarted right after a run binds again at once.
 */
int oob_listen(const char *bind_addr, uint16_t port, int *listen_fd, char *err);
/* The port a listening socket is bound to (0 on failure). */
uint16_t oob_listen_port(int listen_fd);
/* Waits up to timeout_ms (< 0: forever) for a client. */
int oob_accept(int listen_fd, int timeout_ms, struct oob *o, char *err);
/*
 * Connects to host:port (name or IPv4/IPv6 literal) within timeout_ms,
 * retrying "connection refused" so a client started just before its
 * server still connects.  o->timeout_ms is set to timeout_ms.
 */
int oob_connect(const char *host, uint16_t port, int timeout_ms, struct oob *o, char *err);
/* Closes the socket and sets fd to -1; calling it again is harmless. */
void oob_close(struct oob *o);

/* One message; len <= OOB_MAX_PAYLOAD. */
int oob_send(struct oob *o, enum oob_type type, const void *buf, size_t len, char *err);
/*
 * Receives one message of expect_type into buf (cap bytes), its payload
 * length into *len.  When cap > *len a NUL follows the payload (not
 * counted), so text payloads can be used as C strings.  A peer's ERROR
 * becomes "peer: <its text>".
 */
int oob_recv(struct oob *o, enum oob_type expect_type, void *buf, size_t cap, size_t *len,
	     char *err);
/* Like oob_recv() with any type accepted (ERROR still fails); *type says which. */
int oob_recv_msg(struct oob *o, enum oob_type *type, void *buf, size_t cap, size_t *len,
		 char *err);

/* Version handshake; the client speaks first.  Fills o->peer_version. */
int oob_hello(struct oob *o, bool is_server, char *err);
/*
 * Sends mine[0..n) and receives the peer's list into theirs (cap entries);
 * the client sends first, the server receives first (as perftest does).
 */
int oob_xchg_qp_info(struct oob *o, bool is_server, const struct xport_qp_info *mine, size_t n,
		     struct xport_qp_info *theirs, size_t cap, size_t *n_theirs, char *err);
/* Sends BARRIER(id) and waits for the peer's BARRIER with the same id. */
int oob_barrier(struct oob *o, uint32_t id, char *err);
/*
 * Tells the peer why we give up (best effort, short timeout, never fails
 * the caller: the real error is already in hand).
 */
void oob_send_error(struct oob *o, const char *text);
/*
 * Orderly end: sends BYE and waits for the peer's, so neither side closes
 * with unread data (which would reset the connection under the other).
 */
int oob_bye(struct oob *o, char *err);

/* "hello", "parameters", "QP info", ... for messages. */
const char *oob_type_name(enum oob_type type);

/*
 * The QP_INFO codec, pure: encode returns the payload length or -1
 * (out too small, n too large, or a field out of range); decode returns
 * the entry count or -1.  Field ranges: qpn and psn 24 bits, mtu one of
 * 256, 512, 1024, 2048, 4096.
 */
long oob_encode_qp_info(const struct xport_qp_info *info, size_t n, uint8_t *out, size_t cap,
			char *err);
long oob_decode_qp_info(const uint8_t *in, size_t len, struct xport_qp_info *info, size_t cap,
			char *err);

#endif
