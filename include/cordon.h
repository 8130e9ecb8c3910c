/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cordon.h - run one command in a fresh, locked-down Linux sandbox.
 *
 * The whole public API of libcordon. The `cordon` command line tool is a thin front end over it.
 *
 *   struct cordon_error err;
 *   struct cordon_result res;
 *   struct cordon_config *c = cordon_config_new();
 *   const char *argv[] = { "make", "test", NULL };
 *
 *   if (!c || cordon_config_set_command(c, argv, &err) < 0 ||
 *       cordon_config_set_workdir(c, "/home/ann/project", &err) < 0)
 *           ... report err.msg ...
 *   cordon_run(c, &res, &err);       // 0: the sandbox ran; res.exit_code is what to exit with
 *   cordon_config_free(c);
 *
 * Conventions:
 *  - Functions that can fail return 0 or a negative errno and fill *err (the last parameter). The
 *    library never prints and never exits; verbose tracing goes to the log callback.
 *  - Strings passed in are copied unless stated otherwise.
 *  - Threads: cordon_run() forks with clone() and the child allocates memory. In a multi-threaded
 *    host another thread may hold the malloc lock at the time of the fork; call cordon_run() from a
 *    single-threaded process, or from a process that forks a helper first. The sandbox is tied to
 *    the *thread* that called cordon_run() (PR_SET_PDEATHSIG): if that thread exits, the sandbox
 *    is killed. Run as root, the calling thread holds the sandbox's host id as its effective id
 *    for the clone (a few system calls: README "Identity"); a setuid() in another thread at that
 *    moment reaches it too (glibc), and cordon then leaves it with the new ids, not root's.
 *  - cordon_run() blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH in the
 *    calling thread while the sandbox runs, forwards them to the command, and restores the mask.
 *  - The command runs in a process group of its own. When the calling process is the foreground
 *    of its controlling terminal, the command is made the foreground for the run; when the
 *    command is stopped (Ctrl-Z), cordon_run() takes the terminal back and stops the calling
 *    process with the same kind of signal (as a shell job; the deadline keeps running inside),
 *    and continues the command when it is continued. The terminal's modes, flow control and
 *    foreground are restored when cordon_run() returns.
 */
#ifndef CORDON_H
#define CORDON_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORDON_PUBLIC __attribute__((visibility("default")))

/* Exit status of the cordon tool, and cordon_result.exit_code. */
#define CORDON_EXIT_TIMEOUT     124 /* the wall-clock timeout fired */
#define CORDON_EXIT_FAILURE     125 /* cordon failed: bad option, setup failure */
#define CORDON_EXIT_NOEXEC      126 /* the command was found but could not be executed */
#define CORDON_EXIT_NOTFOUND    127 /* the command was not found */
#define CORDON_EXIT_SIGNAL_BASE 128 /* 128+N: the command died of signal N */

/* Host uids and gids of root's sandboxes: each sandbox of a root caller runs as an id of its own
 * from CORDON_ROOT_HOST_ID to CORDON_ROOT_HOST_ID + CORDON_ID_RANGE_SIZE - 1 (never two live
 * sandboxes on one), and its workdir is mounted with an id mapping so that this id writes files
 * owned by the workdir's owner (README "Identity"). */
#define CORDON_ROOT_HOST_ID 2000000000u
#define CORDON_ID_RANGE_SIZE 65536u
/* uid and gid the command has inside in that case (an ordinary unprivileged id, named "cordon"
 * when the system has no account for it); --uid/--gid choose another, 0 included. */
#define CORDON_SANDBOX_ID 65532u

/* Pseudo-terminals one sandbox may have open at once in its /dev/pts (devpts max=). Every
 * devpts but the host's shares the kernel's kernel.pty.max less kernel.pty.reserve (3072 by
 * default) with all containers of the host: without a cap, one sandbox could take them all. */
#define CORDON_PTY_MAX 64

/* Schema version of the JSON report (docs/report.md). */
#define CORDON_REPORT_VERSION 1

/* An error. Fixed size so that it can travel between processes as-is. */
struct cordon_error {
	int code;      /* positive errno; 0 when not an OS error */
	char step[28]; /* where: an option name ("timeout"), a setup step ("mount", "exec") */
	char msg[480]; /* what failed, naming the path or token */
};

enum cordon_net {
	CORDON_NET_NONE = 0, /* new network namespace with only loopback, up (default) */
	CORDON_NET_HOST = 1, /* the host's network namespace (no network isolation) */
};

enum cordon_outcome {
	CORDON_OUTCOME_EXITED = 0,  /* the command exited; exit_code is its status */
	CORDON_OUTCOME_SIGNALED,    /* the command died of a signal */
	CORDON_OUTCOME_TIMEOUT,     /* the wall-clock timeout fired and the sandbox was killed */
	CORDON_OUTCOME_SETUP_ERROR, /* the sandbox could not be set up, or exec failed */
	CORDON_OUTCOME_OOM,         /* the memory limit killed the sandbox (exit code 137) */
};

/* What happened. Filled by cordon_run(), also when it fails. */
struct cordon_result {
	enum cordon_outcome outcome;
	int exit_code;         /* what a wrapper should exit with (see CORDON_EXIT_*) */
	int status;            /* the command's exit status, when outcome is EXITED */
	int signal;            /* the signal that killed the command, when SIGNALED/TIMEOUT */
	char id[33];           /* sandbox id: 32 hex digits */
	uint64_t startup_ns;   /* from cordon_run() to the command's execve() */
	uint64_t wall_ns;      /* from the command's execve() to the end of the sandbox */
	uint64_t user_ns;      /* CPU time of every process in the sandbox, user mode */
	uint64_t system_ns;    /* and kernel mode */
	uint64_t max_rss_kb;   /* largest resident set size of any process in the sandbox */
	/* from the sandbox's cgroup, when it had one (has_cgroup_usage) */
	int has_cgroup_usage;
	uint64_t memory_peak_bytes; /* memory.peak (0 where the kernel lacks it) */
	uint64_t cgroup_user_ns;    /* cpu.stat */
	uint64_t cgroup_system_ns;
	uint64_t pids_peak;         /* pids.peak (0 where the kernel lacks it) */
	uint64_t oom_kills;         /* memory.events oom_kill */
	/* --capture, when on (has_capture): bytes kept in DIR/stdout and DIR/stderr; truncated: a
	 * copy reached its bound (README "Limits"), while the caller still got everything */
	int has_capture;
	uint64_t capture_bytes[2];
	int capture_truncated;
	/* the egress proxy (--allow-net), when it ran (has_proxy) */
	int has_proxy;
	struct cordon_proxy_counts {
		uint64_t connections; /* accepted from the sandbox */
		uint64_t allowed;     /* tunnelled to a server */
		uint64_t refused;     /* 403: not on the allow-list, or DNS rebinding */
		uint64_t failed;      /* 502/504: name or connection failed */
		uint64_t malformed;   /* 400 */
		uint64_t over_cap;    /* 503: over --net-max-connections */
		uint64_t timed_out;   /* closed for idleness (408, or a tunnel gone quiet) */
		uint64_t bytes_up;    /* sandbox -> servers */
		uint64_t bytes_down;  /* servers -> sandbox */
	} proxy;
	struct cordon_error error; /* the failure, when outcome is SETUP_ERROR */
	/* a copy-on-write workdir: the layer its changes were saved as ("" when nothing changed
	 * or none was saved: see layer_error), and how many changes it holds */
	char layer_id[17];
	uint64_t layer_changes;
	uint64_t layer_skipped;       /* FIFOs, sockets: not kept */
	int layer_full;               /* the layer's tmpfs was full at the end: writes failed */
	struct cordon_error layer_error; /* saving failed: the changes are lost, said here */
	/* protected paths the sandbox created in a direct workdir, removed after the run */
	uint64_t protect_removed;
};

/* Receives one line of verbose tracing (no newline). */
typedef void (*cordon_log_fn)(void *userdata, const char *line);

struct cordon_config;

/* A config with every default: workdir = current directory, network none, no timeout,
 * kill-after 2s, core dumps off. NULL when out of memory. */
CORDON_PUBLIC struct cordon_config *cordon_config_new(void);
/* Accepts NULL. */
CORDON_PUBLIC void cordon_config_free(struct cordon_config *c);

/* The command and its arguments, NULL-terminated; argv[0] is looked up in the sandbox's PATH
 * unless it contains a slash. Required. */
CORDON_PUBLIC int cordon_config_set_command(struct cordon_config *c, const char *const argv[],
					    struct cordon_error *err);

/* The one read-write host directory (README "Workdir"). Checked when set and opened again, once,
 * by cordon_run(), which uses that descriptor for every step: the path is walked one component
 * at a time, following only symlinks owned by root or the caller, never a symlink as its last
 * component. Refused: the system trees and everything below them, /var (but /var/tmp/...),
 * /tmp itself, home directories and what holds them, credential stores (.ssh, .config, ...),
 * the caller's PATH directories and what holds them; the message names the rule. */
CORDON_PUBLIC int cordon_config_set_workdir(struct cordon_config *c, const char *dir,
					    struct cordon_error *err);
/* Where the workdir appears inside (absolute); default: the same path as outside. */
CORDON_PUBLIC int cordon_config_set_workdir_target(struct cordon_config *c, const char *path,
						   struct cordon_error *err);
/* Where the command starts: absolute, inside, or relative to the workdir (refused when a ".."
 * climbs out of it); default: the workdir. */
CORDON_PUBLIC int cordon_config_set_chdir(struct cordon_config *c, const char *path,
					  struct cordon_error *err);
/* A directory to use as the read-only root instead of the host's "/". */
CORDON_PUBLIC int cordon_config_set_rootfs(struct cordon_config *c, const char *dir,
					   struct cordon_error *err);

/* Copy-on-write workdir (README "Copy-on-write workdir"): the command sees the workdir
 * read-write, but what it writes lands in a layer of its own, an overlay's upper layer on a tmpfs
 * of at most cow_size bytes (default 1 GiB; charged to the sandbox's memory as it fills); the
 * workdir is not changed. When the sandbox ends its changes are saved as a layer in the layer
 * store (layer_dir; default $XDG_STATE_HOME/cordon/layers, /var/lib/cordon/layers for root;
 * refused in the workdir, by any path or mount, and below an earlier sandbox's workdir),
 * its id in the result, to review (cordon_layer_diff), apply or discard. Needs overlayfs in a
 * user namespace and user extended attributes on tmpfs (Linux 6.6): refused where missing. */
CORDON_PUBLIC int cordon_config_set_cow(struct cordon_config *c, int on, struct cordon_error *err);
CORDON_PUBLIC int cordon_config_set_cow_size(struct cordon_config *c, uint64_t size,
					     struct cordon_error *err);
CORDON_PUBLIC int cordon_config_set_layer_dir(struct cordon_config *c, const char *dir,
					      struct cordon_error *err);
/* Start from the changes of a kept layer (its id), as if they had been made in this run: a
 * session forked from another's changes. Implies copy-on-write. */
CORDON_PUBLIC int cordon_config_set_cow_from(struct cordon_config *c, const char *id,
					     struct cordon_error *err);
/* Protected paths inside the workdir (README "Protected paths"): glob relative to the workdir
 * ("*", "?", "[...]" within a name, "**" for any number of directories). deny 0: read-only;
 * deny 1: hidden (empty, unreadable). A path without wildcards is protected whether or not it
 * exists (one that does not exist cannot be created; in a direct workdir, cordon removes what
 * was made there after the run, see README); a glob, in what it matches when the run starts.
 * The directories above a protected path cannot be renamed or removed during the run. */
CORDON_PUBLIC int cordon_config_protect(struct cordon_config *c, const char *glob, int deny,
					struct cordon_error *err);
/* The default set of protected paths for agents (README), on unless turned off here. */
CORDON_PUBLIC int cordon_config_set_default_protect(struct cordon_config *c, int on,
						    struct cordon_error *err);

/* Extra read-only bind of host path src at dst inside (dst NULL: same path). */
CORDON_PUBLIC int cordon_config_add_ro_bind(struct cordon_config *c, const char *src,
					    const char *dst, struct cordon_error *err);
/* Extra writable tmpfs at path inside, capped at size bytes (0: the default, 64 MiB). */
CORDON_PUBLIC int cordon_config_add_tmpfs(struct cordon_config *c, const char *path,
					  uint64_t size, struct cordon_error *err);
/* Hide a path: an empty read-only directory over a directory, an empty file over a file. A path
 * that does not exist has nothing to hide and is skipped. */
CORDON_PUBLIC int cordon_config_add_hide(struct cordon_config *c, const char *path,
					 struct cordon_error *err);
/* Size cap of HOME, a fresh tmpfs (README "What the sandbox looks like"); default 1 GiB, charged
 * to the sandbox's memory as it fills. */
CORDON_PUBLIC int cordon_config_set_home_size(struct cordon_config *c, uint64_t size,
					      struct cordon_error *err);
/* The git identity inside: "Name <email>" becomes GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL,
 * GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL (HOME is empty: git has none otherwise). */
CORDON_PUBLIC int cordon_config_set_git_identity(struct cordon_config *c, const char *spec,
						 struct cordon_error *err);
/* Size cap of the sandbox's /tmp and /var/tmp (each); default 256 MiB. */
CORDON_PUBLIC int cordon_config_set_tmp_size(struct cordon_config *c, uint64_t size,
					     struct cordon_error *err);

CORDON_PUBLIC int cordon_config_set_net(struct cordon_config *c, enum cordon_net net,
					struct cordon_error *err);
/* Join a namespace someone else made (an engine's pod: the pause container's network, ipc and
 * uts) instead of making the sandbox's own: nstype is CLONE_NEWNET, CLONE_NEWIPC or CLONE_NEWUTS
 * (<sched.h>), fd a descriptor of it open for reading (/run/netns/X, /proc/PID/ns/net; not
 * O_PATH). Copies fd (close-on-exec; closed by cordon_config_free). Refused: another type, a
 * file that is not a namespace, the caller's own namespace or pid 1's (the host's: for the
 * host's network use CORDON_NET_HOST). The sandbox's user namespace is still its own, made
 * below the caller's: it holds no capability over the joined namespace, so nothing in it can be
 * configured from inside (addresses, routes, sethostname). cordon_run() joins it from the thread
 * that runs the sandbox (a session's: its supervisor process), which needs CAP_SYS_ADMIN over
 * the namespace's owner, and comes back to its own after the clone, where it may: not where its
 * own belongs to a user namespace above the one it runs in (uid 0 of rootless podman's user
 * namespace, say), and then that thread stays in the joined namespace. With a joined network:
 * no loopback set up, no resolver or /etc/resolv.conf of cordon's, the host's /sys read-only
 * (as CORDON_NET_HOST), no allow-list (refused), not with CORDON_NET_HOST; with a joined uts:
 * no hostname set (refused with cordon_config_set_hostname). */
CORDON_PUBLIC int cordon_config_join_ns(struct cordon_config *c, int nstype, int fd,
					struct cordon_error *err);
/* Egress allow-list (README "Network"): let the sandbox reach HOST[:PORT] through cordon's
 * proxy, and nothing else. "example.com", "*.example.com", "192.0.2.1", "[2001:db8::1]:8443";
 * ports default to 80 and 443. Any entry turns the proxy on (not with CORDON_NET_HOST). The proxy
 * runs in cordon_run()'s thread; it raises the process's soft RLIMIT_NOFILE toward the hard limit
 * (six fds a connection) and keeps SIGPIPE blocked in that thread while it runs. */
CORDON_PUBLIC int cordon_config_allow_net(struct cordon_config *c, const char *spec,
					  struct cordon_error *err);
/* The proxy closes a connection idle this long (request head, connect, or no bytes either way);
 * default 60 s. */
CORDON_PUBLIC int cordon_config_set_net_idle_timeout(struct cordon_config *c, uint64_t ns,
						     struct cordon_error *err);
/* The most proxied connections open at once (default 256); more are answered 503. */
CORDON_PUBLIC int cordon_config_set_net_max_connections(struct cordon_config *c, unsigned n,
							struct cordon_error *err);

/* Wall-clock limit for the command, in ns (0: none). When it fires, every process in the sandbox
 * gets SIGTERM, and SIGKILL kill_after ns later (default 2 s). */
CORDON_PUBLIC int cordon_config_set_timeout(struct cordon_config *c, uint64_t ns,
					    struct cordon_error *err);
CORDON_PUBLIC int cordon_config_set_kill_after(struct cordon_config *c, uint64_t ns,
					       struct cordon_error *err);

/* A resource limit (RLIMIT_*) for the command; RLIM_INFINITY for unlimited. Limits cannot be
 * raised above the caller's own hard limit. RLIMIT_CORE defaults to 0. */
CORDON_PUBLIC int cordon_config_set_rlimit(struct cordon_config *c, int resource, uint64_t soft,
					   uint64_t hard, struct cordon_error *err);

/* The environment is cleared; then PATH, TERM, LANG, LC_*, TZ are kept from the caller and HOME,
 * USER, LOGNAME set for the sandbox. set_env adds KEY=VALUE; pass_env keeps the caller's KEY. */
CORDON_PUBLIC int cordon_config_set_env(struct cordon_config *c, const char *key,
					const char *value, struct cordon_error *err);
CORDON_PUBLIC int cordon_config_pass_env(struct cordon_config *c, const char *key,
					 struct cordon_error *err);

/* This sandbox is one of at most n at once that share the caller's per-user kernel budgets
 * (inotify instances and watches, processes, POSIX message queue bytes, pending signals): when
 * it runs as the caller's own uid (an unprivileged caller; README "Identity"), it gets 1/n of
 * each, so that no one sandbox can take them all from the others and the caller. A root caller's sandboxes have host
 * ids of their own, and budgets with them: n changes nothing there. Default 1 (no division);
 * cordon serve, unprivileged, sets its --max-sandboxes plus its pool plus one. */
CORDON_PUBLIC int cordon_config_set_user_share(struct cordon_config *c, unsigned n,
					       struct cordon_error *err);

/* A sysctl of the sandbox's own namespaces, written by its setup inside them (its procfs),
 * before the command starts: net.* (its network namespace: refused by cordon_run() with
 * CORDON_NET_HOST), kernel.shmmax, shmall, shmmni, shm_rmid_forced, msgmax, msgmnb, msgmni, sem,
 * {msg,sem,shm}_next_id and fs.mqueue.* (its IPC namespace: writable by its root, uid 0 inside).
 * key is dotted ("net.ipv4.ip_forward") or slashed ("net/ipv4/conf/eth0.1/forwarding"); value at
 * most 256 bytes of one line. Any other key is refused naming it (it would change the host's);
 * kernel.hostname is cordon_config_set_hostname(). The same key again replaces its value; at most
 * 64. net.ipv4.ping_group_range is clamped to the one gid the sandbox maps (a notice says so). A
 * write the kernel refuses fails the run (125: "sysctl: KEY: why"). Copies. */
CORDON_PUBLIC int cordon_config_set_sysctl(struct cordon_config *c, const char *key,
					   const char *value, struct cordon_error *err);

/* Hostname inside (default "cordon"). */
CORDON_PUBLIC int cordon_config_set_hostname(struct cordon_config *c, const char *name,
					     struct cordon_error *err);
/* uid and gid inside (default: the caller's own; for root, the workdir's owner, or
 * CORDON_SANDBOX_ID; see README "Identity"). 0 is allowed, and holds no capability. */
CORDON_PUBLIC int cordon_config_set_uid(struct cordon_config *c, uid_t uid,
					struct cordon_error *err);
CORDON_PUBLIC int cordon_config_set_gid(struct cordon_config *c, gid_t gid,
					struct cordon_error *err);
/* The account of the inside uid and gid: its name (USER, LOGNAME, whoami, id; also the group's)
 * and its home (HOME). Its lines replace, in the sandbox's /etc/passwd and /etc/group, those the
 * root has for that uid, gid or name (default: the root's account for the uid, or one named
 * "cordon": README "Identity"). A home that is the workdir target makes HOME the workdir itself
 * (nothing is made or seeded in it); any other is a fresh tmpfs, as HOME always is. Copies. */
CORDON_PUBLIC int cordon_config_set_account(struct cordon_config *c, const char *name,
					    const char *home, struct cordon_error *err);

/* Write the JSON report to a file (created when the run starts, outside the workdir, under a
 * temporary name renamed into place at the end: README "Outputs") or to an open fd (borrowed
 * until cordon_run() returns). The report's outcome is cordon's verdict: the command can print
 * anything and exit with any status, 124 and 125 included. */
CORDON_PUBLIC int cordon_config_set_report_file(struct cordon_config *c, const char *path,
						struct cordon_error *err);
CORDON_PUBLIC int cordon_config_set_report_fd(struct cordon_config *c, int fd,
					      struct cordon_error *err);

/* For callers that exit right after cordon_run(), like the cordon tool: return as soon as every
 * process of the sandbox has been killed and reaped, without waiting for the kernel to tear the
 * namespaces down (about 2 ms). The sandbox's init, which has nothing left to do but exit, then
 * stays an unreaped child of the caller until the caller exits or reaps it; so does, where the
 * sandbox had a cgroup, the process that removes the cgroup once it is empty, which shares the
 * caller's memory (CLONE_VM) and keeps a 40 KiB mapping of it. Off by default. */
CORDON_PUBLIC void cordon_config_set_fast_exit(struct cordon_config *c, int on);

/* Verbose tracing of what is set up, step by step. fn may be NULL (off, the default). With
 * CORDON_TIMING set in the environment, fn also gets one line per step of a run, each starting
 * "cordon-timing " (bench/phases reads them); the sandbox's own processes (its pid 1, the
 * command's before its exec) write theirs on the command's stderr. */
CORDON_PUBLIC void cordon_config_set_log(struct cordon_config *c, cordon_log_fn fn,
					 void *userdata);
/* Notices: what the user should see even without tracing, one line each (no newline), while the
 * sandbox runs: "egress refused: HOST:PORT: not on the allow-list" (once per host and port: a
 * tool may turn the proxy's 403 into a message of its own). The cordon tool prints them on
 * stderr unless -q. fn may be NULL (off, the default). */
CORDON_PUBLIC void cordon_config_set_notice(struct cordon_config *c, cordon_log_fn fn,
					    void *userdata);

/* The seccomp policy (seccomp-policies/README.md): a NAME, looked up as NAME.policy in the
 * installed policy directory and then the source tree's seccomp-policies/, or a PATH (with a '/'
 * or ending in .policy). "none": no filter (the report says so). Default: "default". The file is
 * parsed and compiled by cordon_run(), before anything starts; errors name file:line:col. */
CORDON_PUBLIC int cordon_config_set_seccomp_policy(struct cordon_config *c,
						   const char *name_or_path,
						   struct cordon_error *err);
/* Learning mode: what the policy would deny is allowed and logged by the kernel
 * (SECCOMP_RET_LOG: the audit log, or dmesg as "audit: type=1326"). Off by default. */
CORDON_PUBLIC void cordon_config_set_seccomp_log(struct cordon_config *c, int on);
/* libseccomp's binary-tree dispatch (on by default); off compiles a linear list, for
 * benchmarks. */
CORDON_PUBLIC void cordon_config_set_seccomp_optimize(struct cordon_config *c, int on);

/* A seccomp program of the caller's own, for a session's commands: classic BPF as the kernel
 * takes it (struct sock_filter instructions, as libseccomp's seccomp_export_bpf() writes them):
 * len bytes, a multiple of 8, 1 to 4096 instructions. Every command cordon_session_exec()
 * starts installs it as the last step before its exec, after cordon's own filters, which stay:
 * the kernel runs them all and the strictest answer wins, so it can only deny more. cordon's
 * agent, which starts the commands, does not run under it. flags: 0 or SECCOMP_FILTER_FLAG_LOG
 * (SECCOMP_FILTER_FLAG_SPEC_ALLOW is accepted and changes nothing: cordon's filters came first
 * without it). The kernel checks the instructions when a command installs them: a program it
 * refuses fails that command's start (step "seccomp"). len 0 removes it. Copies. Sessions only:
 * cordon_run() fails (EINVAL) with one set. */
CORDON_PUBLIC int cordon_config_set_seccomp_bpf(struct cordon_config *c, const void *insns,
						size_t len, unsigned flags,
						struct cordon_error *err);

/* Parse and compile a policy without running anything. On success *ret_text (malloc'd, the
 * caller frees it) describes it: the default action, every rule with where it was written,
 * and the size of the BPF program. */
CORDON_PUBLIC int cordon_policy_describe(const char *name_or_path, char **ret_text,
					 struct cordon_error *err);
/* The default protected paths (README "Protected paths"): with path NULL, the list in force
 * (the installed protected-paths/default.list, else the binary's own); else the list in the file
 * at path, checked. On success *ret_text (malloc'd, the caller frees it) is a comment line
 * naming its source, then one entry a line: "protect|deny PATH [refuse|drop]". */
CORDON_PUBLIC int cordon_protect_describe(const char *path, char **ret_text,
					  struct cordon_error *err);

/* The audit trail (docs/audit.md): a JSON Lines log of the session at path: start, every
 * exec, every file changed in the workdir, limits, signals, exit. Created anew before anything
 * starts, outside the workdir; a path that cannot be written fails the run. */
CORDON_PUBLIC int cordon_config_set_audit_file(struct cordon_config *c, const char *path,
					       struct cordon_error *err);
/* Keep the sandbox's stdout and stderr in dir/stdout and dir/stderr (dir is made if missing,
 * outside the workdir), while passing them on to the caller's, byte for byte (through pipes:
 * the command does not see a terminal then). Passing them on never blocks cordon: a caller that
 * does not read holds the sandbox's writes, not its timeout. */
CORDON_PUBLIC int cordon_config_set_capture_dir(struct cordon_config *c, const char *dir,
						struct cordon_error *err);

/* --- cgroup v2 limits (README "Limits") --- */
#define CORDON_UNLIMITED UINT64_MAX

enum cordon_cgroup_mode {
	CORDON_CGROUP_AUTO = 0,    /* use a cgroup where one can be made; defaults never fail */
	CORDON_CGROUP_REQUIRED,    /* fail (125) when no cgroup can be made */
	CORDON_CGROUP_BEST_EFFORT, /* apply what can be, rlimit fallbacks, record the rest */
	CORDON_CGROUP_OFF,         /* no cgroup; explicit limits are then an error */
};

/* memory.max of the sandbox, bytes (at least 1 MiB); CORDON_UNLIMITED: none. Default 4 GiB.
 * The sandbox is one OOM unit (memory.oom.group): where that cannot be set, an explicit memory
 * limit fails like the limit itself (unless best-effort); a default one runs, recorded. */
CORDON_PUBLIC int cordon_config_set_memory(struct cordon_config *c, uint64_t bytes,
					   struct cordon_error *err);
/* memory.swap.max; default 0: the sandbox does not swap. */
CORDON_PUBLIC int cordon_config_set_memory_swap(struct cordon_config *c, uint64_t bytes,
						struct cordon_error *err);
/* CPU bandwidth in thousandths of a CPU (500: half a CPU); CORDON_UNLIMITED: none (default). */
CORDON_PUBLIC int cordon_config_set_cpus(struct cordon_config *c, uint64_t millicpus,
					 struct cordon_error *err);
/* pids.max; CORDON_UNLIMITED: none. Default 1024. */
CORDON_PUBLIC int cordon_config_set_pids(struct cordon_config *c, uint64_t n,
					 struct cordon_error *err);
CORDON_PUBLIC int cordon_config_set_cgroup_mode(struct cordon_config *c,
						enum cordon_cgroup_mode mode,
						struct cordon_error *err);
/* The parent cgroup (an existing directory of a cgroup2 mount). Default: root: the cgroup
 * "cordon" under the cgroup2 root; unprivileged: a delegated subtree around the caller's own
 * cgroup (see README). */
CORDON_PUBLIC int cordon_config_set_cgroup_parent(struct cordon_config *c, const char *path,
						  struct cordon_error *err);

/* --- the table of limits: every cgroup limit and every RLIMIT_* (README "Limits") --- */
enum cordon_limit_kind {
	CORDON_LIMIT_CGROUP = 0, /* a file of the sandbox's cgroup: one value, for the sandbox */
	CORDON_LIMIT_RLIMIT,     /* setrlimit() in the command's process: soft and hard */
};

enum cordon_limit_unit {
	CORDON_UNIT_BYTES = 0,
	CORDON_UNIT_COUNT,
	CORDON_UNIT_MILLICPU,     /* thousandths of a CPU */
	CORDON_UNIT_SECONDS,
	CORDON_UNIT_MICROSECONDS,
};

/* One limit, as a front end shows it. Static storage; fields may be added at the end. */
struct cordon_limit_info {
	const char *name; /* "memory", "nofile": for cordon_config_set_limit() */
	enum cordon_limit_kind kind;
	enum cordon_limit_unit unit;
	const char *file;    /* CGROUP: the cgroup file ("memory.max"); else NULL */
	int resource;        /* RLIMIT: RLIMIT_*; else -1 */
	const char *option;  /* the cordon tool's option for it ("cpu-time"); NULL: none */
	char short_option;   /* 0: none */
	const char *metavar; /* "SIZE" */
	const char *help;    /* one line for --help */
};

/* The i-th limit (0, 1, ...); NULL past the last. The cgroup limits come first. */
CORDON_PUBLIC const struct cordon_limit_info *cordon_limit_info(size_t i);
/* Set the limit called name (case-insensitive; RLIMIT_NOFILE and nofile alike). A cgroup limit
 * has one value: soft, and hard equal to it; CORDON_UNLIMITED (== RLIM_INFINITY): none. The same
 * checks as the setters above and cordon_config_set_rlimit(). */
CORDON_PUBLIC int cordon_config_set_limit(struct cordon_config *c, const char *name,
					  uint64_t soft, uint64_t hard, struct cordon_error *err);

/* Parsers for the command line's values; pure functions.
 * Sizes: 4096, 512K, 64M, 1.5G, 2T (powers of 1024; optional B or iB).
 * Durations: 10 (seconds), 500ms, 30s, 1.5s, 2m, 1h, 1d, 100us, 20ns. */
CORDON_PUBLIC int cordon_parse_size(const char *s, uint64_t *ret, struct cordon_error *err);
CORDON_PUBLIC int cordon_parse_duration(const char *s, uint64_t *ret_ns,
					struct cordon_error *err);
/* "NAME=SOFT[:HARD]": NAME as in RLIMIT_NAME (nofile, as, cpu, ...), case-insensitive; values
 * take sizes, durations (cpu: seconds, rttime: microseconds) or counts, or "unlimited". */
/* "0.5", "2", "1.25": CPUs, in thousandths (0 and negatives refused). */
CORDON_PUBLIC int cordon_parse_cpus(const char *s, uint64_t *ret_millicpus,
				    struct cordon_error *err);
CORDON_PUBLIC int cordon_parse_rlimit(const char *spec, int *ret_resource, uint64_t *ret_soft,
				      uint64_t *ret_hard, struct cordon_error *err);
/* The value of the limit called name as its own option takes it: cgroup limits one value or
 * "unlimited"/"max"; rlimits "SOFT[:HARD]" as in cordon_parse_rlimit(), except cpu, which takes
 * one duration (more than 0) and gets a hard limit one second above it (SIGXCPU, then SIGKILL). */
CORDON_PUBLIC int cordon_parse_limit(const char *name, const char *s, uint64_t *ret_soft,
				     uint64_t *ret_hard, struct cordon_error *err);

/* Run the configured command in a new sandbox and wait for the sandbox to end.
 * Returns 0 when the command ran (whatever its status) and the report and audit trail, if any,
 * were written whole; negative when cordon failed. In both cases *res is filled and the report
 * written if it can be. A report that cannot be written (err->step "report", err->msg "PATH:
 * why"), or an audit trail that lacks events (err->step "audit": a write failed, say the disk
 * is full), is a failure: res then keeps the command's outcome, status and signal, and
 * res->exit_code is CORDON_EXIT_FAILURE. */
CORDON_PUBLIC int cordon_run(struct cordon_config *c, struct cordon_result *res,
			     struct cordon_error *err);

/* --- sessions (README "Sessions"): a sandbox that stays up and runs many commands ---
 *
 *   struct cordon_session *s;
 *   struct cordon_process *p;
 *   const char *argv[] = { "python3", "-c", "print(1)", NULL };
 *   struct cordon_exec e = { .argv = argv, .fd = { -1, out, err } };
 *
 *   cordon_session_create(c, 0, &s, &err);          // the config's isolation, no command
 *   cordon_session_exec(s, &e, &p, &err);           // as often as wanted, at once or in turn
 *   cordon_process_wait(p, UINT64_MAX, &status, &err);
 *   cordon_process_free(p);
 *   cordon_session_destroy(s, &res, &err);           // everything in it dies; res, the report
 *
 * A session has everything a run has (identity, mounts, seccomp, cgroup limits, rlimits, the
 * egress proxy, the audit trail, the report); the config's command is not used, its timeout is
 * the session's time to live from creation. Inside, cordon's agent (cordon-agent, run from the
 * descriptor cordon opened, like any command: the sandbox's identity, filters and limits) starts
 * the commands and does the file operations, so that no host process follows a path the sandbox
 * controls. The session is held by a supervisor process forked from the caller; it ends, and
 * everything in it dies, when the caller destroys it, when the caller exits or dies (even of
 * SIGKILL: its end of the supervisor's socket closes), at the time to live, or when the agent
 * ends. Every function here may be
 * called from any thread; one session's functions may run in several threads at once, but one
 * process handle is used by one thread at a time. Replies from inside are checked as untrusted.
 *
 * Threads and cordon_session_create(): the supervisor is a fork() of the caller that goes on
 * running cordon's code. glibc makes malloc usable after a fork, but any other lock another
 * thread holds at that moment stays held in the supervisor: the user database's (getpwuid(),
 * which cordon calls for the caller's own account), a FILE's your log callback writes to; under
 * a sanitizer's allocator (ASan's), malloc's too, which a thread also takes as it starts or
 * ends. A multi-threaded caller creates sessions one at a time, and keeps its other threads out
 * of getpw*()/getgr*() meanwhile, and its log callback off stdio locks (write(2)); cordon serve
 * does so. The other functions start nothing in the caller's process.
 */
struct cordon_session;
struct cordon_process;

/* Remove the workdir (the directory and all it holds) when the session ends: for a fresh
 * directory per session. Removed without following any symlink, after every process is gone;
 * by the supervisor, or by cordon_session_destroy() when the supervisor died first (SIGKILL):
 * the directory create found (resolved as the sandbox's workdir is: a symlink on the path only
 * of root's or the caller's, never the last name), checked to be the same one at removal. */
#define CORDON_SESSION_REMOVE_WORKDIR 0x1u
/* A session to freeze (cordon_session_freeze): it gets a cgroup of its own wherever one can be
 * made, even where the cgroup offers none of the controllers cordon's limits use (a cgroup
 * whose only use is cgroup.freeze). Where none can be made it runs all the same, unfreezable. */
#define CORDON_SESSION_FREEZABLE 0x2u

/* Make a session from c (c may be freed or reused afterwards). Returns once the sandbox is
 * ready for commands; a setup failure is returned like cordon_run()'s. */
CORDON_PUBLIC int cordon_session_create(const struct cordon_config *c, unsigned flags,
					struct cordon_session **ret, struct cordon_error *err);
/* Hand a session to another process: a multi-threaded program makes its sessions in a
 * single-threaded helper process it forked early (cordon serve does), which exports each to it.
 * fds[0] and fds[1] (close-on-exec) are the caller's to pass (SCM_RIGHTS) and close; s is freed
 * without ending the session. The session is held by whoever holds fds[1]. */
CORDON_PUBLIC int cordon_session_export(struct cordon_session *s, int ret_fds[2],
					char ret_id[33], pid_t *ret_pid);
/* Take a session another process exported (its descriptors are ours from now on). Its
 * supervisor is not our child: cordon_session_destroy() then learns how it ended from its
 * message alone. */
CORDON_PUBLIC int cordon_session_import(const int fds[2], const char *id, pid_t pid,
					struct cordon_session **ret, struct cordon_error *err);
/* The sandbox id (32 hex digits), as in the report. */
CORDON_PUBLIC const char *cordon_session_id(const struct cordon_session *s);
/* The supervisor's pid (for figures: the session's host memory is its and pid 1's). */
CORDON_PUBLIC pid_t cordon_session_pid(const struct cordon_session *s);
/* Readable (POLLIN or POLLHUP) once the session has ended on its own: the time to live, the
 * agent's end; cordon_session_destroy() then says how. */
CORDON_PUBLIC int cordon_session_fd(const struct cordon_session *s);
/* Bound every later call on s that waits on the sandbox's agent (exec, stat, list, open_read,
 * write, upload_finish, mkdir, remove, rename): it ends with err->code ECANCELED once cancel_fd
 * (borrowed; -1: none) is readable, and with ETIMEDOUT when the whole call takes longer than
 * call_ns (0: 60 s for each message, as without this call); a listing holds at most list_bytes
 * of paths, names and link targets (0: 64 MiB; more: E2BIG). Call it before s is shared between
 * threads. 0, or -EINVAL. */
CORDON_PUBLIC int cordon_session_set_bounds(struct cordon_session *s, int cancel_fd,
					    uint64_t call_ns, size_t list_bytes);
/* Kill everything in the session now (pid 1, and the whole sandbox with it) without waiting
 * and without freeing s: calls on s in other threads then fail (ESRCH) as its agent goes.
 * cordon_session_destroy() still tears down and frees. Any thread. 0, or -errno. */
CORDON_PUBLIC int cordon_session_kill(struct cordon_session *s);

/* A command to start in a session. */
struct cordon_exec {
	const char *const *argv; /* NULL-terminated; argv[0] looked up in PATH inside unless it
				  * has a slash */
	const char *const *env;  /* KEY=VALUE, added to the session's environment (replacing a
				  * KEY it has); NULL: none */
	const char *cwd;         /* inside: absolute, or relative to the workdir; NULL: the workdir */
	int fd[3];               /* stdin, stdout, stderr: descriptors of the caller's, passed in
				  * (the caller keeps its own); -1: /dev/null */
	unsigned flags;
};
/* fd[0..2] are one terminal's slave side: it becomes the command's controlling terminal (a
 * session of its own). Without it the command gets a process group of its own. */
#define CORDON_EXEC_TTY 0x1u

/* Start a command. Once it returns 0 the command was executed (*ret: its handle); a command
 * that cannot be (not found, not executable, no such directory) fails with err->code ENOENT,
 * EACCES, ... and err->step "exec". Signals and waiting go through the handle. */
CORDON_PUBLIC int cordon_session_exec(struct cordon_session *s, const struct cordon_exec *e,
				      struct cordon_process **ret, struct cordon_error *err);
/* Its pid inside the sandbox. */
CORDON_PUBLIC pid_t cordon_process_pid(const struct cordon_process *p);
/* Readable once it has ended (or the session has). */
CORDON_PUBLIC int cordon_process_fd(const struct cordon_process *p);
/* Send sig to its process group (to the process alone when group is 0). Never waits: EAGAIN
 * when the agent has not read the signals sent before (the sandbox stopped it). */
CORDON_PUBLIC int cordon_process_signal(struct cordon_process *p, int sig, int group,
					struct cordon_error *err);
/* Wait up to timeout_ns (0: do not wait; UINT64_MAX: as long as it takes). 1: it ended,
 * *ret_status is its wait status (WIFEXITED ...); 0: still running; -ESRCH: the session ended
 * first; other -errno. */
CORDON_PUBLIC int cordon_process_wait(struct cordon_process *p, uint64_t timeout_ns,
				      int *ret_status, struct cordon_error *err);
/* Forget the handle; a process still running runs on (until the session ends). */
CORDON_PUBLIC void cordon_process_free(struct cordon_process *p);

/* --- a session's files, seen and touched from inside (by the agent, as the sandbox) --- */
enum cordon_file_type {
	CORDON_FILE_OTHER = 0,
	CORDON_FILE_REGULAR,
	CORDON_FILE_DIRECTORY,
	CORDON_FILE_SYMLINK,
};

struct cordon_file_info {
	char *path;        /* absolute, inside */
	char *name;        /* the last component */
	enum cordon_file_type type;
	uint32_t mode;     /* st_mode */
	uint64_t size;
	uint32_t uid, gid; /* inside */
	int64_t mtime_ns;  /* since the epoch */
	char *link_target; /* symlinks: what it points to; else NULL */
};

/* Paths are absolute inside, or relative to the workdir. Errors: err->code is the errno inside
 * (ENOENT, EACCES, ENOTDIR, EEXIST, EISDIR, ...); ETIMEDOUT when the agent does not take the
 * request, or does not answer, within 60 s (each entry of a listing, the end of a write once
 * its pipe is closed, a command's start): what the sandbox stopped does not hold the caller. */
CORDON_PUBLIC int cordon_session_stat(struct cordon_session *s, const char *path,
				      struct cordon_file_info *ret, struct cordon_error *err);
/* The entries below a directory, depth levels deep (1: its own entries), sorted by path; at
 * most max entries and 64 MiB of paths, names and link targets (cordon_session_set_bounds; more:
 * -E2BIG). *ret is freed with
 * cordon_file_info_free(). */
CORDON_PUBLIC int cordon_session_list(struct cordon_session *s, const char *path,
				      unsigned depth, size_t max, struct cordon_file_info **ret,
				      size_t *ret_n, struct cordon_error *err);
/* Free a list's n entries and the array (NULL is fine). */
CORDON_PUBLIC void cordon_file_info_free(struct cordon_file_info *v, size_t n);
/* Free the strings of one entry filled by cordon_session_stat(). */
CORDON_PUBLIC void cordon_file_info_clear(struct cordon_file_info *info);
/* Open a regular file inside for reading: *ret_fd is a descriptor of it (O_RDONLY|O_CLOEXEC).
 * Not a regular file: EISDIR or EINVAL. */
CORDON_PUBLIC int cordon_session_open_read(struct cordon_session *s, const char *path,
					   int *ret_fd, struct cordon_error *err);
/* Write a file inside, created (mode, less the umask 022) or truncated, its missing parent
 * directories made: *ret_fd is the write end of a pipe whose bytes a process of the sandbox
 * writes to the file. Close it, then cordon_upload_finish() says whether all got there. */
struct cordon_upload;
CORDON_PUBLIC int cordon_session_write(struct cordon_session *s, const char *path,
				       uint32_t mode, struct cordon_upload **ret, int *ret_fd,
				       struct cordon_error *err);
/* Wait for the writer (close the pipe first); *ret_bytes: bytes written. Frees u. */
CORDON_PUBLIC int cordon_upload_finish(struct cordon_upload *u, uint64_t *ret_bytes,
				       struct cordon_error *err);
/* A directory and its missing parents; an existing directory is not an error (*ret_made 0). */
CORDON_PUBLIC int cordon_session_mkdir(struct cordon_session *s, const char *path,
				       int *ret_made, struct cordon_error *err);
/* Remove a file, a symlink, or a directory and everything below it. */
CORDON_PUBLIC int cordon_session_remove(struct cordon_session *s, const char *path,
				       struct cordon_error *err);
/* rename(2) inside: to is replaced if it exists (as rename(2) does). */
CORDON_PUBLIC int cordon_session_rename(struct cordon_session *s, const char *from,
					const char *to, struct cordon_error *err);
/* A TCP connection to port of the sandbox's own loopback (127.0.0.1, then ::1 when nothing
 * listens there), made by the agent inside (the sandbox's network namespace) and passed back:
 * *ret_fd is the connected socket (O_NONBLOCK|O_CLOEXEC), the caller's to speak through and
 * close. Bounded as every call (cordon_session_set_bounds), and a connect still in progress
 * (a listener's full backlog) gets 10 s at most. ECONNREFUSED: nothing listens on the port;
 * ETIMEDOUT: not accepted in time; EINVAL: port 0 or past 65535. The caller bounds how many it
 * holds open: each is a socket of the sandbox's (its RLIMIT_NOFILE, its memory), not of ours. */
CORDON_PUBLIC int cordon_session_connect(struct cordon_session *s, unsigned port, int *ret_fd,
					 struct cordon_error *err);

/* --- a directory inside, watched (inotify, run by the agent inside, as the sandbox) --- */
/* The kinds of event, numbered as envd's EventType; names as its fsnotify gives them */
enum cordon_watch_type {
	CORDON_WATCH_CREATE = 1, /* made, or moved in */
	CORDON_WATCH_WRITE,      /* written */
	CORDON_WATCH_REMOVE,     /* removed */
	CORDON_WATCH_RENAME,     /* moved away (or the directory itself moved: name ".") */
	CORDON_WATCH_CHMOD,      /* its attributes changed */
};
struct cordon_watch_event {
	enum cordon_watch_type type;
	char *name; /* relative to the watched directory ("sub/file"); "." for the directory */
};
struct cordon_watch;
/* The subdirectories too, those made later included (whose first entries are told as CREATE) */
#define CORDON_WATCH_RECURSIVE 0x1u
/* Watch a directory inside (absolute, or relative to the workdir): ENOENT, ENOTDIR; ENOSPC when
 * the sandbox's inotify watches are spent. The events wait in the kernel's queue of the watch
 * (fs.inotify.max_queued_events) while the caller reads nothing; past that it overflows. */
CORDON_PUBLIC int cordon_session_watch(struct cordon_session *s, const char *path,
				       unsigned flags, struct cordon_watch **ret,
				       struct cordon_error *err);
/* Readable when cordon_watch_read() has something to say. */
CORDON_PUBLIC int cordon_watch_fd(const struct cordon_watch *w);
/* The events come so far, without waiting: 1 with *ret (n of them, at most 60 KiB of names;
 * free with cordon_watch_events_free()), 0: none yet; -EOVERFLOW: events were lost (the
 * kernel's queue overflowed: the watch is over); -ESRCH: the watch ended (the sandbox did). */
CORDON_PUBLIC int cordon_watch_read(struct cordon_watch *w, struct cordon_watch_event **ret,
				    size_t *ret_n, struct cordon_error *err);
CORDON_PUBLIC void cordon_watch_events_free(struct cordon_watch_event *v, size_t n);
/* Stop watching (the worker inside ends) and free w; NULL is fine. */
CORDON_PUBLIC void cordon_watch_free(struct cordon_watch *w);

/* --- what a session uses now (metrics) --- */
struct cordon_session_usage {
	int from_cgroup;    /* 1: its cgroup's files, read by its supervisor (cpu.stat,
			     * memory.current, memory.stat, memory.max, cpu.max); 0: it has no
			     * cgroup (or no memory controller): its processes, as /proc inside says
			     * (the agent's word: the sandbox's code could forge its own figures) */
	unsigned cpu_count; /* the host's online CPUs, fewer when cpu.max allows fewer */
	uint64_t cpu_ns;    /* CPU time its processes used within window_ns */
	uint64_t window_ns;
	uint64_t mem_used;  /* bytes: memory.current less its page cache; else the sum of RSS */
	uint64_t mem_cache; /* its page cache (memory.stat "file"); 0 without a cgroup */
	uint64_t mem_total; /* memory.max; without a limit: the host's memory */
};
/* Sample it over window_ms (1-1000; the call takes that long). 0, or -errno (ESRCH: ended). */
CORDON_PUBLIC int cordon_session_usage(struct cordon_session *s, unsigned window_ms,
				       struct cordon_session_usage *ret,
				       struct cordon_error *err);

/* End the session: every process in it is killed, the sandbox torn down (cgroup, proxy, audit
 * trail, report, the workdir with CORDON_SESSION_REMOVE_WORKDIR), and s freed. *res (may be
 * NULL) tells how it ended, as cordon_run() does for a run; a session that ended on its own
 * (the time to live: outcome TIMEOUT) says so. Process handles left are then only good to free.
 * 0, or -errno when the teardown failed (the report or audit trail could not be written). */
CORDON_PUBLIC int cordon_session_destroy(struct cordon_session *s, struct cordon_result *res,
					 struct cordon_error *err);

/* A session with a copy-on-write workdir (cordon_config_set_cow): its changes so far saved as a
 * layer of its layer store (ret_id: its id), while it runs on. */
CORDON_PUBLIC int cordon_session_checkpoint(struct cordon_session *s, char ret_id[17],
					    struct cordon_error *err);
/* Freeze (frozen 1) or thaw (0) every process of the session, pid 1 and cordon's agent too, with
 * the cgroup v2 freezer: they stop where they are, keep their memory, and go on when thawed.
 * Returns once cgroup.events says so (at most a few seconds: then -ETIMEDOUT, and a freeze is
 * undone). A frozen session's calls that need its agent (exec, the file operations) wait for it
 * until their bounds (cordon_session_set_bounds); cordon_session_kill() and destroy work frozen
 * or not. -EOPNOTSUPP when the session has no cgroup of its own (err says why: see
 * CORDON_SESSION_FREEZABLE) or the kernel has no freezer (before Linux 5.2). Freezing a frozen
 * session, or thawing a thawed one, does nothing. */
CORDON_PUBLIC int cordon_session_freeze(struct cordon_session *s, int frozen,
					struct cordon_error *err);
/* A new session (config c, which must name the same workdir and layer store) that starts from
 * src's changes so far: src's checkpoint, used as the new session's starting layer and then
 * removed. The two go on apart: neither sees the other's later changes. */
CORDON_PUBLIC int cordon_session_fork(struct cordon_session *src, const struct cordon_config *c,
				      unsigned flags, struct cordon_session **ret,
				      struct cordon_error *err);

/* What a directory tree holds on the host, for a disk budget (a session's workdir, say): the
 * bytes allocated and the entries below dir, counted through descriptors without following a
 * symlink or entering another filesystem, down to max_depth levels and up to max_entries.
 * -E2BIG when either is passed (*ret_bytes and *ret_entries then hold the counts so far: over
 * any budget up to there). The directory itself is opened as cordon opens a workdir's path
 * given by its caller (no symlink as its last component). */
CORDON_PUBLIC int cordon_tree_usage(const char *dir, unsigned max_depth, uint64_t max_entries,
				    uint64_t *ret_bytes, uint64_t *ret_entries,
				    struct cordon_error *err);

/* Layers: what a run with a copy-on-write workdir changed, kept in a store on the host until
 * applied to the workdir or discarded (src/layer/layer.h has the format). store: the store's
 * directory, NULL for the default ($CORDON_LAYER_DIR, else /var/lib/cordon/layers for root,
 * else $XDG_STATE_HOME/cordon/layers or ~/.local/state/cordon/layers); it must be a directory
 * of the caller's, mode 0700, reached through no symlink and through no directory that was a
 * sandbox's workdir (made so when missing); a run refuses one in its workdir. id: 16 lower-case
 * hex. A layer is read only when it is cordon's own: its manifest's MAC matches under the
 * caller's key (STATE/layer.key, beside the list of earlier workdirs: /var/lib/cordon for root,
 * else $XDG_STATE_HOME/cordon), and its directory and manifest are the caller's and writable by
 * no one else; else -EBADMSG (or -EPERM, -ELOOP) saying so: such a layer (an earlier cordon's,
 * without a MAC, or one changed since) can only be discarded. */
struct cordon_layer_info {
	char id[17];
	char *workdir;      /* the host workdir the layer changes (malloc'd); "" with problem */
	int64_t created;    /* when the run started (UNIX time) */
	int64_t saved;      /* when the layer was stored */
	uint64_t changes;   /* entries added, modified or deleted */
	uint64_t bytes;     /* new content held */
	uint64_t skipped;   /* entries of the run not kept (FIFOs, sockets, devices) */
	char *problem;      /* cordon_layer_list: why the layer cannot be read (malloc'd; the rest
			     * is zero), NULL when it can */
};
/* Every layer of the store: those that can be read newest first, then those that cannot (with
 * problem): *ret (free with cordon_layer_list_free), *ret_n. */
CORDON_PUBLIC int cordon_layer_list(const char *store, struct cordon_layer_info **ret,
				    size_t *ret_n, struct cordon_error *err);
CORDON_PUBLIC void cordon_layer_list_free(struct cordon_layer_info *v, size_t n);
/* One layer's description (*ret: free its workdir). -ENOENT: no such layer. */
CORDON_PUBLIC int cordon_layer_info(const char *store, const char *id,
				    struct cordon_layer_info *ret, struct cordon_error *err);
/* What the layer changes, written to out_fd (borrowed): CORDON_DIFF_STAT, one line per change
 * and a count, then the commits the run made ("git: refs/heads/B -> ID (N new commits)" and one
 * line each, against the workdir's repository) and a line counting the git state not shown;
 * CORDON_DIFF_PATCH, a git-style patch of the workdir as the run saw it, the work tree only (no
 * path with a ".git" component: `git apply` takes it). A file of
 * more than 8 MiB is binary to it and never read into memory whole ("Binary files ... differ"
 * in the patch, as git past core.bigFileThreshold). */
enum { CORDON_DIFF_STAT = 1, CORDON_DIFF_PATCH = 2 };
CORDON_PUBLIC int cordon_layer_diff(const char *store, const char *id, unsigned flags,
				    int out_fd, struct cordon_error *err);
/* Apply the layer to workdir (NULL: the current directory), opened as a run opens its workdir
 * (no symlink as its last component, none a sandbox could have planted on the way) and checked
 * to be the very directory of the run by device and inode (-ESTALE otherwise: another directory,
 * or the run's replaced since); the path the layer records is never written to. Every change
 * checked first (-EEXIST: a path changed in the workdir since the run; -EPERM: a protected
 * path), nothing written unless all pass; changes already made are skipped. The layer stays in
 * the store (cordon_layer_discard removes it). *ret_changes (may be NULL): the layer's number
 * of changes. */
CORDON_PUBLIC int cordon_layer_apply(const char *store, const char *id, const char *workdir,
				     uint64_t *ret_changes, struct cordon_error *err);
/* The same, saying what became of the run's git state: a path with a ".git" component is never
 * written as a file (git_state counts them: the index, objects, refs, logs of the sandbox's
 * git); the commits the run made, on the branches it moved or made (and a detached HEAD), are
 * fetched by git into the workdir's repository, every object checked, as refs of their own:
 * refs/cordon/ID/BRANCH (refs, NULL-ended, NULL when none). git runs with no system or global
 * config, no hooks and no fsmonitor, and never opens the layer's .git: it fetches from a
 * temporary repository of cordon's holding the layer's new objects, taken as data. Free with
 * cordon_apply_result_done. */
struct cordon_apply_result {
	uint64_t changes;
	uint64_t git_state;
	char **refs;
};
CORDON_PUBLIC int cordon_layer_apply_result(const char *store, const char *id,
					    const char *workdir, struct cordon_apply_result *ret,
					    struct cordon_error *err);
CORDON_PUBLIC void cordon_apply_result_done(struct cordon_apply_result *r);
/* Remove a layer from the store (or whatever is at its name there: never followed). */
CORDON_PUBLIC int cordon_layer_discard(const char *store, const char *id,
				       struct cordon_error *err);

CORDON_PUBLIC const char *cordon_version(void);

/* cordon's state directory for the caller: /var/lib/cordon for root, else $XDG_STATE_HOME/cordon
 * or ~/.local/state/cordon (malloc'd; NULL without a home). It holds the list of earlier
 * workdirs, the layers' key and the git index cache (gitindex.d); its "serve" directory is
 * cordon serve's default state directory, whose subdirectories may be workdirs though they lie
 * below /var or ~/.local (README "Workdir"). */
CORDON_PUBLIC char *cordon_state_dir(void);

#ifdef __cplusplus
}
#endif
#endif
