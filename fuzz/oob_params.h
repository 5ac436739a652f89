/* SPDX-License-Identifier: MIT */
/* The server's PARAMS parser with a range oracle; see oob_params.c. */
#ifndef RDMAKIT_FUZZ_OOB_PARAMS_H
#define RDMAKIT_FUZZ_OOB_PARAMS_H

/* text: NUL-terminated payload; explicit_set: PERF_SET_* of the server. */
void fuzz_adopt_params(const char *text, unsigned explicit_set);

#endif
