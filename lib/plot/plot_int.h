/* SPDX-License-Identifier: MIT */
/* Shared by the files of lib/plot: page geometry and series storage. */
#ifndef RDMAKIT_PLOT_INT_H
#define RDMAKIT_PLOT_INT_H

#include <stdio.h>

#include "plot.h"

/* Data values a picture takes: finite and within +-PLOT_VALUE_MAX (axis
 * arithmetic stays finite); a document with others is refused. */
#define PLOT_VALUE_MAX 1e15
/* A JSON number member of o within the limit, else NAN. */
double plot_num(const json_t *o, const char *key);
/* Ends s at the last whole UTF-8 character (after a cut by a precision). */
void plot_utf8_trim(char *s);

/* Sets the panels' plot areas, stacked, each `share[i]` of the height. */
void plot_arrange(struct plot_layout *l, const double *share);
/* Places every tick and point of the layout on the page. */
void plot_place(struct plot_layout *l);
/* A new series of panel p with room for cap points; NULL with err. */
struct plot_series *plot_add_series(struct plot_panel *p, const char *label,
				    enum plot_style style, int color, size_t cap, char *err);

/* The seq kind (seq.c): the sequence graph of QP qp (-1: the busiest). */
int plot_build_seq(struct plot_layout *l, const struct plot_input *in, long qp, char *err);

/* The incast kind (incast.c): per-flow goodput and the FCT CDF. */
int plot_build_incast(struct plot_layout *l, const struct plot_input *in, size_t nin, char *err);

#endif
