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

/* The options, in slices: each module above takes the slice it reads and a log handle, never
 * the whole config (docs/design.md: "a new option"). The public setters (src/api/config.c) fill
 * them. */

/* What runs, with what environment (src/command). */
struct cd_command_opts {
	char **argv;
	char *chdir;
	bool chdir_relative; /* chdir is relative to the workdir target ("" for itself) */
	char **env;      /* KEY=VALUE, in the order given */
	char **pass_env; /* KEY */
	char *git_identity[2]; /* name, email: GIT_AUTHOR_* and GIT_COMMITTER_* inside */
	bool fast_exit;
};

/* The filesystem the sandbox sees (src/sandbox: workdir.c, mountplan.c). */
struct cd_fs_opts {
	char *workdir; /* as given; NULL: the current directory; opened by cordon_run() */
	char *workdir_target;
	char *rootfs; /* resolved; NULL: the host's "/" */
	struct cd_bind *binds;
	size_t n_binds;
	struct cd_tmpfs *tmpfs;
	size_t n_tmpfs;
	char **hide;
	uint64_t tmp_size;
	uint64_t home_size;
};

/* A copy-on-write workdir (src/sandbox/cow.c, src/layer). */
struct cd_cow_opts {
	bool on;
	uint64_t size;
	char *layer_dir;
	char *from;
};

/* Protected paths (src/sandbox/protect.c). */
struct cd_protect_opts {
	struct cd_protect *v; /* --protect, --deny and the default set, in that order */
	size_t n;
	bool no_defaults;
};

/* The network (src/net, src/sandbox/child.c). */
struct cd_net_opts {
	enum cordon_net mode;
	struct cd_allow *allow; /* --allow-net: the proxy is on when n_allow > 0 */
	size_t n_allow;
	uint64_t idle_ns;
	unsigned max_conns;
};

/* Namespaces joined instead of made (src/sandbox/nsjoin.c): a descriptor of each, the config's
 * own copy (close-on-exec), -1 where the sandbox makes its own. */
enum cd_join { CD_JOIN_NET, CD_JOIN_IPC, CD_JOIN_UTS, CD_JOIN_N };
struct cd_ns_opts {
	int join[CD_JOIN_N];
};

/* Bounds: the limits table's values, the cgroup, the clock (src/sandbox: cgroup.c, rlimits.c,
 * share.c; src/command: the deadline). */
struct cd_limits_opts {
	uint64_t timeout_ns;
	uint64_t kill_after_ns;
	struct cd_rlimit rlimits[RLIM_NLIMITS];
	/* the cgroup rows of the limits table, by enum cd_cgroup_limit: soft is the value
	 * (CORDON_UNLIMITED: none), set when given explicitly */
	struct cd_rlimit cgroup[CD_CG_N];
	enum cordon_cgroup_mode cgroup_mode;
	char *cgroup_parent;
	unsigned user_share; /* 0 or 1: the caller's per-user budgets undivided */
	bool freezer; /* a session to freeze: a cgroup where one can be made, even without a
		       * controller (CORDON_SESSION_FREEZABLE) */
};

/* Who the command is inside (src/sandbox/userns.c). */
struct cd_identity_opts {
	uid_t uid;
	gid_t gid;
	bool uid_set;
	bool gid_set;
	char *hostname;
	char *account_name; /* cordon_config_set_account(): the inside ids' account, replacing */
	char *account_home; /* the root's for them; NULL: none set */
};

/* The seccomp policy (src/seccomp). */
struct cd_seccomp_opts {
	char *path;    /* the policy file found; NULL: the "default" policy */
	char *display; /* its name in messages */
	bool none;     /* --seccomp-policy none */
	bool log;
	bool unoptimized;
	/* cordon_config_set_seccomp_bpf(): a session's commands' own program (sock_filter
	 * instructions, checked) and its install flags; NULL: none */
	void *bpf;
	size_t bpf_len;
	unsigned bpf_flags;
};

/* Sysctls of the sandbox's own namespaces (sysctl.h; written by pid 1, src/sandbox/child.c). */
struct cd_sysctl {
	char *key;  /* as given, for messages */
	char *path; /* below /proc/sys, from the checked components */
	char *value;
	bool net;   /* the network namespace's: refused with CORDON_NET_HOST */
};

struct cd_sysctl_opts {
	struct cd_sysctl *v;
	size_t n;
};

/* The launcher's own files (src/host/output.c, src/records, src/audit, --capture). */
struct cd_outputs_opts {
	char *report_path;
	int report_fd;
	char *audit_path;
	char *capture_dir;
};

/* Where the library's messages go: debug lines (log) and notices for the caller (the CLI prints
 * them unless --quiet). */
struct cd_log {
	cordon_log_fn fn;
	void *data;
	cordon_log_fn notice;
	void *notice_data;
};

struct cordon_config {
	struct cd_command_opts command;
	struct cd_fs_opts fs;
	struct cd_cow_opts cow;
	struct cd_protect_opts protect;
	struct cd_net_opts net;
	struct cd_ns_opts ns;
	struct cd_limits_opts limits;
	struct cd_identity_opts identity;
	struct cd_seccomp_opts seccomp;
	struct cd_sysctl_opts sysctl;
	struct cd_outputs_opts outputs;
	struct cd_log log;
};

/* A normalized absolute path ("//a/./b/" -> "/a/b"); NULL with errno EINVAL when p is relative
 * or has a ".." component, ENOMEM. */
char *cd_path_normalize(const char *p);

/* The RLIMIT_* name in lower case without prefix ("nofile"), NULL if unknown. */
const char *cd_rlimit_name(int resource);

/* A debug line (-v) through the log handle (log.c). */
void cd_log_line(const struct cd_log *l, const char *fmt, ...) _printf_(2, 3);
/* A notice for the caller (the CLI prints it unless --quiet). */
void cd_log_notice(const struct cd_log *l, const char *fmt, ...) _printf_(2, 3);
