/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * child.c - runs inside the sandbox.
 *
 * pid 1 (the process clone() made) sets the sandbox up as a checklist while it holds every
 * capability of its new user namespace, then gives them all up and execs cordon-init (init.c),
 * which starts the command and stays as a small init. Until that exec pid 1 runs on its copy of
 * the supervisor's memory (the caller's argv, environment and heap): no process of the sandbox's
 * exists before it. It is tied to the supervisor by PR_SET_PDEATHSIG (kept across the exec), so if
 * cordon dies, even of SIGKILL, the sandbox goes with it.
 *
 * pid 1 came from a raw clone(): glibc's idea of its thread id is the supervisor's, so it must not
 * use raise(), abort() or pthread_kill().
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "caps.h"
#include "child.h"
#include "initspec.h"
#include "net.h"
#include "sync.h"
#include "sysctl.h"
#include "timing.h"

/* Close every fd but 0, 1, 2 and those in keep[] (entries < 3 are ignored). */
static void close_other_fds(int *keep, size_t n)
{
	unsigned next = 3;

	for (size_t i = 1; i < n; i++) /* insertion sort: n is tiny */
		for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)next)
			continue;
		if ((unsigned)keep[i] > next)
			close_range(next, (unsigned)keep[i] - 1, 0);
		next = (unsigned)keep[i] + 1;
	}
	close_range(next, ~0u, 0);
}

/* Take the inside ids at once, capabilities kept: a root caller's child starts as host uid 0,
 * which this namespace does not map, so it could not even create a file in a tmpfs; and from
 * here on nothing is done with the host's root identity. */
static int become_sandbox_ids(const struct cd_identity *id, struct cordon_error *err)
{
	/* raw system calls: glibc's signal every thread of the process to change its ids too;
	 * pid 1 has no other, so they would only cost more */
	if (id->setgroups_allowed && syscall(SYS_setgroups, 0, NULL) < 0)
		return cd_fail_errno(err, errno, "init", "clear supplementary groups");
	if (syscall(SYS_setresgid, id->inside_gid, id->inside_gid, id->inside_gid) < 0)
		return cd_fail_errno(err, errno, "init", "setresgid %u", id->inside_gid);
	if (syscall(SYS_setresuid, id->inside_uid, id->inside_uid, id->inside_uid) < 0)
		return cd_fail_errno(err, errno, "init", "setresuid %u", id->inside_uid);
	return 0;
}

/* No user namespace below the sandbox's, whatever the seccomp policy (none, a learning mode, a
 * file without the rule): the root of a nested one holds CAP_SETFCAP over the files its mapped
 * ids own, and through the id-mapped workdir those are root's on the host: a file capability
 * written there would be a host one. The limit is per user namespace and ours is 0; only pid 1,
 * with the capabilities it is about to drop, can set it. */
static int no_nested_userns(int proc, struct cordon_error *err)
{
	int r = cd_write_file_at(proc, "sys/user/max_user_namespaces", "0\n");

	if (r < 0)
		return cd_fail_errno(err, -r, "init", "forbid nested user namespaces "
						      "(user.max_user_namespaces = 0 in the sandbox's)");
	return 0;
}

/* The config's sysctls (sysctl.h: keys of the sandbox's own network and IPC namespaces, their
 * paths made of checked components), written through proc, a procfs of the sandbox's own
 * (own_errno 0; the host's /proc may be covered, read-only or hidepid, and the sandbox's is
 * locked down as it is placed). Which namespace's file a /proc/sys path opens is the writer's:
 * pid 1's, with its capabilities in the user namespace that owns them, before they go. The
 * kernel's own answer is final: a write it refuses fails the run. */
static int apply_sysctls(const struct cd_child_args *a, int proc, int own_errno,
			 struct cordon_error *err)
{
	struct open_how how = { .flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };

	if (!a->n_sysctl)
		return 0;
	if (own_errno)
		return cd_fail_errno(err, own_errno, "sysctl", "a procfs of the sandbox's own");
	for (size_t i = 0; i < a->n_sysctl; i++) {
		const struct cd_sysctl *k = &a->sysctl[i];
		char path[sizeof("sys/") + CD_SYSCTL_KEY_MAX];
		_cleanup_close_ int fd = -1;
		int r;

		if (!k->value) /* nothing to write (plan_sysctl) */
			continue;
		snprintf(path, sizeof(path), "sys/%s", k->path);
		fd = (int)syscall(SYS_openat2, proc, path, &how, sizeof(how));
		if (fd < 0)
			return cd_fail_errno(err, errno, "sysctl", "%s", k->key);
		r = cd_write_all(fd, k->value, strlen(k->value));
		if (r < 0)
			return cd_fail_errno(err, -r, "sysctl", "%s: \"%s\"", k->key, k->value);
	}
	return 0;
}

/* The host's /proc, if it is a procfs (what the writes below must reach), or -1 */
static int host_procfs(void)
{
	_cleanup_close_ int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct statfs sf;

	if (fd < 0 || fstatfs(fd, &sf) < 0)
		return -1;
	return sf.f_type == PROC_SUPER_MAGIC ? CD_TAKE_FD(fd) : -1;
}

/* The procfs pid 1 writes /proc/sys through: a fresh, detached one of the sandbox's own, or where
 * the kernel refuses one (the host's /proc partly covered: the sandbox's own /proc, placed
 * later, is refused then and says why and what to do: mount.c) the host's, *own_errno saying
 * why. Not the host's by choice:
 * there each live sandbox's user namespace adds entries of the same names under /proc/sys/user,
 * and each lookup compares them all, so that a session's create slowed as idle sessions grew
 * (bench/session.md). */
static int open_procfs(int *own_errno)
{
	struct cordon_error why = { 0 }; /* said again where the sandbox's /proc is placed */
	int proc = -1, r = cd_mount_fresh_proc(&proc, &why);

	*own_errno = r < 0 ? -r : 0;
	return r < 0 ? host_procfs() : proc;
}

/* What pid 1 writes into /proc/sys while it holds its capabilities: no nested user namespace,
 * the config's sysctls, a shared uid's part of its limits. The procfs of its own goes on to
 * be the sandbox's /proc (*ret_proc; -1 where only the host's could be had). */
static int write_proc_sys(const struct cd_child_args *a, int *ret_proc, struct cordon_error *err)
{
	int own_errno = 0;
	_cleanup_close_ int proc = open_procfs(&own_errno);
	int r;

	if (proc < 0)
		return cd_fail(err, own_errno, "init", "no procfs of the sandbox's own (%s), and the "
			       "host's /proc is none either", strerror(own_errno));
	r = no_nested_userns(proc, err);
	if (r >= 0)
		r = apply_sysctls(a, proc, own_errno, err);
	if (r >= 0)
		r = cd_share_apply(a->share, proc, err);
	if (r < 0)
		return r;
	*ret_proc = own_errno ? -1 : CD_TAKE_FD(proc);
	return 0;
}

/* Has the supervisor gone (its end of the socket closed: a hang-up)? */
static bool supervisor_gone(int sock)
{
	struct pollfd p = { .fd = sock, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

/* sync 1 and 2: wait for the supervisor, then the checklist. */
static int pid1_setup(const struct cd_child_args *a, struct cordon_error *err)
{
	_cleanup_close_ int proxy_fd = -1, dns_fd = -1, dns_tcp = -1, proc_fd = -1;
	struct cd_msg m;
	int workdir_fd = -1, r;

	/* sync 1: die with the supervisor; if it is already gone, GO never comes: EOF */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "init", "set the parent-death signal");
	/* --capture: the sandbox writes into the supervisor's pipes */
	if (a->command.stdout_fd >= 0 &&
	    (dup2(a->command.stdout_fd, 1) < 0 || dup2(a->command.stderr_fd, 2) < 0))
		return cd_fail_errno(err, errno, "capture", "dup2");
	/* nothing of the supervisor's stays open in here but the terminal, which pid 1 alone keeps
	 * to hand it to the command */
	close_other_fds((int[]){ a->sock, a->command.tty_fd, a->command.exec_fd, a->spec_fd,
				 a->init_fd },
			5);
	cd_timing("pid 1: fds closed");
	/* the network namespace came with the clone (ours: it needs no id maps); lo up meanwhile */
	if (a->own_net) {
		r = cd_net_loopback_up(err);
		if (r < 0)
			return r;
		if (a->proxy_port && (proxy_fd = cd_net_proxy_listen(a->proxy_port, err)) < 0)
			return proxy_fd;
		dns_fd = cd_net_dns_socket(SOCK_DGRAM, err);
		if (dns_fd < 0)
			return dns_fd;
		dns_tcp = cd_net_dns_socket(SOCK_STREAM, err);
		if (dns_tcp < 0)
			return dns_tcp;
	}
	cd_timing("pid 1: lo up");
	/* sync 2: the --ro-bind trees a root supervisor cloned from what it checked, then GO */
	while ((r = cd_msg_recv(a->sock, &m, &workdir_fd)) > 0 && m.type == CD_MSG_TREE &&
	       m.value >= 0 && (size_t)m.value < a->plan->n && a->plan->m[m.value].fd < 0)
		a->plan->m[m.value].fd = CD_TAKE_FD(workdir_fd);
	if (r <= 0 || m.type != CD_MSG_GO)
		_exit(CORDON_EXIT_FAILURE);
	cd_timing("pid 1: GO");
	/* sync 2: id maps written, and we are in our cgroup: it becomes the root of our cgroup
	 * namespace (made here, not at clone, where it would be the supervisor's cgroup) */
	if (unshare(CLONE_NEWCGROUP) < 0)
		return cd_fail_errno(err, errno, "namespaces", "new cgroup namespace");
	r = become_sandbox_ids(a->id, err);
	if (r < 0)
		return r;
	/* a change of the effective ids clears the parent-death signal: set it again (the
	 * socket's EOF would end pid 1 too, but only where it reads the socket); a supervisor
	 * that died in between sent none: its socket says so */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "init", "set the parent-death signal");
	if (supervisor_gone(a->sock))
		_exit(CORDON_EXIT_FAILURE);
	r = write_proc_sys(a, &proc_fd, err);
	if (r < 0)
		return r;
	a->plan->sync_sock = a->sock; /* --cow: the layer's upper goes to the supervisor */
	r = cd_mount_setup(a->plan, workdir_fd, CD_TAKE_FD(proc_fd), err);
	cd_timing("pid 1: mounts made");
	if (r >= 0 && proxy_fd >= 0) {
		/* the supervisor accepts on it; nothing inside keeps a copy */
		r = cd_msg_send(a->sock, CD_MSG_PROXY, 0, NULL, proxy_fd);
		proxy_fd = cd_safe_close(proxy_fd);
		if (r < 0)
			return cd_fail_errno(err, -r, "net", "hand the proxy's socket to the supervisor");
	}
	if (r >= 0 && dns_fd >= 0) {
		/* UDP (value 0) first: the resolver starts with it, then takes TCP (1) */
		r = cd_msg_send(a->sock, CD_MSG_DNS, 0, NULL, dns_fd);
		if (r >= 0)
			r = cd_msg_send(a->sock, CD_MSG_DNS, 1, NULL, dns_tcp);
		dns_fd = cd_safe_close(dns_fd);
		dns_tcp = cd_safe_close(dns_tcp);
		if (r < 0)
			return cd_fail_errno(err, -r, "net", "hand the resolver's socket to the "
							     "supervisor");
	}
	if (r < 0)
		return r;
	if (a->own_uts && sethostname(a->hostname, strlen(a->hostname)) < 0)
		return cd_fail_errno(err, errno, "hostname", "set hostname %s", a->hostname);
	r = cd_caps_drop(a->id->inside_uid, a->id->inside_gid, a->id->setgroups_allowed, err);
	if (r < 0)
		return r;
	/* the command runs as the same uid: it must not be able to ptrace or read pid 1 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return cd_fail_errno(err, errno, "init", "make pid 1 non-dumpable");
	return 0;
}

/* pid 1 becomes cordon-init (init.c): a fresh program, so that nothing of the supervisor's
 * memory (its caller's argv, environment and heap) stays in a process the sandbox can see. Its
 * descriptors go where it expects them (initspec.h), everything else closes; the spec and the
 * program came from the supervisor. */
_Noreturn static void exec_init(const struct cd_child_args *a)
{
	static char *const init_argv[] = { "cordon-init", NULL };
	static char *const init_envp[] = { NULL };
	struct cordon_error err = { 0 };
	const int from[] = { a->spec_fd, a->sock, a->command.tty_fd, a->command.exec_fd,
			     a->init_fd };
	int moved[CD_ELEMENTSOF(from)], sock = a->sock;

	/* first out of the way of the fixed numbers, then onto them (dup2 clears close-on-exec) */
	for (size_t i = 0; i < CD_ELEMENTSOF(from); i++)
		moved[i] = from[i] < 0 ? -1 : fcntl(from[i], F_DUPFD_CLOEXEC, 16);
	for (size_t i = 0; i < CD_ELEMENTSOF(from); i++)
		if (from[i] >= 0 && moved[i] < 0) {
			cd_fail_errno(&err, errno, "init", "move a descriptor for cordon-init");
			goto fail;
		}
	if (dup2(moved[0], CD_INIT_FD_SPEC) < 0 || dup2(moved[1], CD_INIT_FD_SOCK) < 0 ||
	    (moved[2] >= 0 && dup2(moved[2], CD_INIT_FD_TTY) < 0) ||
	    (moved[3] >= 0 && dup2(moved[3], CD_INIT_FD_EXEC) < 0) ||
	    dup2(moved[4], CD_INIT_FD_EXEC + 1) < 0) {
		cd_fail_errno(&err, errno, "init", "move a descriptor for cordon-init");
		goto fail;
	}
	sock = CD_INIT_FD_SOCK;
	fcntl(CD_INIT_FD_EXEC + 1, F_SETFD, FD_CLOEXEC); /* the program: not for cordon-init */
	if (moved[2] < 0)
		close(CD_INIT_FD_TTY);
	if (moved[3] < 0)
		close(CD_INIT_FD_EXEC);
	close_range(CD_INIT_FD_EXEC + 2, ~0u, 0);
	cd_timing("pid 1: exec cordon-init");
	syscall(SYS_execveat, CD_INIT_FD_EXEC + 1, "", init_argv, init_envp, AT_EMPTY_PATH);
	cd_fail_errno(&err, errno, "init", "exec cordon-init");
fail:
	cd_msg_send(sock, CD_MSG_ERROR, 0, &err, -1);
	_exit(CORDON_EXIT_FAILURE);
}

_Noreturn void cd_child_main(const struct cd_child_args *args)
{
	struct cd_child_args copy = *args, *a = &copy;
	struct cordon_error err = { 0 };
	sigset_t chld, stops;
	int r;

	/* SIGCHLD blocked before the command exists so none is lost (cordon-init reads it from a
	 * signalfd); the forwarded signals stay blocked as the supervisor left them: pid 1 gets
	 * them by message. The terminal's stop signals too: pid 1 is in the caller's process
	 * group, which may be the terminal's foreground until the command takes it. exec keeps
	 * the mask. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigemptyset(&stops);
	sigaddset(&stops, SIGTSTP);
	sigaddset(&stops, SIGTTIN);
	sigaddset(&stops, SIGTTOU);
	sigprocmask(SIG_BLOCK, &stops, NULL);
	r = pid1_setup(a, &err);
	cd_timing("pid 1: set up");
	if (r < 0) {
		cd_msg_send(a->sock, CD_MSG_ERROR, 0, &err, -1);
		_exit(CORDON_EXIT_FAILURE);
	}
	exec_init(a);
}
