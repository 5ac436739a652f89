// SPDX-License-Identifier: MIT
/*
 * The one stop flag.  Ctrl-C and SIGTERM (and, for top's screen, SIGHUP)
 * set it; each command's loop checks it and ends cleanly, so reports and
 * summaries still print.  The only global mutable state in the program.
 */
#include <signal.h>

#include "cmd.h"

volatile sig_atomic_t cmd_stop;

static void on_stop(int sig)
{
	(void)sig;
	cmd_stop = 1;
}

void cmd_catch_stop(bool hangup)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);	/* no SA_RESTART: a blocking wait returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (hangup)
		sigaction(SIGHUP, &sa, NULL);
}
