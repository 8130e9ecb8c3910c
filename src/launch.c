/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch.c - cordon_run(): the supervisor. Runs in the caller's process.
 *
 * Everything is prepared before clone() (paths, identity, the mount plan, the environment, the
 * report file), so that bad input fails before anything starts. Then (see sync.h):
 *   sync 1  clone3() into new user, mount, pid, ipc, uts, cgroup (and net) namespaces
 *   sync 2  write the id maps, send GO (with the id-mapped workdir when there is one)
 *   sync 3  RUNNING once the command's execve() worked, or ERROR from any setup step
 *   sync 4  the watchdog: poll(pidfd, signalfd, timerfd, socket) until pid 1 is gone; signals
 *           are forwarded, the timeout sends SIGTERM to every process, then SIGKILL to pid 1
 * The child is held by a cleanup: any early return kills it through its pidfd.
 */
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "allow.h"
#include "audit.h"
#include "capture.h"
#include "cgroup.h"
#include "execlog.h"
#include "snapshot.h"
#include "child.h"
#include "json.h"
#include "rlimits.h"
#include "mount.h"
#include "proxy.h"
#include "report.h"
#include "sync.h"
#include "sysinfo.h"
#include "terminal.h"
#include "userns.h"
#include "workdir.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Signals cordon passes on to the command. */
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };

struct run {
	struct cordon_config *c;
	struct cordon_result *res;
	struct cd_hostpath wd; /* the workdir, opened once: every later step uses wd.fd */
	struct cd_marks marks; /* the earlier workdirs (and this one) */
	const char *workdir;   /* wd.path */
	char *workdir_target;
	char *chdir;
	struct cd_identity id;
	bool have_id;
	struct cd_mount_plan plan;
	struct cd_policy policy; /* parsed in prepare(), compiled after clone */
	bool have_policy;
	char *policy_path;
	struct cd_filter filter;
	bool have_filter;
	struct cd_policy baseline_policy; /* cordon's own rules (baseline.policy): every run */
	struct cd_filter baseline;
	bool have_baseline;
	struct cd_cgroup cg;
	struct cd_audit audit;
	struct cd_snapshot before; /* the workdir at start, for the audit's file events */
	bool have_before;
	struct cd_file_id own_files[1]; /* what cordon writes: not the sandbox's changes */
	char wd_proc[64];
	size_t n_own_files;
	int listener; /* seccomp notifications of execve (audit); -1 */
	struct cd_proxy *proxy; /* --allow-net: the egress proxy, once pid 1 sent its socket */
	struct cd_execlog execlog; /* the exec events and their budget */
	struct cd_capture capture;
	struct cd_rlimit rlimits[RLIM_NLIMITS]; /* the config's, plus cgroup fallbacks */
	struct cd_rlimits_got rlimits_got; /* what the command got (RLIMITS), for the report */
	struct cd_terminal term; /* the caller's controlling terminal: lent to the command */
	bool attach_cgroup; /* clone could not place pid 1 in its cgroup: move it before GO */
	uint64_t pids_limit_hits; /* pids.events max */
	char **envp;
	struct cd_report_file report;
	sigset_t old_mask;
	bool mask_set;
	int sock; /* our end of the sync socket */
	int pidfd;
	pid_t pid; /* pid 1 of the sandbox, as we see it; 0 once reaped */
	int sigfd;
	int timerfd;
	uint64_t t_start;
	uint64_t t_running;
	bool running;       /* sync 3 passed */
	bool failed;        /* an ERROR came back */
	bool timed_out;
	bool killed;        /* SIGKILL sent after --kill-after */
	bool backstop;      /* the timer now waits for pid 1 to have ended the sandbox */
	bool got_exit;
	int exit_status;    /* the command's wait status, from EXIT */
	struct cd_usage usage; /* from EXIT: every process of the sandbox */
	int init_status;    /* pid 1's wait status */
	struct rusage ru;
};

static void run_log(struct run *run, const char *fmt, ...) _printf_(2, 3);
static void run_log(struct run *run, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!run->c->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	run->c->log(run->c->log_data, line);
}

/* --- preparation: nothing runs yet --- */

static int env_set(char ***envp, const char *kv)
{
	size_t klen = strcspn(kv, "=");
	char *copy;

	for (char **p = *envp; p && *p; p++)
		if (strncmp(*p, kv, klen) == 0 && (*p)[klen] == '=') {
			copy = strdup(kv);
			if (!copy)
				return -ENOMEM;
			free(*p);
			*p = copy;
			return 0;
		}
	return cd_strv_push(envp, kv);
}

static bool keep_from_caller(const char *kv)
{
	static const char *const keep[] = { "PATH=", "TERM=", "LANG=", "LANGUAGE=", "TZ=",
					    "COLORTERM=", "NO_COLOR=" };

	if (strncmp(kv, "LC_", 3) == 0)
		return true;
	for (size_t i = 0; i < CD_ELEMENTSOF(keep); i++)
		if (strncmp(kv, keep[i], strlen(keep[i])) == 0)
			return true;
	return false;
}

/* Cleared, then a short safe set; --pass-env and --env on top, in that order. */
/* --allow-net: every common spelling points at the proxy (a client that goes direct finds no
 * route anyway). Loopback is the sandbox's own (a dev server the command started): exempt, in
 * the forms clients read (names, addresses, CIDR), unless the host's loopback was allowed,
 * which only the proxy reaches. --env and --pass-env come later and may change it. */
#define CD_NO_PROXY "localhost,.localhost,127.0.0.1,127.0.1.1,127.0.0.0/8,::1"

/* the sandbox's own hostname is on its loopback too (/etc/hosts: 127.0.1.1) */
static int proxy_env(char ***envp, bool host_loopback, const char *hostname)
{
	static const char *const vars[] = {
		"http_proxy=" CD_PROXY_URL, "HTTP_PROXY=" CD_PROXY_URL, "https_proxy=" CD_PROXY_URL,
		"HTTPS_PROXY=" CD_PROXY_URL, "all_proxy=" CD_PROXY_URL, "ALL_PROXY=" CD_PROXY_URL,
	};
	_cleanup_free_ char *no_proxy = host_loopback ? strdup("") :
		cd_strdup_printf("%s,%s", CD_NO_PROXY, hostname);
	_cleanup_free_ char *lower = no_proxy ? cd_strdup_printf("no_proxy=%s", no_proxy) : NULL;
	_cleanup_free_ char *upper = no_proxy ? cd_strdup_printf("NO_PROXY=%s", no_proxy) : NULL;
	int r = lower && upper ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < CD_ELEMENTSOF(vars); i++)
		r = env_set(envp, vars[i]);
	if (r == 0)
		r = env_set(envp, lower);
	return r == 0 ? env_set(envp, upper) : r;
}

static const char *env_get(char *const *envp, const char *key)
{
	size_t n = strlen(key);

	for (; envp && *envp; envp++)
		if (strncmp(*envp, key, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* --git-identity: HOME is empty inside, so git has no identity of its own */
static int git_env(char ***envp, char *const id[2])
{
	static const char *const keys[] = { "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
					    "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL" };
	int r = 0;

	for (size_t i = 0; r == 0 && i < CD_ELEMENTSOF(keys); i++) {
		_cleanup_free_ char *kv = cd_strdup_printf("%s=%s", keys[i], id[i % 2]);

		r = kv ? env_set(envp, kv) : -ENOMEM;
	}
	return r;
}

/* PATH inside without the directories the sandbox does not have (below a hidden HOME, say:
 * pyenv's shims), so that a command is not taken from a later, other directory without a word;
 * those bound in stay. */
static int visible_path(struct run *run)
{
	const char *path = env_get(run->envp, "PATH");
	_cleanup_free_ char *copy = path ? strdup(path) : NULL, *kept = NULL;
	size_t len = 0;

	if (!path)
		return 0;
	kept = malloc(strlen(path) + sizeof("PATH="));
	if (!copy || !kept)
		return -ENOMEM;
	len = (size_t)sprintf(kept, "PATH=");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] == '/' && !cd_mount_plan_visible(&run->plan, d)) {
			run_log(run, "env: PATH: %s is not in the sandbox, dropped", d);
			continue;
		}
		len += (size_t)sprintf(kept + len, "%s%s", len > 5 ? ":" : "", d);
	}
	return env_set(&run->envp, kept);
}

static int build_env(struct run *run, struct cordon_error *err)
{
	extern char **environ;
	_cleanup_free_ char *home = cd_strdup_printf("HOME=%s", run->id.home);
	_cleanup_free_ char *user = cd_strdup_printf("USER=%s", run->id.user);
	_cleanup_free_ char *logname = cd_strdup_printf("LOGNAME=%s", run->id.user);
	int r = home && user && logname ? 0 : -ENOMEM;

	run->envp = calloc(1, sizeof(char *));
	if (!run->envp)
		r = -ENOMEM;
	for (char **p = environ; r == 0 && p && *p; p++)
		if (keep_from_caller(*p))
			r = env_set(&run->envp, *p);
	if (r == 0 && !getenv("PATH"))
		r = env_set(&run->envp, "PATH=" DEFAULT_PATH);
	if (r == 0)
		r = env_set(&run->envp, home);
	if (r == 0)
		r = env_set(&run->envp, user);
	if (r == 0)
		r = env_set(&run->envp, logname);
	if (r == 0 && run->c->n_allow)
		r = proxy_env(&run->envp, cd_allow_has_loopback(run->c->allow, run->c->n_allow),
			      run->c->hostname ? run->c->hostname : CD_DEFAULT_HOSTNAME);
	if (r == 0 && run->c->git_identity[0])
		r = git_env(&run->envp, run->c->git_identity);
	if (r == 0)
		r = visible_path(run);
	for (char **k = run->c->pass_env; r == 0 && k && *k; k++) {
		const char *v = getenv(*k);
		_cleanup_free_ char *kv = v ? cd_strdup_printf("%s=%s", *k, v) : NULL;

		if (!v)
			run_log(run, "env: %s is not set, not passed", *k);
		else
			r = kv ? env_set(&run->envp, kv) : -ENOMEM;
	}
	for (char **kv = run->c->env; r == 0 && kv && *kv; kv++)
		r = env_set(&run->envp, *kv);
	return r < 0 ? cd_fail(err, -r, "env", "out of memory") : 0;
}


static int marks_outside(struct run *run, struct cordon_error *err)
{
	_cleanup_free_ char *dir = run->marks.path ? strdup(run->marks.path) : NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (!dir)
		return 0;
	/* the list's directory, or the nearest of its parents that exists: it is made there */
	do {
		*strrchr(dir, '/') = '\0';
		fd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} while (fd < 0 && errno == ENOENT && strchr(dir, '/'));
	r = fd < 0 ? 0 : cd_hostpath_within(fd, &run->wd);
	if (r > 0)
		return cd_fail(err, 0, "workdir",
			       "%s: holds %s, cordon's list of earlier workdirs, which the sandbox "
			       "must not reach (set XDG_STATE_HOME elsewhere)",
			       run->workdir, run->marks.path);
	return 0;
}

static int resolve_paths(struct run *run, struct cordon_error *err)
{
	struct cordon_config *c = run->c;
	struct cd_mark mark;
	int r;

	cd_marks_load(&run->marks);
	r = cd_workdir_open(c->workdir, &run->marks, &run->wd, err);
	if (r < 0)
		return r;
	run->workdir = run->wd.path;
	/* the list of earlier workdirs must be out of the sandbox's reach (XDG_STATE_HOME) */
	r = marks_outside(run, err);
	if (r < 0)
		return r;
	/* remembered before anything runs in it: no later run follows a symlink in it */
	r = cd_mark_of(run->wd.fd, &mark);
	if (r >= 0)
		r = cd_marks_add(&run->marks, &mark, run->wd.path);
	if (r < 0)
		run_log(run, "workdir: cannot remember %s as a sandbox's workdir (%s), ignoring: a "
			"later run given a path through it would follow the symlinks it holds",
			run->workdir, run->marks.why[0] ? run->marks.why : strerror(-r));
	run->workdir_target = strdup(c->workdir_target ? c->workdir_target : run->workdir);
	run->chdir = strdup(c->chdir ? c->chdir : run->workdir_target ? run->workdir_target : "/");
	if (!run->workdir_target || !run->chdir)
		return cd_fail(err, ENOMEM, "workdir", "out of memory");
	return 0;
}

static void log_plan(struct run *run)
{
	run_log(run, "identity: uid %u gid %u inside, host uid %u gid %u%s", run->id.inside_uid,
		run->id.inside_gid, run->id.host_uid, run->id.host_gid,
		run->id.idmap_workdir ? ", workdir id-mapped (host 0 <-> sandbox)" : "");
	for (size_t i = 0; i < run->plan.n; i++) {
		const struct cd_mnt *m = &run->plan.m[i];

		run_log(run, "mount: %-8s %s%s%s", cd_mnt_kind_name(m->kind), m->dst,
			m->src ? (m->kind == CD_MNT_SYMLINK ? " -> " : " <- ") : "",
			m->src ? m->src : "");
	}
	for (char **e = run->envp; *e; e++)
		run_log(run, "env: %.*s", (int)strcspn(*e, "="), *e);
}

/* Parse the policy before anything starts: a bad policy costs nothing. It is compiled later,
 * while pid 1 sets up its mounts (compile_filter). */
static int load_policy(struct run *run, struct cordon_error *err)
{
	struct cordon_config *c = run->c;
	_cleanup_free_ char *found = NULL;
	const char *path = c->seccomp_path;
	int r;

	r = cd_policy_parse_baseline(&run->baseline_policy, err);
	if (r < 0)
		return r;
	if (c->seccomp_none) {
		run_log(run, "seccomp: none (--seccomp-policy none)");
		return 0;
	}
	if (!path) {
		found = cd_policy_find("default", cd_policy_search_path(), err);
		if (!found)
			return -ENOENT;
		path = found;
	}
	r = cd_policy_load(&run->policy, path,
			   c->seccomp_display ? c->seccomp_display : "default.policy", err);
	if (r < 0)
		return r;
	run->have_policy = true;
	run->policy_path = found ? CD_TAKE_PTR(found) : strdup(path);
	return run->policy_path ? 0 : cd_fail(err, ENOMEM, "seccomp", "out of memory");
}

/* sync 2, the supervisor's half: compile what load_policy() parsed, and the baseline. The exec
 * notifications of the audit trail go in the policy's program, or the baseline's without one. */
static int compile_filter(struct run *run, struct cordon_error *err)
{
	struct cordon_config *c = run->c;
	bool audit = cd_audit_on(&run->audit);
	int r;

	r = cd_filter_compile_audit(&run->baseline_policy, false, true, audit && !run->have_policy,
				    &run->baseline, err);
	if (r < 0)
		return r;
	run->baseline.baseline = true;
	run->have_baseline = true;
	if (run->have_policy) {
		r = cd_filter_compile_audit(&run->policy, c->seccomp_log, !c->seccomp_unoptimized,
					    audit, &run->filter, err);
		if (r < 0)
			return r;
		run->have_filter = true;
	}
	/* a property of the two programs installed together: either may deny */
	run->baseline.blocks_tiocsti = run->filter.blocks_tiocsti = cd_filter_set_blocks_tiocsti(
		(const struct cd_filter *[]){ &run->baseline, run->have_filter ? &run->filter : NULL },
		2);
	/* without the proof, the command gets a session of its own instead (child.c) */
	run->term.lent = run->term.lent && run->baseline.blocks_tiocsti;
	run_log(run, "seccomp: baseline.policy (enforced), %u rules, %u BPF instructions",
		run->baseline.n_rules, run->baseline.len);
	if (run->have_filter)
		run_log(run, "seccomp: %s (%s), %u rules, %u BPF instructions%s", run->policy_path,
			c->seccomp_log ? "log mode" : "enforced", run->filter.n_rules, run->filter.len,
			run->filter.optimized ? " (binary tree)" : "");
	run_log(run, "seccomp: TIOCSTI %s", run->baseline.blocks_tiocsti
						    ? "denied" : "not proven denied: new session instead");
	return 0;
}

static int send_one_filter(struct run *run, const struct cd_filter *f, struct cordon_error *err)
{
	_cleanup_close_ int fd = cd_filter_export_fd(f);
	int r;

	if (fd < 0)
		return cd_fail_errno(err, -fd, "seccomp", "hand the filter to the sandbox");
	r = cd_msg_send(run->sock, CD_MSG_FILTER, (int32_t)cd_filter_flags(f), NULL, fd);
	/* pid 1 is gone before the command (a failed setup step: its error waits in the socket,
	 * for the watchdog to report); without the filters no command can have started */
	if (r == -EPIPE || r == -ECONNRESET)
		return 0;
	return r < 0 ? cd_fail_errno(err, -r, "seccomp", "hand the filter to the sandbox") : 0;
}

static int send_filter(struct run *run, struct cordon_error *err)
{
	int r = send_one_filter(run, &run->baseline, err);

	if (r >= 0 && run->have_filter)
		r = send_one_filter(run, &run->filter, err);
	return r;
}

static void log_cgroup(struct run *run)
{
	cd_cgroup_log(&run->cg, run->c);
}

static struct cd_report_info report_info(struct run *run)
{
	return (struct cd_report_info){
		.c = run->c,
		.workdir = run->workdir,
		.workdir_target = run->workdir_target,
		.chdir = run->chdir,
		.id = run->have_id ? &run->id : NULL,
		.plan = &run->plan,
		.envp = run->envp,
		.res = run->res,
		.filter = run->have_filter ? &run->filter : NULL,
		.baseline = run->have_baseline ? &run->baseline : NULL,
		.cg = &run->cg,
		.rlimits = &run->rlimits_got,
	};
}

/* cordon's own outputs are never in the workdir (output.h), but an fd the caller gave may be */
static void own_files(struct run *run)
{
	struct stat st;

	if (run->c->report_fd >= 0 && fstat(run->c->report_fd, &st) == 0)
		run->own_files[run->n_own_files++] = (struct cd_file_id){ st.st_dev, st.st_ino };
}

/* The workdir for the walks: the descriptor that was checked, reopened for reading. */
static const char *workdir_fd_path(struct run *run)
{
	snprintf(run->wd_proc, sizeof(run->wd_proc), "/proc/self/fd/%d", run->wd.fd);
	return run->wd_proc;
}

/* The start event, and the workdir as it is before anything runs. */
static int audit_start(struct run *run, struct cordon_error *err)
{
	struct cd_report_info info = report_info(run);
	struct cd_json j;
	int r;

	info.rlimits = NULL; /* no command yet: the configured ones */
	if (!cd_audit_on(&run->audit))
		return 0;
	own_files(run);
	r = cd_snapshot_take(workdir_fd_path(run), run->own_files, run->n_own_files, &run->before);
	if (r < 0)
		return cd_fail_errno(err, -r, "audit", "read the workdir %s", run->workdir);
	run->have_before = true;
	cd_audit_begin(&run->audit, &j, "start");
	cd_json_kv_string(&j, "cordon", cordon_version());
	cd_json_key(&j, "command");
	cd_json_array_begin(&j);
	for (char **a = run->c->argv; *a; a++)
		cd_json_string(&j, *a);
	cd_json_array_end(&j);
	cd_json_kv_uint(&j, "workdir_entries", run->before.n);
	cd_report_render_applied(&j, &info);
	cd_audit_end(&run->audit, &j);
	cd_audit_walk_limits(&run->audit, "before", &run->before);
	run_log(run, "audit: %s, %zu workdir entries", run->c->audit_path, run->before.n);
	return 0;
}

/* What --capture keeps per stream: CD_CAPTURE_MAX, or less if --fsize says so */
static uint64_t capture_max(const struct cordon_config *c)
{
	const struct cd_rlimit *f = &c->rlimits[RLIMIT_FSIZE];

	return f->set && f->soft < CD_CAPTURE_MAX ? f->soft : CD_CAPTURE_MAX;
}

/* --report, --audit, --capture: created before anything starts, out of the sandbox's reach */
static int open_outputs(struct run *run, struct cordon_error *err)
{
	struct cordon_config *c = run->c;
	int r;

	const struct cd_output_ctx ctx = { .workdir = &run->wd, .marks = &run->marks };

	if (c->report_path) {
		r = cd_report_open(c->report_path, &ctx, &run->report, err);
		if (r < 0)
			return r;
	}
	if (c->audit_path) {
		r = cd_audit_open(c->audit_path, &ctx, &run->audit, err);
		if (r < 0)
			return r;
	}
	if (c->capture_dir) {
		r = cd_capture_open(c->capture_dir, &ctx, capture_max(c), &run->capture, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int prepare(struct run *run, struct cordon_error *err)
{
	struct cordon_config *c = run->c;
	int r;

	if (!c->argv)
		return cd_fail(err, 0, "command", "no command given");
	if (c->n_allow && c->net == CORDON_NET_HOST)
		return cd_fail(err, 0, "allow-net", "cannot be combined with --net host (the host's "
				   "network has no allow-list)");
	r = resolve_paths(run, err);
	if (r < 0)
		return r;
	/* the outputs next, so that a failure of a later step is reported in them */
	r = open_outputs(run, err);
	if (r < 0)
		return r;
	r = cd_limits_check(c->rlimits, err);
	if (r < 0)
		return r;
	r = cd_identity_resolve(c, &run->wd.st, run->workdir_target, &run->id, err);
	if (r < 0)
		return r;
	run->have_id = true;
	memcpy(run->rlimits, c->rlimits, sizeof(run->rlimits));
	r = cd_cgroup_setup(c, run->res->id, run->id.host_uid, &run->cg, run->rlimits, err);
	if (r < 0)
		return r;
	log_cgroup(run);
	r = cd_mount_plan_build(c, run->workdir, &run->wd.st, run->workdir_target, &run->id,
				&run->marks, &run->plan, err);
	if (r < 0)
		return r;
	r = build_env(run, err);
	if (r < 0)
		return r;
	r = load_policy(run, err);
	if (r < 0)
		return r;
	log_plan(run);
	return 0;
}

/* --- start --- */

static int block_signals(struct run *run, struct cordon_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < CD_ELEMENTSOF(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	/* and SIGTTOU, in every thread for the whole run, as a shell blocks it: a write to the
	 * terminal from the background (a notice, -v, --capture's copy) must not stop cordon while
	 * the sandbox goes on (the command can set TOSTOP) */
	sigaddset(&set, SIGTTOU);
	if (pthread_sigmask(SIG_BLOCK, &set, &run->old_mask) != 0)
		return cd_fail(err, EINVAL, "signals", "cannot block signals");
	run->mask_set = true;
	sigdelset(&set, SIGTTOU);
	run->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (run->sigfd < 0)
		return cd_fail_errno(err, errno, "signals", "signalfd");
	return 0;
}

/* at an absolute CLOCK_MONOTONIC time */
static int arm_timer(struct run *run, uint64_t at_ns)
{
	struct itimerspec its = { .it_value = { (time_t)(at_ns / NSEC_PER_SEC),
						(long)(at_ns % NSEC_PER_SEC) } };

	if (at_ns == 0)
		its.it_value.tv_nsec = 1; /* 0 would disarm: fire at once */
	return timerfd_settime(run->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

static uint64_t deadline(const struct run *run)
{
	return run->c->timeout_ns ? run->t_start + run->c->timeout_ns : 0;
}

static int clone_fail(int e, struct cordon_error *err)
{
	const char *hint = cd_sysinfo_userns_hint();

	if (hint)
		return cd_fail(err, e, "namespaces", "cannot create the sandbox's namespaces: %s (%s)",
			       strerror(e), hint);
	if (e == ENOSPC || e == EUSERS)
		return cd_fail(err, e, "namespaces",
			       "cannot create the sandbox's namespaces: %s (a namespace limit is "
			       "reached: see /proc/sys/user/max_*_namespaces)",
			       strerror(e));
	if (e == EPERM)
		return cd_fail(err, e, "namespaces",
			       "cannot create the sandbox's namespaces: %s (inside a container? "
			       "its seccomp profile or missing privileges forbid user namespaces; "
			       "cordon refuses to run less isolated)",
			       strerror(e));
	return cd_fail(err, e, "namespaces", "cannot create the sandbox's namespaces: %s",
		       strerror(e));
}

/* sync 1 */
static int spawn(struct run *run, const struct cd_child_args *args_template,
		 struct cordon_error *err)
{
	/* the cgroup namespace is made by pid 1 once it is in its cgroup (child.c) */
	uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
			 CLONE_PIDFD;
	struct clone_args ca = { .exit_signal = SIGCHLD };
	bool in_cgroup = run->cg.fd >= 0;
	int sv[2], pidfd = -1;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cd_fail_errno(err, errno, "sync", "socketpair");
	ca.flags = flags | (in_cgroup ? CLONE_INTO_CGROUP : 0);
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.cgroup = in_cgroup ? (uint64_t)run->cg.fd : 0;
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0 && in_cgroup && (errno == E2BIG || errno == EINVAL)) {
		/* before 5.7: no CLONE_INTO_CGROUP; moved before GO instead (go()) */
		ca.flags = flags;
		ca.cgroup = 0;
		run->attach_cgroup = true;
		pid = (pid_t)syscall(SYS_clone3, &ca, CLONE_ARGS_SIZE_VER0);
	}
	if (pid < 0 && errno == ENOSYS) { /* before 5.3: clone() stores the pidfd at parent_tid */
		run->attach_cgroup = in_cgroup;
		pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, &pidfd, NULL, 0);
	}
	if (pid == 0) {
		struct cd_child_args args = *args_template;

		close(sv[0]);
		args.sock = sv[1];
		cd_child_main(&args);
	}
	close(sv[1]);
	if (pid < 0) {
		int e = errno;

		close(sv[0]);
		return clone_fail(e, err);
	}
	run->pid = pid;
	run->pidfd = pidfd;
	run->sock = sv[0];
	if (fcntl(run->sock, F_SETFL, O_NONBLOCK) < 0)
		return cd_fail_errno(err, errno, "sync", "make the socket non-blocking");
	/* the network namespace comes from pid 1's helper (net.c), in parallel */
	run_log(run, "sandbox: pid %d, namespaces user mount pid ipc uts cgroup%s", pid,
		run->c->net != CORDON_NET_HOST ? " net" : "");
	return 0;
}

/* Root clones each --ro-bind source from the descriptor it checked, read-only, nosuid, nodev,
 * and hands the trees to pid 1: pid 1 (the sandbox's host uid) looks up nothing by name, and
 * sources below directories only root may enter (/root/.cargo) can be bound. */
static int send_bind_trees(struct run *run, struct cordon_error *err)
{
	if (geteuid() != 0)
		return 0;
	for (size_t i = 0; i < run->plan.n; i++) {
		const struct cd_mnt *m = &run->plan.m[i];
		_cleanup_close_ int tree = -1;
		int r;

		if (m->kind != CD_MNT_BIND || m->host_fd < 0)
			continue;
		r = cd_userns_tree(m->host_fd, m->src, true, &tree, err);
		if (r < 0)
			return r;
		r = cd_msg_send(run->sock, CD_MSG_TREE, (int32_t)i, NULL, tree);
		if (r < 0)
			return cd_fail_errno(err, -r, "sync", "hand the tree of %s to the sandbox",
					     m->src);
	}
	return 0;
}

/* sync 2 */
static int go(struct run *run, struct cordon_error *err)
{
	_cleanup_close_ int workdir_fd = -1;
	int r;

	if (run->attach_cgroup) {
		r = cd_cgroup_attach(&run->cg, run->pid, err);
		if (r < 0)
			return r;
	}
	r = cd_userns_write_maps(run->pid, &run->id, err);
	if (r < 0)
		return r;
	/* the tree of the directory that was checked, never looked up again by name; without
	 * the privilege to clone it here, pid 1 looks it up and checks it is the same (mount.c) */
	if (run->id.idmap_workdir)
		r = cd_userns_idmapped_workdir(run->pid, &run->id, run->wd.fd, run->workdir,
					       &workdir_fd, err);
	else if (geteuid() == 0)
		r = cd_userns_tree(run->wd.fd, run->workdir, false, &workdir_fd, err);
	if (r < 0)
		return r;
	r = send_bind_trees(run, err);
	if (r < 0)
		return r;
	r = cd_msg_send(run->sock, CD_MSG_GO, 0, NULL, workdir_fd);
	if (r < 0)
		return cd_fail_errno(err, -r, "sync", "send GO to the sandbox");
	run_log(run, "sandbox: id maps written, GO");
	return 0;
}

static void child_args(struct run *run, struct cd_child_args *a)
{
	*a = (struct cd_child_args){
		.sock = -1,
		.plan = &run->plan,
		.id = &run->id,
		.hostname = run->c->hostname ? run->c->hostname : CD_DEFAULT_HOSTNAME,
		.own_net = run->c->net != CORDON_NET_HOST,
		.proxy_port = run->c->n_allow ? CD_PROXY_PORT : 0,
		.argv = run->c->argv,
		.envp = run->envp,
		.path = env_get(run->envp, "PATH"),
		.chdir = run->chdir,
		.rlimits = run->rlimits,
		.policy_coming = run->have_policy,
		.stdout_fd = cd_capture_fd(&run->capture, 0),
		.stderr_fd = cd_capture_fd(&run->capture, 1),
		.tty_fd = run->term.fd,
		.take_tty = run->term.lent,
		.deadline_ns = deadline(run),
		.kill_after_ns = run->c->kill_after_ns,
	};
}

static int start(struct run *run, struct cordon_error *err)
{
	struct cd_child_args args;
	int r;

	r = block_signals(run, err);
	if (r < 0)
		return r;
	cd_terminal_open(&run->term);
	run->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (run->timerfd < 0)
		return cd_fail_errno(err, errno, "timeout", "timerfd");
	/* the wall clock counts from here, setup included */
	if (run->c->timeout_ns && arm_timer(run, deadline(run)) < 0)
		return cd_fail_errno(err, errno, "timeout", "arm the timer");
	child_args(run, &args);
	r = spawn(run, &args, err);
	if (r < 0)
		return r;
	cd_capture_started(&run->capture);
	r = go(run, err);
	/* pid 1 builds its mounts meanwhile; the workdir's snapshot comes before the filter, which
	 * pid 1 waits for before the command */
	if (r >= 0)
		r = compile_filter(run, err);
	if (r >= 0)
		r = audit_start(run, err);
	return r < 0 ? r : send_filter(run, err);
}

/* SIGKILL to pid 1, which takes the whole pid namespace down. Until pid 1 is reaped its pid
 * cannot be reused, so kill() is a safe fallback where pidfds are not supported (valgrind). */
static void kill_init(struct run *run)
{
	if (pidfd_send_signal(run->pidfd, SIGKILL, NULL, 0) < 0 && run->pid > 0)
		kill(run->pid, SIGKILL);
}

/* --- sync 3 and 4: the watchdog --- */

static void audit_limit(struct run *run, const char *limit, const char *what);

/* Job control: the command was stopped (Ctrl-Z, or a read from the terminal in the background).
 * With a controlling terminal, cordon does as a shell job does: the terminal back to our group,
 * and it stops itself with the same kind of signal, so that the caller's shell sees the job
 * stopped; once continued, the command is too, with the terminal if we are its foreground.
 * Meanwhile pid 1 keeps the deadline: stopping cordon does not stop the clock. */
static void stop_self(int sig)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, sig);
	kill(getpid(), sig);
	pthread_sigmask(SIG_UNBLOCK, &set, &old); /* delivered here: stopped until continued */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void suspend(struct run *run, int sig)
{
	bool fg;

	run_log(run, "job control: the command was stopped (%s)", strsignal(sig));
	/* only as a job of a shell with job control (a process group of its own in a session led
	 * by another): without a terminal, or as a session's leader (ssh -t, script, a CI's pty),
	 * nobody would continue cordon, and the command stays stopped until the deadline */
	if (run->term.fd < 0 || getpgrp() == getsid(0))
		return;
	cd_terminal_reclaim(&run->term);
	/* a stop signal the kernel drops in an orphaned process group: never SIGSTOP; SIGTTOU,
	 * blocked for the run, is let through for this one stop */
	stop_self(sig == SIGTTIN || sig == SIGTTOU ? sig : SIGTSTP);
	/* continued */
	fg = cd_terminal_ours(&run->term);
	run->term.lent = fg && run->baseline.blocks_tiocsti;
	run_log(run, "job control: continued in the %s", fg ? "foreground" : "background");
	if (run->sock >= 0)
		cd_msg_send(run->sock, CD_MSG_CONT, run->term.lent, NULL, -1);
}

/* pid 1 enforces the deadline (phase 1: SIGTERM to every process, 2: SIGKILL) */
static void timed_out(struct run *run, int phase)
{
	if (phase == 1 && !run->timed_out) {
		run->timed_out = true;
		run_log(run, "timeout: SIGTERM to every process in the sandbox");
		audit_limit(run, "timeout", "SIGTERM to every process in the sandbox");
	} else if (phase == 2 && !run->killed) {
		run->killed = true;
		run_log(run, "timeout: SIGKILL to the sandbox");
		audit_limit(run, "kill-after", "SIGKILL to the sandbox");
		cd_cgroup_kill(&run->cg);
	}
}

static void on_message(struct run *run, const struct cd_msg *m)
{
	switch (m->type) {
	case CD_MSG_RUNNING:
		run->running = true;
		run->t_running = cd_now_ns();
		run_log(run, "sandbox: command running (pid %d inside), setup took %llu us",
			m->value, (unsigned long long)(run->t_running - run->t_start) / 1000);
		break;
	case CD_MSG_ERROR:
		run->failed = true;
		run->res->error = m->err;
		kill_init(run);
		break;
	case CD_MSG_EXIT:
		run->got_exit = true;
		run->exit_status = m->value;
		run->usage = m->usage;
		break;
	case CD_MSG_STOPPED:
		suspend(run, m->value);
		break;
	case CD_MSG_RLIMITS:
		cd_limits_got(&run->rlimits_got, m);
		break;
	case CD_MSG_TIMEOUT:
		timed_out(run, m->value);
		break;
	default:
		break;
	}
}

static void start_proxy(struct run *run, int fd)
{
	const struct cd_proxy_opts o = {
		.allow = run->c->allow, .n_allow = run->c->n_allow, .idle_ns = run->c->net_idle_ns,
		.max_conns = run->c->net_max_conns, .audit = &run->audit,
		.log = run->c->log, .log_data = run->c->log_data,
		.notice = run->c->notice, .notice_data = run->c->notice_data,
	};

	if (run->c->n_allow && cd_proxy_new(fd, &o, &run->proxy, &run->res->error) < 0) {
		run->failed = true; /* no proxy: no sandbox */
		kill_init(run);
		return;
	}
	run_log(run, "net: the egress proxy listens on %s inside, for %zu allowed host(s)",
		CD_PROXY_URL, run->c->n_allow);
}

static void drain_socket(struct run *run)
{
	struct cd_msg m;

	while (run->sock >= 0) {
		int fd = -1, r = cd_msg_recv(run->sock, &m, &fd);

		if (r > 0 && m.type == CD_MSG_PROXY && fd >= 0 && !run->proxy)
			start_proxy(run, CD_TAKE_FD(fd));
		if (r > 0 && m.type == CD_MSG_LISTENER && fd >= 0 && run->listener < 0) {
			run->listener = CD_TAKE_FD(fd);
			snprintf(run->execlog.first.path, sizeof(run->execlog.first.path), "%s",
				 m.err.msg);
			run->execlog.first.argv = run->c->argv;
			run->execlog.first.known = true;
		}
		cd_closep(&fd);

		if (r == -EAGAIN)
			return;
		if (r <= 0) {
			cd_closep(&run->sock);
			run->sock = -1;
			return;
		}
		on_message(run, &m);
	}
}

static void audit_signal(struct run *run, int sig, int from_pid)
{
	struct cd_json j;

	if (!cd_audit_on(&run->audit))
		return;
	cd_audit_begin(&run->audit, &j, "signal");
	cd_json_kv_int(&j, "signal", sig);
	cd_json_kv_string(&j, "name", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	cd_json_kv_int(&j, "from_pid", from_pid);
	cd_json_kv_string(&j, "action", "forwarded to the command");
	cd_audit_end(&run->audit, &j);
}

static void audit_limit(struct run *run, const char *limit, const char *what)
{
	struct cd_json j;

	if (!cd_audit_on(&run->audit))
		return;
	cd_audit_begin(&run->audit, &j, "limit");
	cd_json_kv_string(&j, "limit", limit);
	cd_json_kv_string(&j, "action", what);
	cd_audit_end(&run->audit, &j);
}

static void on_signal(struct run *run)
{
	struct signalfd_siginfo si;

	while (read(run->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		/* the command has a process group of its own (Ctrl-C reaches it, not us, when it has
		 * the terminal): what cordon receives, it passes on */
		run_log(run, "signal: forwarding %s", strsignal((int)si.ssi_signo));
		audit_signal(run, (int)si.ssi_signo, (int)si.ssi_pid);
		if (run->sock >= 0)
			cd_msg_send(run->sock, CD_MSG_SIGNAL, (int32_t)si.ssi_signo, NULL, -1);
	}
}

/* The deadline is pid 1's to enforce (child.c): nothing in the sandbox can stop it, while
 * cordon itself may be stopped (job control) or busy. Here: a timeout during setup, and a
 * backstop if pid 1 has not ended the sandbox a second after SIGKILL was due. */
static void on_timer(struct run *run)
{
	uint64_t ticks;

	if (read(run->timerfd, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks))
		return;
	if (!run->running) {
		timed_out(run, 1);
		run_log(run, "timeout: during setup");
		kill_init(run);
		return;
	}
	if (!run->backstop) {
		run->backstop = true;
		arm_timer(run, deadline(run) + run->c->kill_after_ns + NSEC_PER_SEC);
		return;
	}
	timed_out(run, 1);
	timed_out(run, 2);
	run_log(run, "timeout: pid 1 did not end the sandbox: SIGKILL to it");
	kill_init(run);
}

enum { W_PIDFD, W_SIG, W_TIMER, W_SOCK, W_LISTENER, W_PROXY, W_CAPTURE, W_N = W_CAPTURE + 4 };

static void watch(struct run *run)
{
	for (;;) {
		struct pollfd p[W_N] = {
			[W_PIDFD] = { run->pidfd, POLLIN, 0 },
			[W_SIG] = { run->sigfd, POLLIN, 0 },
			[W_TIMER] = { run->timerfd, POLLIN, 0 },
			[W_SOCK] = { run->sock, POLLIN, 0 }, /* ignored by poll() once -1 */
			[W_LISTENER] = { run->listener, POLLIN, 0 },
			[W_PROXY] = { run->proxy ? cd_proxy_fd(run->proxy) : -1, POLLIN, 0 },
		};

		for (int i = 0; i < 2; i++)
			cd_capture_poll(&run->capture, i, &p[W_CAPTURE + 2 * i],
					&p[W_CAPTURE + 2 * i + 1]);
		if (poll(p, W_N, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[W_SOCK].revents)
			drain_socket(run);
		if (p[W_LISTENER].revents & POLLIN)
			cd_execlog_handle(run->listener, &run->audit, &run->execlog);
		else if (p[W_LISTENER].revents) /* every filtered process is gone */
			cd_closep(&run->listener), run->listener = -1;
		for (int i = 0; i < 2; i++)
			if (p[W_CAPTURE + 2 * i].revents || p[W_CAPTURE + 2 * i + 1].revents)
				cd_capture_pump(&run->capture, i);
		if (p[W_PROXY].revents)
			cd_proxy_run(run->proxy);
		if (p[W_SIG].revents)
			on_signal(run);
		if (p[W_TIMER].revents)
			on_timer(run);
		if (p[W_PIDFD].revents)
			break;
		if (run->got_exit && run->c->fast_exit) {
			/* nothing of the sandbox runs any more: leave pid 1 to finish exiting */
			cd_capture_drain(&run->capture, 2000);
			run->pid = 0;
			return;
		}
	}
	drain_socket(run); /* EXIT is sent before pid 1 exits: it is there */
	cd_capture_drain(&run->capture, 2000);
	while (wait4(run->pid, &run->init_status, 0, &run->ru) < 0 && errno == EINTR)
		;
	run->pid = 0;
}

/* --- the result --- */

static int exec_exit_code(int e)
{
	if (e == ENOENT || e == ENOTDIR || e == ELOOP || e == ENAMETOOLONG)
		return CORDON_EXIT_NOTFOUND;
	return CORDON_EXIT_NOEXEC;
}

static void set_outcome(struct run *run)
{
	struct cordon_result *res = run->res;
	int st = run->got_exit ? run->exit_status : run->init_status;

	if (run->failed) {
		res->outcome = CORDON_OUTCOME_SETUP_ERROR;
		res->exit_code = strcmp(res->error.step, "exec") == 0
					 ? exec_exit_code(res->error.code)
					 : CORDON_EXIT_FAILURE;
	} else if (run->timed_out) {
		res->outcome = CORDON_OUTCOME_TIMEOUT;
		res->exit_code = CORDON_EXIT_TIMEOUT;
		res->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	} else if (!run->running) {
		res->outcome = CORDON_OUTCOME_SETUP_ERROR;
		res->exit_code = CORDON_EXIT_FAILURE;
		cd_fail(&res->error, 0, "init", "the sandbox ended during setup (%s %d)",
			WIFSIGNALED(st) ? "signal" : "status",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		/* the command, or pid 1 itself when no EXIT came (killed from outside) */
		res->outcome = CORDON_OUTCOME_SIGNALED;
		res->signal = WTERMSIG(st);
		res->exit_code = CORDON_EXIT_SIGNAL_BASE + res->signal;
	} else {
		res->outcome = CORDON_OUTCOME_EXITED;
		res->status = WEXITSTATUS(st);
		res->exit_code = res->status;
	}
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * NSEC_PER_SEC + (uint64_t)tv.tv_usec * NSEC_PER_USEC;
}

/* Everything in the cgroup dies, its figures go to the result, and it goes. An OOM kill of
 * the sandbox (memory.oom.group) is the outcome "oom". */
static void cgroup_end(struct run *run)
{
	struct cordon_result *res = run->res;
	struct cd_cgroup_usage u;

	if (!run->cg.path)
		return;
	cd_cgroup_kill(&run->cg);
	cd_cgroup_usage(&run->cg, &u);
	res->has_cgroup_usage = u.valid;
	res->memory_peak_bytes = u.memory_peak;
	res->cgroup_user_ns = u.user_us * NSEC_PER_USEC;
	res->cgroup_system_ns = u.system_us * NSEC_PER_USEC;
	res->pids_peak = u.pids_peak;
	res->oom_kills = u.oom_kills;
	run->pids_limit_hits = u.pids_max_hits;
	if (u.oom_kills && res->outcome == CORDON_OUTCOME_SIGNALED && res->signal == SIGKILL) {
		res->outcome = CORDON_OUTCOME_OOM;
		run_log(run, "cgroup: the memory limit (%s) killed the sandbox",
			run->cg.applied[CD_CG_MEMORY] ? run->cg.applied[CD_CG_MEMORY] : "?");
	}
	if (run->c->fast_exit && !run->pid)
		cd_cgroup_release(&run->cg);
	else
		cd_cgroup_remove(&run->cg);
}

static void file_event(enum cd_change what, const struct cd_fentry *e, void *data)
{
	static const char *const names[] = { "created", "modified", "deleted" };
	struct run *run = data;
	bool lossy = false;
	struct cd_json j;

	cd_audit_begin(&run->audit, &j, "file");
	cd_json_kv_string(&j, "change", names[what]);
	cd_json_key(&j, "path");
	cd_audit_string(&j, e->path, strlen(e->path), &lossy);
	cd_json_kv_string(&j, "type", cd_fentry_type(e->mode));
	cd_json_kv_uint(&j, "size", e->size);
	cd_json_kv_uint(&j, "mode", e->mode & 07777);
	cd_json_key(&j, "sha256");
	if (e->hashed && what != CD_DELETED)
		cd_json_string(&j, e->sha256);
	else
		cd_json_null(&j);
	if (e->link) {
		cd_json_key(&j, "target");
		cd_audit_string(&j, e->link, strlen(e->link), &lossy);
	}
	if (lossy) {
		cd_json_key(&j, "path_hex");
		cd_audit_hex(&j, e->path, strlen(e->path));
	}
	cd_audit_end(&run->audit, &j);
}

/* file events (the workdir's changes), limits that fired, and the exit event: the last line. */
static void audit_end(struct run *run)
{
	struct cordon_result *res = run->res;
	struct cd_snapshot after;
	struct cd_json j;

	if (!cd_audit_on(&run->audit))
		return;
	if (run->have_before &&
	    cd_snapshot_take(workdir_fd_path(run), run->own_files, run->n_own_files, &after) >= 0) {
		cd_audit_walk_limits(&run->audit, "after", &after);
		cd_snapshot_diff(&run->before, &after, file_event, run);
		cd_snapshot_done(&after);
	}
	if (res->outcome == CORDON_OUTCOME_OOM)
		audit_limit(run, "memory", "the memory limit killed the sandbox");
	if (run->pids_limit_hits) {
		cd_audit_begin(&run->audit, &j, "limit");
		cd_json_kv_string(&j, "limit", "pids");
		cd_json_kv_string(&j, "action", "fork refused at pids.max");
		cd_json_kv_uint(&j, "count", run->pids_limit_hits);
		cd_audit_end(&run->audit, &j);
	}
	cd_audit_begin(&run->audit, &j, "exit");
	cd_report_render_result(&j, res);
	cd_json_kv_uint(&j, "exec_events_dropped", run->execlog.dropped);
	cd_audit_end(&run->audit, &j);
}

static void finish(struct run *run)
{
	struct cordon_result *res = run->res;
	uint64_t now = cd_now_ns();

	/* the terminal first: what follows may write to it (-v), and must find it as it was */
	cd_terminal_restore(&run->term);
	set_outcome(run);
	cgroup_end(run);
	res->startup_ns = (run->running ? run->t_running : now) - run->t_start;
	res->wall_ns = run->running ? now - run->t_running : 0;
	/* pid 1 reaped every process of the sandbox: its own and its children's usage covers them
	 * all; without EXIT (killed), what wait4() says of it */
	if (run->got_exit) {
		res->user_ns = run->usage.user_us * NSEC_PER_USEC;
		res->system_ns = run->usage.system_us * NSEC_PER_USEC;
		res->max_rss_kb = run->usage.max_rss_kb;
	} else {
		res->user_ns = tv_ns(run->ru.ru_utime);
		res->system_ns = tv_ns(run->ru.ru_stime);
		res->max_rss_kb = (uint64_t)run->ru.ru_maxrss;
	}
	if (run->capture.on) {
		res->has_capture = 1;
		res->capture_bytes[0] = run->capture.s[0].bytes;
		res->capture_bytes[1] = run->capture.s[1].bytes;
		res->capture_truncated = run->capture.s[0].truncated || run->capture.s[1].truncated;
		if (res->capture_truncated)
			run_log(run, "capture: a copy reached its bound (%llu bytes), the rest was only "
				"passed on", (unsigned long long)run->capture.max);
	}
	if (run->proxy) {
		res->has_proxy = 1;
		cd_proxy_free(CD_TAKE_PTR(run->proxy), &res->proxy); /* audit events before exit */
	}
	audit_end(run);
	run_log(run, "sandbox: ended, exit code %d", res->exit_code);
}

static int write_reports(struct run *run, struct cordon_error *err)
{
	struct cd_report_info info = report_info(run);

	return cd_report_write(&info, &run->report, run->c->report_fd, err);
}

static void run_done(struct run *run)
{
	cd_closep(&run->sock); /* a child still waiting for GO sees EOF and exits */
	if (run->pid > 0) { /* an early return: the sandbox must not outlive us */
		kill_init(run);
		while (waitpid(run->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	cd_closep(&run->pidfd);
	cd_closep(&run->sigfd);
	cd_closep(&run->timerfd);
	if (run->mask_set) {
		/* drop what arrived but was not read before unblocking */
		struct timespec zero = { 0 };
		sigset_t pending;

		sigpending(&pending);
		for (size_t i = 0; i < CD_ELEMENTSOF(forwarded); i++)
			if (sigismember(&pending, forwarded[i]) &&
			    !sigismember(&run->old_mask, forwarded[i])) {
				sigset_t one;

				sigemptyset(&one);
				sigaddset(&one, forwarded[i]);
				sigtimedwait(&one, NULL, &zero);
			}
		pthread_sigmask(SIG_SETMASK, &run->old_mask, NULL);
	}
	cd_terminal_restore(&run->term);
	cd_report_discard(&run->report);
	cd_strv_free(run->envp);
	cd_mount_plan_done(&run->plan);
	cd_filter_done(&run->filter);
	cd_filter_done(&run->baseline);
	cd_policy_free(&run->baseline_policy);
	cd_policy_free(&run->policy); /* also what a failed load left */
	free(run->policy_path);
	cd_cgroup_done(&run->cg);
	cd_audit_close(&run->audit);
	cd_closep(&run->listener);
	cd_proxy_free(run->proxy, NULL);
	cd_capture_done(&run->capture);
	if (run->have_before)
		cd_snapshot_done(&run->before);
	if (run->have_id)
		cd_identity_done(&run->id);
	cd_hostpath_done(&run->wd);
	cd_marks_done(&run->marks);
	free(run->workdir_target);
	free(run->chdir);
}

int cordon_run(struct cordon_config *c, struct cordon_result *res, struct cordon_error *err)
{
	_cleanup_(run_done) struct run run = {
		.c = c, .res = res, .wd = { .fd = -1 }, .sock = -1, .pidfd = -1, .sigfd = -1, .timerfd = -1,
		.report = { .dirfd = -1, .fd = -1 }, .cg = { .fd = -1 }, .audit = { .fd = -1, .id = res->id },
		.listener = -1, .term = { .fd = -1 },
	};
	struct cordon_error report_err = { 0 };
	int r;

	memset(res, 0, sizeof(*res));
	cd_error_clear(err);
	run.t_start = cd_now_ns();
	r = cd_random_id(res->id);
	if (r < 0)
		return cd_fail_errno(err, -r, "id", "getrandom");
	r = prepare(&run, &res->error);
	if (r >= 0)
		r = start(&run, &res->error);
	if (r >= 0)
		watch(&run);
	else
		run.failed = true;
	finish(&run);
	/* a report asked for and not written fails the run (cordon.h): the command's outcome stays
	 * in res, the exit code becomes 125 */
	r = write_reports(&run, &report_err);
	if (res->outcome == CORDON_OUTCOME_SETUP_ERROR) {
		if (r < 0)
			cd_error_append(&res->error, "; no report: %s", report_err.msg);
		if (err)
			*err = res->error;
		return -(res->error.code ? res->error.code : EINVAL);
	}
	if (r < 0) {
		res->exit_code = CORDON_EXIT_FAILURE;
		if (err)
			*err = report_err;
		return r;
	}
	return 0;
}

const char *cordon_version(void)
{
	return CORDON_VERSION;
}
