/* SPDX-License-Identifier: MIT */
/* What the analyses (probe_analyze*.c) share, pa_ for probe analysis:
 * citing evidence, setting a verdict, and reading a test's record. */
#ifndef RDMAKIT_PROBE_ANALYZE_INT_H
#define RDMAKIT_PROBE_ANALYZE_INT_H

#include "probe.h"

/* Names a frame as evidence, kept in frame order, once. */
void pa_cite(struct probe_result *r, const struct probe_event *e);
void pa_verdict(struct probe_result *r, enum probe_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The test's own exchange: the record up to the liveness check, if any. */
unsigned pa_exchange_end(const struct probe_trace *t);
/* No answer where one was required: a deviation while the QP still
 * answers, a fail (no verdict) when the remote stopped answering. */
void pa_no_answer(struct probe_result *r, const char *what, const char *required);
/* Nothing at all came back in the exchange: the verdict set by
 * pa_no_answer, and true. */
bool pa_silent(struct probe_result *r, const char *what, const char *required);
/* A received request (no AETH) at psn: the remote as requester sent it. */
bool pa_is_request(const struct probe_event *e, uint32_t psn);
/* The remote's work request (not a receive) completed with status st. */
bool pa_completed_with(const struct probe_trace *t, enum xport_wc_status st);

#endif
