/* SPDX-License-Identifier: MIT */
/*
 * Field-level output, the way iproute2's print_*(PRINT_ANY, key, fmt, value)
 * works: each call names a field once and gives both its JSON key and its
 * text format, so the two forms of a command's output come from the same
 * call site and cannot drift apart.
 *
 *   PRINT_ANY   the field in both forms
 *   PRINT_FP    text only (a heading, a unit, a line break)
 *   PRINT_JSON  JSON only (a figure the text leaves out)
 *
 * Text goes straight to `out`, each value through its printf format (NULL:
 * nothing).  JSON builds a jansson tree under one root object; the caller
 * takes it (printer_take) and hands it to the report or emits it.  Values
 * JSON cannot hold as they are become null (a NaN or infinite double, a
 * NULL or empty string) or are clamped (u64 above INT64_MAX: jansson's
 * integers are signed), never dropped.  Nesting has no fixed limit.
 */
#ifndef RDMAKIT_PRINT_H
#define RDMAKIT_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

enum print_to { PRINT_FP = 1, PRINT_JSON = 2, PRINT_ANY = PRINT_FP | PRINT_JSON };

struct printer {
	FILE *out;		/* text */
	bool text;		/* text goes to out */
	bool json;		/* a JSON tree is built (both at once: printer_init_both) */
	json_t **open;		/* JSON: the containers open now; open[0] is the root */
	size_t depth, cap;
	bool failed;		/* out of memory: printer_take returns NULL */
};

/* JSON mode starts with an empty root object. */
void printer_init(struct printer *pr, FILE *out, bool json);
/* Text to out and the JSON tree at once (a run's text report, and its
 * document for a picture: --plot). */
void printer_init_both(struct printer *pr, FILE *out);
/* Until printer_restore(pr, the value returned): only the forms in `to`
 * (a field that sits in one place in text and another in JSON). */
unsigned printer_restrict(struct printer *pr, enum print_to to);
void printer_restore(struct printer *pr, unsigned saved);
/* The root object (the caller owns it; NULL in text mode or after a
 * failure) and frees the rest.  Containers left open are closed. */
json_t *printer_take(struct printer *pr);

/*
 * Containers.  key names the member in the enclosing object; in an array
 * it is ignored (the new container is appended).  Opening an object whose
 * key the enclosing object already holds reopens it: a field can join a
 * section opened earlier, so text and JSON may order fields differently.
 * In text mode these do nothing.
 */
void print_open_object(struct printer *pr, const char *key);
void print_open_array(struct printer *pr, const char *key);
void print_close(struct printer *pr);
/* JSON: reopens the last element of the innermost container, an array of
 * objects (a row added earlier); with none, an object no one will see. */
void print_open_last(struct printer *pr);

/* JSON: whether the innermost object already holds key (text: false). */
bool print_has(const struct printer *pr, const char *key);

/* Each returns how many characters it wrote as text (0 for JSON only).  The
 * text formats take unsigned long long, long long, double, const char *. */
int print_uint(struct printer *pr, enum print_to to, const char *key, const char *fmt,
	       uint64_t v);
int print_int(struct printer *pr, enum print_to to, const char *key, const char *fmt, int64_t v);
int print_float(struct printer *pr, enum print_to to, const char *key, const char *fmt, double v);
int print_string(struct printer *pr, enum print_to to, const char *key, const char *fmt,
		 const char *v);
/* Text: fmt gets yes or no (the caller's words for true and false). */
int print_bool(struct printer *pr, enum print_to to, const char *key, const char *fmt, bool v,
	       const char *yes, const char *no);
/* JSON null; text: fmt gets `text` ("-", "none"). */
int print_null(struct printer *pr, enum print_to to, const char *key, const char *fmt,
	       const char *text);
/* Text only, printf-like. */
int print_fp(struct printer *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string even from bytes that are not UTF-8 (those become '?');
 * NULL when out of memory. */
json_t *print_json_string(const char *s);
/* JSON only: a value built elsewhere (a histogram); takes ownership. */
void print_json(struct printer *pr, const char *key, json_t *v);

#endif
