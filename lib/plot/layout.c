// SPDX-License-Identifier: MIT
/*
 * The page: where the panels go, and every tick and point placed on it.
 * Sizes scale with the page so that a small PNG and a large PDF look alike.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plot_int.h"

/* Panels stacked top to bottom; `share` is each one's part of the height. */
void plot_arrange(struct plot_layout *l, const double *share)
{
	double left = 0.085 * l->width, right = 0.045 * l->width;
	double top = 0.12 * l->height, bottom = 0.085 * l->height, gap = 0.09 * l->height;
	double h = l->height - top - bottom - gap * (double)(l->npanels - 1), y = top;

	for (size_t i = 0; i < l->npanels; i++) {
		struct plot_panel *p = &l->panels[i];

		p->area = (struct plot_rect){ left, y, l->width - left - right, h * share[i] };
		y += h * share[i] + gap;
	}
}

void plot_place(struct plot_layout *l)
{
	for (size_t i = 0; i < l->npanels; i++) {
		struct plot_panel *p = &l->panels[i];
		double x0 = p->area.x, x1 = p->area.x + p->area.w;
		double y0 = p->area.y + p->area.h, y1 = p->area.y;

		plot_axis_place(&p->x, x0, x1);
		plot_axis_place(&p->y, y0, y1);
		for (size_t s = 0; s < p->nseries; s++)
			for (size_t k = 0; k < p->series[s].n; k++) {
				struct plot_point *pt = &p->series[s].p[k];

				pt->px = plot_axis_map(&p->x, pt->x, x0, x1);
				pt->py = plot_axis_map(&p->y, pt->y, y0, y1);
			}
	}
}

struct plot_series *plot_add_series(struct plot_panel *p, const char *label,
				    enum plot_style style, int color, size_t cap, char *err)
{
	struct plot_series *s;

	if (p->nseries == PLOT_MAX_SERIES) {
		snprintf(err, PLOT_ERR_LEN, "too many series: at most %d in one picture",
			 PLOT_MAX_SERIES);
		return NULL;
	}
	s = &p->series[p->nseries];
	memset(s, 0, sizeof(*s));
	s->p = calloc(cap ? cap : 1, sizeof(*s->p));
	if (!s->p) {
		snprintf(err, PLOT_ERR_LEN, "out of memory");
		return NULL;
	}
	snprintf(s->label, sizeof(s->label), "%s", label);
	s->style = style;
	s->color = color;
	p->nseries++;
	return s;
}

void plot_layout_free(struct plot_layout *l)
{
	for (size_t i = 0; i < l->npanels; i++)
		for (size_t s = 0; s < l->panels[i].nseries; s++)
			free(l->panels[i].series[s].p);
	memset(l, 0, sizeof(*l));
}

enum plot_format plot_format_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot || strchr(dot, '/'))
		return PLOT_FMT_NONE;
	if (!strcasecmp(dot, ".svg"))
		return PLOT_FMT_SVG;
	if (!strcasecmp(dot, ".png"))
		return PLOT_FMT_PNG;
	if (!strcasecmp(dot, ".pdf"))
		return PLOT_FMT_PDF;
	return PLOT_FMT_NONE;
}

double plot_num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	double d = json_is_number(v) ? json_number_value(v) : NAN;

	return isfinite(d) && fabs(d) <= PLOT_VALUE_MAX ? d : NAN;
}

void plot_utf8_trim(char *s)
{
	size_t n = strlen(s), lead = n, need;
	unsigned char c;

	while (lead > 0 && ((unsigned char)s[lead - 1] & 0xC0) == 0x80)
		lead--;
	if (lead == 0)
		return;
	c = (unsigned char)s[lead - 1];
	need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	if (n - (lead - 1) < need)
		s[lead - 1] = '\0';	/* a character cut short */
}
