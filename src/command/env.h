/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* env.h - the command's environment, built in the supervisor before anything starts. */
#pragma once

#include "config.h"
#include "mount.h"
#include "userns.h"

/* The environment inside: the caller's cleared to a short safe set (PATH, TERM, locale, TZ,
 * colour), HOME/USER/LOGNAME of the identity inside, the proxy's variables with an allow-list,
 * the git identity, PATH without the directories the sandbox does not have (plan), then the
 * config's passed and set variables, in that order. *ret is a NULL-terminated vector the caller
 * frees with cd_strv_free(); so is *ret_dropped (NULL when none): the PATH directories left out,
 * for the hint when the command is not found. */
int cd_env_build(const struct cd_command_opts *o, const struct cd_net_opts *net,
		 const char *hostname, const struct cd_log *log, const struct cd_identity *id,
		 const struct cd_mount_plan *plan, char ***ret, char ***ret_dropped,
		 struct cordon_error *err);

/* The value of KEY in envp, NULL if absent. */
const char *cd_env_get(char *const *envp, const char *key);
