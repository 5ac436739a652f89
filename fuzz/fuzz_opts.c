// SPDX-License-Identifier: MIT
/*
 * Fuzz target: option parsing of every command, through the parser and
 * the option tables the commands use (opts/parse.h), without running any.
 *
 * Input: one byte choosing the command, then its arguments separated by
 * NUL bytes (at most MAX_ARGS).  What the commands print (errors, --help)
 * goes to /dev/null; sanitizer reports still reach the terminal.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts/parse.h"

#define MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	const char *name;
	int (*parse)(int argc, char **argv);
} commands[] = {
	{ "bw", fuzz_parse_bw },	{ "lat", fuzz_parse_lat },
	{ "incast", fuzz_parse_incast },
	{ "capture", fuzz_parse_capture }, { "devices", fuzz_parse_devices },
	{ "top", fuzz_parse_top },	{ "plot", fuzz_parse_plot },
	{ "help", fuzz_parse_help },
	{ "version", fuzz_parse_version },
	{ "probe", fuzz_parse_probe },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *devnull = fopen("/dev/null", "w");

	(void)argc;
	(void)argv;
	/* The commands print through the stdio streams; ASan writes to fd 2. */
	if (devnull)
		stdout = stderr = devnull;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *words, *argv[MAX_ARGS + 2];
	int argc = 1;

	if (size < 1)
		return 0;
	words = malloc(size);
	if (!words)
		return 0;
	memcpy(words, data + 1, size - 1);
	words[size - 1] = '\0';
	argv[0] = (char *)commands[data[0] % NCOMMANDS].name;
	for (char *w = words; w < words + size && argc <= MAX_ARGS; w += strlen(w) + 1)
		argv[argc++] = w;
	if (size == 1)
		argc = 1;
	argv[argc] = NULL;
	commands[data[0] % NCOMMANDS].parse(argc, argv);
	free(words);
	return 0;
}
