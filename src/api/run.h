/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* run.h - the steps of cordon_run(), for a session's supervisor too (src/session/holder.c). */
#pragma once

#include "command.h"

struct cd_run_hooks {
	const struct cd_command_session *session; /* the command is a session's agent */
	void (*on_id)(void *data, const char *id); /* the sandbox's id, before anything is made */
	/* the sandbox torn down and its records written, before its descriptors are closed */
	void (*at_end)(void *data, struct cd_sandbox *sb);
	void *data;
};

/* cordon_run() with hooks (NULL: none). */
int cd_run(const struct cordon_config *c, const struct cd_run_hooks *hooks,
	   struct cordon_result *res, struct cordon_error *err);
