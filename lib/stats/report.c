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

#include "report.h"

#define RULE_WIDTH 87	/* perftest's RESULT_LINE */

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
	if (!r->json)
		return;
	r->doc = json_object();
	json_object_set_new(r->doc, "rdmakit", json_string(version));
	json_object_set_new(r->doc, "command", json_string(command));
	json_object_set_new(r->doc, "params", json_object());
	json_object_set_new(r->doc, "results", json_array());
	json_object_set_new(r->doc, "errors", json_array());
}

void report_finish(struct report *r)
{
	if (r->doc) {
		/* 15 significant digits: 92.47 prints as 92.47, not 92.469999999999999. */
		size_t flags = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15) |
			       (r->pretty ? JSON_INDENT(2) : JSON_COMPACT);

		json_dumpf(r->doc, r->out, flags);
		fputc('\n', r->out);
		json_decref(r->doc);
		r->doc = NULL;
	}
	free(r->widths);
	r->widths = NULL;
	r->widths_cap = 0;
	fflush(r->out);
}

/* A JSON string even from bytes that are not UTF-8: invalid bytes become
 * '?', so a value (or an error) is never silently dropped. */
static json_t *json_string_lossy(const char *s)
{
	json_t *j = json_string(s);
	char *copy;

	if (j)
		return j;
	copy = strdup(s);
	if (!copy)
		return json_null();
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(copy);
	free(copy);
	return j ? j : json_null();
}

static json_t *to_json(enum report_type type, struct report_value v)
{
	switch (type) {
	case REPORT_U64:
		/* jansson integers are signed 64-bit: clamp the (theoretical) rest. */
		return json_integer(v.u > INT64_MAX ? INT64_MAX : (json_int_t)v.u);
	case REPORT_I64:
		return json_integer(v.i);
	case REPORT_DOUBLE:
		/* JSON has no NaN or infinity: say "no value" rather than drop the key. */
		return isfinite(v.d) ? json_real(v.d) : json_null();
	case REPORT_STR:
		return v.s ? json_string_lossy(v.s) : json_null();
	case REPORT_BOOL:
		return json_boolean(v.b);
	}
	return json_null();
}

int report_format(char *buf, size_t cap, const struct report_col *col,
		  struct report_value v)
{
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
	char text[256];

	if (r->json) {
		json_object_set_new(json_object_get(r->doc, "params"), key, to_json(type, v));
		return;
	}
	report_format(text, sizeof(text), &col, v);
	fprintf(r->out, " %-16s: %s\n", label, text);
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

void report_table_row(struct report *r, const struct report_value *vals)
{
	char cell[128];

	if (r->json) {
		json_t *row = json_object();

		for (size_t i = 0; i < r->ncols; i++)
			json_object_set_new(row, r->cols[i].key, to_json(r->cols[i].type, vals[i]));
		json_array_append_new(json_object_get(r->doc, "results"), row);
		return;
	}
	for (size_t i = 0; i < r->ncols; i++) {
		if (!r->cols[i].heading)
			continue;
		report_format(cell, sizeof(cell), &r->cols[i], vals[i]);
		fprintf(r->out, " %-*s", r->widths[i], cell);
	}
	fputc('\n', r->out);
}

void report_row_attach(struct report *r, const char *key, json_t *v)
{
	json_t *results;

	if (!r->json) {
		json_decref(v);
		return;
	}
	results = json_object_get(r->doc, "results");
	if (json_array_size(results))
		json_object_set_new(json_array_get(results, json_array_size(results) - 1), key, v);
	else
		json_decref(v);
}

void report_table_end(struct report *r)
{
	if (!r->json)
		rule(r->out);
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
	if (!r->json) {
		json_decref(obj);
		return;
	}
	json_object_set(obj, rows_key, json_object_get(r->doc, "results"));
	json_object_set_new(r->doc, "results", obj);
}

void report_result(struct report *r, json_t *obj)
{
	const char *k;
	json_t *v;

	if (r->json) {
		json_array_append_new(json_object_get(r->doc, "results"), obj);
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
	if (r->json)
		json_array_append_new(json_object_get(r->doc, "errors"), json_string_lossy(msg));
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
