// SPDX-License-Identifier: MIT
/*
 * Field-level output (lib/stats/print.c): one sequence of calls rendered
 * both ways.  Text is checked byte for byte from a memory stream; JSON is
 * the tree printer_take returns, dumped compactly in insertion order.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "print.h"
#include "unit.h"

/* The calls under test, the same for both forms. */
static void render(struct printer *pr, int *cols)
{
	*cols = 0;
	print_open_object(pr, "link");
	*cols += print_string(pr, PRINT_ANY, "name", "%s:", "eth0");
	*cols += print_uint(pr, PRINT_ANY, "mtu", " mtu %llu", 1500);
	*cols += print_int(pr, PRINT_ANY, "offset", " off %lld", -3);
	print_close(pr);
	print_float(pr, PRINT_ANY, "rate", " %.2f Gb/s", 12.5);
	print_float(pr, PRINT_JSON, "nan", NULL, NAN);
	print_bool(pr, PRINT_ANY, "up", " %s", true, "UP", "DOWN");
	print_null(pr, PRINT_ANY, "fct", " fct %s", "-");
	print_string(pr, PRINT_ANY, "empty", " [%s]", "");
	print_string(pr, PRINT_JSON, "missing", NULL, NULL);
	print_fp(pr, "\n");
	print_open_array(pr, "queues");
	for (int i = 0; i < 2; i++) {
		print_open_object(pr, NULL);
		print_uint(pr, PRINT_ANY, "q", " q%llu", (uint64_t)i);
		print_close(pr);
	}
	print_close(pr);
	/* A section reopened: the text reads mtu ... state, JSON keeps link together. */
	print_open_object(pr, "link");
	print_string(pr, PRINT_ANY, "state", " state %s\n", "up");
	print_close(pr);
	print_uint(pr, PRINT_JSON, "big", NULL, UINT64_MAX);
}

static void test_both_forms(struct unit *u)
{
	struct printer pr;
	char *buf = NULL, *dump;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *root;
	int cols;

	printer_init(&pr, f, false);
	render(&pr, &cols);
	CHECK(u, printer_take(&pr) == NULL);
	fclose(f);
	CHECK_STR(u, buf, "eth0: mtu 1500 off -3 12.50 Gb/s UP fct - []\n q0 q1 state up\n");
	CHECK_EQ(u, cols, (int)strlen("eth0: mtu 1500 off -3"));

	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	printer_init(&pr, f, true);
	render(&pr, &cols);
	root = printer_take(&pr);
	fclose(f);
	CHECK_EQ(u, len, 0);	/* JSON mode writes no text */
	CHECK_EQ(u, cols, 0);
	dump = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	CHECK_STR(u, dump, "{\"link\":{\"name\":\"eth0\",\"mtu\":1500,\"offset\":-3,\"state\":\"up\"},"
		  "\"rate\":12.5,\"nan\":null,\"up\":true,\"fct\":null,\"empty\":null,"
		  "\"missing\":null,\"queues\":[{\"q\":0},{\"q\":1}],"
		  "\"big\":9223372036854775807}");
	free(dump);
	json_decref(root);
	free(buf);
}

/* No depth limit: 1000 nested objects come back whole. */
static void test_deep(struct unit *u)
{
	struct printer pr;
	json_t *root, *o;
	int depth = 0;

	printer_init(&pr, stdout, true);
	for (int i = 0; i < 1000; i++)
		print_open_object(&pr, "in");
	print_uint(&pr, PRINT_ANY, "leaf", NULL, 7);
	for (int i = 0; i < 1000; i++)
		print_close(&pr);
	print_close(&pr);	/* one too many: the root stays */
	print_uint(&pr, PRINT_JSON, "after", NULL, 1);
	root = printer_take(&pr);
	CHECK(u, root != NULL);
	for (o = root; json_object_get(o, "in"); o = json_object_get(o, "in"))
		depth++;
	CHECK_EQ(u, depth, 1000);
	CHECK_EQ(u, json_integer_value(json_object_get(o, "leaf")), 7);
	CHECK_EQ(u, json_integer_value(json_object_get(root, "after")), 1);
	json_decref(root);
}

/* Containers left open are closed by printer_take; bytes that are not
 * UTF-8 become '?' rather than a dropped field. */
static void test_left_open_and_lossy(struct unit *u)
{
	struct printer pr;
	json_t *root;

	printer_init(&pr, stdout, true);
	print_open_array(&pr, "a");
	print_open_object(&pr, NULL);
	print_string(&pr, PRINT_JSON, "s", NULL, "ab\xff");
	root = printer_take(&pr);
	CHECK(u, root != NULL);
	CHECK_STR(u, json_string_value(json_object_get(json_array_get(json_object_get(root, "a"),
								       0), "s")), "ab?");
	json_decref(root);
}

/* A key holding another kind of value is never replaced (the document is
 * marked failed instead); a key that is not UTF-8 keeps its field. */
static void type_clash_and_bad_key(struct unit *u)
{
	struct printer pr;
	json_t *root;

	printer_init(&pr, stdout, true);
	print_uint(&pr, PRINT_JSON, "results", NULL, 1);
	print_open_array(&pr, "results");
	print_close(&pr);
	CHECK(u, printer_take(&pr) == NULL);

	printer_init(&pr, stdout, true);
	print_uint(&pr, PRINT_JSON, "rx\xff" "bytes", NULL, 5);
	print_uint(&pr, PRINT_JSON, NULL, NULL, 6);	/* no key in an object: nothing */
	root = printer_take(&pr);
	CHECK(u, root != NULL);
	CHECK_EQ(u, json_integer_value(json_object_get(root, "rx?bytes")), 5);
	CHECK_EQ(u, json_object_size(root), 1);
	json_decref(root);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, test_both_forms);
	RUN(&u, test_deep);
	RUN(&u, test_left_open_and_lossy);
	RUN(&u, type_clash_and_bad_key);
	return unit_done(&u);
}
