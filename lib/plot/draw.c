// SPDX-License-Identifier: MIT
/*
 * A layout drawn with cairo: SVG and PDF through cairo's vector surfaces,
 * PNG through an image surface at one pixel per point.  Text goes through
 * cairo's font selection (fontconfig: DejaVu Sans on Debian).  The file is
 * written beside its final name and renamed into place once complete.
 */
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot_int.h"

/* Colour-blind safe (Okabe and Ito). */
static const double palette[][3] = {
	{ 0.00, 0.45, 0.70 }, { 0.90, 0.62, 0.00 }, { 0.00, 0.62, 0.45 }, { 0.80, 0.47, 0.65 },
	{ 0.34, 0.71, 0.91 }, { 0.84, 0.37, 0.00 }, { 0.94, 0.89, 0.26 }, { 0.00, 0.00, 0.00 },
};
#define NCOLORS (sizeof(palette) / sizeof(palette[0]))

static void color(cairo_t *cr, int i, double alpha)
{
	const double *c = palette[(size_t)i % NCOLORS];

	cairo_set_source_rgba(cr, c[0], c[1], c[2], alpha);
}

/* Past the palette, series repeat its colours with a dash of their own. */
static void dash(cairo_t *cr, int i, double scale)
{
	static const double dashes[][2] = { { 0, 0 }, { 8, 4 }, { 2, 3 }, { 10, 3 } };
	const double *d = dashes[((size_t)i / NCOLORS) % 4];
	double on_off[2] = { d[0] * scale, d[1] * scale };

	cairo_set_dash(cr, on_off, d[0] ? 2 : 0, 0);
}

/* Text with its anchor: ax, ay in 0..1 of its extents (0.5, 0.5: centred). */
static void text(cairo_t *cr, const char *s, double x, double y, double ax, double ay)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - e.x_bearing - ax * e.width, y - e.y_bearing - ay * e.height);
	cairo_show_text(cr, s);
}

static void axes(cairo_t *cr, const struct plot_layout *l, const struct plot_panel *p)
{
	const struct plot_rect *a = &p->area;
	double fs = l->height * 0.022;

	cairo_set_line_width(cr, 1);
	cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
	for (size_t i = 0; i < p->x.nticks; i++) {
		cairo_move_to(cr, p->x.ticks[i].page, a->y);
		cairo_line_to(cr, p->x.ticks[i].page, a->y + a->h);
	}
	for (size_t i = 0; i < p->y.nticks; i++) {
		cairo_move_to(cr, a->x, p->y.ticks[i].page);
		cairo_line_to(cr, a->x + a->w, p->y.ticks[i].page);
	}
	cairo_stroke(cr);
	cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
	cairo_rectangle(cr, a->x, a->y, a->w, a->h);
	cairo_stroke(cr);
	cairo_set_font_size(cr, fs);
	for (size_t i = 0; i < p->x.nticks; i++)
		text(cr, p->x.ticks[i].label, p->x.ticks[i].page, a->y + a->h + fs * 0.5, 0.5, 0);
	for (size_t i = 0; i < p->y.nticks; i++)
		text(cr, p->y.ticks[i].label, a->x - fs * 0.5, p->y.ticks[i].page, 1, 0.5);
	text(cr, p->x.label, a->x + a->w / 2, a->y + a->h + fs * 1.9, 0.5, 0);
	cairo_save(cr);
	cairo_translate(cr, a->x - fs * 3.6, a->y + a->h / 2);
	cairo_rotate(cr, -M_PI / 2);
	text(cr, p->y.label, 0, 0, 0.5, 0.5);
	cairo_restore(cr);
}

/* One mark of a PLOT_MARKS series, r the half size. */
static void marker(cairo_t *cr, enum plot_marker m, double x, double y, double r)
{
	switch (m) {
	case PLOT_DOT:
		cairo_arc(cr, x, y, r * 0.6, 0, 2 * M_PI);
		cairo_fill(cr);
		return;
	case PLOT_CROSS:
		cairo_move_to(cr, x - r, y - r), cairo_line_to(cr, x + r, y + r);
		cairo_move_to(cr, x - r, y + r), cairo_line_to(cr, x + r, y - r);
		break;
	case PLOT_PLUS:
		cairo_move_to(cr, x - r, y), cairo_line_to(cr, x + r, y);
		cairo_move_to(cr, x, y - r), cairo_line_to(cr, x, y + r);
		break;
	case PLOT_TRIANGLE:
		cairo_move_to(cr, x, y - r), cairo_line_to(cr, x + r, y + r);
		cairo_line_to(cr, x - r, y + r), cairo_close_path(cr);
		break;
	case PLOT_SQUARE:
		cairo_rectangle(cr, x - r, y - r, 2 * r, 2 * r);
		break;
	case PLOT_DIAMOND:
		cairo_move_to(cr, x, y - r), cairo_line_to(cr, x + r, y);
		cairo_line_to(cr, x, y + r), cairo_line_to(cr, x - r, y), cairo_close_path(cr);
		break;
	}
	cairo_stroke(cr);
}

static void series(cairo_t *cr, const struct plot_panel *p, const struct plot_series *s,
		   double scale)
{
	const struct plot_rect *a = &p->area;
	double base = a->y + a->h;

	cairo_save(cr);
	cairo_rectangle(cr, a->x, a->y, a->w, a->h);
	cairo_clip(cr);
	if (s->style == PLOT_BARS) {
		color(cr, s->color, 0.55);
		for (size_t k = 0; k < s->n; k++) {
			const struct plot_point *pt = &s->p[k];
			double x0 = plot_axis_map(&p->x, pt->x - pt->xw / 2, a->x, a->x + a->w);
			double x1 = plot_axis_map(&p->x, pt->x + pt->xw / 2, a->x, a->x + a->w);

			cairo_rectangle(cr, x0, pt->py, fmax(x1 - x0, 0.8 * scale), base - pt->py);
		}
		cairo_fill(cr);
		cairo_restore(cr);
		return;
	}
	if (s->style == PLOT_MARKS) {
		color(cr, s->color, 1);
		cairo_set_line_width(cr, 1.2 * scale);
		for (size_t k = 0; k < s->n; k++)
			marker(cr, s->marker, s->p[k].px, s->p[k].py, 3.5 * scale);
		cairo_restore(cr);
		return;
	}
	color(cr, s->color, 1);
	cairo_set_line_width(cr, 2 * scale);
	dash(cr, s->color, scale);
	for (size_t k = 0; k < s->n; k++) {
		const struct plot_point *pt = &s->p[k];

		if (k == 0 && s->style == PLOT_CDF)
			cairo_move_to(cr, pt->px, base), cairo_line_to(cr, pt->px, pt->py);
		else if (k == 0)
			cairo_move_to(cr, pt->px, pt->py);
		else if (s->style == PLOT_CDF)
			cairo_line_to(cr, pt->px, s->p[k - 1].py), cairo_line_to(cr, pt->px, pt->py);
		else if (s->style == PLOT_STEPS)
			cairo_line_to(cr, s->p[k - 1].px, pt->py), cairo_line_to(cr, pt->px, pt->py);
		else
			cairo_line_to(cr, pt->px, pt->py);
	}
	cairo_stroke(cr);
	dash(cr, 0, scale);
	if (s->style == PLOT_LINES)
		for (size_t k = 0; k < s->n; k++) {
			cairo_arc(cr, s->p[k].px, s->p[k].py, 3 * scale, 0, 2 * M_PI);
			cairo_fill(cr);
		}
	cairo_restore(cr);
}

/* The legend in the top left corner of the first panel, in as many
 * columns as its height needs: one entry per series of that panel (the
 * second panel's series are the same runs). */
static void legend(cairo_t *cr, const struct plot_layout *l)
{
	const struct plot_panel *p = &l->panels[0];
	double fs = l->height * 0.02, step = fs * 1.5, w = 0;
	size_t rows = (size_t)fmax(1, floor((p->area.h - fs * 2) / step)), cols;
	cairo_text_extents_t e;

	if (!p->nseries)
		return;
	cairo_set_font_size(cr, fs);
	for (size_t s = 0; s < p->nseries; s++) {
		cairo_text_extents(cr, p->series[s].label, &e);
		w = fmax(w, e.x_advance);
	}
	w += fs * 3;
	rows = rows < p->nseries ? rows : p->nseries;
	cols = (p->nseries + rows - 1) / rows;
	cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
	cairo_rectangle(cr, p->area.x + fs * 0.5, p->area.y + fs * 0.5, w * (double)cols + fs,
			(double)rows * step + fs * 0.5);
	cairo_fill(cr);
	for (size_t s = 0; s < p->nseries; s++) {
		double x = p->area.x + fs + w * (double)(s / rows);
		double y = p->area.y + fs + step * (double)(s % rows);

		color(cr, p->series[s].color, 1);
		if (p->series[s].style == PLOT_MARKS) {
			cairo_set_line_width(cr, fs * 0.1);
			marker(cr, p->series[s].marker, x + fs * 0.75, y + fs * 0.5, fs * 0.35);
		} else {
			cairo_set_line_width(cr, fs * 0.35);
			dash(cr, p->series[s].color, fs / 13);
			cairo_move_to(cr, x, y + fs * 0.5);
			cairo_line_to(cr, x + fs * 1.5, y + fs * 0.5);
			cairo_stroke(cr);
			dash(cr, 0, 1);
		}
		cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
		text(cr, p->series[s].label, x + fs * 2, y + fs * 0.5, 0, 0.5);
	}
}

static void render(cairo_t *cr, const struct plot_layout *l)
{
	double scale = l->height / 640.0;

	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
	cairo_set_font_size(cr, l->height * 0.03);
	cairo_set_source_rgb(cr, 0, 0, 0);
	text(cr, l->title, l->width / 2, l->height * 0.025, 0.5, 0);
	cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, l->height * 0.02);
	cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
	text(cr, l->subtitle, l->width / 2, l->height * 0.07, 0.5, 0);
	for (size_t i = 0; i < l->npanels; i++) {
		axes(cr, l, &l->panels[i]);
		for (size_t s = 0; s < l->panels[i].nseries; s++)
			series(cr, &l->panels[i], &l->panels[i].series[s], scale);
	}
	legend(cr, l);
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS
						    : CAIRO_STATUS_WRITE_ERROR;
}

/* The picture into an open file: 0, or -1 (cairo's error in err). */
static int draw_to(const struct plot_layout *l, enum plot_format fmt, FILE *f, char *err)
{
	cairo_surface_t *sf;
	cairo_status_t st;
	cairo_t *cr;

	if (fmt == PLOT_FMT_SVG)
		sf = cairo_svg_surface_create_for_stream(to_file, f, l->width, l->height);
	else if (fmt == PLOT_FMT_PDF)
		sf = cairo_pdf_surface_create_for_stream(to_file, f, l->width, l->height);
	else
		sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)lround(l->width),
						(int)lround(l->height));
	cr = cairo_create(sf);
	render(cr, l);
	st = cairo_status(cr);
	cairo_destroy(cr);
	if (st == CAIRO_STATUS_SUCCESS && fmt == PLOT_FMT_PNG)
		st = cairo_surface_write_to_png_stream(sf, to_file, f);
	cairo_surface_finish(sf);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(sf);
	cairo_surface_destroy(sf);
	if (st != CAIRO_STATUS_SUCCESS) {
		snprintf(err, PLOT_ERR_LEN, "drawing: %s", cairo_status_to_string(st));
		errno = EIO;
		return -1;
	}
	return 0;
}

int plot_draw(const struct plot_layout *l, enum plot_format fmt, const char *path, char *err)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 16);
	FILE *f = NULL;
	int fd, e;

	if (!tmp) {
		snprintf(err, PLOT_ERR_LEN, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	snprintf(tmp, n + 16, "%s.tmp-XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd >= 0) {
		/* mkstemp makes it 0600: the picture gets what any new file would. */
		mode_t mask = umask(0);

		umask(mask);
		(void)fchmod(fd, 0666 & ~mask);
	}
	if (fd < 0 || !(f = fdopen(fd, "wb"))) {
		e = errno;
		snprintf(err, PLOT_ERR_LEN, "%s: %s (choose a writable place with -o)", path,
			 strerror(e));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		errno = e;
		return -1;
	}
	if (draw_to(l, fmt, f, err) < 0) {
		e = errno;
		fclose(f);
		goto fail;
	}
	e = fflush(f) != 0 || fsync(fd) != 0 ? errno : 0;
	if (fclose(f) != 0 && !e)
		e = errno;
	if (e) {
		snprintf(err, PLOT_ERR_LEN, "%s: %s", path, strerror(e));
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		e = errno;
		snprintf(err, PLOT_ERR_LEN, "%s: %s", path, strerror(e));
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	unlink(tmp);
	free(tmp);
	errno = e;
	return -1;
}

void plot_release(void)
{
	cairo_debug_reset_static_data();
	FcFini();
}
