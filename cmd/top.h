/* SPDX-License-Identifier: MIT */
/*
 * What cmd/top.c (options, batch text, NDJSON) and cmd/top_tui.c (the
 * ncurses screen) share: the options, the sampler loop's state and the
 * cells of the ports table, so the batch table and the screen show the
 * same numbers the same way.
 */
#ifndef RDMAKIT_TOP_H
#define RDMAKIT_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include "cmd.h"
#include "counters.h"

#define TOP_MAX_NAMES 64
/* --listen's default port: outside the Prometheus allocation range
 * 9100-9999, full since 2023 (man rdmakit-top says why this one). */
#define TOP_EXPORT_PORT 18525

struct top_opts {
	bool batch, totals, verbose, json;
	uint64_t iterations;		/* 0: until stopped */
	double delay_s;
	const char *devices[TOP_MAX_NAMES];	/* positional DEVICE[/PORT] filters */
	size_t ndevices;
	const char *ifaces[TOP_MAX_NAMES];	/* -i IFACE */
	size_t nifaces;
	struct ctr_opts ctr;
	/* Exporter (cmd/top_export.c): --listen and --textfile. */
	const char *listen;		/* as given */
	struct sockaddr_storage listen_addr;
	socklen_t listen_len;
	char listen_text[64];		/* "127.0.0.1:18525", "[::1]:18525" */
	const char *textfile;
};

/* The latest snapshot, with rates against the one before. */
struct top_state {
	const struct top_opts *o;
	struct ctr_snapshot cur;
	bool sampled;
	uint64_t samples;
	char host[64];
	char err[256];
};

/* Takes a sample into cur and computes its rates against the last one.
 * Returns 0, or -1 with st->err set. */
int top_sample(struct top_state *st);
void top_state_free(struct top_state *st);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t top_now_ns(void);
/* Sleeps until the monotonic deadline, or until cmd_stop is set. */
void top_sleep_until(uint64_t deadline_ns);

/* o->listen ([ADDR][:PORT]) into listen_addr, listen_len and listen_text;
 * 0 or EXIT_USAGE (said). */
int top_parse_listen(struct top_opts *o);
/* Serves /metrics and/or writes the textfile until stopped (or -n
 * intervals); returns the exit code. */
int top_export(struct top_state *st);

/* Columns of the ports table, in display order. */
enum top_col {
	TOP_COL_PORT,
	TOP_COL_NETDEV,
	TOP_COL_STATE,
	TOP_COL_SPEED,
	TOP_COL_RX,		/* Gb/s (rates) or bytes (totals) */
	TOP_COL_TX,
	TOP_COL_RX_PKTS,	/* Mpps or packets */
	TOP_COL_TX_PKTS,
	TOP_COL_PAUSE,		/* PFC pause frames rx/tx, all priorities */
	TOP_COL_ECN,
	TOP_COL_CNP_SENT,
	TOP_COL_CNP_HANDLED,
	TOP_COL_OOS,
	TOP_COL_SEQ_ERR,
	TOP_COL_TIMEOUT,
	TOP_COL_RNR,
	TOP_COL_COUNT
};

struct top_col_info {
	const char *rate_head;	/* heading when showing rates */
	const char *total_head;	/* heading when showing totals */
	int width;		/* screen width */
	int priority;		/* which columns a narrow screen keeps: lower first */
	bool left;		/* left-aligned */
};

const struct top_col_info *top_col(enum top_col c);
/*
 * One cell: rates or totals; "-" when unknown.  *hot is set for an error
 * counter that is moving (rates) or nonzero (totals).
 */
void top_cell(const struct ctr_port *p, enum top_col c, bool totals, char *buf, size_t cap,
	      bool *hot);
/* The value a column sorts by (descending); names sort by TOP_COL_PORT. */
double top_sort_value(const struct ctr_port *p, enum top_col c, bool totals);
/* "mlx5_0/1", or the interface name. */
void top_port_name(const struct ctr_port *p, char *buf, size_t cap);
/* 1234567 -> "1.23M"; NAN -> "-" */
void top_si(double v, char *buf, size_t cap);
/* A counter's rate cell: "12.3k", "sat", "-". */
void top_rate_text(const struct ctr_counter *c, char *buf, size_t cap);
/* Says what was looked for when there are no RDMA ports to show; "" if any. */
void top_nothing_message(const struct top_state *st, char *buf, size_t cap);
/* The host ECN line: "InCEPkts 1734 (500/s) ..." ("" when unread). */
/* A soft engine's counters that matter most, on one line (no newline). */
void top_engine_line(const struct ctr_engine *e, bool totals, char *buf, size_t cap);
void top_ecn_line(const struct ctr_snapshot *s, bool totals, char *buf, size_t cap);

/* The interactive screen; returns an exit code. */
int top_tui(struct top_state *st);

#endif
