/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - cordon-serve, the program `cordon serve` runs (src/cli/main.c execs it). A program of
 * its own so that the cordon command, which wraps every command an agent runs, does not load
 * libmicrohttpd and the TLS stack it brings (ten libraries, 0.5-1 ms of every start).
 */
#include <string.h>

#include "serve.h"

int main(int argc, char **argv)
{
	static char name[] = "serve";

	argv[0] = name; /* cd_serve_main's argv[0] is the subcommand */
	return cd_serve_main(argc, argv);
}
