// SPDX-License-Identifier: MIT
/*
 * Human tables and JSON from one set of calls.  Text tables follow
 * perftest's look (a dashed rule, the heading, one row per result) so
 * users and their scripts find the columns they know.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

#define RULE_WIDTH 87	/* perftest's RESULT_LINE */

/* The document's frame: version, command, and where the rest goes. */
static void skeleton(struct report *r)
{
	print_string(&r->pr, PRINT_JSON, "rdmakit", NULL, r->version);
	print_string(&r->pr, PRINT_JSON, "command", NULL, r->command);
	print_open_object(&r->pr, "params");
	print_close(&r->pr);
	print_open_array(&r->pr, "results");
	print_close(&r->pr);
	print_open_array(&r->pr, "errors");
	print_close(&r->pr);
}

void report_init(struct report *r, const char *command, const char *version,
		 bool json, bool pretty, FILE *out, FILE *err)
{
	memset(r, 0, sizeof(*r));
	r->command = command;
	r->version = version;
	r->json = json || pretty;
	r->pretty = pretty;
	r->out = out ? out : stdout;
	r->err = err ? err : stderr;
	printer_init(&r->pr, r->out, r->json);
	if (r->json)
		skeleton(r);
}

void report_start_time(struct report *r)
{
	char iso[32] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (gmtime_r(&now, &tm))
		strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	print_open_object(&r->pr, "params");
	print_string(&r->pr, PRINT_JSON, "start_time", NULL, iso);
	print_close(&r->pr);
}

void report_keep_document(struct report *r)
{
	if (r->keep)
		return;
	if (r->json) {		/* built anyway: kept after it is printed */
		r->keep = true;
		return;
	}
	printer_take(&r->pr);
	printer_init_both(&r->pr, r->out);
	r->keep = true;
	skeleton(r);
}

json_t *report_take_document(struct report *r)
{
	json_t *d = r->kept;

	r->kept = NULL;
	return d;
}

void report_printer_init(const struct report *r, struct printer *pr)
{
	if (r->keep && !r->json)
		printer_init_both(pr, r->out);
	else
		printer_init(pr, r->out, r->json);
}

/* The document being built (JSON mode), still owned by the printer. */
static json_t *doc(const struct report *r)
{
	return r->pr.depth ? r->pr.open[0] : NULL;
}

void report_finish(struct report *r)
{
	json_t *d = printer_take(&r->pr);

	if (d && r->json) {
		/* 15 significant digits: 92.47 prints as 92.47, not 92.469999999999999. */
		size_t flags = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15) |
			       (r->pretty ? JSON_INDENT(2) : JSON_COMPACT);

		json_dumpf(d, r->out, flags);
		fputc('\n', r->out);
	} else if (!d && r->json) {
		fprintf(r->err, "rdmakit %s: out of memory for the JSON document\n", r->command);
	}
	if (r->keep)
		r->kept = d;	/* the caller's now (report_take_document) */
	else
		json_decref(d);
	free(r->widths);
	r->widths = NULL;
	r->widths_cap = 0;
	fflush(r->out);
}

/* One typed value: JSON under key (in an array: appended), text as its
 * table cell through fmt (a %s, or NULL for none). */
static int put_value(struct printer *pr, const char *key, const struct report_col *col,
		     struct report_value v, const char *fmt)
{
	char cell[256];

	if (v.none) {
		print_null(pr, PRINT_JSON, key, NULL, NULL);
	} else switch (col->type) {
	case REPORT_U64: print_uint(pr, PRINT_JSON, key, NULL, v.u); break;
	case REPORT_I64: print_int(pr, PRINT_JSON, key, NULL, v.i); break;
	case REPORT_DOUBLE: print_float(pr, PRINT_JSON, key, NULL, v.d); break;
	case REPORT_STR:
		if (v.s && !*v.s)	/* the table's empty string stays "" in JSON */
			print_json(pr, key, json_string(""));
		else
			print_string(pr, PRINT_JSON, key, NULL, v.s);
		break;
	case REPORT_BOOL: print_bool(pr, PRINT_JSON, key, NULL, v.b, NULL, NULL); break;
	}
	if (!fmt || !pr->text || !col->heading)
		return 0;
	report_format(cell, sizeof(cell), col, v);
	return print_string(pr, PRINT_FP, NULL, fmt, cell);
}

int report_format(char *buf, size_t cap, const struct report_col *col,
		  struct report_value v)
{
	if (v.text)
		return snprintf(buf, cap, "%s", v.text);
	if (v.none)
		return snprintf(buf, cap, "-");
	switch (col->type) {
	case REPORT_U64: return snprintf(buf, cap, "%llu", (unsigned long long)v.u);
	case REPORT_I64: return snprintf(buf, cap, "%lld", (long long)v.i);
	case REPORT_DOUBLE: return snprintf(buf, cap, "%.*f", col->precision, v.d);
	case REPORT_STR: return snprintf(buf, cap, "%s", v.s ? v.s : "-");
	case REPORT_BOOL: return snprintf(buf, cap, "%s", v.b ? "yes" : "no");
	}
	return snprintf(buf, cap, "?");
}

void report_param(struct report *r, const char *label, const char *key,
		  enum report_type type, struct report_value v)
{
	struct report_col col = { label, key, type, 2 };

	print_open_object(&r->pr, "params");
	print_string(&r->pr, PRINT_FP, NULL, " %-16s: ", label);
	put_value(&r->pr, key, &col, v, "%s\n");
	print_close(&r->pr);
}

static void rule(FILE *out)
{
	for (int i = 0; i < RULE_WIDTH; i++)
		fputc('-', out);
	fputc('\n', out);
}

void report_table_begin(struct report *r, const struct report_col *cols, size_t ncols)
{
	report_table_begin_widths(r, cols, ncols, NULL);
}

void report_table_begin_widths(struct report *r, const struct report_col *cols, size_t ncols,
			       const int *min_widths)
{
	r->cols = cols;
	r->ncols = ncols;
	if (r->json)
		return;
	/* As many widths as the table has columns: none is ever dropped. */
	if (ncols > r->widths_cap) {
		int *w = realloc(r->widths, ncols * sizeof(*w));

		if (!w) {
			report_error(r, "out of memory for a table of %zu columns", ncols);
			r->ncols = 0;
			return;
		}
		r->widths = w;
		r->widths_cap = ncols;
	}
	rule(r->out);
	for (size_t i = 0; i < ncols; i++) {
		if (!cols[i].heading)	/* a JSON-only column */
			continue;
		r->widths[i] = (int)strlen(cols[i].heading);
		if (r->widths[i] < 8)
			r->widths[i] = 8;
		if (min_widths && r->widths[i] < min_widths[i])
			r->widths[i] = min_widths[i];
		fprintf(r->out, " %-*s", r->widths[i], cols[i].heading);
	}
	fputc('\n', r->out);
}

/* Fit tables: the row's text cells, kept until the table ends. */
static void keep_row(struct report *r, const struct report_value *vals)
{
	char cell[256];

	if (r->nrows == r->rows_cap) {
		size_t ncap = r->rows_cap ? r->rows_cap * 2 : 8;
		char **c = realloc(r->cells, ncap * r->ncols * sizeof(*c));

		if (!c) {
			report_error(r, "out of memory for a table of %zu rows", r->nrows + 1);
			return;
		}
		r->cells = c;
		r->rows_cap = ncap;
	}
	for (size_t i = 0; i < r->ncols; i++) {
		report_format(cell, sizeof(cell), &r->cols[i], vals[i]);
		char *c = r->cols[i].heading ? strdup(cell) : NULL;

		if (r->cols[i].heading && !c)
			report_error(r, "out of memory for a table cell");
		r->cells[r->nrows * r->ncols + i] = c;
	}
	r->nrows++;
}

void report_table_row(struct report *r, const struct report_value *vals)
{
	char fmt[16];
	unsigned saved = 0;

	if (r->fit && !r->json) {
		keep_row(r, vals);	/* its text when the table ends */
		if (!r->keep)
			return;
		saved = printer_restrict(&r->pr, PRINT_JSON);
	}
	print_open_array(&r->pr, "results");
	print_open_object(&r->pr, NULL);
	for (size_t i = 0; i < r->ncols; i++) {
		/* (A fit table's text waits for its end: JSON only here.) */
		if (r->cols[i].heading && r->pr.text)
			snprintf(fmt, sizeof(fmt), " %%-%ds", r->widths[i]);
		if (r->cols[i].key || r->pr.text)
			put_value(&r->pr, r->cols[i].key, &r->cols[i], vals[i],
				  r->cols[i].heading ? fmt : NULL);
	}
	print_close(&r->pr);
	print_close(&r->pr);
	print_fp(&r->pr, "\n");
	if (saved)
		printer_restore(&r->pr, saved);
}

void report_table_fit(struct report *r, const struct report_col *cols, size_t ncols)
{
	r->cols = cols;
	r->ncols = ncols;
	r->fit = true;
	r->nrows = 0;
}

/* A fit table's text: each column as wide as its widest cell (at least 8). */
static void print_fitted(struct report *r)
{
	const struct report_col *cols = r->cols;
	size_t ncols = r->ncols;
	int *w = calloc(ncols ? ncols : 1, sizeof(*w));

	if (!w) {
		report_error(r, "out of memory for a table of %zu columns", ncols);
		return;
	}
	for (size_t i = 0; i < ncols; i++) {
		if (!cols[i].heading)
			continue;
		w[i] = (int)strlen(cols[i].heading);
		for (size_t row = 0; row < r->nrows; row++) {
			const char *c = r->cells[row * ncols + i];

			if (c && (int)strlen(c) > w[i])
				w[i] = (int)strlen(c);
		}
	}
	report_table_begin_widths(r, cols, ncols, w);
	if (r->ncols != ncols) {	/* no memory for the widths: said already */
		free(w);
		r->ncols = ncols;	/* so report_table_end frees every cell */
		return;
	}
	for (size_t row = 0; row < r->nrows; row++) {
		for (size_t i = 0; i < ncols; i++) {
			const char *c = r->cells[row * ncols + i];

			if (cols[i].heading)
				fprintf(r->out, " %-*s", r->widths[i], c ? c : "?");
		}
		fputc('\n', r->out);
	}
	free(w);
}

struct printer *report_row_more(struct report *r)
{
	print_open_array(&r->pr, "results");
	print_open_last(&r->pr);
	return &r->pr;
}

void report_row_done(struct report *r)
{
	print_close(&r->pr);
	print_close(&r->pr);
}

void report_table_end(struct report *r)
{
	if (r->fit && !r->json)
		print_fitted(r);
	if (!r->json)
		rule(r->out);
	for (size_t i = 0; r->cells && i < r->nrows * r->ncols; i++)
		free(r->cells[i]);
	free(r->cells);
	r->cells = NULL;
	r->nrows = r->rows_cap = 0;
	r->fit = false;
	r->cols = NULL;
	r->ncols = 0;
}

static void print_text_value(FILE *out, int indent, const char *key, json_t *v)
{
	const char *k;
	json_t *item;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		fprintf(out, "%*s%s:\n", indent, "", key);
		json_object_foreach(v, k, item)
			print_text_value(out, indent + 2, k, item);
		return;
	case JSON_ARRAY:
		fprintf(out, "%*s%s:", indent, "", key);
		json_array_foreach(v, i, item) {
			char *s = json_dumps(item, JSON_ENCODE_ANY | JSON_COMPACT);

			fprintf(out, "%s %s", i ? "," : "", s ? s : "?");
			free(s);
		}
		fputc('\n', out);
		return;
	case JSON_STRING:
		fprintf(out, "%*s%-16s: %s\n", indent, "", key, json_string_value(v));
		return;
	default: {
		char *s = json_dumps(v, JSON_ENCODE_ANY);

		fprintf(out, "%*s%-16s: %s\n", indent, "", key, s ? s : "?");
		free(s);
		return;
	}
	}
}

void report_results_object(struct report *r, const char *rows_key, json_t *obj)
{
	if (!r->pr.json || !doc(r)) {
		json_decref(obj);
		return;
	}
	json_object_set(obj, rows_key, json_object_get(doc(r), "results"));
	json_object_set_new(doc(r), "results", obj);
}

void report_result(struct report *r, json_t *obj)
{
	const char *k;
	json_t *v;

	if (r->pr.json && doc(r))
		json_array_append(json_object_get(doc(r), "results"), obj);
	if (r->json) {
		json_decref(obj);
		return;
	}
	json_object_foreach(obj, k, v)
		print_text_value(r->out, 1, k, v);
	json_decref(obj);
}

void report_error(struct report *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(r->err, "rdmakit %s: %s\n", r->command, msg);
	/* The document's "errors", wherever the printer stands (a row open). */
	if (r->pr.json && doc(r))
		json_array_append_new(json_object_get(doc(r), "errors"), print_json_string(msg));
}

/* The text of one NDJSON line, grown as jansson hands over its tokens. */
struct text_buf {
	char *p;
	size_t len, cap;
};

static int append_text(const char *buf, size_t size, void *data)
{
	struct text_buf *t = data;

	if (t->len + size > t->cap) {
		size_t ncap = t->cap ? t->cap : 4096;
		char *np;

		while (ncap < t->len + size)
			ncap *= 2;
		np = realloc(t->p, ncap);
		if (!np)
			return -1;
		t->p = np;
		t->cap = ncap;
	}
	memcpy(t->p + t->len, buf, size);
	t->len += size;
	return 0;
}

void report_emit(FILE *out, json_t *obj)
{
	/* json_dumpf writes token by token through stdio, a large share of
	 * top --json's CPU: gather the line, then write it at once. */
	struct text_buf t = { 0 };

	if (json_dump_callback(obj, append_text, &t, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 &&
	    append_text("\n", 1, &t) == 0) {
		fwrite(t.p, 1, t.len, out);
	} else {	/* out of memory for the line: write it piece by piece */
		json_dumpf(obj, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', out);
	}
	free(t.p);
	fflush(out);
	json_decref(obj);
}
