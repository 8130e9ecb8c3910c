/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sandbox.h - a sandbox, seen from the supervisor: the workdir it was given, its identity and
 * mounts, its seccomp programs, its cgroup, pid 1 (namespaces and the sync socket), the egress
 * proxy and the audit sink. A command runs in it (command.h); the sandbox outlives nothing of
 * the caller's: its destructor kills pid 1 if it still runs.
 *
 * Lifecycle: cd_sandbox_open(), cd_sandbox_prepare() and cd_sandbox_load_policy() (nothing runs
 * yet: bad input costs nothing; a command's own preparation goes between them), then
 * cd_sandbox_start() with the first command's half of pid 1's arguments, the poll loop
 * (cd_sandbox_poll/serve) while the command runs, cd_sandbox_reap(), cd_sandbox_end(), and
 * cd_sandbox_done() always.
 */
#pragma once

#include <poll.h>
#include <sys/resource.h>

#include "audit.h"
#include "cgroup.h"
#include "child.h"
#include "execlog.h"
#include "filter.h"
#include "hostpath.h"
#include "idxcache.h"
#include "marks.h"
#include "mount.h"
#include "policy.h"
#include "snapshot.h"
#include "share.h"
#include "sync.h"
#include "userns.h"

struct cd_proxy;
struct cd_resolver;

struct cd_sandbox;
struct cd_json;
/* What renders the start event's "applied" (the report's shape, above this floor: records). */
typedef void (*cd_sandbox_applied_fn)(struct cd_json *j, const struct cd_sandbox *sb,
				      const char *chdir, char *const *envp);

/* What a message of pid 1 that is not the sandbox's own (sync.h) is handed to. */
typedef void (*cd_sandbox_msg_fn)(void *data, const struct cd_msg *m);

/* cordon's seccomp programs and the policy's: parsed in prepare, compiled after clone. */
struct cd_sandbox_seccomp {
	struct cd_policy policy;
	bool have_policy;
	char *policy_path;
	struct cd_policy baseline_policy; /* cordon's own rules (baseline.policy): every sandbox */
	struct cd_filter filter, baseline;
	bool have_filter, have_baseline;
};

/* Its bounds: rlimits, the divided per-user budgets, the cgroup. */
struct cd_sandbox_bounds {
	struct cd_rlimit rlimits[RLIM_NLIMITS]; /* the config's, plus cgroup fallbacks */
	struct cd_share share;      /* the caller's per-user budgets, divided (share.h) */
	struct cd_cgroup cg;
	bool attach_cgroup;         /* clone could not place pid 1 in its cgroup: move it before GO */
	uint64_t pids_limit_hits;   /* pids.events max */
};

/* What it leaves behind: the report file, the audit trail and what feeds it. */
struct cd_sandbox_records {
	struct cd_report_file report;
	struct cd_audit audit;
	struct cd_snapshot before;  /* the workdir at start, for the audit's file events */
	bool have_before;
	struct cd_file_id own_files[1]; /* what cordon writes: not the sandbox's changes */
	size_t n_own_files;
	char wd_proc[64];
	int listener;               /* seccomp notifications of execve (audit); -1 */
	struct cd_execlog execlog;  /* the exec events and their budget */
	bool audit_loss_told;       /* a setup error's message says the audit trail lacks events */
};

/* Pid 1 and what it is handed. */
struct cd_sandbox_pid1 {
	int sock;                   /* our end of the sync socket; -1 once pid 1 closed it */
	int init_fd;                /* cordon-init, which pid 1 execs (libexec.h); -1 */
	int agent_fd;               /* a session's agent, the command (borrowed); -1 */
	int workdir_tree;           /* the workdir's mount tree for pid 1 (root callers); -1 */
	int pidfd;
	pid_t pid;                  /* pid 1, as we see it; 0 once reaped or left */
	int status;                 /* pid 1's wait status */
	struct rusage ru;
	bool left;                  /* pid 1 left to finish exiting on its own (cd_sandbox_leave) */
};

/* A copy-on-write workdir's layer. */
struct cd_sandbox_cow {
	int layer_fd;               /* --cow: the overlay's upper, on pid 1's tmpfs; -1 */
	int store_fd;               /* --cow: the layer store; -1 */
	int64_t started;            /* when the run started (the layer's created time) */
	struct cd_idxcache idxcache; /* git indexes' readings kept across runs (the plan's) */
};

/* What the layers above hand the sandbox to call. */
struct cd_sandbox_hooks {
	cd_sandbox_msg_fn on_msg;
	void *on_msg_data;
	cd_sandbox_applied_fn render_applied; /* the start event's "applied"; NULL: none */
};

struct cd_sandbox {
	const struct cordon_config *c;
	struct cordon_result *res;  /* the id; errors from pid 1; cgroup and proxy figures */
	struct cd_hostpath wd;      /* the workdir, opened once: every later step uses wd.fd */
	struct cd_marks marks;      /* the earlier workdirs (and this one) */
	char *workdir_target;
	struct cd_identity id;
	bool have_id;
	struct cd_mount_plan plan;
	struct cd_proxy *proxy;     /* the egress proxy, once pid 1 sent its socket */
	struct cd_resolver *resolver; /* the sandbox's resolver, once pid 1 sent its socket */
	bool failed; /* a setup error came from pid 1, or the proxy could not start */
	struct cd_sandbox_seccomp sec;
	struct cd_sandbox_bounds bounds;
	struct cd_sandbox_records rec;
	struct cd_sandbox_pid1 pid1;
	struct cd_sandbox_cow cow;
	struct cd_sandbox_hooks hooks;
	/* the config's sysctls as pid 1 writes them (strings borrowed from the config, but a
	 * clamped ping_group_range's, in ping_value; NULL: not written) */
	struct cd_sysctl *sysctl;
	char ping_value[32];
};

#define CD_SANDBOX_INIT(cfg, r)                                                             \
	{ .c = (cfg), .res = (r), .wd = { .fd = -1 }, .rec.report = { .dirfd = -1, .fd = -1 },   \
	  .rec.audit = { .fd = -1, .id = (r)->id }, .rec.listener = -1,                          \
	  .bounds.cg = { .fd = -1 }, .cow.layer_fd = -1, .cow.store_fd = -1,                     \
	  .cow.idxcache = { .dir_fd = -1 }, .pid1.sock = -1, .pid1.init_fd = -1,                 \
	  .pid1.agent_fd = -1, .pid1.pidfd = -1, .pid1.workdir_tree = -1 }

/* Resolve the workdir, create the report and audit files (so that a later failure is reported
 * in them). */
int cd_sandbox_open(struct cd_sandbox *sb, struct cordon_error *err);
/* Check the rlimits, decide the identity, make the cgroup, plan the mounts. */
int cd_sandbox_prepare(struct cd_sandbox *sb, struct cordon_error *err);
/* Parse the seccomp policy (compiled after clone) and cordon's baseline. */
int cd_sandbox_load_policy(struct cd_sandbox *sb, struct cordon_error *err);
/* The sandbox's half of pid 1's arguments (the command fills the rest). */
void cd_sandbox_child_args(struct cd_sandbox *sb, struct cd_child_args *a);
/* sync 1 and 2: clone pid 1 with args, write its id maps, hand it the workdir, compile and send
 * the seccomp programs, write the audit's start event. */
int cd_sandbox_start(struct cd_sandbox *sb, const struct cd_child_args *args,
		     struct cordon_error *err);

/* The poll loop: the sandbox's descriptors (pidfd first: POLLIN once pid 1 ended). */
enum { CD_SANDBOX_POLL_PIDFD, CD_SANDBOX_POLL_SOCK, CD_SANDBOX_POLL_LISTENER,
       CD_SANDBOX_POLL_PROXY, CD_SANDBOX_POLL_DNS, CD_SANDBOX_NPOLL };
void cd_sandbox_poll(const struct cd_sandbox *sb, struct pollfd p[CD_SANDBOX_NPOLL]);
/* What poll found: messages of pid 1, exec notifications, proxy connections. */
void cd_sandbox_serve(struct cd_sandbox *sb, const struct pollfd p[CD_SANDBOX_NPOLL]);
/* Every message pid 1 has sent: it sends EXIT before it exits. */
void cd_sandbox_drain(struct cd_sandbox *sb);
/* A message to pid 1 (signals, job control); nothing once it is gone. */
void cd_sandbox_send(struct cd_sandbox *sb, uint32_t type, int32_t value);

/* SIGKILL to pid 1, which takes the whole pid namespace down. */
void cd_sandbox_kill(struct cd_sandbox *sb);
/* SIGKILL to every process of the sandbox's cgroup, if it has one. */
void cd_sandbox_kill_cgroup(struct cd_sandbox *sb);
/* Wait for pid 1 (its status and usage), or leave it to finish exiting on its own. */
void cd_sandbox_reap(struct cd_sandbox *sb);
void cd_sandbox_leave(struct cd_sandbox *sb);

/* Teardown, once the command's outcome is in res: the cgroup's figures (an OOM kill makes the
 * outcome "oom") and its removal, the proxy's figures, the audit's file, limit and exit events. */
void cd_sandbox_end(struct cd_sandbox *sb);
/* An audit trail that lacks events fails the run (cordon.h): the result says so (exit code 125,
 * the command's outcome kept; after a setup error, its message says it too), so that the exit
 * event and the report written after this say so as well. 0, or -errno with *err. */
int cd_sandbox_audit_check(struct cd_sandbox *sb, struct cordon_error *err);
/* Release everything; pid 1, if it still runs, is killed and reaped. */
void cd_sandbox_done(struct cd_sandbox *sb);
