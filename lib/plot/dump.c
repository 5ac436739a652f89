// SPDX-License-Identifier: MIT
/*
 * The layout as JSON (rdmakit plot --dump-layout): what the picture holds,
 * for tests and for anyone who wants the numbers where they were drawn.
 */
#include "plot.h"

static const char *scale_name(enum plot_scale s)
{
	switch (s) {
	case PLOT_LOG2: return "log2";
	case PLOT_NINES: return "nines";
	case PLOT_LOG10: return "log10";
	case PLOT_LINEAR: break;
	}
	return "linear";
}

static const char *style_name(enum plot_style s)
{
	static const char *const names[] = {
		[PLOT_LINES] = "lines", [PLOT_STEPS] = "steps", [PLOT_BARS] = "bars",
		[PLOT_MARKS] = "marks", [PLOT_CDF] = "cdf",
	};

	return names[s];
}

static const char *marker_name(enum plot_marker m)
{
	static const char *const names[] = { "dot", "cross", "triangle", "square", "diamond",
					     "plus" };

	return names[m];
}

static json_t *axis_json(const struct plot_axis *a)
{
	json_t *ticks = json_array();

	for (size_t i = 0; i < a->nticks; i++)
		json_array_append_new(ticks, json_pack("{s:f, s:s, s:f}", "value", a->ticks[i].value,
						       "label", a->ticks[i].label, "page",
						       a->ticks[i].page));
	return json_pack("{s:s, s:s, s:f, s:f, s:o}", "label", a->label, "scale",
			 scale_name(a->scale), "min", a->min, "max", a->max, "ticks", ticks);
}

static json_t *series_json(const struct plot_series *s)
{
	json_t *pts = json_array();

	for (size_t k = 0; k < s->n; k++) {
		const struct plot_point *p = &s->p[k];
		json_t *o = json_pack("{s:f, s:f, s:f, s:f}", "x", p->x, "y", p->y, "px", p->px,
				      "py", p->py);

		if (s->style == PLOT_BARS)
			json_object_set_new(o, "width", json_real(p->xw));
		json_array_append_new(pts, o);
	}
	json_t *o = json_pack("{s:s, s:s, s:i, s:o}", "label", s->label, "style",
			      style_name(s->style), "color", s->color, "points", pts);

	if (s->style == PLOT_MARKS)
		json_object_set_new(o, "marker", json_string(marker_name(s->marker)));
	return o;
}

json_t *plot_layout_json(const struct plot_layout *l)
{
	json_t *panels = json_array(), *legend = json_array();

	for (size_t i = 0; i < l->npanels; i++) {
		const struct plot_panel *p = &l->panels[i];
		json_t *series = json_array();

		for (size_t s = 0; s < p->nseries; s++)
			json_array_append_new(series, series_json(&p->series[s]));
		json_array_append_new(panels, json_pack(
			"{s:{s:f, s:f, s:f, s:f}, s:o, s:o, s:o}", "area", "x", p->area.x, "y",
			p->area.y, "w", p->area.w, "h", p->area.h, "x", axis_json(&p->x), "y",
			axis_json(&p->y), "series", series));
	}
	if (l->npanels)
		for (size_t s = 0; s < l->panels[0].nseries; s++)
			json_array_append_new(legend, json_string(l->panels[0].series[s].label));
	return json_pack("{s:s, s:f, s:f, s:s, s:s, s:o, s:o}", "kind", plot_kind_name(l->kind),
			 "width", l->width, "height", l->height, "title", l->title, "subtitle",
			 l->subtitle, "legend", legend, "panels", panels);
}
