/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rlimits.h - resource limits (setrlimit). */
#pragma once

#include "config.h"

/* supervisor: refuse, before start, a limit above the caller's own hard limit (nothing in the
 * sandbox could raise it) */
int cd_limits_check(const struct cd_rlimit rl[RLIM_NLIMITS], struct cordon_error *err);

/* child, in the command's process just before exec */
int cd_limits_apply(const struct cd_rlimit rl[RLIM_NLIMITS], struct cordon_error *err);
