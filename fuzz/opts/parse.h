/* SPDX-License-Identifier: MIT */
/*
 * Parse-only entry points for the opts fuzz target: each runs a command's
 * own option table and handler through opts_parse(), then the checks its
 * cmd_NAME() makes on the options and operands before it starts work, and
 * returns the exit code that would have ended it (0: it would run).  The
 * tables and handlers are static in cmd/NAME.c, so each parse_NAME.c
 * compiles that file into itself (cmd/ stays untouched).
 */
#ifndef RDMAKIT_FUZZ_PARSE_H
#define RDMAKIT_FUZZ_PARSE_H

int fuzz_parse_bw(int argc, char **argv);
int fuzz_parse_lat(int argc, char **argv);
int fuzz_parse_incast(int argc, char **argv);
int fuzz_parse_capture(int argc, char **argv);
int fuzz_parse_devices(int argc, char **argv);
int fuzz_parse_top(int argc, char **argv);
int fuzz_parse_plot(int argc, char **argv);
int fuzz_parse_probe(int argc, char **argv);
int fuzz_parse_help(int argc, char **argv);
int fuzz_parse_version(int argc, char **argv);

#endif
