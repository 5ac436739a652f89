/* SPDX-License-Identifier: MIT */
/* Helpers of the counter tests (test_counters.c, test_counters_cache.c). */
#ifndef RDMAKIT_TEST_COUNTERS_FX_H
#define RDMAKIT_TEST_COUNTERS_FX_H

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"

static __attribute__((unused)) const struct ctr_port *port(const struct ctr_snapshot *s, const char *dev, int n)
{
	for (size_t i = 0; i < s->nports; i++)
		if (!strcmp(s->ports[i].device, dev) && s->ports[i].port == n)
			return &s->ports[i];
	return NULL;
}

static __attribute__((unused)) uint64_t value(const struct ctr_port *p, enum ctr_src src, const char *name)
{
	const struct ctr_counter *c = p ? ctr_find(&p->set, src, name) : NULL;

	return c ? c->value : UINT64_MAX;
}

static __attribute__((unused)) bool near(double got, double want)
{
	return fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
}

static __attribute__((unused)) void put_file(const char *path, const char *text)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	rename(tmp, path);	/* a new file, as a re-created device would have */
}

#endif
