/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup.h - the sandbox's cgroup v2: where it lives, its limits, its usage, its end.
 * Supervisor side. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"

#define CD_CGROUP_PREFIX "cordon-"

struct cd_cgroup {
	char *path;      /* the sandbox's cgroup; NULL: none */
	char *parent;    /* where it was made */
	char *path_reported; /* path, kept after the cgroup is removed, for the report */
	int fd;          /* O_DIRECTORY fd of path, for CLONE_INTO_CGROUP; -1 */
	/* each limit's file as read back after writing it ("33554432", "50000 100000"), by enum
	 * cd_cgroup_limit; NULL: not applied */
	char *applied[CD_CG_N];
	bool oom_group;  /* memory.oom.group reads back 1: an OOM kill ends the whole sandbox */
	char **missing;     /* what could not be applied, and why */
	char **fallbacks;   /* rlimits used instead (best-effort) */
};

struct cd_cgroup_usage {
	bool valid;
	uint64_t memory_peak; /* bytes; 0 when the kernel lacks memory.peak */
	bool has_memory_peak;
	uint64_t user_us, system_us;
	bool has_cpu;
	uint64_t pids_peak;
	bool has_pids_peak;
	uint64_t oom_kills;
	uint64_t pids_max_hits; /* pids.events max: forks refused at the limit */
};

/* Decide where the cgroup goes, clean stale ones, make it and write the limits (the table's
 * cgroup rows), each read back. What cannot be applied fails (explicit limits, the mode
 * required) or is recorded in cg->missing (defaults, best-effort: then fallback rlimits are added
 * to rlimits). So is memory.oom.group, which comes with a memory limit. id names it:
 * cordon-<id>. */
int cd_cgroup_setup(const struct cd_limits_opts *lim, const char *id, bool own_uid,
		    struct cd_cgroup *cg, struct cd_rlimit *rlimits, struct cordon_error *err);
/* -v: what was applied, what not, and why (through the config's log callback). */
void cd_cgroup_log(const struct cd_cgroup *cg, const struct cd_log *log);
/* Move pid into the cgroup (where clone3 could not put it there at birth). */
int cd_cgroup_attach(const struct cd_cgroup *cg, pid_t pid, struct cordon_error *err);
/* Kill every process in it (cgroup.kill; freeze and SIGKILL each where that is missing). */
void cd_cgroup_kill(const struct cd_cgroup *cg);
/* Freeze (frozen) or thaw every process in it (cgroup.freeze) and wait, up to deadline_ns
 * (monotonic), until cgroup.events says so; a freeze that does not complete in time is undone.
 * -EOPNOTSUPP: no cgroup (why_none, may be NULL, says why) or no freezer. */
int cd_cgroup_freeze(const struct cd_cgroup *cg, bool frozen, uint64_t deadline_ns,
		     const char *why_none, struct cordon_error *err);
void cd_cgroup_usage(const struct cd_cgroup *cg, struct cd_cgroup_usage *u);
/* What the sandbox uses now (a session's metrics), read from its cgroup's files */
struct cd_cgroup_now {
	bool valid;	 /* it has a cgroup */
	bool has_memory; /* memory.current (the memory controller) */
	bool has_cpu;	 /* cpu.stat's usage_usec */
	uint64_t memory_current, memory_file; /* bytes; file: memory.stat's page cache */
	uint64_t memory_max;		      /* 0: "max" */
	uint64_t cpu_usage_us;
	uint64_t cpu_quota_us, cpu_period_us; /* cpu.max; quota 0: "max" */
};
void cd_cgroup_now(const struct cd_cgroup *cg, struct cd_cgroup_now *ret);
/* Kill, wait until empty (bounded), remove. */
void cd_cgroup_remove(struct cd_cgroup *cg);
/* Kill, and remove it now if it is empty; otherwise leave waiting and removing to a detached
 * child that shares our memory (pid 1 takes milliseconds to tear down its namespaces after its
 * last word: the caller, who exits right after, need not wait for that). */
void cd_cgroup_release(struct cd_cgroup *cg);
void cd_cgroup_done(struct cd_cgroup *cg);
