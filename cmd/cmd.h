/* SPDX-License-Identifier: MIT */
/*
 * What every subcommand shares: the command table's row type, the global
 * options, declarative option specs that drive parsing, --help and error
 * messages, and value parsers that never exit.
 *
 * Adding a command: write cmd/NAME.c exporting cmd_NAME(), add its row to
 * the table in cmd/rdmakit.c, add man/rdmakit-NAME.1, its words in
 * completions/rdmakit.bash and completions/_rdmakit, and tests/NAME.bats.
 */
#ifndef RDMAKIT_CMD_H
#define RDMAKIT_CMD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifndef RDMAKIT_VERSION
#define RDMAKIT_VERSION "0.0.0-dev"
#endif

/* Exit codes, the same for every command (man rdmakit, EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_CHECK_FAILED = 1,	/* ran, but a threshold or verification failed */
	EXIT_USAGE = 2,
	EXIT_RUNTIME = 3,	/* system, device, peer or file problem */
};

/* cmd/stop.c: set by Ctrl-C and SIGTERM (and SIGHUP when asked) once
 * cmd_catch_stop() is called; loops check it and end cleanly. */
extern volatile sig_atomic_t cmd_stop;
void cmd_catch_stop(bool hangup);

struct global_opts {
	bool json;
	bool pretty;
};

typedef int (*cmd_fn)(int argc, char **argv, const struct global_opts *g);

struct cmd_info {
	const char *name;
	cmd_fn fn;		/* NULL: not available in this build yet */
	const char *summary;
};

/* One command-line option: drives getopt, --help and error messages. */
struct opt_spec {
	const char *name;	/* long name, without "--" */
	int key;		/* short option letter, or OPT_LONG_ONLY + n */
	const char *arg;	/* value placeholder ("BYTES"); NULL for a flag */
	const char *help;
};

#define OPT_LONG_ONLY 256
#define OPTS_END { NULL, 0, NULL, NULL }

/* The options every command takes; handled by opts_parse itself. */
#define OPTS_COMMON                                                        \
	{ "json", 'j', NULL, "print one JSON document (JSON lines when streaming)" }, \
	{ "pretty", OPT_LONG_ONLY + 255, NULL, "indent JSON output (implies --json)" }, \
	{ "help", 'h', NULL, "show this help and exit" }

/* Returns 0 to go on, or an exit code (EXIT_USAGE after printing why). */
typedef int (*opt_handler)(void *ctx, int key, const char *arg);

struct cmd_usage {
	const char *cmd;		/* "capture" */
	const char *synopsis;		/* lines after "Usage: rdmakit CMD " */
	const char *description;	/* a paragraph */
	const struct opt_spec *opts;	/* OPTS_END terminated */
	/* An unknown option's reason, when it is another tool's that this
	 * command refuses on purpose ("-W", "--use-srq=1"); NULL: none. */
	const char *(*refused)(const char *word);
};

/*
 * Parses argv (argv[0] is the command name) against u->opts.  Common
 * options update *g; --help prints help and returns -1 (caller exits 0).
 * On success stores the index of the first operand in *first_operand and
 * returns 0; otherwise prints one line naming the problem and returns
 * EXIT_USAGE (or the handler's code).
 */
int opts_parse(const struct cmd_usage *u, int argc, char **argv,
	       struct global_opts *g, opt_handler fn, void *ctx,
	       int *first_operand);
void opts_print_help(FILE *out, const struct cmd_usage *u);
/* Prints "rdmakit CMD: message" to stderr and returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints "rdmakit CMD: message" to stderr and returns EXIT_RUNTIME. */
int runtime_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Value parsers: return 0 and store the value, or print a one-line error
 * naming the option and the accepted form and return EXIT_USAGE.
 */
/* An integer in [min, max]; suffixes k, m, g (powers of 1024) when `sized`. */
int parse_u64(const char *cmd, const char *opt, const char *s, uint64_t min,
	      uint64_t max, bool sized, uint64_t *out);
int parse_double(const char *cmd, const char *opt, const char *s, double min,
		 double max, double *out);
/* One of a NULL-terminated list of words; stores its index. */
int parse_choice(const char *cmd, const char *opt, const char *s,
		 const char *const *choices, int *out);

/* Commands (each in cmd/NAME.c). */
int cmd_help(int argc, char **argv, const struct global_opts *g);
int cmd_version(int argc, char **argv, const struct global_opts *g);
int cmd_capture(int argc, char **argv, const struct global_opts *g);
int cmd_bw(int argc, char **argv, const struct global_opts *g);
int cmd_lat(int argc, char **argv, const struct global_opts *g);
int cmd_incast(int argc, char **argv, const struct global_opts *g);
int cmd_devices(int argc, char **argv, const struct global_opts *g);
int cmd_top(int argc, char **argv, const struct global_opts *g);
int cmd_plot(int argc, char **argv, const struct global_opts *g);
int cmd_probe(int argc, char **argv, const struct global_opts *g);
/* `rdmakit help CMD`: runs CMD's --help, or explains why it cannot. */
int cmd_help_for(const char *name, const struct global_opts *g);

/* The command table, for help and dispatch. */
const struct cmd_info *cmd_table(void);
const struct cmd_info *cmd_find(const char *name);

#endif
