// SPDX-License-Identifier: MIT
/* Field-level text and JSON output from the same calls; see print.h. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"

void printer_init(struct printer *pr, FILE *out, bool json)
{
	memset(pr, 0, sizeof(*pr));
	pr->out = out ? out : stdout;
	pr->json = json;
	pr->text = !json;
	if (json)
		print_open_object(pr, NULL);
}

void printer_init_both(struct printer *pr, FILE *out)
{
	printer_init(pr, out, true);
	pr->text = true;
}

unsigned printer_restrict(struct printer *pr, enum print_to to)
{
	unsigned saved = (pr->text ? PRINT_FP : 0) | (pr->json ? PRINT_JSON : 0);

	pr->text = pr->text && (to & PRINT_FP);
	pr->json = pr->json && (to & PRINT_JSON);
	return saved;
}

void printer_restore(struct printer *pr, unsigned saved)
{
	pr->text = saved & PRINT_FP;
	pr->json = saved & PRINT_JSON;
}

json_t *printer_take(struct printer *pr)
{
	json_t *root = NULL;

	if (pr->depth && !pr->failed)
		root = json_incref(pr->open[0]);
	for (size_t i = 0; i < pr->depth; i++)
		json_decref(pr->open[i]);
	free(pr->open);
	pr->open = NULL;
	pr->depth = pr->cap = 0;
	return root;
}

/* A copy of a key or string jansson refused (not UTF-8) whose bytes
 * outside ASCII became '?', so a field is never dropped for its name; free
 * it.  NULL when out of memory. */
static char *lossy_copy(const char *s)
{
	char *copy = strdup(s);

	for (char *c = copy; c && *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	return copy;
}

/* Puts v (owned) under key in the innermost container; in an object a
 * NULL key means nothing is put there. */
static void attach(struct printer *pr, const char *key, json_t *v)
{
	json_t *parent = pr->depth ? pr->open[pr->depth - 1] : NULL;
	int rc = 0;

	if (!v || !parent) {
		rc = -1;
	} else if (json_is_array(parent)) {
		rc = json_array_append(parent, v);
	} else if (key) {
		rc = json_object_set(parent, key, v);
		if (rc) {	/* not UTF-8 */
			char *k = lossy_copy(key);

			rc = k ? json_object_set(parent, k, v) : -1;
			free(k);
		}
	}
	if (rc)
		pr->failed = true;
	json_decref(v);
}

static void push(struct printer *pr, json_t *c)
{
	if (!c) {
		pr->failed = true;
		c = json_object();	/* keeps open/close balanced; NULL is a no-op below */
	}
	if (pr->depth == pr->cap) {
		size_t ncap = pr->cap ? pr->cap * 2 : 8;
		json_t **n = realloc(pr->open, ncap * sizeof(*n));

		if (!n) {
			pr->failed = true;
			json_decref(c);
			return;
		}
		pr->open = n;
		pr->cap = ncap;
	}
	pr->open[pr->depth++] = c;
}

static void open_container(struct printer *pr, const char *key, bool array)
{
	json_t *parent, *c;

	if (!pr->json)
		return;
	if (!pr->depth) {	/* the root */
		push(pr, array ? json_array() : json_object());
		return;
	}
	parent = pr->open[pr->depth - 1];
	c = key && json_is_object(parent) ? json_object_get(parent, key) : NULL;
	if (c && (array ? json_is_array(c) : json_is_object(c))) {
		push(pr, json_incref(c));	/* reopened */
		return;
	}
	if (c)		/* the key holds another kind of value: never replace it */
		pr->failed = true;
	c = array ? json_array() : json_object();
	if (c)
		attach(pr, key, json_incref(c));
	push(pr, c);
}

void print_open_object(struct printer *pr, const char *key)
{
	open_container(pr, key, false);
}

void print_open_array(struct printer *pr, const char *key)
{
	open_container(pr, key, true);
}

void print_open_last(struct printer *pr)
{
	json_t *parent, *last;

	if (!pr->json)
		return;
	parent = pr->depth ? pr->open[pr->depth - 1] : NULL;
	last = json_is_array(parent) && json_array_size(parent) ?
	       json_array_get(parent, json_array_size(parent) - 1) : NULL;
	push(pr, json_is_object(last) ? json_incref(last) : json_object());
}

void print_close(struct printer *pr)
{
	/* The root stays open until printer_take. */
	if (pr->json && pr->depth > 1)
		json_decref(pr->open[--pr->depth]);
}

bool print_has(const struct printer *pr, const char *key)
{
	return pr->json && pr->depth && json_object_get(pr->open[pr->depth - 1], key);
}

static int text(struct printer *pr, enum print_to to, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int text(struct printer *pr, enum print_to to, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!pr->text || !(to & PRINT_FP) || !fmt)
		return 0;
	va_start(ap, fmt);
	n = vfprintf(pr->out, fmt, ap);
	va_end(ap);
	return n > 0 ? n : 0;
}

static bool wants_json(const struct printer *pr, enum print_to to)
{
	return pr->json && (to & PRINT_JSON);
}

/* The formats are the callers' (print.h says which type each takes). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"

int print_uint(struct printer *pr, enum print_to to, const char *key, const char *fmt,
	       uint64_t v)
{
	if (wants_json(pr, to))
		attach(pr, key, json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v));
	return text(pr, to, fmt, (unsigned long long)v);
}

int print_int(struct printer *pr, enum print_to to, const char *key, const char *fmt, int64_t v)
{
	if (wants_json(pr, to))
		attach(pr, key, json_integer((json_int_t)v));
	return text(pr, to, fmt, (long long)v);
}

int print_float(struct printer *pr, enum print_to to, const char *key, const char *fmt, double v)
{
	if (wants_json(pr, to))
		attach(pr, key, isfinite(v) ? json_real(v) : json_null());
	return text(pr, to, fmt, v);
}

json_t *print_json_string(const char *s)
{
	json_t *j = json_string(s);
	char *copy;

	if (j)
		return j;
	copy = lossy_copy(s);
	j = copy ? json_string(copy) : NULL;
	free(copy);
	return j;
}

int print_string(struct printer *pr, enum print_to to, const char *key, const char *fmt,
		 const char *v)
{
	if (wants_json(pr, to))
		attach(pr, key, v && *v ? print_json_string(v) : json_null());
	return text(pr, to, fmt, v ? v : "");
}

int print_bool(struct printer *pr, enum print_to to, const char *key, const char *fmt, bool v,
	       const char *yes, const char *no)
{
	if (wants_json(pr, to))
		attach(pr, key, json_boolean(v));
	return text(pr, to, fmt, v ? yes : no);
}

int print_null(struct printer *pr, enum print_to to, const char *key, const char *fmt,
	       const char *txt)
{
	if (wants_json(pr, to))
		attach(pr, key, json_null());
	return text(pr, to, fmt, txt);
}

#pragma GCC diagnostic pop

int print_fp(struct printer *pr, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!pr->text)
		return 0;
	va_start(ap, fmt);
	n = vfprintf(pr->out, fmt, ap);
	va_end(ap);
	return n > 0 ? n : 0;
}

void print_json(struct printer *pr, const char *key, json_t *v)
{
	if (pr->json)
		attach(pr, key, v ? v : json_null());
	else
		json_decref(v);
}
