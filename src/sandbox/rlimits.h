/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rlimits.h - resource limits of the command (setrlimit), and what it got (getrlimit). */
#pragma once

#include "config.h"
#include "sync.h"

/* supervisor: refuse, before start, a limit above the caller's own hard limit (nothing in the
 * sandbox could raise it) */
int cd_rlimits_check(const struct cd_rlimit rl[RLIM_NLIMITS], struct cordon_error *err);

/* child, in the command's process just before exec */
int cd_rlimits_apply(const struct cd_rlimit rl[RLIM_NLIMITS], struct cordon_error *err);

/* What the command got: every rlimit as getrlimit() reads it in the command's process after
 * cd_rlimits_apply(), before the seccomp filter and exec (which keeps them): the configured ones,
 * the caller's inherited, and the fallbacks alike. */
struct cd_rlimits_got {
	bool valid; /* false: the command's process never got that far */
	struct rlimit r[RLIM_NLIMITS];
};

/* command's process (sync 3): send them to the supervisor, one RLIMITS message on sock */
int cd_rlimits_send(int sock, struct cordon_error *err);
/* supervisor: keep what an RLIMITS message says */
void cd_rlimits_received(struct cd_rlimits_got *got, const struct cd_msg *m);
