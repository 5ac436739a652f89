// SPDX-License-Identifier: MIT
/*
 * lib/plot: axes (round ranges, tick labels, the log2 and nines scales),
 * layouts built from documents shaped as bw and lat write them (every
 * point where its value says), refusals, and pictures read back: a PNG of
 * the requested size with ink in its plot areas, and no file left behind
 * when the output cannot be written.
 */
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot.h"
#include "unit.h"

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-6 * fmax(1, fabs(b));
}

static void size_labels(struct unit *u)
{
	static const struct { double v; const char *want; } t[] = {
		{ 2, "2" }, { 512, "512" }, { 1024, "1K" }, { 65536, "64K" }, { 8388608, "8M" },
		{ 1073741824.0, "1G" }, { 3, "3" }, { 1536, "1536" },
	};
	char s[16];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		plot_size_label(t[i].v, s, sizeof(s));
		CHECK_STR(u, s, t[i].want);
	}
}

static void axes(struct unit *u)
{
	struct plot_axis a = { .scale = PLOT_LINEAR };

	plot_axis_fit(&a, 0, 11.4);
	CHECK(u, a.min == 0 && a.max == 15 && a.nticks == 4);
	CHECK_STR(u, a.ticks[3].label, "15");
	plot_axis_fit(&a, 0, 0.37);
	CHECK(u, near(a.max, 0.4) && a.nticks == 5);
	CHECK_STR(u, a.ticks[1].label, "0.1");
	/* Message sizes 2 B to 8 MiB: ticks every fourth power of two. */
	a.scale = PLOT_LOG2;
	plot_axis_fit(&a, 2, 8388608);
	CHECK(u, a.min == 2 && a.max == 8388608);
	CHECK_EQ(u, a.nticks, 6);
	CHECK_STR(u, a.ticks[1].label, "32");
	CHECK_STR(u, a.ticks[3].label, "8K");
	/* Percentiles of 2000 samples: 99.95 needs four nines. */
	a.scale = PLOT_NINES;
	plot_axis_fit(&a, 0, 99.95);
	CHECK(u, near(a.max, 99.99) && a.nticks == 5);
	CHECK_STR(u, a.ticks[0].label, "0%");
	CHECK_STR(u, a.ticks[3].label, "99.9%");
	CHECK_STR(u, a.ticks[4].label, "99.99%");
	/* Evenly: 90, 99 and 99.9 one step apart. */
	CHECK(u, near(plot_axis_map(&a, 99, 0, 400) - plot_axis_map(&a, 90, 0, 400), 100));
	CHECK(u, near(plot_axis_map(&a, 99.9, 0, 400), 300));
	/* Latencies 11 us to 158 us: 10 to 200. */
	a.scale = PLOT_LOG10;
	plot_axis_fit(&a, 11, 158);
	CHECK(u, a.min == 10 && a.max == 200 && a.nticks == 5);
	CHECK_STR(u, a.ticks[2].label, "50");
	plot_axis_fit(&a, 0.6, 3.5);
	CHECK(u, near(a.min, 0.5) && a.max == 5);
}

/* A bw -a document of sizes 2^0 .. 2^(n-1). */
static json_t *bw_doc(int n, double scale)
{
	json_t *res = json_array();

	for (int i = 0; i < n; i++) {
		double b = ldexp(1, i + 1);

		json_array_append_new(res, json_pack("{s:f, s:i, s:f, s:f}", "bytes", b,
						     "iterations", 100, "bw_avg_gbps",
						     scale * (i + 1), "msg_rate_mpps", 2.0 / (i + 1)));
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:i, s:i}, s:o, s:[]}", "rdmakit", "0.2.0",
			 "command", "bw", "params", "op", "write", "engine", "soft", "qps", 1,
			 "mtu_bytes", 1024, "results", res, "errors");
}

static json_t *lat_doc(void)
{
	json_t *h = json_array();

	for (int i = 0; i < 40; i++)
		json_array_append_new(h, json_pack("{s:f, s:f, s:i}", "from_us", 10.0 + i,
						   "to_us", 10.999 + i, "count", i < 30 ? 50 : 1));
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:[{s:i, s:o}]}", "rdmakit", "0.2.0",
			 "command", "lat", "params", "op", "send", "engine", "soft", "results",
			 "bytes", 64, "histogram", h);
}

/* Where a value lies along an axis, 0 to 1, worked out here from the
 * scale's definition (not with the code under test). */
static double frac(const struct plot_axis *a, double v)
{
	switch (a->scale) {
	case PLOT_LOG2: return (log2(v) - log2(a->min)) / (log2(a->max) - log2(a->min));
	case PLOT_LOG10: return (log10(v) - log10(a->min)) / (log10(a->max) - log10(a->min));
	case PLOT_NINES: return -log10(1 - v / 100) / -log10(1 - a->max / 100);
	case PLOT_LINEAR: break;
	}
	return (v - a->min) / (a->max - a->min);
}

/* Every point at the page position its values give, on both axes. */
static bool points_placed(const struct plot_panel *p)
{
	for (size_t s = 0; s < p->nseries; s++)
		for (size_t k = 0; k < p->series[s].n; k++) {
			const struct plot_point *pt = &p->series[s].p[k];
			double fx = (pt->px - p->area.x) / p->area.w;
			double fy = (p->area.y + p->area.h - pt->py) / p->area.h;

			if (!near(fx, frac(&p->x, pt->x)) || !near(fy, frac(&p->y, pt->y)))
				return false;
		}
	return true;
}

static void build_bw(struct unit *u)
{
	json_t *a = bw_doc(23, 0.5), *b = bw_doc(10, 1.0);
	struct plot_input in[2] = { { a, "a.json", NULL }, { b, "b.json", "second" } };
	struct plot_layout l;
	char err[PLOT_ERR_LEN] = "";

	CHECK_EQ(u, plot_kind_of(a, "a.json", err), PLOT_KIND_BW);
	CHECK_EQ(u, plot_build(&l, PLOT_KIND_BW, in, 2, 1000, 640, NULL, err), 0);
	CHECK_EQ(u, l.npanels, 2);
	CHECK(u, l.panels[0].nseries == 2 && l.panels[0].series[0].n == 23 &&
		 l.panels[0].series[1].n == 10);
	CHECK_STR(u, l.panels[0].series[0].label, "WRITE, soft engine, MTU 1024, 1 QP");
	CHECK_STR(u, l.panels[0].series[1].label, "second");
	CHECK_STR(u, l.title, "rdmakit bw: WRITE, soft engine, MTU 1024, 1 QP");
	CHECK(u, points_placed(&l.panels[0]) && points_placed(&l.panels[1]));
	/* 11.5 Gb/s on a 0..15 axis; 2 B at the left edge. */
	CHECK(u, l.panels[0].y.max == 15 && near(l.panels[0].series[0].p[0].px, l.panels[0].area.x));
	plot_layout_free(&l);
	json_decref(a);
	json_decref(b);
}

static void build_lat(struct unit *u)
{
	json_t *d = lat_doc();
	struct plot_input in = { d, "lat.json", NULL };
	struct plot_layout l;
	char err[PLOT_ERR_LEN] = "";

	CHECK_EQ(u, plot_build(&l, PLOT_KIND_LAT, &in, 1, 800, 600, NULL, err), 0);
	CHECK(u, l.panels[0].series[0].n == 40 && l.panels[1].series[0].n == 40);
	CHECK_EQ(u, l.panels[0].series[0].style, PLOT_STEPS);
	CHECK_EQ(u, l.panels[1].series[0].style, PLOT_BARS);
	/* 1510 samples: the second-last bucket ends at 99.93%, so 4 nines. */
	CHECK(u, near(l.panels[0].x.max, 99.99));
	CHECK(u, near(l.panels[0].series[0].p[29].x, 100.0 * 1500 / 1510));
	/* The last bucket (100%) sits at the axis's end. */
	CHECK(u, near(l.panels[0].series[0].p[39].x, 99.99));
	CHECK(u, points_placed(&l.panels[0]) && points_placed(&l.panels[1]));
	plot_layout_free(&l);
	json_decref(d);
}

static void refusals(struct unit *u)
{
	json_t *other = json_pack("{s:i}", "a", 1);
	json_t *devices = json_pack("{s:s, s:s, s:{}, s:[]}", "rdmakit", "0.2.0", "command",
				    "devices", "params", "results");
	json_t *empty = json_pack("{s:s, s:s, s:{}, s:[], s:[{s:s}]}", "rdmakit", "0.2.0", "command",
				  "bw", "params", "results", "errors", "message", "peer gone");
	json_t *lat = lat_doc();
	struct plot_input in = { other, "x.json", NULL };
	struct plot_layout l;
	char err[PLOT_ERR_LEN];

	CHECK_EQ(u, plot_kind_of(other, "x.json", err), PLOT_KIND_NONE);
	CHECK_HAS(u, err, "x.json: not a JSON document rdmakit wrote");
	CHECK_EQ(u, plot_kind_of(devices, "d.json", err), PLOT_KIND_NONE);
	CHECK_HAS(u, err, "not 'devices'");
	CHECK_EQ(u, plot_build(&l, PLOT_KIND_BW, &in, 1, 1000, 640, NULL, err), -1);
	in = (struct plot_input){ empty, "e.json", NULL };
	CHECK_EQ(u, plot_build(&l, PLOT_KIND_BW, &in, 1, 1000, 640, NULL, err), -1);
	CHECK_STR(u, err, "e.json: the run failed, nothing to draw: peer gone");
	in = (struct plot_input){ lat, "lat.json", NULL };
	CHECK_EQ(u, plot_build(&l, PLOT_KIND_BW, &in, 1, 1000, 640, NULL, err), -1);
	CHECK_STR(u, err, "lat.json: a lat run cannot be drawn as --kind bw");
	json_decref(other);
	json_decref(devices);
	json_decref(empty);
	json_decref(lat);
}

/* The PNG read back: its size, colours, and ink inside each plot area. */
static void png_read_back(struct unit *u)
{
	json_t *d = bw_doc(12, 1.0);
	struct plot_input in = { d, "bw.json", NULL };
	struct plot_layout l;
	char err[PLOT_ERR_LEN], path[] = "/tmp/rdmakit-plot-XXXXXX.png";
	cairo_surface_t *s;
	int fd = mkstemps(path, 4);

	CHECK(u, fd >= 0);
	close(fd);
	CHECK_EQ(u, plot_build(&l, PLOT_KIND_BW, &in, 1, 640, 400, NULL, err), 0);
	CHECK_EQ(u, plot_draw(&l, PLOT_FMT_PNG, path, err), 0);
	s = cairo_image_surface_create_from_png(path);
	CHECK_EQ(u, cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
	if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
		int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
		int stride = cairo_image_surface_get_stride(s);
		const unsigned char *px = cairo_image_surface_get_data(s);
		uint32_t seen[64];
		size_t nseen = 0, ink[2] = { 0, 0 };

		CHECK(u, w == 640 && h == 400);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				uint32_t c;
				size_t k;

				memcpy(&c, px + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
				c &= 0xffffff;
				for (k = 0; k < nseen && seen[k] != c; k++)
					;
				if (k == nseen && nseen < 64)
					seen[nseen++] = c;
				for (int p = 0; p < 2; p++) {
					const struct plot_rect *a = &l.panels[p].area;

					if (x > a->x + 2 && x < a->x + a->w - 2 && y > a->y + 2 &&
					    y < a->y + a->h - 2 && c != 0xffffff)
						ink[p]++;
				}
			}
		CHECK(u, nseen > 8);
		CHECK(u, ink[0] > 500 && ink[1] > 500);
	}
	cairo_surface_destroy(s);
	unlink(path);
	plot_layout_free(&l);
	json_decref(d);
}

/* A place that cannot be written: -1 with errno, and nothing left there. */
static void unwritable(struct unit *u)
{
	json_t *d = bw_doc(4, 1.0);
	struct plot_input in = { d, "bw.json", NULL };
	struct plot_layout l;
	char err[PLOT_ERR_LEN], dir[] = "/tmp/rdmakit-plotdir-XXXXXX", path[64];

	CHECK(u, mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/no/such/dir.svg", dir);
	CHECK_EQ(u, plot_build(&l, PLOT_KIND_BW, &in, 1, 1000, 640, NULL, err), 0);
	CHECK_EQ(u, plot_draw(&l, PLOT_FMT_SVG, path, err), -1);
	CHECK_EQ(u, errno, ENOENT);
	CHECK_HAS(u, err, "No such file or directory");
	CHECK_EQ(u, rmdir(dir), 0);	/* empty: no partial file */
	CHECK_EQ(u, plot_format_of("a.PNG"), PLOT_FMT_PNG);
	CHECK_EQ(u, plot_format_of("a.svg.txt"), PLOT_FMT_NONE);
	CHECK_EQ(u, plot_format_of("dir.pdf/a"), PLOT_FMT_NONE);
	plot_layout_free(&l);
	json_decref(d);
}

int main(void)
{
	struct unit u = { 0 };

	RUN(&u, size_labels);
	RUN(&u, axes);
	RUN(&u, build_bw);
	RUN(&u, build_lat);
	RUN(&u, refusals);
	RUN(&u, png_read_back);
	RUN(&u, unwritable);
	plot_release();
	return unit_done(&u);
}
