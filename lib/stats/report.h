/* SPDX-License-Identifier: MIT */
/*
 * The one place results are rendered: an aligned human table or a JSON
 * document, from the same calls, so the two can never drift apart.
 *
 * JSON document (commands that end with one result):
 *   { "rdmakit": VERSION, "command": NAME, "params": {...},
 *     "results": [ {...}, ... ], "errors": [ "...", ... ] }
 * Streaming commands print one JSON object per line instead (report_emit).
 */
#ifndef RDMAKIT_REPORT_H
#define RDMAKIT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "print.h"

enum report_type { REPORT_U64, REPORT_I64, REPORT_DOUBLE, REPORT_STR, REPORT_BOOL };

/* A table column: its human heading, its JSON key, and how to print it. */
struct report_col {
	const char *heading;	/* "BW peak[Gb/sec]"; NULL: JSON only */
	const char *key;	/* "bw_peak_gbps"; NULL: text only */
	enum report_type type;
	int precision;		/* digits after the point, for doubles */
};

struct report_value {
	union {
		uint64_t u;
		int64_t i;
		double d;
		const char *s;
		bool b;
	};
	bool none;		/* no value: JSON null, text "-" */
	const char *text;	/* the text cell when it says more than the value
				 * ("IPv4" for "ipv4", "too small" for null) */
};

#define RV_U64(v) ((struct report_value){ .u = (v) })
#define RV_I64(v) ((struct report_value){ .i = (v) })
#define RV_DBL(v) ((struct report_value){ .d = (v) })
#define RV_STR(v) ((struct report_value){ .s = (v) })
#define RV_BOOL(v) ((struct report_value){ .b = (v) })
#define RV_NONE ((struct report_value){ .none = true })

struct report {
	const char *command;
	const char *version;
	bool json;
	bool pretty;
	FILE *out;		/* stdout normally; tests pass a memstream */
	FILE *err;		/* stderr normally */
	struct printer pr;	/* every field goes through it; JSON: holds the document */
	const struct report_col *cols;
	size_t ncols;
	int *widths;		/* text: each column's width (as many as it has) */
	size_t widths_cap;
	bool fit;		/* text: rows wait in cells until the table ends */
	char **cells;		/* fit: nrows * ncols text cells */
	size_t nrows, rows_cap;
	bool keep;		/* text out, and the JSON document kept too */
	json_t *kept;		/* after report_finish, with keep */
};

void report_init(struct report *r, const char *command, const char *version,
		 bool json, bool pretty, FILE *out, FILE *err);
/* Emits the JSON document (JSON mode) and frees everything. */
void report_finish(struct report *r);
/* Text mode: also build the JSON document -j would print (for --plot);
 * after report_finish, report_take_document hands it over (a new
 * reference; NULL without keep, or out of memory). */
void report_keep_document(struct report *r);
json_t *report_take_document(struct report *r);
/* A printer for a section of the report's (report_results_object), in
 * the report's own mode. */
void report_printer_init(const struct report *r, struct printer *pr);

/* JSON only: params.start_time, now in UTC as ISO 8601 ("2026-12-04T20:12:33Z",
 * iperf3's start.timestamp in spirit): when the run began, for plot's titles. */
void report_start_time(struct report *r);

/* A run parameter: " Engine          : soft" in text, params.engine in JSON. */
void report_param(struct report *r, const char *label, const char *key,
		  enum report_type type, struct report_value v);

/* A table whose rows become the objects of "results". */
void report_table_begin(struct report *r, const struct report_col *cols, size_t ncols);
/* The same with least text widths per column (NULL or 0: the heading's). */
void report_table_begin_widths(struct report *r, const struct report_col *cols, size_t ncols,
			       const int *min_widths);
/* The same with each text column as wide as its widest cell: the rows are
 * printed when the table ends. */
void report_table_fit(struct report *r, const struct report_col *cols, size_t ncols);
void report_table_row(struct report *r, const struct report_value *vals);
void report_table_end(struct report *r);
/* The printer with the last row open (JSON) for fields beyond the table's
 * columns, printed in text where the caller says; report_row_done after. */
struct printer *report_row_more(struct report *r);
void report_row_done(struct report *r);

/* JSON: makes "results" an object: obj with the table rows so far under
 * rows_key (takes ownership of obj); text: frees obj. */
void report_results_object(struct report *r, const char *rows_key, json_t *obj);

/* One free-form result object (JSON) or "label: value" lines (text);
 * takes ownership of obj. */
void report_result(struct report *r, json_t *obj);

/*
 * A one-line error that names the problem and the fix.  Text mode: to
 * err as "rdmakit CMD: message".  JSON mode: appended to "errors" (and
 * to err too, so a human watching a pipe still sees it).
 */
void report_error(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Streaming: one compact JSON object per line, flushed; takes ownership. */
void report_emit(FILE *out, json_t *obj);

/* Renders a value the way table cells are rendered (for tests and callers). */
int report_format(char *buf, size_t cap, const struct report_col *col,
		  struct report_value v);

#endif
