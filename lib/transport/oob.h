/* SPDX-License-Identifier: MIT */
/*
 * The control channel: one TCP connection between the two rdmakit
 * processes of a test (perftest's "out-of-band" exchange), used to agree
 * on parameters, swap QP connection info, line up the start of a test
 * with barriers and hand results back.
 *
 * The connection opens with exactly OOB_OPENING_LEN (16) bytes each way,
 * the client first, so that a perftest peer (which reads a 16-byte
 * NUL-padded version string first) takes it for a version message and
 * either side can tell an rdmakit peer from a perftest one:
 *
 *   offset 0  perftest version text, e.g. "6.06", NUL-padded   8 bytes
 *          8  marker "RDMK"                                     4 bytes
 *         12  u16 control protocol version (OOB_PROTO_VERSION)
 *         14  u16 flags: OOB_OPEN_AUTH (server: clients must authenticate;
 *             client: it holds a key)
 *
 * With --auth-key the server then sends AUTH(32-byte nonce Ns), the client
 * AUTH(Nc[32] || HMAC-SHA256(key, "rdmakit-auth-v2 client" Ns Nc)), the
 * server AUTH(HMAC-SHA256(key, "rdmakit-auth-v2 server" Nc Ns)) or an
 * ERROR.  Both sides prove the key; it never crosses the wire.  A server
 * handles connections concurrently until they have passed this point
 * (struct oob_gate), so silent or junk connections cannot hold its port.
 *
 * Then messages (all integers in network byte order):
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
 *   PARAMS    a JSON object: the messages of lib/perf/ctl.h
 *   QP_INFO   retired in protocol 2 (QP info travels in PARAMS, as JSON)
 *   BARRIER   u32 id
 *   RESULT    a JSON object (lib/perf/ctl.h)
 *   ERROR     text: why the sender gives up
 *   BYE       empty
 *   AUTH      the authentication exchange above (fixed sizes)
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
/* 3: a UC/UD bw client tells the server what it sent (ctl_sent) before the
 * done barrier; 2: the 16-byte opening and AUTH (rdmakit 0.2); 1: rdmakit
 * 0.1.  Peers of another version get one line naming the mismatch on both
 * sides, at the hello. */
#define OOB_PROTO_VERSION 3
#define OOB_OPENING_LEN 16
#define OOB_OPENING_PERFTEST "6.06"	/* what perftest reads: Debian 12's perftest */
#define OOB_OPENING_MARKER "RDMK"
#define OOB_OPEN_AUTH 0x0001
#define OOB_AUTH_NONCE_LEN 32
#define OOB_AUTH_MAC_LEN 32		/* HMAC-SHA256 */
#define OOB_KEY_MIN 16			/* bytes of key file */
#define OOB_KEY_MAX 4096
#define OOB_GATE_DEADLINE_MS 3000	/* a new connection's time to open (and authenticate) */
#define OOB_GATE_MIN_PENDING 64		/* connections opening at once, at least */
#define OOB_MAGIC "RDMK"
#define OOB_HDR_LEN 12
#define OOB_MAX_PAYLOAD (64 * 1024)	/* bytes, inclusive */
#define OOB_VERSION_LEN 48		/* rdmakit version text, NUL included */
#define OOB_HELLO_LEN 128		/* see oob.c: why HELLO is padded */
#define OOB_PEER_LEN 64			/* "[v6addr%scope]:port" */

enum oob_type {
	OOB_ANY = 0,		/* oob_recv_msg(): accept any type */
	OOB_HELLO = 1,
	OOB_PARAMS = 2,
	OOB_QP_INFO = 3,	/* protocol 1 only; refused since */
	OOB_BARRIER = 4,
	OOB_RESULT = 5,
	OOB_ERROR = 6,
	OOB_BYE = 7,
	OOB_AUTH = 8,
};

/* A shared secret for the control channel (--auth-key FILE). */
struct oob_key {
	size_t len;
	uint8_t bytes[OOB_KEY_MAX];
};

/*
 * Reads a key file: a regular file of OOB_KEY_MIN..OOB_KEY_MAX bytes that
 * neither group nor others may read (like ssh's private keys).  All of
 * its bytes are the key.
 */
int oob_key_load(const char *path, struct oob_key *key, char *err);

struct oob {
	int fd;				/* connected TCP socket (non-blocking), -1 when closed */
	int timeout_ms;			/* bound on each send/recv; < 0 waits forever */
	/*
	 * Optional: when set and *stop is non-zero, a wait interrupted by a
	 * signal (EINTR) gives up with "interrupted" instead of resuming, so
	 * a Ctrl-C handler can end a wait on the peer.  NULL after
	 * oob_gate_accept()/oob_connect().
	 */
	const volatile sig_atomic_t *stop;
	char peer[OOB_PEER_LEN];	/* "HOST:PORT" for messages */
	char peer_version[OOB_VERSION_LEN];	/* after oob_hello(): the peer's rdmakit version */
	/* Client: the key to authenticate with (NULL: none); set it after
	 * oob_connect().  A client with a key insists the server proves it. */
	const struct oob_key *key;
	/*
	 * perftest (lib/perf/pt_*.c).  Client: accept_perftest lets a server
	 * that answers the opening with perftest's version through (then
	 * oob_hello() returns OOB_PEER_PERFTEST); announce is the version the
	 * opening carries (NULL: OOB_OPENING_PERFTEST); plain_opening leaves
	 * rdmakit's marker out, so an rdmakit server takes us for perftest.
	 * Both sides: peer_perftest and pt_version (the peer's 16 bytes) once
	 * the peer turned out to be perftest.
	 */
	bool accept_perftest, plain_opening, peer_perftest;
	const char *announce;
	uint8_t pt_version[OOB_OPENING_LEN];
};

/* oob_hello(): the peer is perftest; go on in its protocol. */
#define OOB_PEER_PERFTEST 1

/*
 * The server's door: accepts connections and runs the opening and the
 * authentication of up to max_pending of them at once, each within
 * OOB_GATE_DEADLINE_MS (the oldest is dropped when a new one finds the
 * table full), and hands out one that has passed.  key NULL: no
 * authentication.  The gate does not own listen_fd.
 */
struct oob_gate;
struct oob_gate *oob_gate_new(int listen_fd, unsigned max_pending, const struct oob_key *key,
			      char *err);
void oob_gate_free(struct oob_gate *g);
/*
 * 0: *o is a client that passed (ready for oob_hello()); OOB_GATE_REFUSED:
 * a client was turned away, err says who and why in one line (it has been
 * told), call again; -1: timed out (timeout_ms < 0: never), interrupted
 * (*stop set when a signal arrives) or a system error.  Junk and silent
 * connections are dropped without a word; oob_gate_dropped() counts them.
 */
#define OOB_GATE_REFUSED 1
int oob_gate_accept(struct oob_gate *g, int timeout_ms, const volatile sig_atomic_t *stop,
		    struct oob *o, char *err);
unsigned long oob_gate_dropped(const struct oob_gate *g);
/*
 * bw and lat serve perftest clients too: one whose opening is a perftest
 * version is admitted with o->peer_perftest set and nothing answered yet
 * (lib/perf/pt_session.c answers).  force: rdmakit clients are taken for
 * perftest as well (--perftest).  Never with a key: perftest cannot
 * authenticate.
 */
void oob_gate_accept_perftest(struct oob_gate *g, bool force);

/*
 * Listening socket on bind_addr (NULL: every address, IPv6 and IPv4) and
 * port (0: the kernel picks one, see oob_listen_port()).  SO_REUSEADDR, so
 * a server restarted right after a run binds again at once.
 */
int oob_listen(const char *bind_addr, uint16_t port, int *listen_fd, char *err);
/* The port a listening socket is bound to (0 on failure). */
uint16_t oob_listen_port(int listen_fd);
/*
 * Connects to host:port (name or IPv4/IPv6 literal) within timeout_ms,
 * retrying "connection refused" so a client started just before its
 * server still connects.  o->timeout_ms is set to timeout_ms.
 */
int oob_connect(const char *host, uint16_t port, int timeout_ms, struct oob *o, char *err);
/* The same from local address source (NULL: the kernel's choice). */
int oob_connect_from(const char *host, uint16_t port, const char *source, int timeout_ms,
		     struct oob *o, char *err);
/* Closes the socket and sets fd to -1; calling it again is harmless. */
void oob_close(struct oob *o);
/* The numeric address (no port) at one end of a connected socket: this
 * host's (local) or the peer's; "" when the socket has none. */
void oob_socket_addr(int fd, bool local, char *out, size_t cap);

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

/*
 * Version handshake; the client speaks first.  Fills o->peer_version.  The
 * client's side starts with the opening and, with o->key or when the
 * server asks, the authentication; the server's side follows a gate.
 */
int oob_hello(struct oob *o, bool is_server, char *err);
/*
 * perftest's exchange has no framing (lib/perf/pt_wire.h): one message is
 * one send of len bytes (perftest reads each with a single read()), and
 * exactly len bytes back, within o->timeout_ms (timeout_ms of its own
 * for oob_recv_raw_within: 0 when nothing came in time, 1 when it did).
 */
int oob_send_raw(struct oob *o, const void *buf, size_t len, char *err);
int oob_recv_raw(struct oob *o, void *buf, size_t len, char *err);
int oob_recv_raw_within(struct oob *o, void *buf, size_t len, int timeout_ms, char *err);

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

#endif
