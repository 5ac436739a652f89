/* SPDX-License-Identifier: MIT */
/*
 * Pictures of rdmakit's JSON (`rdmakit plot`).  A picture is first a
 * layout: panels with their axes (scale, range, ticks at round values),
 * series with every point in data and in page coordinates, the title and
 * the legend; then the layout is drawn with cairo (SVG, PNG or PDF).  The
 * layout is what the tests read back (plot_layout_json): cairo's SVG draws
 * text as glyph outlines, and a picture is checked by where its points are.
 *
 * Nothing here prints or exits; errors come back as one line in err.
 */
#ifndef RDMAKIT_PLOT_H
#define RDMAKIT_PLOT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define PLOT_ERR_LEN 256
#define PLOT_MAX_TICKS 24
#define PLOT_MAX_PANELS 2
#define PLOT_MAX_SERIES 32

enum plot_scale {
	PLOT_LINEAR,
	PLOT_LOG2,	/* message sizes: ticks at powers of 2, "2", "1K", "64K", "8M" */
	PLOT_NINES,	/* percentiles: x = -log10(1 - p), ticks 0, 90, 99, 99.9, ... */
	PLOT_LOG10,	/* latencies: ticks at 1, 2 and 5 times powers of ten */
};

struct plot_tick {
	double value;		/* in data units */
	double page;		/* where it falls on the page (x or y) */
	char label[16];
};

struct plot_axis {
	char label[64];		/* with its unit: "bandwidth (Gb/s)" */
	enum plot_scale scale;
	double min, max;	/* the range drawn, in data units */
	struct plot_tick ticks[PLOT_MAX_TICKS];
	size_t nticks;
};

/* PLOT_STEPS: each point's y holds from the previous point's x on (a
 * percentile curve); PLOT_CDF: from its own x on (a CDF). */
enum plot_style { PLOT_LINES, PLOT_STEPS, PLOT_BARS, PLOT_MARKS, PLOT_CDF };

/* The shape drawn at each point of a PLOT_MARKS series. */
enum plot_marker { PLOT_DOT, PLOT_CROSS, PLOT_TRIANGLE, PLOT_SQUARE, PLOT_DIAMOND, PLOT_PLUS };

struct plot_point {
	double x, y;		/* data */
	double xw;		/* bars: the width in data units, centred on x; else 0 */
	double px, py;		/* page: points (vector) or pixels (PNG) from the top left */
};

struct plot_series {
	char label[96];
	enum plot_style style;
	struct plot_point *p;	/* owned */
	size_t n;
	int color;		/* index into the palette */
	enum plot_marker marker;	/* PLOT_MARKS */
};

/* A rectangle on the page: the plot area of a panel. */
struct plot_rect {
	double x, y, w, h;
};

struct plot_panel {
	struct plot_axis x, y;
	struct plot_rect area;
	struct plot_series series[PLOT_MAX_SERIES];
	size_t nseries;
};

enum plot_kind { PLOT_KIND_NONE, PLOT_KIND_BW, PLOT_KIND_LAT, PLOT_KIND_SEQ, PLOT_KIND_INCAST };

struct plot_layout {
	enum plot_kind kind;
	double width, height;	/* page size */
	char title[160];
	char subtitle[160];
	struct plot_panel panels[PLOT_MAX_PANELS];
	size_t npanels;
};

/* ---- building a layout ----------------------------------------------------- */

/* One input document (rdmakit's JSON) and what to call its series.  A
 * capture's JSON lines come as one object: {"capture_packets": [...],
 * "capture_summary": {...}} (plot_read_documents makes it). */
struct plot_input {
	json_t *doc;		/* borrowed */
	const char *name;	/* the file it came from, for errors */
	const char *label;	/* --label, or NULL: from the run's parameters */
};

/* Packets of a capture read at most (capture -c or a filter for more). */
#define PLOT_MAX_PACKETS 1000000

/*
 * The document in buf: one JSON document, or a capture's JSON lines (one
 * object per packet, then its summary) gathered as above.  A new
 * reference, or NULL with err (not JSON, several documents that are not a
 * capture's, too many packets).
 */
json_t *plot_read_documents(const char *buf, size_t len, const char *name, char *err);

/* For --kind seq: which QP (the data's destination QP number; -1: the
 * busiest). */
struct plot_options {
	long qp;
};

/* "bw", "lat": the kind a document is, or PLOT_KIND_NONE with err saying
 * why (not rdmakit's JSON, or a command plot does not draw). */
enum plot_kind plot_kind_of(const json_t *doc, const char *name, char *err);
enum plot_kind plot_kind_parse(const char *s);
const char *plot_kind_name(enum plot_kind k);

/*
 * The layout of `kind` for the inputs (overlaid as series), on a page of
 * width x height: 0, or -1 with err (a document that does not fit the
 * kind, one with no results).  plot_layout_free releases it.
 */
int plot_build(struct plot_layout *l, enum plot_kind kind, const struct plot_input *in,
	       size_t nin, double width, double height, const struct plot_options *opt,
	       char *err);
void plot_layout_free(struct plot_layout *l);

/* ---- axes (axis.c) ------------------------------------------------------------ */

/* Sets the range to cover [lo, hi] at round values and places ticks on it
 * (labels included), for the scale already set. */
void plot_axis_fit(struct plot_axis *a, double lo, double hi);
/* Where v falls on the page along an axis spanning page [p0, p1] (p1 may
 * be less than p0: y grows downwards). */
double plot_axis_map(const struct plot_axis *a, double v, double p0, double p1);
/* The axis's ticks placed along [p0, p1]. */
void plot_axis_place(struct plot_axis *a, double p0, double p1);
/* "2", "512", "1K", "64K", "8M", "1G": a byte count on a log2 axis. */
void plot_size_label(double bytes, char *out, size_t cap);

/* ---- output ------------------------------------------------------------------- */

enum plot_format { PLOT_FMT_NONE, PLOT_FMT_SVG, PLOT_FMT_PNG, PLOT_FMT_PDF };

/* By the file name's extension (.svg, .png, .pdf), case-insensitive. */
enum plot_format plot_format_of(const char *path);

/*
 * Draws the layout into `path` in `fmt`: written beside it and renamed into
 * place, so that a failure leaves no partial file.  0, or -1 with err
 * (errno set: the file system's reason, or EIO for cairo's).
 */
int plot_draw(const struct plot_layout *l, enum plot_format fmt, const char *path, char *err);

/* Releases what cairo and fontconfig keep for the life of the process
 * (font caches): once nothing is drawing any more, before exit, so that a
 * leak checker sees only real leaks. */
void plot_release(void);

/* The page a picture gets unless told (plot --size). */
#define PLOT_DEFAULT_WIDTH 1000
#define PLOT_DEFAULT_HEIGHT 640

/* The picture of one document (a run's, for --plot) into path, its format
 * by the extension, its kind guessed, at the default size: 0, or -1 with
 * err. */
int plot_document(const json_t *doc, const char *name, const char *path, char *err);

/* The layout as JSON (--dump-layout): a new reference. */
json_t *plot_layout_json(const struct plot_layout *l);

#endif
