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

/* The exec events' budget (docs/audit.md), in bytes of the log: a token bucket of
 * CD_EXECLOG_BURST refilled at CD_EXECLOG_RATE a second, and CD_EXECLOG_TOTAL per run. An event
 * past it is not written (the call still continues) but counted; one "limit" event says that
 * dropping started, and another when it starts again after CD_EXECLOG_QUIET_MS without a drop. */
#define CD_EXECLOG_RATE     (1ull << 20)
#define CD_EXECLOG_BURST    (4ull << 20)
#define CD_EXECLOG_TOTAL    (64ull << 20)
#define CD_EXECLOG_QUIET_MS 5000

struct cd_execlog {
	struct cd_execlog_first first;
	uint64_t tat_ns;       /* when the bucket is full again (GCRA); 0 at start: full */
	uint64_t written;      /* bytes of exec events in the log */
	uint64_t dropped;      /* exec events not written */
	uint64_t last_drop_ns; /* 0: none yet */
	bool said_total;       /* the limit event for the total is written once */
};

/* Handle the pending notification on listener (poll it first): log it, let it continue. */
void cd_execlog_handle(int listener, const struct cd_audit *a, struct cd_execlog *el);
