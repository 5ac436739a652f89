/* SPDX-License-Identifier: MIT */
/*
 * Minimal unit-test harness: each test binary prints TAP ("ok N - name",
 * "not ok N - name") so the Makefile can sum unit tests and bats suites
 * with one counter.  A test is a function taking the harness context;
 * CHECK() records a failure with file:line and keeps going, so one run
 * reports every broken assertion, not just the first.
 */
#ifndef RDMAKIT_UNIT_H
#define RDMAKIT_UNIT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct unit {
	int number;	/* TAP test number of the running test */
	int failures;	/* failed CHECKs in the running test */
	int passed;
	int failed;
	/* Set by unit_skip_running(): the running test could not check what
	 * it is for (an input or a privilege is missing), so it is reported
	 * as skipped with this reason, never as passed. */
	char skip_reason[640];
};

#define CHECK(u, cond)                                                      \
	do {                                                                \
		if (!(cond)) {                                              \
			(u)->failures++;                                    \
			printf("#   %s:%d: CHECK(%s) failed\n", __FILE__,       \
			       __LINE__, #cond);                            \
		}                                                           \
	} while (0)

/* Equality of two integers, printing both values when they differ. */
#define CHECK_EQ(u, got, want)                                              \
	do {                                                                \
		long long got_ = (long long)(got);                          \
		long long want_ = (long long)(want);                        \
		if (got_ != want_) {                                        \
			(u)->failures++;                                    \
			printf("#   %s:%d: %s == %lld, want %s == %lld\n",      \
			       __FILE__, __LINE__, #got, got_, #want, want_); \
		}                                                           \
	} while (0)

#define CHECK_STR(u, got, want)                                             \
	do {                                                                \
		const char *got_ = (got), *want_ = (want);                  \
		if (!got_ || strcmp(got_, want_) != 0) {                    \
			(u)->failures++;                                    \
			printf("#   %s:%d: %s == \"%s\", want \"%s\"\n",        \
			       __FILE__, __LINE__, #got,                    \
			       got_ ? got_ : "(null)", want_);              \
		}                                                           \
	} while (0)

/* s contains sub. */
#define CHECK_HAS(u, s, sub)                                                       \
	do {                                                                       \
		const char *s_ = (s), *sub_ = (sub);                               \
		if (!strstr(s_, sub_)) {                                           \
			(u)->failures++;                                           \
			printf("#   %s:%d: \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, \
			       s_, sub_);                                          \
		}                                                                  \
	} while (0)

static inline void unit_run(struct unit *u, const char *name,
			    void (*fn)(struct unit *))
{
	u->number++;
	u->failures = 0;
	u->skip_reason[0] = '\0';
	fn(u);
	if (u->failures) {
		u->failed++;
		printf("not ok %d - %s\n", u->number, name);
	} else if (u->skip_reason[0]) {
		printf("ok %d - %s # SKIP %s\n", u->number, name, u->skip_reason);
	} else {
		u->passed++;
		printf("ok %d - %s\n", u->number, name);
	}
	fflush(stdout);
}

/* Skipped tests count as TAP "ok ... # SKIP reason". */
static inline void unit_skip(struct unit *u, const char *name,
			     const char *reason)
{
	u->number++;
	printf("ok %d - %s # SKIP %s\n", u->number, name, reason);
	fflush(stdout);
}

/* The running test cannot check what it is for: it ends as skipped, with
 * the reason (unless a CHECK already failed).  In CI (CI=true) an absent
 * input is a failure instead: there everything a test needs is present. */
static inline void unit_skip_running(struct unit *u, const char *reason)
{
	const char *ci = getenv("CI");

	if (ci && strcmp(ci, "true") == 0) {
		printf("#   in CI: %s\n", reason);
		u->failures++;
		return;
	}
	snprintf(u->skip_reason, sizeof(u->skip_reason), "%s", reason);
}

#define RUN(u, fn) unit_run((u), #fn, fn)

/* Prints the TAP plan last ("1..N") and returns the exit status. */
/*
 * A path in the repository (tests/fixtures/...) into out: under
 * $RDMAKIT_ROOT, the current directory, or three levels above this binary
 * (build/tests/X).  False when none of them has it.
 */
static inline bool unit_repo_path(const char *rel, char *out, size_t cap)
{
	const char *root = getenv("RDMAKIT_ROOT");
	char exe[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (root && *root) {
		snprintf(out, cap, "%s/%s", root, rel);
		if (stat(out, &st) == 0)
			return true;
	}
	snprintf(out, cap, "%s", rel);
	if (stat(out, &st) == 0)
		return true;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	for (int up = 0; up < 3; up++) {
		char *slash = strrchr(exe, '/');

		if (slash)
			*slash = '\0';
	}
	snprintf(out, cap, "%.*s/%s", (int)(cap > 64 ? cap - 64 : 0), exe, rel);
	return stat(out, &st) == 0;
}

static inline int unit_done(struct unit *u)
{
	printf("1..%d\n", u->number);
	return u->failed ? 1 : 0;
}

#endif
