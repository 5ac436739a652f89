// SPDX-License-Identifier: MIT
/*
 * Option parsing from declarative specs.  getopt_long does the scanning;
 * we build its tables from the specs and word every error ourselves, so
 * each names the option and the form it accepts.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

#define MAX_OPTS 96

static void vmessage(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "rdmakit%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

int runtime_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(cmd, fmt, ap);
	va_end(ap);
	return EXIT_RUNTIME;
}

static const struct opt_spec common_opts[] = { OPTS_COMMON, OPTS_END };

static const struct opt_spec *find_spec(const struct opt_spec *specs, int key)
{
	for (const struct opt_spec *s = specs; s->name; s++)
		if (s->key == key)
			return s;
	return NULL;
}

/* "--size BYTES" or "-s/--size BYTES" for messages. */
static void spec_form(char *buf, size_t cap, const struct opt_spec *s)
{
	if (s->key < OPT_LONG_ONLY)
		snprintf(buf, cap, "-%c/--%s%s%s", s->key, s->name, s->arg ? " " : "",
			 s->arg ? s->arg : "");
	else
		snprintf(buf, cap, "--%s%s%s", s->name, s->arg ? " " : "", s->arg ? s->arg : "");
}

void opts_print_help(FILE *out, const struct cmd_usage *u)
{
	const struct opt_spec *lists[2] = { u->opts, common_opts };
	const char *syn = u->synopsis;

	/* Each synopsis line gets the "Usage: rdmakit CMD" prefix. */
	fprintf(out, "Usage:");
	while (syn && *syn) {
		const char *nl = strchr(syn, '\n');
		int n = nl ? (int)(nl - syn) : (int)strlen(syn);

		fprintf(out, " rdmakit %s %.*s\n", u->cmd, n, syn);
		syn += n + (nl ? 1 : 0);
		if (*syn)
			fprintf(out, "      ");
	}
	fprintf(out, "\n%s\n\nOptions:\n", u->description);
	for (int l = 0; l < 2; l++) {
		for (const struct opt_spec *s = lists[l]; s && s->name; s++) {
			char form[96];

			if (s->key < OPT_LONG_ONLY)
				snprintf(form, sizeof(form), "-%c, --%s%s%s", s->key, s->name,
					 s->arg ? " " : "", s->arg ? s->arg : "");
			else
				snprintf(form, sizeof(form), "    --%s%s%s", s->name,
					 s->arg ? " " : "", s->arg ? s->arg : "");
			fprintf(out, "  %-28s %s\n", form, s->help);
		}
	}
	fprintf(out, "\nExit status: 0 ok, 1 check failed, 2 usage error, 3 runtime error.\n");
}

/* Builds getopt_long's tables from both spec lists. */
static int build_tables(const struct opt_spec *const lists[2], struct option *longs,
			char *shorts, size_t shorts_cap)
{
	size_t n = 0, k = 0;

	shorts[k++] = ':';	/* report missing values as ':' */
	for (int l = 0; l < 2; l++) {
		for (const struct opt_spec *s = lists[l]; s && s->name; s++) {
			if (n + 1 >= MAX_OPTS || k + 3 >= shorts_cap)
				return -1;
			longs[n++] = (struct option){ s->name, s->arg ? required_argument : no_argument,
						      NULL, s->key };
			if (s->key < OPT_LONG_ONLY) {
				shorts[k++] = (char)s->key;
				if (s->arg)
					shorts[k++] = ':';
			}
		}
	}
	longs[n] = (struct option){ 0 };
	shorts[k] = '\0';
	return 0;
}

static int missing_value(const struct cmd_usage *u, const struct opt_spec *const lists[2],
			 int key, const char *word)
{
	const struct opt_spec *s = find_spec(lists[0], key);
	char form[96];

	if (!s)
		s = find_spec(lists[1], key);
	if (!s)
		return usage_error(u->cmd, "option '%s' needs a value; see 'rdmakit %s --help'",
				   word, u->cmd);
	spec_form(form, sizeof(form), s);
	return usage_error(u->cmd, "option '%s' needs a value: %s", word, form);
}

int opts_parse(const struct cmd_usage *u, int argc, char **argv,
	       struct global_opts *g, opt_handler fn, void *ctx,
	       int *first_operand)
{
	const struct opt_spec *const lists[2] = { u->opts, common_opts };
	struct option longs[MAX_OPTS];
	char shorts[2 * MAX_OPTS + 2];
	int c, rc;

	if (build_tables(lists, longs, shorts, sizeof(shorts)) < 0)
		return runtime_error(u->cmd, "internal error: too many options");
	opterr = 0;
	/* 0, not 1: glibc then resets all its state, including the "stop at
	 * the first operand" mode main() used for the global options, so
	 * options may follow operands (rdmakit bw HOST -s 64k). */
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const char *word = argv[optind - 1];

		switch (c) {
		case '?': {
			char opt[3] = { '-', (char)optopt, 0 };
			bool is_short = optopt && optopt < OPT_LONG_ONLY && !(word[0] == '-' && word[1] == '-');
			const char *why = u->refused ? u->refused(is_short ? opt : word) : NULL;

			if (why)
				return usage_error(u->cmd, "perftest's '%.*s' is not in rdmakit: %s (see "
						   "docs/perftest.md)", is_short ? 2 : (int)strcspn(word, "="),
						   is_short ? opt : word, why);
			if (is_short)
				return usage_error(u->cmd, "unknown option '-%c'; see 'rdmakit %s --help'",
						   optopt, u->cmd);
			return usage_error(u->cmd, "unknown option '%s'; see 'rdmakit %s --help'",
					   word, u->cmd);
		}
		case ':':
			return missing_value(u, lists, optopt, word);
		case 'j':
			g->json = true;
			break;
		case OPT_LONG_ONLY + 255:
			g->json = g->pretty = true;
			break;
		case 'h':
			opts_print_help(stdout, u);
			return -1;
		default:
			rc = fn ? fn(ctx, c, optarg) : EXIT_USAGE;
			if (rc)
				return rc;
		}
	}
	*first_operand = optind;
	return 0;
}

int parse_u64(const char *cmd, const char *opt, const char *s, uint64_t min,
	      uint64_t max, bool sized, uint64_t *out)
{
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	errno = 0;
	if (!s || !*s || *s == '-')
		goto bad;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		goto bad;
	if (sized && *end) {
		switch (*end | 0x20) {
		case 'k': mult = 1ULL << 10; break;
		case 'm': mult = 1ULL << 20; break;
		case 'g': mult = 1ULL << 30; break;
		default: goto bad;
		}
		end++;
		if ((*end | 0x20) == 'b' || (*end | 0x20) == 'i')
			end += (*end | 0x20) == 'i' && (end[1] | 0x20) == 'b' ? 2 : 1;
	}
	if (*end || (v && mult > UINT64_MAX / v))
		goto bad;
	v *= mult;
	if (v < min || v > max)
		return usage_error(cmd, "value '%s' for %s is out of range: expected %llu..%llu",
				   s, opt, (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
bad:
	return usage_error(cmd, "invalid value '%s' for %s: expected %s", s ? s : "", opt,
			   sized ? "a number of bytes such as 65536, 64k or 1m" : "a whole number");
}

int parse_double(const char *cmd, const char *opt, const char *s, double min,
		 double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = s ? strtod(s, &end) : 0;
	if (!s || !*s || errno || *end || isnan(v))
		return usage_error(cmd, "invalid value '%s' for %s: expected a number",
				   s ? s : "", opt);
	if (v < min || v > max)
		return usage_error(cmd, "value '%s' for %s is out of range: expected %g..%g",
				   s, opt, min, max);
	*out = v;
	return 0;
}

int parse_choice(const char *cmd, const char *opt, const char *s,
		 const char *const *choices, int *out)
{
	char list[256] = "";
	size_t len = 0;

	for (int i = 0; choices[i]; i++) {
		if (s && strcmp(s, choices[i]) == 0) {
			*out = i;
			return 0;
		}
		len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0,
					"%s%s", i ? "|" : "", choices[i]);
	}
	return usage_error(cmd, "invalid value '%s' for %s: expected %s", s ? s : "", opt, list);
}
