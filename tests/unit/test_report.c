// SPDX-License-Identifier: MIT
/*
 * Output layer tests (lib/stats/report.c): the perftest-style text table,
 * the JSON document envelope read back with jansson, parameters and
 * errors in both modes, --pretty, streaming lines, the unsigned clamp and
 * string escaping.  out and err are memory streams, so every byte written
 * is checked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report.h"
#include "unit.h"

/* A report whose out and err are memory streams. */
struct capture {
	struct report r;
	FILE *out, *err;
	char *obuf, *ebuf;
	size_t olen, elen;
};

static void cap_open(struct capture *c, const char *command, bool json, bool pretty)
{
	memset(c, 0, sizeof(*c));
	c->out = open_memstream(&c->obuf, &c->olen);
	c->err = open_memstream(&c->ebuf, &c->elen);
	report_init(&c->r, command, "0.1.0", json, pretty, c->out, c->err);
}

/* Finishes the report and closes the streams; obuf/ebuf stay readable. */
static void cap_close(struct capture *c)
{
	report_finish(&c->r);
	fclose(c->out);
	fclose(c->err);
}

static void cap_free(struct capture *c)
{
	free(c->obuf);
	free(c->ebuf);
}

/* Parses a whole output as JSON; prints jansson's complaint if it is not. */
static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		printf("#   json_loads: %s (line %d col %d) in: %.200s\n", e.text, e.line,
		       e.column, text);
	return j;
}

static int count_char(const char *s, char ch)
{
	int n = 0;

	for (; *s; s++)
		n += *s == ch;
	return n;
}

/* perftest's ib_write_bw columns, plus one of each other type. */
static const struct report_col bw_cols[] = {
	{ "#bytes", "bytes", REPORT_U64, 0 },
	{ "#iterations", "iterations", REPORT_U64, 0 },
	{ "BW peak[Gb/sec]", "bw_peak_gbps", REPORT_DOUBLE, 2 },
	{ "BW average[Gb/sec]", "bw_avg_gbps", REPORT_DOUBLE, 2 },
	{ "MsgRate[Mpps]", "msg_rate_mpps", REPORT_DOUBLE, 6 },
};

static const struct report_col misc_cols[] = {
	{ "delta", "delta", REPORT_I64, 0 },
	{ "ok", "ok", REPORT_BOOL, 0 },
	{ "engine", "engine", REPORT_STR, 0 },
	{ "ratio", "ratio", REPORT_DOUBLE, 0 },
};

static void test_text_table(struct unit *u)
{
	static const char rule[] =
		"---------------------------------------------------------------------------------------\n";
	struct capture c;
	const struct report_value row1[] = {
		RV_U64(65536), RV_U64(5000), RV_DBL(92.468), RV_DBL(92.4349), RV_DBL(0.1763004),
	};
	const struct report_value row2[] = {
		RV_U64(8), RV_U64(1000), RV_DBL(0.004), RV_DBL(1.996), RV_DBL(31.25),
	};
	const struct report_value row3[] = { RV_I64(-42), RV_BOOL(true), RV_STR(NULL), RV_DBL(2.5) };
	const struct report_value row4[] = { RV_I64(7), RV_BOOL(false), RV_STR("soft"), RV_DBL(3.7) };
	char *line2, *line3;

	CHECK_EQ(u, strlen(rule), 87 + 1);
	cap_open(&c, "write_bw", false, false);
	report_table_begin(&c.r, bw_cols, 5);
	report_table_row(&c.r, row1);
	report_table_row(&c.r, row2);
	report_table_end(&c.r);
	report_table_begin(&c.r, misc_cols, 4);
	report_table_row(&c.r, row3);
	report_table_row(&c.r, row4);
	report_table_end(&c.r);
	cap_close(&c);

	/* Headings padded to max(8, their length), each after one space. */
	CHECK_STR(u, c.obuf,
		  "---------------------------------------------------------------------------------------\n"
		  " #bytes   #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n"
		  " 65536    5000        92.47           92.43              0.176300     \n"
		  " 8        1000        0.00            2.00               31.250000    \n"
		  "---------------------------------------------------------------------------------------\n"
		  "---------------------------------------------------------------------------------------\n"
		  " delta    ok       engine   ratio   \n"
		  " -42      yes      -        2       \n"
		  " 7        no       soft     4       \n"
		  "---------------------------------------------------------------------------------------\n");
	/* The same, property by property, so a layout change names what broke. */
	CHECK(u, c.obuf && strncmp(c.obuf, rule, sizeof(rule) - 1) == 0);
	line2 = c.obuf ? strchr(c.obuf, '\n') + 1 : NULL;
	CHECK(u, line2 && strstr(line2, "BW peak[Gb/sec]") != NULL);
	CHECK(u, line2 && strstr(line2, "BW average[Gb/sec]") != NULL);
	CHECK(u, line2 && strstr(line2, "#iterations") != NULL);
	line3 = line2 ? strchr(line2, '\n') + 1 : NULL;
	CHECK(u, line3 && strncmp(line3, " 65536 ", 7) == 0);
	CHECK(u, line3 && strstr(line3, " 92.47 ") != NULL);	/* precision 2, rounded */
	CHECK(u, line3 && strstr(line3, " 0.176300 ") != NULL);	/* precision 6 */
	CHECK_EQ(u, c.elen, 0);	/* nothing on err */
	cap_free(&c);
}

/* A table wider than any fixed limit: every column appears, in text and
 * in JSON (16 was once the silent maximum, exactly what top has). */
static void test_wide_table(struct unit *u)
{
	enum { NCOLS = 40 };
	static char headings[NCOLS][8], keys[NCOLS][8];
	struct report_col cols[NCOLS];
	struct report_value vals[NCOLS];
	struct capture c;

	for (int i = 0; i < NCOLS; i++) {
		snprintf(headings[i], sizeof(headings[i]), "h%d", i);
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		cols[i] = (struct report_col){ headings[i], keys[i], REPORT_U64, 0 };
		vals[i] = RV_U64((uint64_t)i * 11);
	}
	for (int json = 0; json < 2; json++) {
		cap_open(&c, "wide", json, false);
		report_table_begin(&c.r, cols, NCOLS);
		report_table_row(&c.r, vals);
		report_table_end(&c.r);
		cap_close(&c);
		CHECK(u, c.obuf != NULL);
		if (c.obuf) {
			CHECK(u, strstr(c.obuf, json ? "\"k39\":429" : " h39") != NULL);
			CHECK(u, json || strstr(c.obuf, " 429") != NULL);
		}
		CHECK_EQ(u, c.elen, 0);
		cap_free(&c);
	}
}

static void test_format(struct unit *u)
{
	struct report_col col = { "h", "k", REPORT_DOUBLE, 3 };
	char buf[64];

	CHECK_EQ(u, report_format(buf, sizeof(buf), &col, RV_DBL(3.14159)), 5);
	CHECK_STR(u, buf, "3.142");
	col.precision = 0;
	report_format(buf, sizeof(buf), &col, RV_DBL(2.71828));
	CHECK_STR(u, buf, "3");
	col.type = REPORT_U64;
	report_format(buf, sizeof(buf), &col, RV_U64(UINT64_MAX));
	CHECK_STR(u, buf, "18446744073709551615");	/* text keeps the full value */
	col.type = REPORT_I64;
	report_format(buf, sizeof(buf), &col, RV_I64(INT64_MIN));
	CHECK_STR(u, buf, "-9223372036854775808");
	col.type = REPORT_STR;
	report_format(buf, sizeof(buf), &col, RV_STR(NULL));
	CHECK_STR(u, buf, "-");
	report_format(buf, sizeof(buf), &col, RV_STR("mlx5_0"));
	CHECK_STR(u, buf, "mlx5_0");
	col.type = REPORT_BOOL;
	report_format(buf, sizeof(buf), &col, RV_BOOL(true));
	CHECK_STR(u, buf, "yes");
	report_format(buf, sizeof(buf), &col, RV_BOOL(false));
	CHECK_STR(u, buf, "no");
	/* snprintf semantics: truncated, terminated, full length returned. */
	col.type = REPORT_STR;
	CHECK_EQ(u, report_format(buf, 4, &col, RV_STR("abcdefgh")), 8);
	CHECK_STR(u, buf, "abc");
}

static void test_json_document(struct unit *u)
{
	struct capture c;
	const struct report_value row1[] = {
		RV_U64(65536), RV_U64(5000), RV_DBL(92.468), RV_DBL(92.4349), RV_DBL(0.1763004),
	};
	const struct report_value row2[] = { RV_I64(-42), RV_BOOL(true), RV_STR(NULL), RV_DBL(2.5) };
	json_t *doc, *v, *results, *row;
	const char *key;
	const char *want_keys[] = { "rdmakit", "command", "params", "results", "errors" };
	size_t i = 0;

	cap_open(&c, "write_bw", true, false);
	report_param(&c.r, "Device", "device", REPORT_STR, RV_STR("rxe0"));
	report_table_begin(&c.r, bw_cols, 5);
	report_table_row(&c.r, row1);
	report_table_end(&c.r);
	report_table_begin(&c.r, misc_cols, 4);
	report_table_row(&c.r, row2);
	report_table_end(&c.r);
	cap_close(&c);

	/* Compact: one line, nothing but the document, nothing on err. */
	CHECK_EQ(u, count_char(c.obuf, '\n'), 1);
	CHECK(u, c.olen > 0 && c.obuf[c.olen - 1] == '\n');
	CHECK_EQ(u, c.elen, 0);
	CHECK(u, strncmp(c.obuf, "{\"rdmakit\":", 11) == 0);	/* envelope order kept */
	doc = parse(c.obuf);
	CHECK(u, json_is_object(doc));
	if (!doc) {
		cap_free(&c);
		return;
	}
	/* Exactly these keys, in this order. */
	CHECK_EQ(u, json_object_size(doc), 5);
	json_object_foreach(doc, key, v) {
		if (i < 5)
			CHECK_STR(u, key, want_keys[i]);
		i++;
	}
	CHECK_STR(u, json_string_value(json_object_get(doc, "rdmakit")), "0.1.0");
	CHECK_STR(u, json_string_value(json_object_get(doc, "command")), "write_bw");
	CHECK(u, json_is_object(json_object_get(doc, "params")));
	CHECK_STR(u, json_string_value(json_object_get(json_object_get(doc, "params"), "device")),
		  "rxe0");
	CHECK(u, json_is_array(json_object_get(doc, "errors")));
	CHECK_EQ(u, json_array_size(json_object_get(doc, "errors")), 0);
	results = json_object_get(doc, "results");
	CHECK(u, json_is_array(results));
	CHECK_EQ(u, json_array_size(results), 2);

	/* Row 1: keys, JSON types, and values at full precision (no rounding). */
	row = json_array_get(results, 0);
	CHECK(u, json_is_object(row));
	CHECK_EQ(u, json_object_size(row), 5);
	CHECK(u, json_is_integer(json_object_get(row, "bytes")));
	CHECK_EQ(u, json_integer_value(json_object_get(row, "bytes")), 65536);
	CHECK_EQ(u, json_integer_value(json_object_get(row, "iterations")), 5000);
	CHECK(u, json_is_real(json_object_get(row, "bw_peak_gbps")));
	CHECK(u, json_real_value(json_object_get(row, "bw_peak_gbps")) == 92.468);
	CHECK(u, json_real_value(json_object_get(row, "bw_avg_gbps")) == 92.4349);
	CHECK(u, json_real_value(json_object_get(row, "msg_rate_mpps")) == 0.1763004);

	/* Row 2: signed, boolean, null for a missing string, and a real. */
	row = json_array_get(results, 1);
	CHECK_EQ(u, json_object_size(row), 4);
	CHECK(u, json_is_integer(json_object_get(row, "delta")));
	CHECK_EQ(u, json_integer_value(json_object_get(row, "delta")), -42);
	CHECK(u, json_is_true(json_object_get(row, "ok")));
	CHECK(u, json_is_null(json_object_get(row, "engine")));
	CHECK(u, json_is_real(json_object_get(row, "ratio")));
	CHECK(u, json_real_value(json_object_get(row, "ratio")) == 2.5);
	json_decref(doc);
	cap_free(&c);
}

static void test_param_text(struct unit *u)
{
	struct capture c;

	cap_open(&c, "write_bw", false, false);
	report_param(&c.r, "Engine", "engine", REPORT_STR, RV_STR("soft"));
	report_param(&c.r, "Message size", "size", REPORT_U64, RV_U64(65536));
	report_param(&c.r, "Offset", "offset", REPORT_I64, RV_I64(-8));
	report_param(&c.r, "Rate limit", "rate", REPORT_DOUBLE, RV_DBL(12.3456));
	report_param(&c.r, "Inline", "inline", REPORT_BOOL, RV_BOOL(true));
	report_param(&c.r, "GID", "gid", REPORT_STR, RV_STR(NULL));
	cap_close(&c);
	CHECK_STR(u, c.obuf,
		  " Engine          : soft\n"
		  " Message size    : 65536\n"
		  " Offset          : -8\n"
		  " Rate limit      : 12.35\n"
		  " Inline          : yes\n"
		  " GID             : -\n");
	CHECK_EQ(u, c.elen, 0);
	cap_free(&c);
}

static void test_param_json(struct unit *u)
{
	struct capture c;
	json_t *doc, *params;

	cap_open(&c, "write_bw", true, false);
	report_param(&c.r, "Engine", "engine", REPORT_STR, RV_STR("soft"));
	report_param(&c.r, "Message size", "size", REPORT_U64, RV_U64(65536));
	report_param(&c.r, "Offset", "offset", REPORT_I64, RV_I64(-8));
	report_param(&c.r, "Rate limit", "rate", REPORT_DOUBLE, RV_DBL(12.3456));
	report_param(&c.r, "Inline", "inline", REPORT_BOOL, RV_BOOL(false));
	report_param(&c.r, "GID", "gid", REPORT_STR, RV_STR(NULL));
	cap_close(&c);
	/* No text lines: the document is all there is. */
	CHECK(u, strstr(c.obuf, "Engine") == NULL);
	CHECK_EQ(u, count_char(c.obuf, '\n'), 1);
	doc = parse(c.obuf);
	params = json_object_get(doc, "params");
	CHECK(u, json_is_object(params));
	CHECK_EQ(u, json_object_size(params), 6);
	CHECK_STR(u, json_string_value(json_object_get(params, "engine")), "soft");
	CHECK(u, json_is_integer(json_object_get(params, "size")));
	CHECK_EQ(u, json_integer_value(json_object_get(params, "size")), 65536);
	CHECK_EQ(u, json_integer_value(json_object_get(params, "offset")), -8);
	CHECK(u, json_is_real(json_object_get(params, "rate")));
	CHECK(u, json_real_value(json_object_get(params, "rate")) == 12.3456);	/* not rounded */
	CHECK(u, json_is_false(json_object_get(params, "inline")));
	CHECK(u, json_is_null(json_object_get(params, "gid")));
	CHECK_EQ(u, json_array_size(json_object_get(doc, "results")), 0);
	json_decref(doc);
	cap_free(&c);
}

static void test_error_text(struct unit *u)
{
	struct capture c;

	cap_open(&c, "write_bw", false, false);
	report_error(&c.r, "device %s has no port %d; try --port %d", "rxe0", 2, 1);
	cap_close(&c);
	CHECK_STR(u, c.ebuf, "rdmakit write_bw: device rxe0 has no port 2; try --port 1\n");
	CHECK_EQ(u, c.olen, 0);	/* text mode: errors never go to out */
	cap_free(&c);
}

static void test_error_json(struct unit *u)
{
	struct capture c;
	json_t *doc, *errors;

	cap_open(&c, "write_bw", true, false);
	report_error(&c.r, "device %s not found; run 'rdmakit devices'", "mlx9");
	report_param(&c.r, "Engine", "engine", REPORT_STR, RV_STR("soft"));
	report_error(&c.r, "second error %d", 2);
	cap_close(&c);
	/* A human watching the pipe still sees each error on err... */
	CHECK_STR(u, c.ebuf,
		  "rdmakit write_bw: device mlx9 not found; run 'rdmakit devices'\n"
		  "rdmakit write_bw: second error 2\n");
	/* ...and the document lists them, in order, without the prefix. */
	doc = parse(c.obuf);
	errors = json_object_get(doc, "errors");
	CHECK(u, json_is_array(errors));
	CHECK_EQ(u, json_array_size(errors), 2);
	CHECK_STR(u, json_string_value(json_array_get(errors, 0)),
		  "device mlx9 not found; run 'rdmakit devices'");
	CHECK_STR(u, json_string_value(json_array_get(errors, 1)), "second error 2");
	CHECK_STR(u, json_string_value(json_object_get(json_object_get(doc, "params"), "engine")),
		  "soft");
	json_decref(doc);
	cap_free(&c);
}

static void test_pretty(struct unit *u)
{
	struct capture c, plain;
	const struct report_value row[] = { RV_I64(1), RV_BOOL(true), RV_STR("x"), RV_DBL(0.5) };
	json_t *doc, *doc_plain;

	/* --pretty alone implies JSON. */
	cap_open(&c, "lat", false, true);
	CHECK(u, c.r.json);
	report_param(&c.r, "Engine", "engine", REPORT_STR, RV_STR("soft"));
	report_table_begin(&c.r, misc_cols, 4);
	report_table_row(&c.r, row);
	report_table_end(&c.r);
	report_error(&c.r, "oops");
	cap_close(&c);

	cap_open(&plain, "lat", true, false);
	report_param(&plain.r, "Engine", "engine", REPORT_STR, RV_STR("soft"));
	report_table_begin(&plain.r, misc_cols, 4);
	report_table_row(&plain.r, row);
	report_table_end(&plain.r);
	report_error(&plain.r, "oops");
	cap_close(&plain);

	CHECK(u, count_char(c.obuf, '\n') > 5);
	CHECK(u, strncmp(c.obuf, "{\n  \"rdmakit\": \"0.1.0\",\n", 24) == 0);
	CHECK(u, strstr(c.obuf, "\n  \"params\": {\n    \"engine\": \"soft\"\n  },\n") != NULL);
	CHECK(u, c.olen > 0 && c.obuf[c.olen - 1] == '\n');
	doc = parse(c.obuf);
	doc_plain = parse(plain.obuf);
	CHECK(u, doc != NULL);
	CHECK(u, json_equal(doc, doc_plain));	/* same document, only laid out */
	json_decref(doc);
	json_decref(doc_plain);
	cap_free(&c);
	cap_free(&plain);
}

static void test_emit(struct unit *u)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	json_t *obj = json_object(), *nested = json_array(), *back, *want;
	char *nl;

	json_object_set_new(obj, "z_first", json_integer(1));
	json_object_set_new(obj, "a_second", json_string("two"));
	json_array_append_new(nested, json_real(1.5));
	json_array_append_new(nested, json_true());
	json_object_set_new(obj, "list", nested);
	want = json_deep_copy(obj);
	report_emit(out, obj);	/* takes ownership */
	/* The stream is flushed by report_emit: the line is there before fclose. */
	CHECK(u, len > 0);
	fclose(out);

	CHECK_STR(u, buf, "{\"z_first\":1,\"a_second\":\"two\",\"list\":[1.5,true]}\n");
	CHECK_EQ(u, count_char(buf, '\n'), 1);
	nl = strchr(buf, '\n');
	CHECK(u, nl && nl[1] == 0);
	CHECK(u, strstr(buf, ": ") == NULL && strstr(buf, ", ") == NULL);	/* compact */
	back = parse(buf);
	CHECK(u, json_equal(back, want));
	json_decref(back);
	json_decref(want);
	free(buf);

	/* Two emits are two lines. */
	buf = NULL;
	out = open_memstream(&buf, &len);
	report_emit(out, json_pack("{s:i}", "n", 1));
	report_emit(out, json_pack("{s:i}", "n", 2));
	fclose(out);
	CHECK_STR(u, buf, "{\"n\":1}\n{\"n\":2}\n");
	free(buf);
}

static void test_u64_clamp(struct unit *u)
{
	static const struct report_col cols[] = { { "count", "count", REPORT_U64, 0 } };
	const struct report_value rows[][1] = {
		{ RV_U64(UINT64_MAX) }, { RV_U64((uint64_t)INT64_MAX + 1) },
		{ RV_U64(INT64_MAX) }, { RV_U64((uint64_t)INT64_MAX - 1) },
	};
	struct capture c;
	json_t *doc, *results, *params;

	cap_open(&c, "stat", true, false);
	report_param(&c.r, "Big", "big", REPORT_U64, RV_U64(UINT64_MAX));
	report_table_begin(&c.r, cols, 1);
	for (int i = 0; i < 4; i++)
		report_table_row(&c.r, rows[i]);
	report_table_end(&c.r);
	cap_close(&c);
	doc = parse(c.obuf);
	params = json_object_get(doc, "params");
	results = json_object_get(doc, "results");
	CHECK(u, json_is_integer(json_object_get(params, "big")));
	CHECK(u, json_integer_value(json_object_get(params, "big")) == INT64_MAX);
	CHECK_EQ(u, json_array_size(results), 4);
	CHECK(u, json_integer_value(json_object_get(json_array_get(results, 0), "count")) ==
		 INT64_MAX);
	CHECK(u, json_integer_value(json_object_get(json_array_get(results, 1), "count")) ==
		 INT64_MAX);
	CHECK(u, json_integer_value(json_object_get(json_array_get(results, 2), "count")) ==
		 INT64_MAX);
	CHECK(u, json_integer_value(json_object_get(json_array_get(results, 3), "count")) ==
		 INT64_MAX - 1);
	/* Never a negative number from a wrapped cast. */
	CHECK(u, strchr(c.obuf, '-') == NULL);
	CHECK(u, strstr(c.obuf, "\"big\":9223372036854775807") != NULL);
	json_decref(doc);
	cap_free(&c);

	/* The text table keeps the full unsigned value. */
	cap_open(&c, "stat", false, false);
	report_table_begin(&c.r, cols, 1);
	report_table_row(&c.r, rows[0]);
	report_table_end(&c.r);
	cap_close(&c);
	CHECK(u, strstr(c.obuf, " 18446744073709551615\n") != NULL);
	cap_free(&c);
}

static void test_string_escape(struct unit *u)
{
	static const char nasty[] =
		"say \"hi\"\\ back\nline two\ttab\r\x01\x1f end "
		"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9d\x84\x9e </script>";
	static const struct report_col cols[] = { { "note", "note", REPORT_STR, 0 } };
	const struct report_value row[] = { RV_STR(nasty) };
	struct capture c;
	json_t *doc;
	const char *got;

	cap_open(&c, "cap", true, false);
	report_param(&c.r, "Label", "label", REPORT_STR, RV_STR(nasty));
	report_table_begin(&c.r, cols, 1);
	report_table_row(&c.r, row);
	report_table_end(&c.r);
	report_error(&c.r, "bad \"%s\"\n", "quote");
	cap_close(&c);

	/* Still one line: the newlines inside the strings are escaped. */
	CHECK_EQ(u, count_char(c.obuf, '\n'), 1);
	/* Control characters as \u00XX (jansson writes the hex digits in upper case). */
	CHECK(u, strcasestr(c.obuf,
			    "say \\\"hi\\\"\\\\ back\\nline two\\ttab\\r\\u0001\\u001f") != NULL);
	/* UTF-8 passes through as UTF-8 (no \u escapes needed). */
	CHECK(u, strstr(c.obuf, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9d\x84\x9e") != NULL);
	doc = parse(c.obuf);
	CHECK(u, doc != NULL);
	got = json_string_value(json_object_get(json_object_get(doc, "params"), "label"));
	CHECK(u, got && strcmp(got, nasty) == 0);
	got = json_string_value(
		json_object_get(json_array_get(json_object_get(doc, "results"), 0), "note"));
	CHECK(u, got && strcmp(got, nasty) == 0);
	CHECK_STR(u, json_string_value(json_array_get(json_object_get(doc, "errors"), 0)),
		  "bad \"quote\"\n");
	json_decref(doc);
	cap_free(&c);

	/* Keys are escaped too. */
	cap_open(&c, "cap", true, false);
	report_param(&c.r, "Odd", "a\"b\nc", REPORT_BOOL, RV_BOOL(true));
	cap_close(&c);
	doc = parse(c.obuf);
	CHECK(u, json_is_true(json_object_get(json_object_get(doc, "params"), "a\"b\nc")));
	json_decref(doc);
	cap_free(&c);
}

static void test_result(struct unit *u)
{
	struct capture c;
	json_t *doc, *res;

	cap_open(&c, "info", true, false);
	report_result(&c.r, json_pack("{s:s, s:i}", "device", "rxe0", "ports", 1));
	report_result(&c.r, json_pack("{s:b}", "up", 1));
	cap_close(&c);
	doc = parse(c.obuf);
	res = json_object_get(doc, "results");
	CHECK_EQ(u, json_array_size(res), 2);
	CHECK_STR(u, json_string_value(json_object_get(json_array_get(res, 0), "device")), "rxe0");
	CHECK(u, json_is_true(json_object_get(json_array_get(res, 1), "up")));
	json_decref(doc);
	cap_free(&c);

	cap_open(&c, "info", false, false);
	report_result(&c.r, json_pack("{s:s, s:i, s:[i,i], s:{s:s}}", "device", "rxe0", "ports", 1,
				      "lids", 1, 2, "gid", "type", "RoCEv2"));
	cap_close(&c);
	CHECK_STR(u, c.obuf,
		  " device          : rxe0\n"
		  " ports           : 1\n"
		  " lids: 1, 2\n"
		  " gid:\n"
		  "   type            : RoCEv2\n");
	cap_free(&c);
}

/* JSON mode with no output calls still yields the complete, empty envelope. */
static void test_empty_document(struct unit *u)
{
	struct capture c;
	json_t *doc;

	cap_open(&c, "noop", true, false);
	cap_close(&c);
	CHECK_STR(u, c.obuf,
		  "{\"rdmakit\":\"0.1.0\",\"command\":\"noop\",\"params\":{},\"results\":[],"
		  "\"errors\":[]}\n");
	doc = parse(c.obuf);
	CHECK_EQ(u, json_object_size(doc), 5);
	json_decref(doc);
	cap_free(&c);

	/* Text mode with nothing to say writes nothing. */
	cap_open(&c, "noop", false, false);
	cap_close(&c);
	CHECK_EQ(u, c.olen, 0);
	CHECK_EQ(u, c.elen, 0);
	cap_free(&c);
}

/* Values JSON cannot carry as given are never silently dropped. */
static void test_lossless_keys(struct unit *u)
{
	static const struct report_col cols[] = {
		{ "avg", "avg", REPORT_DOUBLE, 2 }, { "name", "name", REPORT_STR, 0 },
	};
	struct report_value row[2] = { RV_DBL(1.0 / 0.0), RV_STR("eth\xe9") };
	char msg[1100];
	struct capture c;
	json_t *doc, *res;

	cap_open(&c, "t", true, false);
	report_param(&c.r, "Avg", "avg", REPORT_DOUBLE, RV_DBL(0.0 / 0.0));
	report_table_begin(&c.r, cols, 2);
	report_table_row(&c.r, row);
	report_table_end(&c.r);
	/* An error cut at 1023 bytes in the middle of a two-byte character. */
	memset(msg, 'x', sizeof(msg));
	msg[1021] = (char)0xc3;
	msg[1022] = (char)0xa9;
	msg[sizeof(msg) - 1] = '\0';
	report_error(&c.r, "%s", msg);
	cap_close(&c);
	doc = parse(c.obuf);
	CHECK(u, doc != NULL);
	if (doc) {
		CHECK(u, json_is_null(json_object_get(json_object_get(doc, "params"), "avg")));
		res = json_array_get(json_object_get(doc, "results"), 0);
		CHECK(u, json_is_null(json_object_get(res, "avg")));
		CHECK_STR(u, json_string_value(json_object_get(res, "name")), "eth?");
		CHECK_EQ(u, json_array_size(json_object_get(doc, "errors")), 1);
		json_decref(doc);
	}
	cap_free(&c);
}

/* Decimals print as people write them. */
static void test_real_precision(struct unit *u)
{
	struct capture c;

	cap_open(&c, "t", true, false);
	report_param(&c.r, "BW", "bw_avg_gbps", REPORT_DOUBLE, RV_DBL(92.47));
	cap_close(&c);
	CHECK(u, strstr(c.obuf, "\"bw_avg_gbps\":92.47}") != NULL);
	cap_free(&c);
}

/* Fit tables: each text column as wide as its widest cell; text-only and
 * JSON-only columns; a missing value is "-" and null; a text override
 * changes only the text. */
static void test_fit_table(struct unit *u)
{
	static const struct report_col cols[] = {
		{ NULL, "engine", REPORT_STR, 0 },
		{ "if", "interface", REPORT_STR, 0 },
		{ "mtu", "mtu", REPORT_U64, 0 },
		{ "fam", "family", REPORT_STR, 0 },
		{ "count", NULL, REPORT_U64, 0 },
	};
	const struct report_value rows[][5] = {
		{ RV_STR("soft"), RV_STR("a-very-long-interface-name"), RV_U64(1500),
		  { .s = "ipv4", .text = "IPv4" }, RV_U64(3) },
		{ RV_STR("soft"), RV_STR("lo"), RV_NONE, { .s = "ipv6", .text = "IPv6" },
		  RV_U64(12345678901ULL) },
	};
	struct capture c;
	json_t *doc, *r0, *r1;

	cap_open(&c, "t", false, false);
	report_table_fit(&c.r, cols, 5);
	report_table_row(&c.r, rows[0]);
	report_table_row(&c.r, rows[1]);
	report_table_end(&c.r);
	cap_close(&c);
	CHECK_HAS(u, c.obuf, "\n if                         mtu      fam      count      \n"
		  " a-very-long-interface-name 1500     IPv4     3          \n"
		  " lo                         -        IPv6     12345678901\n");
	cap_free(&c);

	cap_open(&c, "t", true, false);
	report_table_fit(&c.r, cols, 5);
	report_table_row(&c.r, rows[0]);
	report_table_row(&c.r, rows[1]);
	report_table_end(&c.r);
	cap_close(&c);
	doc = parse(c.obuf);
	r0 = json_array_get(json_object_get(doc, "results"), 0);
	r1 = json_array_get(json_object_get(doc, "results"), 1);
	CHECK_EQ(u, json_object_size(r0), 4);	/* the text-only column is not there */
	CHECK_STR(u, json_string_value(json_object_get(r0, "engine")), "soft");
	CHECK_STR(u, json_string_value(json_object_get(r0, "family")), "ipv4");
	CHECK_EQ(u, json_integer_value(json_object_get(r0, "mtu")), 1500);
	CHECK(u, json_is_null(json_object_get(r1, "mtu")));
	json_decref(doc);
	cap_free(&c);
}

/* Every kind of call a command makes, in one order. */
static void every_call(struct report *r)
{
	static const struct report_col fit_cols[] = {
		{ "if", "interface", REPORT_STR, 0 },
		{ "count", NULL, REPORT_U64, 0 },
		{ NULL, "hidden", REPORT_U64, 0 },
	};
	const struct report_value fit_row[] = { RV_STR("lo"), RV_U64(3), RV_U64(9) };
	const struct report_value row[] = { RV_U64(65536), RV_U64(1000), RV_DBL(92.47),
					    RV_DBL(91.5), RV_DBL(0.174531) };
	struct printer pr, *more;
	unsigned saved;

	report_param(r, "Engine", "engine", REPORT_STR, RV_STR("soft"));
	report_table_begin(r, bw_cols, 5);
	saved = printer_restrict(&r->pr, PRINT_FP);
	print_fp(&r->pr, " [interval line]\n");
	print_uint(&r->pr, PRINT_ANY, "text_only_here", " %llu\n", 7);
	printer_restore(&r->pr, saved);
	report_table_row(r, row);
	more = report_row_more(r);
	print_uint(more, PRINT_ANY, "extra", " extra %llu\n", 5);
	report_row_done(r);
	report_table_end(r);
	report_error(r, "something went %s", "wrong");
	report_table_fit(r, fit_cols, 3);
	report_table_row(r, fit_row);
	report_table_end(r);
	report_result(r, json_pack("{s:i}", "answer", 42));
	report_printer_init(r, &pr);
	print_float(&pr, PRINT_ANY, "summary_gbps", " Summary %.1f\n", 12.5);
	report_results_object(r, "rows", printer_take(&pr));
}

/* --plot's kept document: the text is what plain text mode prints, and the
 * document what -j prints, from the same calls; in JSON mode it is kept
 * after being printed. */
static void test_keep_document(struct unit *u)
{
	struct capture text, kept, json;
	json_t *want, *got;
	char *a, *b;

	cap_open(&text, "t", false, false);
	every_call(&text.r);
	cap_close(&text);
	cap_open(&kept, "t", false, false);
	report_keep_document(&kept.r);
	every_call(&kept.r);
	cap_close(&kept);
	cap_open(&json, "t", true, false);
	report_keep_document(&json.r);
	every_call(&json.r);
	cap_close(&json);
	CHECK_STR(u, kept.obuf, text.obuf);
	CHECK_STR(u, kept.ebuf, text.ebuf);
	CHECK(u, !report_take_document(&text.r));
	want = parse(json.obuf);
	got = report_take_document(&kept.r);
	a = json_dumps(want, JSON_SORT_KEYS);
	b = json_dumps(got, JSON_SORT_KEYS);
	CHECK(u, a && b);
	if (a && b)
		CHECK_STR(u, b, a);
	CHECK_HAS(u, a ? a : "", "\"extra\": 5");
	CHECK(u, a && !strstr(a, "text_only_here"));
	free(a);
	free(b);
	json_decref(got);
	got = report_take_document(&json.r);
	CHECK(u, json_equal(got, want));
	json_decref(got);
	json_decref(want);
	cap_free(&text);
	cap_free(&kept);
	cap_free(&json);
	/* A fit table first (no widths yet): its row still reaches the document. */
	{
		static const struct report_col cols[] = { { "if", "interface", REPORT_STR, 0 } };
		const struct report_value row[] = { RV_STR("lo") };

		cap_open(&kept, "t", false, false);
		report_keep_document(&kept.r);
		report_table_fit(&kept.r, cols, 1);
		report_table_row(&kept.r, row);
		report_table_end(&kept.r);
		cap_close(&kept);
		got = report_take_document(&kept.r);
		CHECK_STR(u, json_string_value(json_object_get(
				json_array_get(json_object_get(got, "results"), 0), "interface")), "lo");
		CHECK_HAS(u, kept.obuf, " if      \n lo      \n");
		json_decref(got);
		cap_free(&kept);
	}
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_text_table);
	RUN(&u, test_wide_table);
	RUN(&u, test_format);
	RUN(&u, test_json_document);
	RUN(&u, test_param_text);
	RUN(&u, test_param_json);
	RUN(&u, test_error_text);
	RUN(&u, test_error_json);
	RUN(&u, test_pretty);
	RUN(&u, test_emit);
	RUN(&u, test_u64_clamp);
	RUN(&u, test_string_escape);
	RUN(&u, test_result);
	RUN(&u, test_empty_document);
	RUN(&u, test_lossless_keys);
	RUN(&u, test_real_precision);
	RUN(&u, test_fit_table);
	RUN(&u, test_keep_document);
	return unit_done(&u);
}
