/* SPDX-License-Identifier: MIT */
/* Text renderings of a latency histogram (values in ns, shown in us). */
#ifndef RDMAKIT_HIST_FMT_H
#define RDMAKIT_HIST_FMT_H

#include <stdio.h>

#include "hist.h"

/* HdrHistogram's classic percentile distribution (.hgrm), which its
 * plotters read: Value, Percentile, TotalCount, 1/(1-Percentile). */
void hist_write_hgrm(FILE *out, const struct hist *h);
/* An aligned bar chart of at most `rows` log-spaced ranges. */
void hist_write_bars(FILE *out, const struct hist *h, unsigned rows);

#endif
