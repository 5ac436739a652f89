/* SPDX-License-Identifier: MIT */
/*
 * A session whose peer is perftest: its exchange (pt_session.c) and its
 * runs (pt_run.c).  The message formats are pt_wire.h's; the sequence per
 * test is ../shared/reference/perftest-oob.md §9.
 */
#ifndef RDMAKIT_PT_INT_H
#define RDMAKIT_PT_INT_H

#include "perf_int.h"
#include "pt_wire.h"

struct pt_state {
	char peer_version[PT_VERSION_LEN];	/* as the peer announced it */
	char my_version[PT_VERSION_LEN];	/* what this side announced */
	double peer_v, my_v;
	uint64_t word_sum0;			/* pt_word_sum before the keys went out */
	bool negotiated;
	size_t neg_len;
	bool gid_format;		/* the 108-byte key (RoCE); else the 59-byte one */
	size_t key_len;
	uint32_t cycle, cache_line;	/* adopted: the larger of both sides' */
	uint64_t iters_per_qp;		/* perftest's -n counts per QP */
	struct pt_key mine[PERF_MAX_QPS], theirs[PERF_MAX_QPS];
	char key0[PT_KEY_LEN_GID];	/* every sync resends QP 0's key */
	/* What the close still owes the peer (§9): the client's report and
	 * the final sync.  broken: a step failed, so only the socket closes. */
	bool report_due, close_sync_due, broken;
	struct pt_report report;	/* the client's last bw row, for R */
	struct pt_report peer_report;	/* what the peer's R said */
	uint64_t t_start_ns;		/* when the peer could start sending */
	const char *advisory;
};

/* The exchange after the opening, for each role (pt_session.c). */
int pt_open_client(struct perf_session *s, char *err);
int pt_open_server(struct perf_session *s, char *err);
/* The final syncs (§9, §11) when owed, then an orderly close. */
void pt_close(struct perf_session *s);
/* One sync handshake: QP 0's key each way (the client first). */
int pt_sync(struct perf_session *s, char *err);
/* The same, driving this end while it waits for the peer's half (-b: the
 * peer may still be sending; the soft engine moves only when polled). */
int pt_sync_driving(struct perf_session *s, char *err);
/* Drives this end (soft engine) until the peer's next message is in. */
int pt_wait_peer(struct perf_session *s, bool passive, char *err);
/* The report round trips (§10): ours out, theirs in. */
int pt_reports(struct perf_session *s, char *err);
bool pt_is_passive_bw(const struct perf_session *s);
/* A failed completion, with what a perftest peer's options have to do with it. */
int pt_wc_error(struct perf_session *s, const struct xport_wc *wc, char *err);

/* The runs (pt_run.c). */
int pt_run_begin(struct perf_session *s, char *err);
int pt_run_end(struct perf_session *s, char *err);
/* The sum of this side's buffer's 8-byte words, modulo 2^64: perftest's
 * FETCH_AND_ADDs each add 1 somewhere in it, so the sum grows by exactly
 * the number that executed, wherever they landed. */
uint64_t pt_word_sum(const struct perf_session *s);
/* A SEND client's watch over its perftest server, checked every so often
 * while sending: -1 once the server has stopped taking messages (pt_run.c). */
struct pt_watch {
	uint64_t done, progress_ns;	/* completions, and when they last moved */
	uint64_t heard_ns;		/* when the server spoke early; 0: not */
};
int pt_check_stalled(struct perf_session *s, struct pt_watch *w, uint64_t done, char *err);
void pt_note_bw(struct perf_session *s, const struct perf_bw_result *r);
int pt_serve_bw(struct perf_session *s, struct perf_bw_result *r, char *err);
int pt_bidir_end(struct perf_session *s, const struct perf_bw_result *r,
		 struct perf_bw_result *peer, char *err);
int pt_run_lat(struct perf_session *s, struct perf_lat_result *r, char *err);
int pt_post_recv(struct perf_session *s, unsigned q, char *err);
void pt_post_recvs(struct perf_session *s, unsigned per_qp, char *err);

#endif
