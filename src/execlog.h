/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* execlog.h - exec events of the audit trail: the filter sends execve and execveat to the
 * supervisor (seccomp user notification); it reads what was asked from the process's memory,
 * logs it, and lets the call continue. Supervisor side. */
#pragma once

#include "audit.h"

/* The command's own exec, as cordon asked it: its process shares pid 1's memory until the exec
 * (vfork), which an unprivileged supervisor may not read (pid 1 is not dumpable). */
struct cd_execlog_first {
	char path[480];
	char *const *argv;
	bool known, used;
};

/* Handle the pending notification on listener (poll it first): log it, let it continue. */
void cd_execlog_handle(int listener, const struct cd_audit *a, struct cd_execlog_first *first);
