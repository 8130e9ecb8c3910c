/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * share.h - a sandbox that runs as the caller's own uid (an unprivileged caller) shares the
 * caller's per-user kernel budgets with the caller and every other such sandbox: what a process
 * in a user namespace holds is charged, all the way up, to the namespace's owner, whatever uid it
 * runs as (subordinate ids would not change that). cordon_config_set_user_share(c, n) gives such
 * a sandbox 1/n of each budget the kernel lets a namespace cap: inotify instances and watches
 * (the user namespace's own limits, set by pid 1) and processes, POSIX message queue bytes and
 * pending signals (hard rlimits; one the caller has no hard limit for is left: there is no
 * budget of the caller's to take). What no namespace can cap stays shared: README "Identity".
 */
#pragma once

#include <sys/resource.h>

#include "config.h"
#include "userns.h"

struct cd_share {
	unsigned inotify_instances; /* user.max_inotify_instances in the sandbox's; 0: leave */
	unsigned inotify_watches;   /* user.max_inotify_watches */
};

/* supervisor: the plan for c and id (nothing when the sandbox has ids of its own or n is 1),
 * the rlimits' part into rl (those the config sets are left as set). Pure but for reading the
 * host's limits (/proc/sys/fs/inotify). */
void cd_share_plan(unsigned user_share, const struct cd_log *log, const struct cd_identity *id,
		   struct cd_rlimit rl[RLIM_NLIMITS], struct cd_share *ret);
/* the arithmetic: budget / n, at least 1 */
unsigned long long cd_share_of(unsigned long long budget, unsigned n);
/* pid 1, with its namespace's capabilities: the user namespace's limits, written through proc
 * (a procfs: its sys/user/) */
int cd_share_apply(const struct cd_share *s, int proc, struct cordon_error *err);
