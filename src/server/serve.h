/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serve.h - the entry point of `cordon serve`, called by src/cli/main.c. */
#pragma once

#include "cordon.h"

/* argv[0] is "serve"; returns the exit status. */
int srv_serve_main(int argc, char **argv);
/* "HOST:PORT", "[V6]:PORT", ":PORT"; pure (unit-tested). */
int srv_serve_parse_listen(const char *arg, char **ret_host, unsigned *ret_port,
			   struct cordon_error *err);
