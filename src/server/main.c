/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - cordon-serve, the program `cordon serve` runs (src/cli/main.c execs it). A program of
 * its own so that the cordon command, which wraps every command an agent runs, does not load
 * libmicrohttpd and the TLS stack it brings (ten libraries, loaded at every start:
 * bench/startup.md, item 6). The server also execs it as the process that makes its sessions
 * (`--session-maker`, creator.c). Runs in both: the server's process and the session maker's.
 */
#include <string.h>

#include "creator.h"
#include "serve.h"

int main(int argc, char **argv)
{
	static char name[] = "serve";

	/* the process that makes the sessions (creator.c), started by the server itself */
	if (argc == 2 && strcmp(argv[1], "--session-maker") == 0)
		return srv_creator_main();

	argv[0] = name; /* srv_serve_main's argv[0] is the subcommand */
	return srv_serve_main(argc, argv);
}
