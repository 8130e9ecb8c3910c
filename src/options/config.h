/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.h - the config object behind the public setters. Runs in the supervisor only. */
#pragma once

#include <stdbool.h>
#include <sys/resource.h>

#include "limit.h"
#include "util.h"

#define CD_DEFAULT_TMP_SIZE   (256ull << 20)
#define CD_DEFAULT_TMPFS_SIZE (64ull << 20)
#define CD_DEFAULT_COW_SIZE   (1ull << 30)
#define CD_DEFAULT_HOME_SIZE  (1ull << 30) /* package caches (npm, pip, cargo) live there */
#define CD_DEFAULT_KILL_AFTER (2 * NSEC_PER_SEC)
#define CD_DEFAULT_NET_IDLE   (60 * NSEC_PER_SEC)
#define CD_DEFAULT_NET_CONNS  256
#define CD_DEFAULT_HOSTNAME   "cordon"
#define CD_DEFAULT_MEMORY     (4ull << 30)
#define CD_DEFAULT_PIDS       1024
#define CD_MIN_MEMORY         (1ull << 20)
#define CD_MIN_MILLICPUS      10      /* cpu.max takes no quota under 1 ms of 100 ms */
#define CD_MAX_MILLICPUS      1000000 /* 1000 CPUs */
#define CD_MAX_DURATION       (100ull * 365 * 86400 * NSEC_PER_SEC)
#define CD_MAX_USER_SHARE     100000

struct cd_bind {
	char *src; /* resolved host path */
	char *dst; /* normalized absolute path inside */
};

struct cd_tmpfs {
	char *path;
	uint64_t size;
};

struct cd_rlimit {
	bool set;
	uint64_t soft;
	uint64_t hard;
};

/* A protected path: a glob relative to the workdir; deny: hidden rather than read-only */
struct cd_protect {
	char *glob;
	bool deny;
};

struct cordon_config {
	char **argv;
	char *workdir; /* as given; NULL: the current directory; opened by cordon_run() */
	char *workdir_target;
	char *chdir;
	char *rootfs; /* resolved; NULL: the host's "/" */
	struct cd_bind *binds;
	size_t n_binds;
	struct cd_tmpfs *tmpfs;
	size_t n_tmpfs;
	char **hide;
	uint64_t tmp_size;
	uint64_t home_size;
	char *git_identity[2]; /* name, email: GIT_AUTHOR_* and GIT_COMMITTER_* inside */
	enum cordon_net net;
	struct cd_allow *allow; /* --allow-net: the proxy is on when n_allow > 0 */
	size_t n_allow;
	uint64_t net_idle_ns;
	unsigned net_max_conns;
	uint64_t timeout_ns;
	uint64_t kill_after_ns;
	struct cd_rlimit rlimits[RLIM_NLIMITS];
	char **env;      /* KEY=VALUE, in the order given */
	char **pass_env; /* KEY */
	char *hostname;
	unsigned user_share; /* 0 or 1: the caller's per-user budgets undivided */
	uid_t uid;
	gid_t gid;
	bool uid_set;
	bool gid_set;
	char *report_path;
	int report_fd;
	bool fast_exit;
	char *seccomp_path;    /* the policy file found; NULL: the "default" policy */
	char *seccomp_display; /* its name in messages */
	bool seccomp_none;     /* --seccomp-policy none */
	bool seccomp_log;
	bool seccomp_unoptimized;
	/* the cgroup rows of the limits table, by enum cd_cgroup_limit: soft is the value
	 * (CORDON_UNLIMITED: none), set when given explicitly */
	struct cd_rlimit cgroup_limits[CD_CG_N];
	enum cordon_cgroup_mode cgroup_mode;
	char *cgroup_parent;
	char *audit_path;
	char *capture_dir;
	bool cow;
	uint64_t cow_size;
	char *layer_dir;
	char *cow_from;
	struct cd_protect *protect; /* --protect, --deny and the default set, in that order */
	size_t n_protect;
	bool no_default_protect;
	cordon_log_fn log;
	void *log_data;
	cordon_log_fn notice;
	void *notice_data;
};

/* A normalized absolute path ("//a/./b/" -> "/a/b"); NULL with errno EINVAL when p is relative
 * or has a ".." component, ENOMEM. */
char *cd_path_normalize(const char *p);

/* The RLIMIT_* name in lower case without prefix ("nofile"), NULL if unknown. */
const char *cd_rlimit_name(int resource);

void cd_config_log(const struct cordon_config *c, const char *fmt, ...) _printf_(2, 3);
/* A notice for the caller (the CLI prints it unless --quiet). */
void cd_config_notice(const struct cordon_config *c, const char *fmt, ...) _printf_(2, 3);
