/* SPDX-License-Identifier: MIT */
/*
 * A counter snapshot in the Prometheus exposition formats: the text format
 * 0.0.4 and OpenMetrics 1.0.0.  Names follow the Prometheus conventions
 * (base units, _total on counters), not the table's: man/rdmakit-top.1
 * lists every family and where its values come from.  Counters are the
 * kernel's values as read (no rates here; one that went backwards is
 * written as it is); per-QP series of soft engines are capped at
 * PROM_MAX_QPS per engine.
 */
#ifndef RDMAKIT_PROM_H
#define RDMAKIT_PROM_H

#include <stdbool.h>
#include <stdio.h>

#include "counters.h"

#define PROM_MAX_QPS 64

enum prom_format { PROM_TEXT_004, PROM_OPENMETRICS_100 };

#define PROM_CONTENT_TYPE_004 "text/plain; version=0.0.4; charset=utf-8"
#define PROM_CONTENT_TYPE_OM "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* What the scrape itself cost and how it went (rdmakit_scrape_*). */
struct prom_scrape {
	double duration_s;		/* reading the counters for this exposition */
	unsigned long long errors;	/* samples that failed since the start */
	bool ok;			/* this one's sample succeeded */
};

/* The format an Accept header asks for: OpenMetrics when it names
 * application/openmetrics-text, else 0.0.4. */
enum prom_format prom_negotiate(const char *accept);

/* Writes the whole exposition of s to out. */
void prom_write(FILE *out, enum prom_format f, const struct ctr_snapshot *s,
		const struct prom_scrape *scrape);

#endif
