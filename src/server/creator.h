/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* creator.h - the session maker: a single-threaded fresh exec of this program, started
 * before any thread, that makes every session (creator.c). */
#pragma once

#include "cordon.h"
#include "sbconfig.h"

int srv_creator_start(struct cordon_error *err);
/* `cordon-serve --session-maker` (main.c): runs until the server goes; the exit status */
int srv_creator_main(void);
/* A session in workdir, from the server's options and spec (NULL: the defaults) */
int srv_creator_make(const char *workdir, const struct srv_make_spec *spec,
		     struct cordon_session **ret, struct cordon_error *err);
