// SPDX-License-Identifier: MIT
/*
 * rdmakit plot: a picture of what rdmakit's JSON holds (bw sweeps, latency
 * distributions), drawn with cairo into SVG, PNG or PDF.  The drawing is
 * in lib/plot; here: the options, reading the documents, and errors.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cmd.h"
#include "plot.h"

enum {
	OPT_KIND = OPT_LONG_ONLY + 1,
	OPT_SIZE,
	OPT_LABEL,
	OPT_DUMP,
	OPT_QP,
};

static const struct opt_spec plot_opts[] = {
	{ "output", 'o', "FILE", "write the picture to FILE: .svg, .png or .pdf" },
	{ "kind", OPT_KIND, "KIND", "bw, lat, incast or seq (default: from the document)" },
	{ "qp", OPT_QP, "QPN", "seq: the QP whose requests to draw (default: the busiest)" },
	{ "size", OPT_SIZE, "WxH", "page size, pixels for PNG, points otherwise (default 1000x640)" },
	{ "label", OPT_LABEL, "TEXT", "the next FILE's series label (repeat, in file order)" },
	{ "dump-layout", OPT_DUMP, NULL, "print the layout (axes, ticks, points) as JSON" },
	OPTS_END,
};

static const struct cmd_usage plot_usage = {
	.cmd = "plot",
	.synopsis = "-o FILE [--kind KIND] [--qp QPN] [--size WxH] [--label TEXT]... FILE...\n"
		    "       rdmakit plot --dump-layout [-o FILE] FILE...",
	.description = "Draw what 'rdmakit -j bw', '-j lat', '-j incast' or '-j capture' wrote: a\n"
		       "bandwidth and message rate sweep against message size, a latency\n"
		       "distribution on a percentile axis with its histogram, per-flow goodput with\n"
		       "the flow completion time CDF, or a QP's sequence graph (PSN against time,\n"
		       "with retransmissions, NAKs, CNPs and CE marks).  Several FILEs (not seq)\n"
		       "overlay as series; '-' reads standard input.  The format follows -o's\n"
		       "extension.",
	.opts = plot_opts,
};

#define MAX_FILES PLOT_MAX_SERIES

struct plot_cli {
	const char *out;
	const char *kind;
	double width, height;
	const char *labels[MAX_FILES];
	size_t nlabels;
	bool dump, pretty;
	struct plot_options po;
};

static int parse_size(const char *arg, double *w, double *h)
{
	const char *s = arg;
	char *end;
	long x = strtol(s, &end, 10), y;

	if (end == s || (*end != 'x' && *end != 'X'))
		goto bad;
	s = end + 1;
	y = strtol(s, &end, 10);
	if (end == s || *end || x < 200 || y < 150 || x > 10000 || y > 10000)
		goto bad;
	*w = (double)x;
	*h = (double)y;
	return 0;
bad:
	return usage_error("plot", "--size '%s': give WIDTHxHEIGHT, 200x150 to 10000x10000 "
			   "(e.g. 1000x640)", arg);
}

static int plot_opt(void *ctx, int key, const char *arg)
{
	struct plot_cli *o = ctx;

	switch (key) {
	case 'o':
		o->out = arg;
		break;
	case OPT_KIND:
		if (plot_kind_parse(arg) == PLOT_KIND_NONE)
			return usage_error("plot", "--kind '%s': give bw, lat, incast or seq", arg);
		o->kind = arg;
		break;
	case OPT_QP: {
		uint64_t v;
		int rc = parse_u64("plot", "--qp", arg, 0, 0xffffff, false, &v);

		if (rc)
			return rc;
		o->po.qp = (long)v;
		break;
	}
	case OPT_SIZE:
		return parse_size(arg, &o->width, &o->height);
	case OPT_LABEL:
		if (o->nlabels == MAX_FILES)
			return usage_error("plot", "more than %d --label: one per FILE", MAX_FILES);
		o->labels[o->nlabels++] = arg;
		break;
	case OPT_DUMP:
		o->dump = true;
		break;
	default:
		return EXIT_USAGE;
	}
	return 0;
}

/* Input read at most: a capture's JSON lines of PLOT_MAX_PACKETS packets
 * fit several times over. */
#define MAX_INPUT (1024UL * 1024 * 1024)

/* The whole of a file or stdin, malloc'd: its length, or -1 with errno
 * (EFBIG past MAX_INPUT). */
static ssize_t slurp(FILE *f, char **out)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), *grown;
	size_t n;

	if (!buf)
		return -1;
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len < cap)
			continue;
		if (cap >= MAX_INPUT) {
			free(buf);
			errno = EFBIG;
			return -1;
		}
		grown = realloc(buf, cap * 2);
		if (!grown) {
			free(buf);
			return -1;
		}
		buf = grown;
		cap *= 2;
	}
	if (ferror(f)) {
		free(buf);
		errno = EIO;
		return -1;
	}
	*out = buf;
	return (ssize_t)len;
}

/* A document from a file or stdin: NULL after printing why, with *rc the
 * exit code (2 for what is not a JSON document rdmakit wrote, 3 for a file
 * that cannot be read). */
static json_t *load(const char *path, int *rc)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char err[PLOT_ERR_LEN], *buf = NULL;
	json_t *doc;
	ssize_t n;

	if (!f) {
		*rc = runtime_error("plot", "%s: %s", path, strerror(errno));
		return NULL;
	}
	n = slurp(f, &buf);
	if (n < 0)
		*rc = runtime_error("plot", "%s: %s", path, errno == EFBIG ? "larger than 1 GiB: "
				    "plot a part of it" : strerror(errno));
	if (f != stdin)
		fclose(f);
	if (n < 0)
		return NULL;
	doc = plot_read_documents(buf, (size_t)n, path, err);
	free(buf);
	if (!doc)
		*rc = usage_error("plot", "%s", err);
	return doc;
}

static int run(struct plot_cli *o, char **files, size_t n)
{
	struct plot_input in[MAX_FILES] = { { 0 } };
	struct plot_layout l;
	char err[PLOT_ERR_LEN];
	enum plot_kind kind;
	enum plot_format fmt = o->out ? plot_format_of(o->out) : PLOT_FMT_NONE;
	int rc = EXIT_OK;
	size_t i;

	for (i = 0; i < n; i++) {
		in[i].doc = load(files[i], &rc);
		if (!in[i].doc)
			goto out;
		in[i].name = strcmp(files[i], "-") ? files[i] : "(stdin)";
		in[i].label = i < o->nlabels ? o->labels[i] : NULL;
	}
	kind = o->kind ? plot_kind_parse(o->kind) : plot_kind_of(in[0].doc, in[0].name, err);
	if (kind == PLOT_KIND_NONE ||
	    plot_build(&l, kind, in, n, o->width, o->height, &o->po, err) < 0) {
		rc = usage_error("plot", "%s", err);
		goto out;
	}
	if (o->dump) {
		json_t *j = plot_layout_json(&l);

		if (!j || json_dumpf(j, stdout, (o->pretty ? JSON_INDENT(2) : JSON_COMPACT) |
							JSON_REAL_PRECISION(12)) < 0) {
			rc = runtime_error("plot", "the layout could not be written as JSON");
			json_decref(j);
			plot_layout_free(&l);
			goto out;
		}
		fputc('\n', stdout);
		json_decref(j);
	}
	if (o->out && plot_draw(&l, fmt, o->out, err) < 0)
		rc = runtime_error("plot", "%s", err);
	plot_layout_free(&l);
	plot_release();
out:
	for (size_t k = 0; k < n; k++)
		json_decref(in[k].doc);
	return rc;
}

/* The checks on the options and operands before any work: 0, or the exit
 * code after printing why (shared with the option fuzzer). */
static int plot_checks(struct plot_cli *o, const struct global_opts *g, int nfiles)
{
	if (nfiles <= 0)
		return usage_error("plot", "no FILE: give the JSON of a run ('rdmakit -j bw -a ... "
				   ">bw.json'), or - for standard input");
	if (nfiles > MAX_FILES)
		return usage_error("plot", "%d files: at most %d series in one picture", nfiles,
				   MAX_FILES);
	/* -j: the document plot has to give is its layout. */
	o->dump |= g->json || g->pretty;
	o->pretty = g->pretty;
	if (!o->out && !o->dump)
		return usage_error("plot", "no -o FILE: name the picture (.svg, .png or .pdf), or "
				   "give --dump-layout");
	if (o->out && plot_format_of(o->out) == PLOT_FMT_NONE)
		return usage_error("plot", "-o %s: name the file .svg, .png or .pdf", o->out);
	if (o->nlabels > (size_t)nfiles)
		return usage_error("plot", "%zu --label for %d files: one per FILE at most",
				   o->nlabels, nfiles);
	return 0;
}

int cmd_plot(int argc, char **argv, const struct global_opts *gin)
{
	struct global_opts g = *gin;
	struct plot_cli o = { .width = PLOT_DEFAULT_WIDTH, .height = PLOT_DEFAULT_HEIGHT,
			      .po = { .qp = -1 } };
	int first, rc;

	rc = opts_parse(&plot_usage, argc, argv, &g, plot_opt, &o, &first);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	rc = plot_checks(&o, &g, argc - first);
	return rc ? rc : run(&o, argv + first, (size_t)(argc - first));
}
