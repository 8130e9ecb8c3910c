/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sandbox.c - a sandbox, from the supervisor's side. Runs in the caller's process.
 *
 * Everything is prepared before clone() (paths, identity, the mount plan, the policy, the
 * report file), so that bad input fails before anything starts. Then (see sync.h):
 *   sync 1  clone3() into new user, mount, pid, ipc, uts, cgroup (and net) namespaces
 *   sync 2  write the id maps, send GO (with the id-mapped workdir when there is one), compile
 *           and send the seccomp programs
 *   sync 3  RUNNING once the command's execve() worked, or ERROR from any setup step
 *   sync 4  the poll loop (command.c) until pid 1 is gone
 * pid 1 is held by cd_sandbox_done(): any early return kills it through its pidfd.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "events.h"
#include "hostroot.h"
#include "initspec.h"
#include "libexec.h"
#include "nsjoin.h"
#include "proxy.h"
#include "resolver.h"
#include "rlimits.h"
#include "cares.h"
#include "sandbox.h"
#include "cow.h"
#include "protect_run.h"
#include "sysctl.h"
#include "sysinfo.h"
#include "timing.h"
#include "workdir.h"

/* --- preparation: nothing runs yet --- */

static int marks_outside(struct cd_sandbox *sb, struct cordon_error *err)
{
	_cleanup_free_ char *dir = sb->marks.path ? strdup(sb->marks.path) : NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (!dir)
		return 0;
	/* the list's directory, or the nearest of its parents that exists: it is made there */
	do {
		*strrchr(dir, '/') = '\0';
		fd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} while (fd < 0 && errno == ENOENT && strchr(dir, '/'));
	r = fd < 0 ? 0 : cd_hostpath_within(fd, &sb->wd);
	if (r > 0)
		return cd_fail(err, 0, "workdir",
			       "%s: holds %s, cordon's list of earlier workdirs (and beside it the "
			       "layers' key), which the sandbox must not reach (set XDG_STATE_HOME "
			       "elsewhere)",
			       sb->wd.path, sb->marks.path);
	return 0;
}

static int resolve_workdir(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cordon_config *c = sb->c;
	int r;

	cd_marks_load(&sb->marks);
	r = cd_workdir_open(c->fs.workdir, &sb->marks, &sb->wd, err);
	if (r < 0)
		return r;
	cd_timing("workdir opened");
	/* the list of earlier workdirs and the layers' key must be out of the sandbox's reach
	 * (XDG_STATE_HOME) */
	r = marks_outside(sb, err);
	if (r < 0)
		return r;
	sb->workdir_target = strdup(c->fs.workdir_target ? c->fs.workdir_target : sb->wd.path);
	if (!sb->workdir_target)
		return cd_fail(err, ENOMEM, "workdir", "out of memory");
	return 0;
}

/* --report and --audit: created before anything starts, out of the sandbox's reach */
static int open_outputs(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cd_output_ctx ctx = { .workdir = &sb->wd, .marks = &sb->marks };
	int r;

	if (sb->c->outputs.report_path) {
		r = cd_report_open(sb->c->outputs.report_path, &ctx, &sb->rec.report, err);
		if (r < 0)
			return r;
	}
	if (sb->c->outputs.audit_path)
		return cd_audit_open(sb->c->outputs.audit_path, &ctx, &sb->rec.audit, err);
	return 0;
}

/* Files at the workdir's top of another owner than the sandbox's (a tarball unpacked there by
 * root, whose tar kept the archive's owners): the sandbox cannot write them, and would fail
 * later with a bare "Permission denied". Said once the run is sure to start; nothing is
 * changed. Only for a root caller, who may write those files on the host and not inside: an
 * unprivileged caller cannot write them on the host either, so nothing differs to be told. */
static void tell_foreign(const struct cd_sandbox *sb)
{
	const struct cd_identity *id = &sb->id;
	uid_t own = id->idmap_workdir ? id->disk_uid : id->host_uid;
	gid_t gown = id->idmap_workdir ? id->disk_gid : id->host_gid;
	struct cd_workdir_foreign f;
	char more[48] = "";

	if (!cd_host_root() || cd_workdir_foreign(sb->wd.fd, own, &f) < 0 || f.count == 0)
		return;
	if (f.count > 1)
		snprintf(more, sizeof(more), " (and %u more)", f.count - 1);
	cd_log_notice(&sb->c->log,
		      "workdir: %s%s belongs to uid %u, not to the workdir's owner (uid %u): the "
		      "sandbox cannot write %s (unpacked as root? tar --no-same-owner, or unpack "
		      "inside; chown -R %u:%u gives %s back)",
		      f.name, more, f.uid, own, f.count > 1 ? "them" : "it", own, gown,
		      f.count > 1 ? "them" : "it");
}

static void log_plan(const struct cd_sandbox *sb)
{
	const struct cd_identity *id = &sb->id;

	cd_log_line(&sb->c->log, "identity: uid %u gid %u inside, host uid %u gid %u%s",
		      id->inside_uid, id->inside_gid, id->host_uid, id->host_gid,
		      id->idmap_workdir ? ", workdir id-mapped (host 0 <-> sandbox)" : "");
	for (size_t i = 0; i < sb->plan.n; i++) {
		const struct cd_mnt *m = &sb->plan.m[i];

		cd_log_line(&sb->c->log, "mount: %-8s %s%s%s", cd_mnt_kind_name(m->kind), m->dst,
			      m->src ? (m->kind == CD_MNT_SYMLINK ? " -> " : " <- ") : "",
			      m->src ? m->src : "");
	}
}

/* Parse the policy before anything starts: a bad policy costs nothing. It is compiled later,
 * while pid 1 sets up its mounts (compile_filters). */
/* A network namespace of the sandbox's own (cordon's: loopback, resolver, proxy, a fresh sysfs),
 * not the host's nor one joined. */
static bool own_net(const struct cordon_config *c)
{
	return c->net.mode != CORDON_NET_HOST && c->ns.join[CD_JOIN_NET] < 0;
}

int cd_sandbox_load_policy(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cordon_config *c = sb->c;
	_cleanup_free_ char *found = NULL;
	const char *path = c->seccomp.path;
	int r;

	if (c->seccomp.none) {
		cd_log_line(&c->log, "seccomp: none (no policy: only cordon's baseline)");
		return 0;
	}
	if (!path) {
		found = cd_policy_find("default", cd_policy_search_path(), err);
		if (!found)
			return -ENOENT;
		path = found;
	}
	/* a shipped policy, byte for byte with what it includes: the build's program, unparsed */
	r = cd_filter_from_sources(path, c->seccomp.log, !c->seccomp.unoptimized,
				   cd_audit_on(&sb->rec.audit), &sb->sec.filter);
	if (r < 0)
		return cd_fail(err, ENOMEM, "seccomp", "out of memory");
	sb->sec.have_filter = r > 0;
	if (!sb->sec.have_filter)
		r = cd_policy_load(&sb->sec.policy, path,
				   c->seccomp.display ? c->seccomp.display : "default.policy", err);
	if (r < 0)
		return r;
	sb->sec.have_policy = true;
	sb->sec.policy_path = found ? CD_TAKE_PTR(found) : strdup(path);
	return sb->sec.policy_path ? 0 : cd_fail(err, ENOMEM, "seccomp", "out of memory");
}

int cd_sandbox_open(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cordon_config *c = sb->c;
	int r;

	if (c->net.n_allow && c->net.mode == CORDON_NET_HOST)
		return cd_fail(err, 0, "allow-net", "cannot be combined with the host's network, "
				   "which has no allow-list");
	if (c->net.n_allow && c->ns.join[CD_JOIN_NET] >= 0)
		return cd_fail(err, 0, "allow-net", "cannot be combined with a joined network "
				   "namespace, which is not cordon's: no proxy or allow-list in it");
	if (c->net.mode == CORDON_NET_HOST && c->ns.join[CD_JOIN_NET] >= 0)
		return cd_fail(err, 0, "net", "the host's network and a joined network namespace: "
				   "one or the other");
	if (c->identity.hostname && c->ns.join[CD_JOIN_UTS] >= 0)
		return cd_fail(err, 0, "hostname", "cannot be set in a joined uts namespace, which "
				   "is not the sandbox's (its hostname is kept)");
	/* the proxy's resolver, loaded now: a library that cannot be loaded stops the run before
	 * anything starts, and nothing of the sandbox's can stand in for it */
	if (c->net.n_allow && !cd_cares(err))
		return -ELIBACC;
	r = resolve_workdir(sb, err);
	if (r < 0)
		return r;
	/* the outputs next, so that a failure of a later step is reported in them */
	return open_outputs(sb, err);
}

/* Remembered before anything runs in it, once every check has passed (a refused run leaves no
 * mark: nothing ran there): no later run follows a symlink in it, nor runs a program from it. */
static void remember_workdir(struct cd_sandbox *sb)
{
	struct cd_mark mark;
	int r = cd_mark_of(sb->wd.fd, &mark);

	if (r >= 0)
		r = cd_marks_add(&sb->marks, &mark, sb->wd.path);
	cd_timing("workdir remembered");
	if (r < 0)
		cd_log_line(&sb->c->log, "workdir: cannot remember %s as a sandbox's workdir (%s), "
			      "ignoring: a later run given a path through it would follow the "
			      "symlinks it holds", sb->wd.path,
			      sb->marks.why[0] ? sb->marks.why : strerror(-r));
}

/* A program cordon runs in the sandbox (cordon-init as its pid 1, a session's agent) must not lie
 * where a sandbox writes: in this workdir, or below an earlier one (whose files the sandbox of
 * that run could have replaced: under the id-mapped workdir, with root's own owner). Its
 * directory is looked at, from its descriptor, walking up. */
static int program_outside(struct cd_sandbox *sb, int fd, const char *name,
			   struct cordon_error *err)
{
	char link[64], path[PATH_MAX];
	_cleanup_close_ int dir = -1;
	ssize_t n;
	int r;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return cd_fail_errno(err, n < 0 ? errno : ENOENT, "libexec", "where %s lies", name);
	path[n] = '\0';
	*strrchr(path, '/') = '\0';
	dir = open(path[0] ? path : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return cd_fail_errno(err, errno, "libexec", "open %s", path);
	r = cd_hostpath_within(dir, &sb->wd);
	if (r > 0)
		return cd_fail(err, 0, "workdir",
			       "%s: holds %s (%s), which every sandbox runs: a sandbox there "
			       "could replace it (use an installed cordon, or a build outside the "
			       "workdir)",
			       sb->wd.path, name, path);
	while (cd_marks_any(&sb->marks)) {
		struct cd_mark m;
		struct stat st, up_st;
		int up;

		if (cd_mark_of(dir, &m) == 0 && cd_marks_has(&sb->marks, &m))
			return cd_fail(err, 0, "libexec",
				       "%s lies in a directory an earlier sandbox had as its workdir "
				       "(%s): the program may be that sandbox's, and is not run",
				       name, path);
		up = openat(dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fstat(dir, &st) < 0 || fstat(up, &up_st) < 0 ||
		    (st.st_dev == up_st.st_dev && st.st_ino == up_st.st_ino)) {
			cd_closep(&up);
			break; /* the root */
		}
		close(dir);
		dir = up;
	}
	return 0;
}

/* The sysctls pid 1 writes: net.* only into a network namespace of the sandbox's own, and
 * ping_group_range clamped to the one gid the user namespace maps (the kernel refuses a range
 * whose ends it does not map; what the engines mean by "0 2147483647" is: ping for the
 * container's users). */
static int plan_sysctl(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cordon_config *c = sb->c;
	const char *why;
	bool clamped;

	if (!c->sysctl.n)
		return 0;
	sb->sysctl = calloc(c->sysctl.n, sizeof(*sb->sysctl));
	if (!sb->sysctl)
		return cd_fail(err, ENOMEM, "sysctl", "out of memory");
	for (size_t i = 0; i < c->sysctl.n; i++) {
		const struct cd_sysctl *k = &c->sysctl.v[i];

		sb->sysctl[i] = *k;
		if (k->net && c->net.mode == CORDON_NET_HOST)
			return cd_fail(err, EPERM, "sysctl",
				       "%s: the host's network (--net host): it would change the "
				       "host's: refused",
				       k->key);
		/* a joined namespace (a pod's) is its maker's, set up by it: the sandbox's root
		 * holds nothing over it (the kernel would refuse the write) */
		if (c->ns.join[k->net ? CD_JOIN_NET : CD_JOIN_IPC] >= 0) {
			cd_log_notice(&c->log,
				      "sysctl %s: \"%s\": not written: the %s namespace is a joined "
				      "one (its maker's values stay)",
				      k->key, k->value, k->net ? "network" : "IPC");
			sb->sysctl[i].value = NULL;
			continue;
		}
		if (strcmp(k->path, CD_SYSCTL_PING_PATH) != 0)
			continue;
		if (cd_sysctl_ping_clamp(k->value, sb->id.inside_gid, sb->ping_value, &clamped,
					 &why) < 0)
			return cd_fail(err, 0, "sysctl", "%s: \"%s\": %s", k->key, k->value, why);
		if (clamped && sb->ping_value[0])
			cd_log_notice(&c->log,
				      "sysctl %s: \"%s\" clamped to \"%s\" (the sandbox maps gid %u "
				      "alone)",
				      k->key, k->value, sb->ping_value, sb->id.inside_gid);
		else if (clamped)
			cd_log_notice(&c->log,
				      "sysctl %s: \"%s\": not written: the sandbox maps gid %u alone, "
				      "outside it: the namespace's default (nobody) stays",
				      k->key, k->value, sb->id.inside_gid);
		sb->sysctl[i].value = sb->ping_value[0] ? sb->ping_value : NULL;
	}
	return 0;
}

int cd_sandbox_prepare(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cordon_config *c = sb->c;
	int r;

	r = cd_rlimits_check(c->limits.rlimits, err);
	if (r < 0)
		return r;
	/* what pid 1 becomes: found now, so that a missing one stops the run before it starts */
	sb->pid1.init_fd = cd_libexec_open("cordon-init", "CORDON_INIT", err);
	if (sb->pid1.init_fd < 0)
		return sb->pid1.init_fd;
	r = program_outside(sb, sb->pid1.init_fd, "cordon-init", err);
	if (r >= 0 && sb->pid1.agent_fd >= 0)
		r = program_outside(sb, sb->pid1.agent_fd, "cordon-agent", err);
	if (r < 0)
		return r;
	r = cd_identity_resolve(&c->identity, &sb->wd.st, sb->workdir_target, &sb->id, err);
	if (r < 0)
		return r;
	sb->have_id = true;
	r = plan_sysctl(sb, err);
	if (r < 0)
		return r;
	memcpy(sb->bounds.rlimits, c->limits.rlimits, sizeof(sb->bounds.rlimits));
	cd_share_plan(c->limits.user_share, &c->log, &sb->id, sb->bounds.rlimits,
		      &sb->bounds.share);
	cd_timing("identity");
	/* RLIMIT_NPROC stands in for pids.max only where the sandbox's host uid is its own */
	r = cd_cgroup_setup(&c->limits, sb->res->id,
			    sb->id.own_ids || sb->id.host_uid == CORDON_ROOT_HOST_ID,
			    &sb->bounds.cg, sb->bounds.rlimits, err);
	if (r < 0)
		return r;
	cd_timing("cgroup");
	cd_cgroup_log(&sb->bounds.cg, &c->log);
	r = cd_mount_plan_build(&c->fs, c->identity.hostname, own_net(c),
				sb->wd.path, &sb->wd.st, sb->workdir_target, &sb->id,
				&sb->marks, &sb->plan, err);
	cd_timing("mount plan");
	if (r >= 0)
		r = cd_protect_run_plan(sb, err);
	if (r >= 0)
		r = cd_cow_prepare(sb, err);
	cd_timing("protected paths planned");
	if (r < 0)
		return r;
	log_plan(sb);
	remember_workdir(sb);
	/* the list of earlier workdirs has served (paths are resolved): it is not carried into
	 * pid 1, nor kept by a session's supervisor (up to 65,536 entries) */
	cd_marks_done(&sb->marks);
	malloc_trim(0);
	return 0;
}

void cd_sandbox_child_args(struct cd_sandbox *sb, struct cd_child_args *a)
{
	a->plan = &sb->plan; /* pid 1 fills in the trees it is handed, in its own copy */
	a->id = &sb->id;
	a->hostname = sb->c->identity.hostname ? sb->c->identity.hostname : CD_DEFAULT_HOSTNAME;
	a->own_net = own_net(sb->c);
	a->own_uts = sb->c->ns.join[CD_JOIN_UTS] < 0;
	a->sysctl = sb->sysctl;
	a->n_sysctl = sb->sysctl ? sb->c->sysctl.n : 0;
	a->proxy_port = sb->c->net.n_allow ? CD_PROXY_PORT : 0;
	a->rlimits = sb->bounds.rlimits;
	a->share = &sb->bounds.share;
	/* filled by compile_filters() before the clone */
	a->baseline = &sb->sec.baseline;
	a->filter = sb->sec.have_policy ? &sb->sec.filter : NULL;
}

/* --- start --- */

static int clone_fail(int e, struct cordon_error *err)
{
	char hint[400];

	if (cd_sysinfo_userns_hint(hint, sizeof(hint)))
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

/* What cordon-init needs (initspec.h), in a memfd pid 1 inherits and hands it. */
static int write_spec(const struct cd_child_args *a, int *ret_fd, struct cordon_error *err)
{
	struct cd_init_spec s = {
	    .argv = (char **)a->command.argv,
	    .envp = (char **)a->command.envp,
	    .path = a->command.path,
	    .chdir = a->command.chdir,
	    .baseline = *a->baseline,
	    .has_filter = a->filter != NULL,
	    .has_tty = a->command.tty_fd >= 0,
	    .take_tty = a->command.take_tty,
	    .has_exec = a->command.exec_fd >= 0,
	    .timing = cd_timing_on(),
	    .deadline_ns = a->command.deadline_ns,
	    .kill_after_ns = a->command.kill_after_ns,
	};
	_cleanup_close_ int fd = -1;
	_cleanup_free_ void *buf = NULL;
	size_t len;
	int r;

	if (a->filter)
		s.filter = *a->filter;
	memcpy(s.rlimits, a->rlimits, sizeof(s.rlimits));
	r = cd_init_spec_pack(&s, &buf, &len);
	if (r < 0)
		return cd_fail(err, -r, "init", "the command's argv and environment%s",
			       r == -E2BIG ? " are too large" : ": out of memory");
	fd = memfd_create("cordon-init-spec", MFD_CLOEXEC);
	if (fd < 0)
		return cd_fail_errno(err, errno, "init", "memfd_create");
	r = cd_write_all(fd, buf, len);
	if (r < 0)
		return cd_fail_errno(err, -r, "init", "write the spec for cordon-init");
	*ret_fd = CD_TAKE_FD(fd);
	return 0;
}

/* sync 1 */
static int spawn(struct cd_sandbox *sb, const struct cd_child_args *args_template,
		 struct cordon_error *err)
{
	/* the cgroup namespace is made by pid 1 once it is in its cgroup (child.c) */
	uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
			 CLONE_PIDFD;
	struct clone_args ca = { .exit_signal = SIGCHLD };
	bool in_cgroup = sb->bounds.cg.fd >= 0;
	_cleanup_close_ int spec_fd = -1;
	struct cd_owner_creds owner = { 0 };
	struct cd_nsjoin_saved joined;
	unsigned stayed = 0;
	int sv[2], pidfd = -1, r, e;
	pid_t pid;

	r = write_spec(args_template, &spec_fd, err);
	if (r < 0)
		return r;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cd_fail_errno(err, errno, "sync", "socketpair");
	/* a network namespace in the clone: a thread of pid 1 that made it cost more (its stack's
	 * page faults, the join) than the clone's part (bench/startup.md) */
	if (sb->c->net.mode != CORDON_NET_HOST)
		flags |= CLONE_NEWNET;
	/* a namespace joined is entered by this thread around the clone, not made (nsjoin.h) */
	for (int i = 0; i < CD_JOIN_N; i++)
		if (sb->c->ns.join[i] >= 0)
			flags &= ~(uint64_t)cd_nsjoin_flag(i);
	ca.flags = flags | (in_cgroup ? CLONE_INTO_CGROUP : 0);
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.cgroup = in_cgroup ? (uint64_t)sb->bounds.cg.fd : 0;
	/* the joined namespaces first: setns wants CAP_SYS_ADMIN over their owner, which the
	 * user namespace the clone makes never has */
	r = cd_nsjoin_enter(sb->c->ns.join, &joined, err);
	/* root: the sandbox's user namespace owned by its own host id (idrange.h) */
	if (r >= 0)
		r = cd_userns_owner_enter(&sb->id, &owner, err);
	if (r < 0) {
		cd_nsjoin_leave(&joined, NULL, NULL);
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	cd_timing("clone");
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0 && in_cgroup && (errno == E2BIG || errno == EINVAL)) {
		/* before 5.7: no CLONE_INTO_CGROUP; moved before GO instead (go()) */
		ca.flags = flags;
		ca.cgroup = 0;
		sb->bounds.attach_cgroup = true;
		pid = (pid_t)syscall(SYS_clone3, &ca, CLONE_ARGS_SIZE_VER0);
	}
	if (pid < 0 && errno == ENOSYS) { /* before 5.3: clone() stores the pidfd at parent_tid */
		sb->bounds.attach_cgroup = in_cgroup;
		pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, &pidfd, NULL, 0);
	}
	if (pid == 0) {
		struct cd_child_args args = *args_template;

		cd_timing_to_stderr(cd_timing_on()); /* not the caller's callback: timing.h */
		cd_timing("pid 1 born");

		close(sv[0]);
		args.sock = sv[1];
		args.init_fd = sb->pid1.init_fd;
		args.spec_fd = spec_fd;
		cd_child_main(&args);
	}
	e = errno;
	cd_userns_owner_leave(&owner);
	r = cd_nsjoin_leave(&joined, &stayed, err);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return clone_fail(e, err);
	}
	cd_idrange_record(&sb->id.lease, pid);
	sb->pid1.pid = pid;
	sb->pid1.pidfd = pidfd;
	sb->pid1.sock = sv[0];
	if (r < 0) /* this thread is in a namespace neither its own nor joined: the run ends */
		return r;
	for (int i = 0; i < CD_JOIN_N; i++)
		if (stayed & (1u << i))
			cd_log_line(&sb->c->log, "namespaces: the %s namespace joined is this "
				      "thread's now (its own belongs to a user namespace above it)",
				      cd_nsjoin_name(i));
	if (fcntl(sb->pid1.sock, F_SETFL, O_NONBLOCK) < 0)
		return cd_fail_errno(err, errno, "sync", "make the socket non-blocking");
	cd_log_line(&sb->c->log, "sandbox: pid %d, namespaces user mount pid cgroup%s%s%s%s", pid,
		      sb->c->ns.join[CD_JOIN_IPC] < 0 ? " ipc" : " (ipc joined)",
		      sb->c->ns.join[CD_JOIN_UTS] < 0 ? " uts" : " (uts joined)",
		      own_net(sb->c) ? " net" : "",
		      sb->c->ns.join[CD_JOIN_NET] >= 0 ? " (net joined)" : "");
	return 0;
}

/* Root clones each read-only bind source from the descriptor it checked, read-only, nosuid,
 * nodev, and hands the trees to pid 1: pid 1 (the sandbox's host uid) looks up nothing by
 * name, and sources below directories only root may enter (/root/.cargo) can be bound. */
static int send_bind_trees(struct cd_sandbox *sb, struct cordon_error *err)
{
	if (!cd_host_root())
		return 0;
	for (size_t i = 0; i < sb->plan.n; i++) {
		const struct cd_mnt *m = &sb->plan.m[i];
		_cleanup_close_ int tree = -1;
		int r;

		if (m->kind != CD_MNT_BIND || m->host_fd < 0)
			continue;
		r = cd_userns_tree(m->host_fd, m->src, true, &tree, err);
		if (r < 0)
			return r;
		r = cd_msg_send(sb->pid1.sock, CD_MSG_TREE, (int32_t)i, NULL, tree);
		if (r < 0)
			return cd_fail_errno(err, -r, "sync", "hand the tree of %s to the sandbox",
					     m->src);
	}
	return 0;
}

/* The tree of the directory that was checked, never looked up again by name: id-mapped for a
 * root caller's root-owned workdir, as it is for another root caller. Without the privilege to
 * clone it here, pid 1 looks it up and checks it is the same (mount.c). */
static int make_workdir_tree(struct cd_sandbox *sb, struct cordon_error *err)
{
	int r = 0;

	if (sb->id.idmap_workdir)
		r = cd_userns_idmapped_workdir(sb->pid1.pid, &sb->id, sb->wd.fd, sb->wd.path,
					       &sb->pid1.workdir_tree, err);
	else if (cd_host_root())
		r = cd_userns_tree(sb->wd.fd, sb->wd.path, false, &sb->pid1.workdir_tree, err);
	cd_timing("workdir tree");
	return r;
}

/* Made before pid 1 unless it maps through pid 1's own user namespace: pid 1, just cloned,
 * waited for a CPU while the supervisor made it (bench/startup.md, item 7). */
static bool tree_after_clone(const struct cd_sandbox *sb)
{
	return sb->id.idmap_workdir && cd_userns_idmap_is_own(&sb->id);
}

/* sync 2 */
static int go(struct cd_sandbox *sb, struct cordon_error *err)
{
	_cleanup_close_ int workdir_fd = -1;
	int r;

	if (sb->bounds.attach_cgroup) {
		r = cd_cgroup_attach(&sb->bounds.cg, sb->pid1.pid, err);
		if (r < 0)
			return r;
	}
	r = cd_userns_write_maps(sb->pid1.pid, &sb->id, err);
	if (r < 0)
		return r;
	cd_timing("id maps written");
	if (tree_after_clone(sb)) {
		r = make_workdir_tree(sb, err);
		if (r < 0)
			return r;
	}
	workdir_fd = CD_TAKE_FD(sb->pid1.workdir_tree);
	r = send_bind_trees(sb, err);
	if (r < 0)
		return r;
	r = cd_msg_send(sb->pid1.sock, CD_MSG_GO, 0, NULL, workdir_fd);
	if (r < 0)
		return cd_fail_errno(err, -r, "sync", "send GO to the sandbox");
	cd_log_line(&sb->c->log, "sandbox: id maps written, GO");
	return 0;
}

static void log_filters(const struct cd_sandbox *sb)
{
	const struct cordon_config *c = sb->c;

	cd_log_line(&c->log, "seccomp: baseline.policy (enforced), %u rules, %u BPF instructions",
		      sb->sec.baseline.n_rules, sb->sec.baseline.len);
	if (sb->sec.have_filter)
		cd_log_line(&c->log, "seccomp: %s (%s), %u rules, %u BPF instructions%s",
			      sb->sec.policy_path, c->seccomp.log ? "log mode" : "enforced",
			      sb->sec.filter.n_rules, sb->sec.filter.len,
			      sb->sec.filter.optimized ? " (binary tree)" : "");
	cd_log_line(&c->log, "seccomp: TIOCSTI %s", sb->sec.baseline.blocks_tiocsti
			      ? "denied" : "not proven denied: new session instead");
}

/* Before the clone: compile what load_policy() parsed, and the baseline. The exec notifications
 * of the audit trail go in the policy's program, or the baseline's without one. The parsed
 * policies go at once: freed after the clone, their pages were copied (pid 1 shared them). */
static int compile_filters(struct cd_sandbox *sb, struct cordon_error *err)
{
	const struct cordon_config *c = sb->c;
	bool audit = cd_audit_on(&sb->rec.audit);
	int r;

	r = cd_filter_from_sources(NULL, false, true, audit && !sb->sec.have_policy,
				   &sb->sec.baseline);
	if (r < 0)
		return cd_fail(err, ENOMEM, "seccomp", "out of memory");
	if (r == 0) {
		r = cd_policy_parse_baseline(&sb->sec.baseline_policy, err);
		if (r >= 0)
			r = cd_filter_compile_audit(&sb->sec.baseline_policy, false, true,
						    audit && !sb->sec.have_policy,
						    &sb->sec.baseline, err);
		if (r < 0)
			return r;
	}
	sb->sec.baseline.baseline = true;
	sb->sec.have_baseline = true;
	if (sb->sec.have_policy && !sb->sec.have_filter) {
		r = cd_filter_compile_audit(&sb->sec.policy, c->seccomp.log,
					    !c->seccomp.unoptimized, audit, &sb->sec.filter, err);
		if (r < 0)
			return r;
		sb->sec.have_filter = true;
	}
	/* a property of the two programs installed together: either may deny */
	sb->sec.baseline.blocks_tiocsti = sb->sec.filter.blocks_tiocsti =
		cd_filter_set_blocks_tiocsti(
			(const struct cd_filter *[]){ &sb->sec.baseline,
						      sb->sec.have_filter ? &sb->sec.filter : NULL },
			2);
	log_filters(sb);
	cd_policy_free(&sb->sec.baseline_policy);
	cd_policy_free(&sb->sec.policy);
	return 0;
}

/* sync 2's end: the command may start. pid 1 has the seccomp programs already (compiled before
 * the clone, in its copy of our memory): this only orders the command after the audit's
 * snapshot of the workdir. */
static int send_start(struct cd_sandbox *sb, struct cordon_error *err)
{
	int r = cd_msg_send(sb->pid1.sock, CD_MSG_START, 0, NULL, -1);

	/* pid 1 is gone before the command (a failed setup step: its error waits in the socket,
	 * for the poll loop to report); without START no command can have started */
	if (r == -EPIPE || r == -ECONNRESET)
		return 0;
	return r < 0 ? cd_fail_errno(err, -r, "sync", "tell the sandbox to start") : 0;
}

/* cordon's own outputs are never in the workdir (output.h), but an fd the caller gave may be */
static void own_files(struct cd_sandbox *sb)
{
	struct stat st;

	if (sb->c->outputs.report_fd >= 0 && fstat(sb->c->outputs.report_fd, &st) == 0)
		sb->rec.own_files[sb->rec.n_own_files++] =
			(struct cd_file_id){ st.st_dev, st.st_ino };
}

/* The workdir for the walks: the descriptor that was checked, reopened for reading. */
static const char *workdir_fd_path(struct cd_sandbox *sb)
{
	snprintf(sb->rec.wd_proc, sizeof(sb->rec.wd_proc), "/proc/self/fd/%d", sb->wd.fd);
	return sb->rec.wd_proc;
}

struct applied_args {
	const struct cd_sandbox *sb;
	const struct cd_child_args *args;
};

/* The start event's "applied": rendered by the layer above that made the sandbox (records), which
 * knows the report's shape; none when it gave no renderer. */
static void render_applied(struct cd_json *j, const void *data)
{
	const struct applied_args *a = data;

	if (a->sb->hooks.render_applied)
		a->sb->hooks.render_applied(j, a->sb, a->args->command.chdir,
					    a->args->command.envp);
}

/* The start event, and the workdir as it is before anything runs. */
static int audit_start(struct cd_sandbox *sb, const struct cd_child_args *args,
		       struct cordon_error *err)
{
	struct applied_args applied = { sb, args };
	int r;

	if (!cd_audit_on(&sb->rec.audit))
		return 0;
	if (sb->c->cow.on) { /* the file events will come from the layer: no walk */
		cd_event_start(&sb->rec.audit, args->command.argv, 0, render_applied, &applied);
		return 0;
	}
	own_files(sb);
	r = cd_snapshot_take(workdir_fd_path(sb), sb->rec.own_files, sb->rec.n_own_files,
			     &sb->rec.before);
	if (r < 0)
		return cd_fail_errno(err, -r, "audit", "read the workdir %s", sb->wd.path);
	sb->rec.have_before = true;
	cd_event_start(&sb->rec.audit, args->command.argv, sb->rec.before.n, render_applied,
		       &applied);
	cd_audit_walk_limits(&sb->rec.audit, "before", &sb->rec.before);
	cd_log_line(&sb->c->log, "audit: %s, %zu workdir entries", sb->c->outputs.audit_path,
		    sb->rec.before.n);
	return 0;
}

int cd_sandbox_start(struct cd_sandbox *sb, const struct cd_child_args *args,
		     struct cordon_error *err)
{
	int r = tree_after_clone(sb) ? 0 : make_workdir_tree(sb, err);

	/* the filters too: the shipped policies' programs are taken from the binary, and what
	 * the supervisor does after the clone keeps pid 1 from a CPU on a small machine */
	if (r >= 0)
		r = compile_filters(sb, err);
	cd_timing("filters compiled");
	if (r >= 0)
		tell_foreign(sb);
	if (r >= 0)
		r = spawn(sb, args, err);
	if (r < 0)
		return r;
	cd_timing("cloned");
	r = go(sb, err);
	cd_timing("GO sent");
	/* pid 1 builds its mounts meanwhile; the workdir's snapshot comes before START, which pid 1
	 * waits for before the command */
	if (r >= 0)
		r = cd_cow_handshake(sb, err);
	if (r >= 0)
		r = audit_start(sb, args, err);
	return r < 0 ? r : send_start(sb, err);
}

/* --- sync 3 and 4: the poll loop --- */

void cd_sandbox_kill(struct cd_sandbox *sb)
{
	/* until pid 1 is reaped its pid cannot be reused, so kill() is a safe fallback where
	 * pidfds are not supported (valgrind) */
	if (pidfd_send_signal(sb->pid1.pidfd, SIGKILL, NULL, 0) < 0 && sb->pid1.pid > 0)
		kill(sb->pid1.pid, SIGKILL);
}

void cd_sandbox_kill_cgroup(struct cd_sandbox *sb)
{
	cd_cgroup_kill(&sb->bounds.cg);
}

void cd_sandbox_send(struct cd_sandbox *sb, uint32_t type, int32_t value)
{
	if (sb->pid1.sock >= 0)
		cd_msg_send(sb->pid1.sock, type, value, NULL, -1);
}

static void start_proxy(struct cd_sandbox *sb, int fd)
{
	const struct cordon_config *c = sb->c;
	const struct cd_proxy_opts o = {
		.allow = c->net.allow, .n_allow = c->net.n_allow, .idle_ns = c->net.idle_ns,
		.max_conns = c->net.max_conns, .audit = &sb->rec.audit,
		.log = c->log.fn, .log_data = c->log.data,
		.notice = c->log.notice, .notice_data = c->log.notice_data,
	};

	if (c->net.n_allow && cd_proxy_new(fd, &o, &sb->proxy, &sb->res->error) < 0) {
		sb->failed = true; /* no proxy: no sandbox */
		cd_sandbox_kill(sb);
		return;
	}
	cd_log_line(&c->log, "net: the egress proxy listens on %s inside, for %zu allowed host(s)",
		      CD_PROXY_URL, c->net.n_allow);
}

static void start_resolver(struct cd_sandbox *sb, int fd)
{
	const struct cordon_config *c = sb->c;
	const struct cd_resolver_opts o = {
		.allow = c->net.allow, .n_allow = c->net.n_allow, .audit = &sb->rec.audit,
		.log = c->log.fn, .log_data = c->log.data,
		.notice = c->log.notice, .notice_data = c->log.notice_data,
	};

	/* no resolver: lookups fail as they did before it (nothing listens), nothing worse */
	if (cd_resolver_new(fd, &o, &sb->resolver, &(struct cordon_error){ 0 }) == 0)
		cd_log_line(&c->log, "net: the sandbox's resolver answers on %s:53 inside",
			    CD_RESOLVER_ADDR);
}

static void take_listener(struct cd_sandbox *sb, int fd, const struct cd_msg *m)
{
	sb->rec.listener = fd;
	/* as far as the audit's event keeps it (execlog.h) */
	snprintf(sb->rec.execlog.first.path, sizeof(sb->rec.execlog.first.path), "%.*s",
		 (int)sizeof(sb->rec.execlog.first.path) - 1, m->path);
	sb->rec.execlog.first.argv = sb->c->command.argv;
	sb->rec.execlog.first.known = true;
}

static void on_message(struct cd_sandbox *sb, const struct cd_msg *m)
{
	if (m->type == CD_MSG_ERROR) {
		sb->failed = true;
		sb->res->error = m->err;
		cd_sandbox_kill(sb);
	}
	if (sb->hooks.on_msg)
		sb->hooks.on_msg(sb->hooks.on_msg_data, m);
}

void cd_sandbox_drain(struct cd_sandbox *sb)
{
	struct cd_msg m;

	while (sb->pid1.sock >= 0) {
		int fd = -1, r = cd_msg_recv(sb->pid1.sock, &m, &fd);

		/* taken only where this run asked for one: pid 1 is not trusted after setup, and a
		 * descriptor nobody takes is closed here */
		if (r > 0 && m.type == CD_MSG_PROXY && fd >= 0 && !sb->proxy && sb->c->net.n_allow)
			start_proxy(sb, CD_TAKE_FD(fd));
		if (r > 0 && m.type == CD_MSG_DNS && fd >= 0 && m.value == 0 && !sb->resolver &&
		    own_net(sb->c))
			start_resolver(sb, CD_TAKE_FD(fd));
		if (r > 0 && m.type == CD_MSG_DNS && fd >= 0 && m.value == 1 && sb->resolver)
			cd_resolver_add_tcp(sb->resolver, CD_TAKE_FD(fd)); /* (once: then it closes) */
		if (r > 0 && m.type == CD_MSG_LISTENER && fd >= 0 && sb->rec.listener < 0 &&
		    cd_audit_on(&sb->rec.audit))
			take_listener(sb, CD_TAKE_FD(fd), &m);
		cd_closep(&fd);
		if (r == -EAGAIN)
			return;
		if (r <= 0) {
			sb->pid1.sock = cd_safe_close(sb->pid1.sock);
			return;
		}
		on_message(sb, &m);
	}
}

void cd_sandbox_poll(const struct cd_sandbox *sb, struct pollfd p[CD_SANDBOX_NPOLL])
{
	p[CD_SANDBOX_POLL_PIDFD] = (struct pollfd){ sb->pid1.pidfd, POLLIN, 0 };
	p[CD_SANDBOX_POLL_SOCK] = (struct pollfd){ sb->pid1.sock, POLLIN, 0 }; /* -1: ignored */
	p[CD_SANDBOX_POLL_LISTENER] = (struct pollfd){ sb->rec.listener, POLLIN, 0 };
	p[CD_SANDBOX_POLL_PROXY] =
		(struct pollfd){ sb->proxy ? cd_proxy_fd(sb->proxy) : -1, POLLIN, 0 };
	p[CD_SANDBOX_POLL_DNS] =
		(struct pollfd){ sb->resolver ? cd_resolver_fd(sb->resolver) : -1, POLLIN, 0 };
}

void cd_sandbox_serve(struct cd_sandbox *sb, const struct pollfd p[CD_SANDBOX_NPOLL])
{
	if (p[CD_SANDBOX_POLL_SOCK].revents)
		cd_sandbox_drain(sb);
	if (p[CD_SANDBOX_POLL_LISTENER].revents & POLLIN)
		cd_execlog_handle(sb->rec.listener, &sb->rec.audit, &sb->rec.execlog);
	else if (p[CD_SANDBOX_POLL_LISTENER].revents) /* every filtered process is gone */
		sb->rec.listener = cd_safe_close(sb->rec.listener);
	if (p[CD_SANDBOX_POLL_PROXY].revents && sb->proxy)
		cd_proxy_run(sb->proxy);
	if (p[CD_SANDBOX_POLL_DNS].revents && sb->resolver)
		cd_resolver_run(sb->resolver);
}

void cd_sandbox_reap(struct cd_sandbox *sb)
{
	while (wait4(sb->pid1.pid, &sb->pid1.status, 0, &sb->pid1.ru) < 0 && errno == EINTR)
		;
	sb->pid1.pid = 0;
}

void cd_sandbox_leave(struct cd_sandbox *sb)
{
	sb->pid1.pid = 0;
	sb->pid1.left = true; /* its host id stays taken while it exists (idrange.h) */
}

/* --- the end --- */

/* Everything in the cgroup dies, its figures go to the result, and it goes. An OOM kill of
 * the sandbox (memory.oom.group) is the outcome "oom". */
static void cgroup_end(struct cd_sandbox *sb)
{
	struct cordon_result *res = sb->res;
	struct cd_cgroup_usage u;

	if (!sb->bounds.cg.path)
		return;
	cd_cgroup_kill(&sb->bounds.cg);
	cd_cgroup_usage(&sb->bounds.cg, &u);
	res->has_cgroup_usage = u.valid;
	res->memory_peak_bytes = u.memory_peak;
	res->cgroup_user_ns = u.user_us * NSEC_PER_USEC;
	res->cgroup_system_ns = u.system_us * NSEC_PER_USEC;
	res->pids_peak = u.pids_peak;
	res->oom_kills = u.oom_kills;
	sb->bounds.pids_limit_hits = u.pids_max_hits;
	if (u.oom_kills && res->outcome == CORDON_OUTCOME_SIGNALED && res->signal == SIGKILL) {
		res->outcome = CORDON_OUTCOME_OOM;
		cd_log_line(&sb->c->log, "cgroup: the memory limit (%s) killed the sandbox",
			    sb->bounds.cg.applied[CD_CG_MEMORY]
				? sb->bounds.cg.applied[CD_CG_MEMORY]
				: "?");
	}
	if (sb->c->command.fast_exit && !sb->pid1.pid)
		cd_cgroup_release(&sb->bounds.cg);
	else
		cd_cgroup_remove(&sb->bounds.cg);
}

int cd_sandbox_audit_check(struct cd_sandbox *sb, struct cordon_error *err)
{
	struct cordon_result *res = sb->res;
	int r = cd_audit_check(&sb->rec.audit, err);

	if (r >= 0)
		return 0;
	if (res->outcome != CORDON_OUTCOME_SETUP_ERROR) {
		res->error = *err;
		res->exit_code = CORDON_EXIT_FAILURE;
	} else if (!sb->rec.audit_loss_told) {
		cd_error_append(&res->error, "; audit: %s", err->msg);
	}
	sb->rec.audit_loss_told = true;
	return r;
}

/* file events (the workdir's changes), limits that fired, and the exit event: the last line. */
static void audit_end(struct cd_sandbox *sb)
{
	struct cd_snapshot after;

	if (!cd_audit_on(&sb->rec.audit))
		return;
	if (sb->rec.have_before && cd_snapshot_take(workdir_fd_path(sb), sb->rec.own_files,
						    sb->rec.n_own_files, &after) >= 0) {
		cd_audit_walk_limits(&sb->rec.audit, "after", &after);
		cd_event_files(&sb->rec.audit, &sb->rec.before, &after);
		cd_snapshot_done(&after);
	}
	if (sb->res->outcome == CORDON_OUTCOME_OOM)
		cd_event_limit(&sb->rec.audit, "memory", "the memory limit killed the sandbox", 0);
	if (sb->bounds.pids_limit_hits)
		cd_event_limit(&sb->rec.audit, "pids", "fork refused at pids.max",
			       sb->bounds.pids_limit_hits);
	/* events lost so far fail the run: the exit event says so too */
	cd_sandbox_audit_check(sb, &(struct cordon_error){ 0 });
	cd_event_exit(&sb->rec.audit, sb->res, sb->rec.execlog.dropped);
}

void cd_sandbox_end(struct cd_sandbox *sb)
{
	cgroup_end(sb);
	cd_timing("cgroup ended");
	/* every process of the sandbox is gone: its layer, its workdir no longer change */
	cd_cow_end(sb);
	cd_protect_run_sweep(sb);
	cd_timing("layer saved, protected paths swept");
	if (sb->proxy) {
		sb->res->has_proxy = 1;
		/* its net events go to the audit before the exit event */
		cd_proxy_free(CD_TAKE_PTR(sb->proxy), &sb->res->proxy);
	}
	/* (its dns events, and its last notice, before the exit event) */
	cd_resolver_free(CD_TAKE_PTR(sb->resolver));
	audit_end(sb);
}

/* Whether pid 1 has exited (left to exit on its own: cd_sandbox_leave): once it has, every
 * process of its pid namespace has too (the kernel reaps them before pid 1 ends) */
static bool pid1_exited(const struct cd_sandbox *sb)
{
	struct pollfd p = { .fd = sb->pid1.pidfd, .events = POLLIN };

	return sb->pid1.pidfd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

void cd_sandbox_done(struct cd_sandbox *sb)
{
	cd_closep(&sb->pid1.sock); /* a child still waiting for GO sees EOF and exits */
	if (sb->pid1.pid > 0) {    /* an early return: the sandbox must not outlive us */
		cd_sandbox_kill(sb);
		while (waitpid(sb->pid1.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (sb->pid1.left && pid1_exited(sb))
		sb->pid1.left = false; /* so its host id's slot goes with it (cd_identity_done) */
	cd_closep(&sb->pid1.pidfd);
	cd_closep(&sb->pid1.init_fd);
	cd_closep(&sb->pid1.workdir_tree);
	cd_cow_done(sb);
	cd_report_discard(&sb->rec.report);
	cd_mount_plan_done(&sb->plan);
	cd_filter_done(&sb->sec.filter);
	cd_filter_done(&sb->sec.baseline);
	cd_policy_free(&sb->sec.baseline_policy);
	cd_policy_free(&sb->sec.policy); /* also what a failed load left */
	free(sb->sec.policy_path);
	cd_cgroup_done(&sb->bounds.cg);
	cd_audit_close(&sb->rec.audit);
	cd_closep(&sb->rec.listener);
	cd_proxy_free(sb->proxy, NULL);
	cd_resolver_free(sb->resolver);
	if (sb->rec.have_before)
		cd_snapshot_done(&sb->rec.before);
	if (sb->have_id)
		cd_identity_done(&sb->id, !sb->pid1.left);
	cd_hostpath_done(&sb->wd);
	cd_marks_done(&sb->marks);
	cd_idxcache_done(&sb->cow.idxcache);
	free(sb->workdir_target);
	free(sb->sysctl);
}
